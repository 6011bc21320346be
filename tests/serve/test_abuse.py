"""Serving beside an attacker: a runaway call runs off the event loop, under its limits, while other
sessions keep being served; web form posts are charged and logged like tool calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from compoworld.core.limits import CallLimits
from compoworld.serve.http import Store, build_app
from tests.serve.test_hardening import _free_port, _serve

CONTROL = {"Authorization": "Bearer control-secret"}
FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


@pytest.fixture
def server(tmp_path: Path):
    port = _free_port()
    store = Store({}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl", limits=CallLimits(cpu_s=3.0))
    app, _ = build_app(store, "control-secret", f"http://127.0.0.1:{port}")
    srv, th = _serve(app, port)
    yield f"http://127.0.0.1:{port}", store
    srv.should_exit = True
    th.join(5)
    store.close()


def _session(url: str, services: list[str]) -> dict:
    r = httpx2.post(f"{url}/sessions", json={"services": services, "seed": 1}, headers=CONTROL)
    assert r.status_code == 201, r.text
    return r.json()


async def _client(info: dict):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {info['agent_token']}"}, timeout=60)
    return Client(streamable_http_client(info["mcp_url"], http_client=http))


def test_a_runaway_call_does_not_stall_other_sessions(server) -> None:
    url, store = server
    attacker, quiet = _session(url, ["sql"]), _session(url, ["sql"])

    async def main() -> None:
        async with await _client(attacker) as a, await _client(quiet) as q:
            await q.list_tools()
            before = httpx2.get(f"{url}/sessions/{attacker['session_id']}/state", headers=CONTROL).json()
            runaway = asyncio.create_task(a.call_tool("sql__read_query", {"query": FOREVER}))
            held = store.sessions[attacker["session_id"]].env.lock
            while not held.locked():  # the attacker's call is running on the server
                await asyncio.sleep(0.005)
            for _ in range(5):  # the quiet session is served while the runaway call still runs
                r = await q.call_tool("sql__read_query", {"query": "SELECT 1 AS one"})
                assert r.structured_content["success"] is True
            async with httpx2.AsyncClient() as h:  # and so is the control API
                st = await h.get(f"{url}/sessions/{quiet['session_id']}/state", headers=CONTROL)
            assert st.status_code == 200
            assert not runaway.done()
            out = (await runaway).structured_content
            assert out["success"] is False and out["error"]["type"] == "resource_limit"
            assert "CPU time limit of 3 s" in out["error"]["message"]
            after = httpx2.get(f"{url}/sessions/{attacker['session_id']}/state", headers=CONTROL).json()
            assert after["state_hash"] == before["state_hash"]
            calls = httpx2.get(f"{url}/sessions/{attacker['session_id']}/calls", headers=CONTROL).json()
            assert calls["calls"][-1]["result"]["error"]["type"] == "resource_limit"

    asyncio.run(main())


def test_web_form_posts_are_charged_and_logged(server) -> None:
    url, store = server
    info = _session(url, ["browser", "helpdesk"])
    sid = info["session_id"]
    agent = {"Authorization": f"Bearer {info['agent_token']}"}
    session = store.sessions[sid]
    used = session.env.env.budget.used
    with httpx2.Client(base_url=url, headers=agent) as web:
        page = web.get(f"/web/{sid}/")
        assert page.status_code == 200
    log = httpx2.get(f"{url}/sessions/{sid}/calls", headers=CONTROL).json()
    assert log["count"] >= 1 and log["calls"][0]["tool"] == "browser__open"
    assert session.env.env.budget.used >= used  # charged through the same budget
    session.env.env.budget.limit = session.env.env.budget.used  # a full budget refuses form writes
    with httpx2.Client(base_url=url, headers=agent) as web:
        r = web.post(f"/web/{sid}/", content=b"q=" + b"z" * 60000 + b"&click=none")
    assert r.status_code in (400, 404)
    log2 = httpx2.get(f"{url}/sessions/{sid}/calls", headers=CONTROL).json()
    assert log2["count"] > log["count"]


def test_a_call_thread_left_at_idle_priority_retires() -> None:
    import threading

    from compoworld.core.limits import DEMOTED
    from compoworld.serve.mcp_server import CallThreads

    pool = CallThreads()

    def ident(demote: bool) -> threading.Thread:
        if demote:  # as the watchdog leaves it when the priority cannot be raised again
            DEMOTED.add(threading.get_ident())
        return threading.current_thread()

    async def main() -> list[threading.Thread]:
        return [await pool.run(ident, d) for d in (False, False, True, False)]

    a, b, c, d = asyncio.run(main())
    assert a is b is c  # a thread is reused while it runs at normal priority
    assert d is not c  # the demoted one is not handed the next call


def test_a_long_sql_query_drops_to_idle_priority_past_a_few_ms() -> None:
    import os

    from compoworld.core.environment import Environment

    env = Environment(["sql"], seed=1, size="small")
    env.limits = CallLimits(cpu_s=30)
    seen: list[int] = []
    svc = env.services["sql"]
    svc.db.create_function("policy", 0, lambda: seen.append(os.sched_getscheduler(0)) or 0)
    svc.db.set_authorizer(None)
    q = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000000) SELECT max(x) + policy() FROM c"
    r = env.call("sql__read_query", {"query": q})
    assert r["success"], r
    assert seen == [os.SCHED_IDLE]  # the query had run past DEMOTE_AFTER_S when it read its policy
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # back to normal after the call (where allowed)


def test_sessions_served_together_get_a_fair_share_and_pauses_count_as_paced(tmp_path: Path) -> None:
    """The server's sessions share one GIL: their calls run under a fair share (heavy loops pause
    beside other work, core.limits.Pacer); a call that already spent its time paused inside is
    not held back again before its next call."""
    import time

    from compoworld.core.environment import Environment
    from compoworld.serve.mcp_server import FAIR_SHARE, PACE, EnvSession

    store = Store({}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl", limits=CallLimits(cpu_s=3.0))
    assert store.limits.share == FAIR_SHARE and store.limits.cpu_s == 3.0
    kept = Store({}, "direct", 60, tmp_path / "k.jsonl", limits=CallLimits(share=0.5))
    assert kept.limits.share == 0.5  # an explicit share is the caller's
    assert Store({}, "direct", 60, tmp_path / "n.jsonl", limits=None).limits is None
    store.close(), kept.close()

    s = EnvSession(Environment(services=["chat"], seed=1), limits=store.limits)
    s._charge_cpu(0.1, wall=0.1)  # ran flat out: the next call waits PACE x its CPU
    assert s._not_before - time.monotonic() > PACE * 0.1 * 0.9
    s._not_before = 0.0
    s._charge_cpu(0.1, wall=0.1 + PACE * 0.1)  # already paused that long inside the call
    assert s._not_before == 0.0
    s._charge_cpu(0.1, wall=0.1 + PACE * 0.05)  # paused half of it: owes the other half
    assert 0 < s._not_before - time.monotonic() <= PACE * 0.05


def test_a_session_whose_calls_are_stopped_at_their_limit_waits_longer(tmp_path: Path) -> None:
    """A call stopped at a limit (422 resource_limit) did no work: its session owes PACE_STOPPED x
    its CPU, not PACE x, so a loop of runaway calls keeps a smaller share; an ordinary refusal
    (invalid arguments) or a call that finished is paced as before."""
    import time

    from compoworld.core.environment import Environment
    from compoworld.serve.mcp_server import PACE, PACE_MAX_S, PACE_STOPPED, EnvSession

    rows, cols = 200, [chr(65 + i) for i in range(20)]
    chain = {
        str(r): {c: 1 if c == "A" else f"=SUM({chr(ord(c) - 1)}1:{chr(ord(c) - 1)}{rows})" for c in cols}
        for r in range(1, rows + 1)
    }
    s = EnvSession(Environment(services=["sheets"], seed=1), limits=CallLimits(share=None))
    made, _ = s.run("sheets__google_sheets_create_spreadsheet", {"title": "chain", "data": chain})
    sid = made["data"]["spreadsheet_id"]
    s._not_before = 0.0
    t0 = time.thread_time()
    stopped, _ = s.run("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    used = time.thread_time() - t0
    assert stopped["error"]["type"] == "resource_limit"
    owed = s._not_before - time.monotonic()
    assert owed > PACE * used * 1.5 and owed <= min(PACE_STOPPED * used, PACE_MAX_S) + 0.01
    assert PACE_STOPPED > 2 * PACE

    s._not_before = 0.0
    s._charge_cpu(0.1, wall=0.1)  # the same CPU, finished: PACE x
    assert s._not_before - time.monotonic() <= PACE * 0.1 + 0.01
    s._not_before = 0.0
    s._charge_cpu(0.1, wall=0.1, stopped=True)
    assert s._not_before - time.monotonic() > PACE * 0.1 * 2
    s._not_before = 0.0
    s._charge_cpu(5.0, wall=5.0, stopped=True)  # never more than PACE_MAX_S
    assert s._not_before - time.monotonic() <= PACE_MAX_S


def test_big_state_reads_share_one_pace(tmp_path: Path, monkeypatch) -> None:
    """Big /state responses are paced together: two readers at once each wait for the other's bytes
    too, so the loop's share spent streaming stays the same however many read at once."""
    from compoworld.serve import http as serve_http

    waits: list[float] = []

    async def record(s: float) -> None:
        waits.append(s)

    monkeypatch.setattr(serve_http.anyio, "sleep", record)
    store = Store({}, "direct", idle_timeout=60, results=tmp_path / "r.jsonl")
    tenth = serve_http.STREAM_BYTES_PER_S // 10

    async def two_readers() -> None:
        await asyncio.gather(store.stream_pace(tenth), store.stream_pace(tenth))

    asyncio.run(two_readers())
    store.close()
    assert len(waits) == 2 and max(waits) > 0.19  # the second waits for both tenths of a second
