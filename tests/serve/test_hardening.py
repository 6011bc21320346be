"""Serving under hostile agents and clients: state budgets, heavy work off the loop, hostile headers
and bodies, the MCP host allow-list, escaping, expiry, WWW-Authenticate, the call log."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from compoworld.core.environment import Environment
from compoworld.serve import http as serve_http
from compoworld.serve.http import Store, build_app
from compoworld.serve.mcp_server import EnvSession
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task

CONTROL = {"Authorization": "Bearer control-secret"}


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return [
        Task.model_validate(
            generate_task(31, i, Settings(k=3, distractors=2, walk_min=4, walk_max=5, answer_rate=1.0))
        )
        for i in range(2)
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app, port: int):
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    for _ in range(250):
        if server.started:
            break
        time.sleep(0.02)
    return server, th


@pytest.fixture
def server(tasks, tmp_path: Path):
    port = _free_port()
    store = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl")
    app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
    srv, th = _serve(app, port)
    yield f"http://127.0.0.1:{port}", store, port
    srv.should_exit = True
    th.join(5)
    store.close()


def _raw(port: int, request: bytes) -> tuple[int, bytes, bytes]:
    """Send raw bytes (headers no HTTP client would send) and return status, headers, body."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), head, body


def _session(http: httpx2.Client, **body) -> dict:
    r = http.post("/sessions", json=body, headers=CONTROL)
    assert r.status_code == 201, r.text
    return r.json()


# ---- the state budget --------------------------------------------------------------------------
def test_the_workspace_quota_refuses_growth_with_a_422_and_changes_nothing() -> None:
    env = Environment(["workspace"], seed=1, size="small")
    env.services["workspace"].quota_bytes = 3 << 20
    sh = lambda c: env.call("workspace__shell", {"command": c})  # noqa: E731
    assert sh("echo " + "x" * 8000 + " > a.txt")["success"]
    for _ in range(7):  # a 1 MiB file
        assert sh("cat a.txt a.txt > b.txt; cp b.txt a.txt")["success"]
    assert sh("cp a.txt c.txt")["success"]
    before = env.state_hash()
    r = sh("echo partial > p.txt; cp a.txt d.txt; echo after > q.txt")
    assert r["success"] is False and r["error"]["code"] == 422 and r["error"]["type"] == "quota_exceeded"
    assert "budget of 3145728 bytes" in r["error"]["message"] and "d.txt" in r["error"]["message"]
    assert env.state_hash() == before  # the whole line is undone, the earlier write too
    assert sh("rm c.txt && cp a.txt d.txt")["success"]  # freeing space makes room again


def test_a_session_budget_bounds_every_writing_tool(tasks) -> None:
    env = Environment(["email", "workspace"], seed=2, size="small")
    s = EnvSession(env, state_budget=s_bytes(env) + 300_000)
    body = "y" * 100_000
    sent = [
        s.call("email__gmail_send_email", {"to": ["a@example.com"], "subject": f"s{i}", "body": body})
        for i in range(5)
    ]
    assert [r["success"] for r in sent][:2] == [True, True]
    refused = [r for r in sent if not r["success"]]
    assert refused and refused[0]["error"]["code"] == 422
    assert refused[0]["error"]["type"] == "state_budget_exceeded"
    assert s.state_bytes() <= s.state_budget
    # the shell gets exactly what is left of the session's budget
    before = env.state_hash()
    grow = s.call(
        "workspace__shell",
        {"command": "echo " + "z" * 7000 + " > f; cat f f f f f f f f > g; cat g g g g g g g g > h"},
    )
    assert grow["success"] is False and grow["error"]["code"] == 422 and env.state_hash() == before
    # reads are never refused
    assert s.call("email__gmail_search_emails", {"query": "s1"})["success"]


def s_bytes(env: Environment) -> int:
    return EnvSession(env, state_budget=None).state_bytes()


def test_heavy_control_work_runs_off_the_event_loop(server, tasks, monkeypatch) -> None:
    url, store, _ = server
    seen: list[str] = []
    real = serve_http.verify

    def spy(*a, **k):
        seen.append(threading.current_thread().name)
        return real(*a, **k)

    monkeypatch.setattr(serve_http, "verify", spy)
    http = httpx2.Client(base_url=url)
    a = _session(http, task_id=tasks[0].id)
    assert http.post(f"/sessions/{a['session_id']}/verify", json={}, headers=CONTROL).status_code == 200
    loop_threads = {th.name for th in threading.enumerate() if th.name.startswith("Thread")}
    assert seen and seen[0] not in loop_threads and seen[0] != "MainThread"


# ---- hostile headers and bodies: 4xx, never 500 --------------------------------------------------
def test_hostile_headers_and_bodies_get_4xx(server, tasks) -> None:
    url, store, port = server
    http = httpx2.Client(base_url=url)
    a = _session(http, task_id=tasks[0].id)
    sid = a["session_id"]
    for path in (f"/sessions/{sid}/state", f"/mcp/{sid}"):
        status, head, _ = _raw(
            port,
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ".encode()
            + "é".encode()
            + b"\r\nConnection: close\r\n\r\n",
        )
        # a wrong token: 401 with the challenge on the control API, 403 on the session's MCP
        assert status == (401 if path.startswith("/sessions") else 403), (path, status)
        assert status == 403 or b"www-authenticate: bearer" in head.lower()
        status, _, _ = _raw(
            port,
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Odd: a\xffb\r\nAuthorization: Bearer control-secret\r\nConnection: close\r\n\r\n".encode(
                "latin-1"
            ),
        )
        assert status < 500, (path, status)
    deep = b"[" * 100_000 + b"]" * 100_000
    for body in (deep, b'{"task_id": ' + b"9" * 5000 + b"}", b'{"task_id": "\xff\xfe"}'):
        r = http.post("/sessions", content=body, headers={**CONTROL, "content-type": "application/json"})
        assert r.status_code == 400, (body[:20], r.status_code, r.text)
    for bad in (
        {"services": ["email"], "seed": 10**30},
        {"services": ["email"], "size": []},
        {"task_id": []},
    ):
        assert http.post("/sessions", json=bad, headers=CONTROL).status_code == 400, bad
    r = http.post(
        f"/mcp/{sid}",
        content=deep,
        headers={
            "Authorization": f"Bearer {a['agent_token']}",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    )
    assert r.status_code < 500
    r = http.get(f"/sessions/{sid}/state")
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")


# ---- MCP's host allow-list ------------------------------------------------------------------------
def test_a_configured_host_passes_mcps_dns_rebinding_check(tasks, tmp_path: Path) -> None:
    port = _free_port()
    store = Store({t.id: t for t in tasks}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl")
    app, _ = build_app(store, "control-secret", "http://gpu-box:1", host="0.0.0.0", allowed_hosts=["gpu-box"])
    srv, th = _serve(app, port)
    try:
        http = httpx2.Client(base_url=f"http://127.0.0.1:{port}")
        a = _session(http, task_id=tasks[0].id)
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
        hdr = {"Authorization": f"Bearer {a['agent_token']}", "accept": "application/json, text/event-stream"}
        ok = http.post(f"/mcp/{a['session_id']}", json=init, headers={**hdr, "Host": f"gpu-box:{port}"})
        assert ok.status_code == 200, ok.text
        evil = http.post(f"/mcp/{a['session_id']}", json=init, headers={**hdr, "Host": "evil.example"})
        assert evil.status_code == 421
    finally:
        srv.should_exit = True
        th.join(5)


# ---- /web escapes what it echoes ------------------------------------------------------------------
def test_web_pages_escape_paths_and_form_fields(server) -> None:
    url, _, _ = server
    http = httpx2.Client(base_url=url)
    a = _session(http, services=["browser", "chat"], seed=2)
    auth = {"Authorization": f"Bearer {a['agent_token']}"}
    r = http.get(f"/web/{a['session_id']}/<script>alert(1)</script>", headers=auth)
    assert r.status_code == 404 and "<script>" not in r.text and "&lt;script&gt;" in r.text
    r = http.post(
        f"/web/{a['session_id']}/channels",
        headers={**auth, "content-type": "application/x-www-form-urlencoded"},
        content="click=%3Cimg+src%3Dx+onerror%3Dalert(1)%3E",
    )
    assert r.status_code == 400 and "<img" not in r.text and "&lt;img" in r.text


# ---- smaller failures ------------------------------------------------------------------------------
def test_an_expired_session_reads_as_expired_through_the_official_client(server, tasks) -> None:
    url, store, _ = server
    http = httpx2.Client(base_url=url)
    a = _session(http, task_id=tasks[0].id)
    hdr = {"Authorization": f"Bearer {a['agent_token']}"}

    async def run() -> str:
        async with Client(
            streamable_http_client(a["mcp_url"], http_client=httpx2.AsyncClient(headers=hdr))
        ) as c:
            await c.list_tools()
            store.sessions.clear()  # the session expires (or is closed) under the agent
            with pytest.raises(Exception) as e:
                await c.list_tools()
            return str(e.value)

    message = asyncio.run(run())
    assert "expired" in message and "Method not found" not in message


def test_verify_with_a_null_answer_keeps_the_agents_answer_and_the_call_log(server, tasks) -> None:
    url, store, _ = server
    task = tasks[0]
    http = httpx2.Client(base_url=url)
    a = _session(http, task_id=task.id)
    hdr = {"Authorization": f"Bearer {a['agent_token']}"}

    async def run() -> None:
        async with Client(
            streamable_http_client(a["mcp_url"], http_client=httpx2.AsyncClient(headers=hdr))
        ) as c:
            for call in task.reference_solution:
                await c.call_tool(call.tool, call.arguments)
            await c.call_tool(task.reference_solution[0].tool, {"bogus": 1})
            await c.call_tool("finish", {"answer": task.answer or ""})

    asyncio.run(run())
    v = http.post(f"/sessions/{a['session_id']}/verify", json={"answer": None}, headers=CONTROL).json()
    assert v["answer"] == (task.answer or "") and v["V"] == 1
    log = http.get(f"/sessions/{a['session_id']}/calls", headers=CONTROL).json()
    n = len(task.reference_solution)
    assert log["count"] == n + 2
    assert [c["tool"] for c in log["calls"][:n]] == [c.tool for c in task.reference_solution]
    assert [c["arguments"] for c in log["calls"][:n]] == [c.arguments for c in task.reference_solution]
    assert all(c["result"]["success"] for c in log["calls"][:n])
    assert log["calls"][n]["result"]["error"]["code"] == 400
    assert log["calls"][-1]["tool"] == "finish" and [c["seq"] for c in log["calls"]] == list(range(1, n + 3))
    agent = http.get(f"/sessions/{a['session_id']}/calls", headers=hdr)
    assert agent.status_code == 403  # the log is the control side's, never the agent's


def test_results_are_valid_json_lines(server, tasks) -> None:
    url, store, _ = server
    http = httpx2.Client(base_url=url)
    a = _session(http, task_id=tasks[1].id)
    http.post(f"/sessions/{a['session_id']}/verify", json={"answer": "ünïcode"}, headers=CONTROL)
    lines = [json.loads(x) for x in store.results.read_text().splitlines()]
    assert lines[-1]["answer"] == "ünïcode" and lines[-1]["session_id"] == a["session_id"]


def test_big_sessions_are_verified_in_a_worker_process_with_the_same_result(
    server, tasks, monkeypatch, tmp_path
) -> None:
    url, store, _ = server
    task = tasks[0]
    monkeypatch.setattr(serve_http, "OFFLOAD_BYTES", -1)  # every session counts as big
    monkeypatch.setattr(serve_http, "STREAM_CHUNK", 97)  # the state comes back in many small reads
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(serve_http.tempfile, "tempdir", str(spool))
    http = httpx2.Client(base_url=url, timeout=60)
    a = _session(http, task_id=task.id)
    session = store.sessions[a["session_id"]].env
    for c in task.reference_solution:
        assert session.call(c.tool, c.arguments)["success"]
    v = http.post(f"/sessions/{a['session_id']}/verify", json={"answer": task.answer}, headers=CONTROL).json()
    here = serve_http.verify(task, session.env.snapshot(), task.answer)
    assert v["V"] == 1 == int(here.passed) and v["checks"] == [c.model_dump() for c in here.checks]
    assert v["state_hash"] == session.env.state_hash()
    r = http.get(f"/sessions/{a['session_id']}/state", headers=CONTROL)
    state = r.json()
    assert int(r.headers["content-length"]) == len(r.content)
    assert state["state_hash"] == session.env.state_hash() and state["calls"] == session.calls
    assert state["state"] == json.loads(json.dumps(session.env.snapshot()))
    assert list(spool.iterdir()) == []  # the rendered state is not left on disk
    deadline = time.monotonic() + 5  # ... nor held open: a worker thread unmaps and closes it
    while _open_dumps() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _open_dumps() == []


def _open_dumps() -> list[str]:
    fds = Path("/proc/self/fd")
    if not fds.exists():
        return []
    out = []
    for fd in fds.iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if "compoworld-state-" in target:
            out.append(target)
    return out


def test_a_snapshot_hashes_in_the_worker_as_the_environment_does() -> None:
    from compoworld.serve.work import state_hash_of

    env = Environment(["sql", "workspace", "email"], seed=4, size="small")
    env.call("workspace__shell", {"command": "echo hi > x.txt; mkdir -p a/b"})
    r = env.call("sql__write_query", {"query": "UPDATE customers SET name = 'Zed' WHERE rowid = 1"})
    assert r["success"], r
    assert state_hash_of(list(env.services), env.snapshot()) == env.state_hash()


def test_sql_insert_select_cannot_double_past_the_budget() -> None:
    env = Environment(["sql"], seed=1, size="small")
    s = EnvSession(env, state_budget=4 << 20)
    assert s.call("sql__create_table", {"query": "CREATE TABLE big (x TEXT)"})["success"]
    assert s.call("sql__write_query", {"query": "INSERT INTO big VALUES ('" + "y" * 8000 + "')"})["success"]
    for _ in range(20):  # each call doubles the table with a few bytes of SQL
        before = env.state_hash()
        r = s.call("sql__write_query", {"query": "INSERT INTO big SELECT x FROM big"})
        if not r["success"]:
            break
    assert r["error"]["code"] == 422 and r["error"]["type"] == "quota_exceeded"
    assert env.state_hash() == before and env.services["sql"].size_bytes() <= 4 << 20
    assert s.call("sql__write_query", {"query": "DELETE FROM big"})["success"]  # room again


def test_a_state_written_in_pieces_is_the_same_json_as_one_dump(monkeypatch) -> None:
    import io

    import orjson

    from compoworld.serve import work

    monkeypatch.setattr(work, "STR_PIECE", 7)  # long strings cut mid-escape, mid-emoji, mid-quote
    value = {
        "files": {"/a": {"content": 'x"\\\n\t\u00e9\U0001f600' * 50 + "\x01\x1f", "size": 2**60}},
        "rows": [[1, 2.5, -3, None, True, False], (4, "ü" * 30), [], {}],
        "": "",
    }
    out = io.BytesIO()
    work.write_json(value, out)
    assert out.getvalue() == orjson.dumps(value)
    with pytest.raises(TypeError, match="keys must be strings"):
        work.write_json({1: "x"}, io.BytesIO())


def test_a_state_file_is_the_same_json_and_writes_a_shared_string_once_serialised(
    tmp_path, monkeypatch
) -> None:
    """A file copied 20 times shares one string: the dump serialises it once, every copy is in the
    file, and the next dump (a trainer re-reading the state) serialises it no more."""
    import orjson

    from compoworld.serve import work

    monkeypatch.setattr(work, "SERIALISED", work._Serialised(work.MEMO_BYTES))
    shared = "é" * 70000 + '"x"'
    snap = {
        "files": {f"/c{i}": {"content": shared} for i in range(20)},
        "/b": {"rows": [[1, None, 2.5]] * 300},
    }
    seen: list[int] = []
    real = work.orjson.dumps
    monkeypatch.setattr(
        work.orjson, "dumps", lambda v, *a: seen.append(len(v) if type(v) is str else 0) or real(v, *a)
    )
    path = tmp_path / "s.json"
    n = work.write_state(str(path), "s1", "abc", snap, 7)
    first = sum(1 for x in seen if x == work.STR_PIECE)  # the long string's slices
    again = tmp_path / "again.json"
    work.write_state(str(again), "s1", "abc", snap, 7)
    monkeypatch.undo()
    assert n == path.stat().st_size
    body = orjson.loads(path.read_bytes())
    assert body == {"session_id": "s1", "state_hash": "abc", "state": snap, "calls": 7}
    assert again.read_bytes() == path.read_bytes()
    assert first == len(shared) // work.STR_PIECE  # once, not 20 times
    assert sum(1 for x in seen if x == work.STR_PIECE) == first  # and not again in the next dump


def test_serialised_long_strings_stay_within_their_bound_and_go_least_recent_first() -> None:
    from compoworld.serve.work import _Serialised

    strings = [chr(97 + i) * 25 for i in range(6)]  # distinct objects
    cost = 25 + sys.getsizeof(strings[0])  # its JSON and the string it keeps alive
    kept = _Serialised(4 * cost)  # one string may take a quarter
    for s in strings[:4]:
        kept.keep(s, s.encode())
    assert kept.size == 4 * cost and all(kept.get(s) == s.encode() for s in strings[:4])
    kept.get(strings[0])  # used again: the least recent is now strings[1]
    kept.keep(strings[4], strings[4].encode())
    assert kept.size == 4 * cost and kept.get(strings[1]) is None
    assert kept.get(strings[0]) is not None and kept.get(strings[4]) is not None
    assert kept.get("".join(["a"] * 25)) is None  # equal text, another object: never taken for it
    kept.keep(strings[5], b"x" * 26)  # over a quarter of the bound: not kept
    assert kept.get(strings[5]) is None and kept.size == 4 * cost


def test_a_state_dump_beside_a_busy_thread_yields_and_writes_the_same_bytes(tmp_path, monkeypatch) -> None:
    """Under its fair share (core.limits.pacing) a dump that has to share the GIL with a busy
    thread pauses, and the file is the same as one written alone."""
    from compoworld.core import limits
    from compoworld.serve import work

    made: list[limits.Pacer] = []

    class Recording(dict):
        def __setitem__(self, k, v) -> None:
            made.append(v)
            super().__setitem__(k, v)

    snap = {"t": {str(i): {"name": f"row {i}", "tags": ["a", "b"], "n": i} for i in range(5000)}}
    alone = tmp_path / "alone.json"
    work.write_state(str(alone), "s1", "h", snap, 1, share=None)
    monkeypatch.setattr(limits, "PACERS", Recording())
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    busy = threading.Thread(target=spin)
    busy.start()
    try:
        beside = tmp_path / "beside.json"
        work.write_state(str(beside), "s1", "h", snap, 1, share=0.2)
    finally:
        stop.set()
        busy.join()
    assert beside.read_bytes() == alone.read_bytes()
    assert len(made) == 1 and made[0].pauses > 0 and made[0].paused > 0
