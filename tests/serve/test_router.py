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


def _router(urls: list[str], **kw):
    rport = _port()
    server = _serve(build_router(urls, f"http://127.0.0.1:{rport}", health_s=0.2, **kw), rport)
    return f"http://127.0.0.1:{rport}", server


def _stop(server) -> None:
    srv, th = server
    srv.should_exit = True
    th.join(5)


def test_after_a_backend_dies_new_sessions_go_to_live_ones_and_old_ones_get_503(fleet, tmp_path) -> None:
    _, backends, stores, tasks = fleet
    url, router = _router(backends)
    try:
        made = [
            httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
            for _ in range(2)
        ]
        on_dead = next(m for m in made if m["backend"] == backends[0])
        # a backend process that dies: take its port away (a fresh uvicorn would have other sessions)
        dead = _port()
        r2, router2 = _router([f"http://127.0.0.1:{dead}", backends[1]])
        try:
            created = [
                httpx2.post(f"{r2}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL)
                for _ in range(6)
            ]
            assert [c.status_code for c in created] == [201] * 6
            assert {c.json()["backend"] for c in created} == {backends[1]}
        finally:
            _stop(router2)
        # the first router: its backend 0 goes down while it holds a session there
        stores[0].draining = True  # (draining first: no new sessions, old ones still served)
        for _ in range(100):
            if httpx2.get(f"{url}/router/backends").json()["backends"][0]["draining"]:
                break
            time.sleep(0.05)
        again = httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
        assert again["backend"] == backends[1]
        assert httpx2.get(f"{url}/sessions/{on_dead['session_id']}/state", headers=CONTROL).status_code == 200
    finally:
        _stop(router)


def test_a_session_on_a_dead_backend_gets_a_clear_503(tmp_path) -> None:
    tasks = generate(1, 43, Settings())[0]
    port = _port()
    store = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl")
    app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
    backend = _serve(app, port)
    other = _port()
    store2 = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / "r2.jsonl")
    app2, _ = build_app(store2, "control-secret", f"http://127.0.0.1:{other}")
    backend2 = _serve(app2, other)
    url, router = _router([f"http://127.0.0.1:{port}", f"http://127.0.0.1:{other}"])
    try:
        made = [
            httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
            for _ in range(2)
        ]
        victim = next(m for m in made if m["backend"].endswith(f":{port}"))
        _stop(backend)  # the backend dies
        r = httpx2.get(f"{url}/sessions/{victim['session_id']}/state", headers=CONTROL)
        msg = r.json()["error"]["message"]
        assert r.status_code == 503 and ("down" in msg or "unreachable" in msg), msg
        for _ in range(4):  # and every new session lands on the live one
            c = httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL)
            assert c.status_code == 201 and c.json()["backend"].endswith(f":{other}")
    finally:
        _stop(router)
        _stop(backend2)


def test_the_session_table_survives_a_router_restart(fleet, tmp_path) -> None:
    _, backends, _, tasks = fleet
    table = tmp_path / "table.jsonl"
    url, router = _router(backends, table_path=table)
    made = [
        httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
        for _ in range(2)
    ]
    _stop(router)
    url2, router2 = _router(backends, table_path=table)
    try:
        for m in made:  # both backends' sessions are found again, by the agent's token too
            r = httpx2.get(f"{url2}/sessions/{m['session_id']}/state", headers=CONTROL)
            assert r.status_code == 200
        url3, router3 = _router(backends)  # no table: found on the backends with the agent token
        try:
            for m in made:
                r = httpx2.post(
                    f"{url3}/mcp/{m['session_id']}",
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={
                        "Authorization": f"Bearer {m['agent_token']}",
                        "Accept": "application/json, text/event-stream",
                    },
                )
                assert r.status_code != 404, r.text
        finally:
            _stop(router3)
    finally:
        _stop(router2)


def test_the_router_limits_bodies_hosts_and_streams(fleet) -> None:
    _, backends, _, tasks = fleet
    url, router = _router(backends)
    try:
        big = httpx2.post(f"{url}/sessions", content=b"x" * (2 << 20), headers=CONTROL)
        assert big.status_code == 413

        def chunks():
            for _ in range(40):
                yield b"y" * 65536

        assert httpx2.post(f"{url}/sessions", content=chunks(), headers=CONTROL).status_code == 413
        foreign = httpx2.post(
            f"{url}/sessions", json={"task_id": tasks[0].id}, headers={**CONTROL, "Host": "evil.example"}
        )
        assert foreign.status_code == 421
        m = httpx2.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL).json()
        from compoworld.serve.router import MAX_STREAMS_PER_SESSION

        agent = {"Authorization": f"Bearer {m['agent_token']}"}
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }

        async def hold() -> list[int]:
            async with httpx2.AsyncClient(timeout=30) as h:
                held, codes = [], []
                for _ in range(MAX_STREAMS_PER_SESSION + 2):  # an MCP session each, one GET stream each
                    r = await h.post(
                        f"{url}/mcp/{m['session_id']}",
                        json=init,
                        headers={**agent, "Accept": "application/json, text/event-stream"},
                    )
                    mcp_sid = r.headers["mcp-session-id"]
                    hdrs = {**agent, "Accept": "text/event-stream", "mcp-session-id": mcp_sid}
                    req = h.build_request("GET", f"{url}/mcp/{m['session_id']}", headers=hdrs)
                    resp = await h.send(req, stream=True)
                    codes.append(resp.status_code)
                    held.append(resp)
                # while they are held, other sessions' ordinary calls still go through
                other = await h.post(f"{url}/sessions", json={"task_id": tasks[0].id}, headers=CONTROL)
                codes.append(other.status_code)
                for resp in held:
                    await resp.aclose()
                return codes

        codes = asyncio.run(hold())
        assert codes[:MAX_STREAMS_PER_SESSION] == [200] * MAX_STREAMS_PER_SESSION
        assert codes[MAX_STREAMS_PER_SESSION : MAX_STREAMS_PER_SESSION + 2] == [429, 429] and codes[-1] == 201
    finally:
        _stop(router)
