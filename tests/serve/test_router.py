"""N `serve http` processes behind the session-affine router: sessions spread over the backends,
every request of a session reaches its own backend, and the official MCP client works through it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from compoworld.serve.http import Store, build_app
from compoworld.serve.router import build_router
from compoworld.tasks.generator import Settings
from compoworld.tasks.pipeline import generate

CONTROL = {"Authorization": "Bearer control-secret"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app, port: int):
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    for _ in range(300):
        if server.started:
            break
        time.sleep(0.02)
    return server, th


@pytest.fixture
def fleet(tmp_path: Path):
    tasks = generate(2, 41, Settings())[0]
    servers, urls, stores = [], [], []
    for i in range(2):
        port = _port()
        store = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / f"r{i}.jsonl")
        app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
        servers.append(_serve(app, port))
        urls.append(f"http://127.0.0.1:{port}")
        stores.append(store)
    rport = _port()
    router = _serve(build_router(urls, f"http://127.0.0.1:{rport}"), rport)
    yield f"http://127.0.0.1:{rport}", urls, stores, tasks
    for server, th in [*servers, router]:
        server.should_exit = True
        th.join(5)


def test_sessions_spread_and_stay_on_their_backend(fleet) -> None:
    url, backends, stores, tasks = fleet
    task = tasks[0]
    http = httpx2.Client(base_url=url)
    made = [http.post("/sessions", json={"task_id": task.id}, headers=CONTROL).json() for _ in range(4)]
    assert {m["backend"] for m in made} == set(backends)  # placed on the least-loaded backend
    assert all(m["mcp_url"] == f"{url}/mcp/{m['session_id']}" for m in made)
    assert [len(s.sessions) for s in stores] == [2, 2]
    a, b = made[0], made[1]

    async def work(session: dict) -> None:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"})
        async with Client(streamable_http_client(session["mcp_url"], http_client=client)) as c:
            for call in task.reference_solution:
                r = await c.call_tool(call.tool, call.arguments)
                assert r.structured_content["success"], r.structured_content

    asyncio.run(work(a))
    va = http.post(
        f"/sessions/{a['session_id']}/verify", json={"answer": task.answer}, headers=CONTROL
    ).json()
    vb = http.post(
        f"/sessions/{b['session_id']}/verify", json={"answer": task.answer}, headers=CONTROL
    ).json()
    assert va["V"] == 1 and vb["V"] == 0  # sessions stay independent across and within backends
    fresh = httpx2.Client(base_url=url)
    assert http.get(f"/sessions/{a['session_id']}/state", headers=CONTROL).status_code == 200
    assert http.get("/sessions/nope/state", headers=CONTROL).status_code == 404
    assert http.get(f"/sessions/{a['session_id']}/state").status_code == 401  # the backend checks tokens
    assert http.delete(f"/sessions/{a['session_id']}", headers=CONTROL).json()["deleted"]
    loads = {x["url"]: x["sessions"] for x in fresh.get("/router/backends").json()["backends"]}
    assert sum(loads.values()) == 3


def test_a_restarted_router_finds_the_owner_of_a_session(fleet) -> None:
    url, backends, stores, tasks = fleet
    made = httpx2.post(f"{backends[1]}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
    # this router never placed the session (as after a restart): it asks the backends
    r = httpx2.get(f"{url}/sessions/{made['session_id']}/state", headers=CONTROL)
    assert r.status_code == 200 and r.json()["state_hash"] == tasks[0].initial_state_hash
