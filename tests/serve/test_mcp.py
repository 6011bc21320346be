"""Serving over MCP with the official `mcp` client: stdio and streamable HTTP, isolation and security."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from compoworld.serve.http import Store, build_app
from compoworld.serve.mcp_server import is_reserved
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task, save_tasks


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> tuple[Path, list[Task]]:
    tasks = [
        Task.model_validate(
            generate_task(31, i, Settings(k=3, distractors=2, walk_min=4, walk_max=5, answer_rate=1.0))
        )
        for i in range(2)
    ]
    path = tmp_path_factory.mktemp("serve") / "tasks.jsonl"
    save_tasks(tasks, path)
    return path, tasks


def test_stdio_with_the_official_client(task_file, tmp_path: Path) -> None:
    path, tasks = task_file
    task = tasks[0]
    result_file = tmp_path / "result.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "compoworld.cli.main",
            "serve",
            "stdio",
            "--tasks",
            str(path),
            "--task-id",
            task.id,
            "--result",
            str(result_file),
        ],
    )

    async def run() -> None:
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            names = {t.name for t in tools}
            assert "finish" in names and not any(is_reserved(n) for n in names)
            assert all(t.input_schema["type"] == "object" and t.output_schema for t in tools)
            bad = await client.call_tool(task.reference_solution[0].tool, {"no_such_argument": 1})
            assert bad.is_error and bad.structured_content["error"]["code"] == 400
            for c in task.reference_solution:
                r = await client.call_tool(c.tool, c.arguments)
                assert not r.is_error and r.structured_content["success"], r.structured_content
            done = await client.call_tool("finish", {"answer": task.answer or ""})
            assert done.structured_content == {"success": True, "data": {"finished": True}}

    asyncio.run(run())
    for _ in range(100):
        if result_file.exists():
            break
        time.sleep(0.05)
    result = json.loads(result_file.read_text())
    assert result["V"] == 1 and result["task_id"] == task.id and result["answer"] == (task.answer or "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(task_file, tmp_path: Path):
    _, tasks = task_file
    port = _free_port()
    store = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / "results.jsonl")
    app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", store, tasks
    server.should_exit = True
    th.join(5)


CONTROL = {"Authorization": "Bearer control-secret"}


def test_http_sessions_are_isolated_and_verified(http_server) -> None:
    url, store, tasks = http_server
    task = tasks[1]
    http = httpx2.Client(base_url=url)
    a = http.post("/sessions", json={"task_id": task.id}, headers=CONTROL).json()
    b = http.post("/sessions", json={"task_id": task.id}, headers=CONTROL).json()
    assert a["mcp_url"].endswith(a["session_id"]) and a["agent_token"] != b["agent_token"]

    async def agent(session: dict, do_work: bool) -> list[str]:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"})
        async with Client(streamable_http_client(session["mcp_url"], http_client=client)) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            if do_work:
                for call in task.reference_solution:
                    r = await c.call_tool(call.tool, call.arguments)
                    assert r.structured_content["success"], r.structured_content
                failing = await c.call_tool(task.reference_solution[-1].tool, {})
                assert failing.is_error and failing.structured_content["error"]["code"] == 400
            return names

    names = asyncio.run(agent(a, True))
    assert not any(is_reserved(n) for n in names) and "finish" in names
    state_a = http.get(f"/sessions/{a['session_id']}/state", headers=CONTROL).json()
    state_b = http.get(f"/sessions/{b['session_id']}/state", headers=CONTROL).json()
    assert (
        state_b["state_hash"] == task.initial_state_hash != state_a["state_hash"]
    )  # B never sees A's changes
    va = http.post(
        f"/sessions/{a['session_id']}/verify", json={"answer": task.answer}, headers=CONTROL
    ).json()
    vb = http.post(
        f"/sessions/{b['session_id']}/verify", json={"answer": task.answer}, headers=CONTROL
    ).json()
    assert va["V"] == 1 and vb["V"] == 0
    lines = [json.loads(x) for x in store.results.read_text().splitlines()]
    assert [(r["session_id"], r["V"]) for r in lines] == [(a["session_id"], 1), (b["session_id"], 0)]
    assert http.delete(f"/sessions/{a['session_id']}", headers=CONTROL).json()["deleted"]
    assert http.get(f"/sessions/{a['session_id']}/state", headers=CONTROL).status_code == 404
    made = http.post(
        "/sessions", json={"services": ["email", "chat"], "seed": 3, "size": "small"}, headers=CONTROL
    )
    assert (
        made.status_code == 201
        and http.post(f"/sessions/{made.json()['session_id']}/verify", json={}, headers=CONTROL).status_code
        == 409
    )


def test_http_security_and_bad_requests(http_server) -> None:
    url, store, tasks = http_server
    http = httpx2.Client(base_url=url)
    a = http.post("/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
    b = http.post("/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
    before = {sid: s.env.env.state_hash() for sid, s in store.sessions.items()}
    agent_a = {"Authorization": f"Bearer {a['agent_token']}"}
    # an agent token never opens the control API
    assert http.get(f"/sessions/{a['session_id']}/state", headers=agent_a).status_code == 403
    assert http.post(f"/sessions/{a['session_id']}/verify", json={}, headers=agent_a).status_code == 403
    assert http.post("/sessions", json={"task_id": tasks[0].id}, headers=agent_a).status_code == 403
    assert http.get(f"/sessions/{a['session_id']}/state").status_code == 401
    assert (
        http.get(f"/sessions/{a['session_id']}/state", headers={"Authorization": "Bearer nope"}).status_code
        == 401
    )
    # a session's token never opens another session's MCP endpoint
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert http.post(f"/mcp/{b['session_id']}", json=init, headers=agent_a).status_code == 403
    assert http.post(f"/mcp/{b['session_id']}", json=init).status_code == 401
    assert http.post("/mcp/deadbeef", json=init, headers=agent_a).status_code == 404
    assert http.post("/mcp", json=init, headers=agent_a).status_code == 404
    # malformed and oversized requests are clear 4xx and change nothing
    assert http.post("/sessions", content=b"{nope", headers=CONTROL).status_code == 400
    assert http.post("/sessions", json=["x"], headers=CONTROL).status_code == 400
    assert http.post("/sessions", json={"task_id": "missing"}, headers=CONTROL).status_code == 404
    assert http.post("/sessions", json={"services": ["nope"]}, headers=CONTROL).status_code == 400
    assert http.post("/sessions", json={}, headers=CONTROL).status_code == 400
    big = b"{" + b" " * (2 << 20) + b"}"
    assert (
        http.post(
            "/sessions", content=big, headers={**CONTROL, "content-type": "application/json"}
        ).status_code
        == 413
    )
    assert (
        http.post(
            f"/mcp/{a['session_id']}", content=big, headers={**agent_a, "content-type": "application/json"}
        ).status_code
        == 413
    )
    assert (
        http.post(f"/sessions/{a['session_id']}/verify", json={"answer": 5}, headers=CONTROL).status_code
        == 400
    )
    assert {sid: s.env.env.state_hash() for sid, s in store.sessions.items()} == before
    assert len(store.sessions) == 2


def test_idle_sessions_expire(http_server) -> None:
    url, store, tasks = http_server
    http = httpx2.Client(base_url=url)
    s = http.post("/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
    store.idle_timeout = 0.2
    time.sleep(0.3)
    assert http.get(f"/sessions/{s['session_id']}/state", headers=CONTROL).status_code == 404
    assert (
        http.post(
            f"/mcp/{s['session_id']}", json={}, headers={"Authorization": f"Bearer {s['agent_token']}"}
        ).status_code
        == 404
    )


def test_web_pages_are_served_per_session_behind_the_agent_token(http_server) -> None:
    url, store, _ = http_server
    http = httpx2.Client(base_url=url)
    a = http.post("/sessions", json={"services": ["browser", "chat"], "seed": 2}, headers=CONTROL).json()
    b = http.post("/sessions", json={"services": ["browser", "chat"], "seed": 2}, headers=CONTROL).json()
    plain = http.post("/sessions", json={"services": ["chat"], "seed": 2}, headers=CONTROL).json()
    auth = {"Authorization": f"Bearer {a['agent_token']}"}
    r = http.get(f"/web/{a['session_id']}/channels", headers=auth)
    assert (
        r.status_code == 200 and "data-eid" in r.text and f"href='/web/{a['session_id']}/channels/" in r.text
    )
    assert http.get(f"/web/{a['session_id']}/channels").status_code == 401
    assert (
        http.get(
            f"/web/{a['session_id']}/channels", headers={"Authorization": f"Bearer {b['agent_token']}"}
        ).status_code
        == 403
    )
    assert (
        http.get(
            f"/web/{plain['session_id']}/", headers={"Authorization": f"Bearer {plain['agent_token']}"}
        ).status_code
        == 404
    )
    assert http.get("/web/nope/", headers=auth).status_code == 404
    # a form posted in session A changes A only
    chans = [
        c
        for c in store.sessions[a["session_id"]].env.env.services["chat"].table("channels").values()
        if not c["is_im"]
    ]
    hb = store.sessions[b["session_id"]].env.env.state_hash()
    for c in chans:
        page = http.get(f"/web/{a['session_id']}/channels/{c['id']}", headers=auth).text
        box = re.search(r"name='(e\d+)' aria-label='Message'", page).group(1)
        click = re.search(r"name='click' value='(e\d+)'", page).group(1)
        r = http.post(
            f"/web/{a['session_id']}/channels/{c['id']}",
            headers=auth,
            content=f"{box}=hello+from+A&click={click}",
            follow_redirects=False,
        )
        if r.status_code == 303:
            break
    assert r.status_code == 303 and r.headers["location"].startswith(f"/web/{a['session_id']}/")
    assert store.sessions[b["session_id"]].env.env.state_hash() == hb
    found = store.sessions[a["session_id"]].env.env.call(
        "chat__slack_user_search_messages", {"query": "hello from A"}
    )
    assert found["success"] and "hello from A" in repr(found["data"])
