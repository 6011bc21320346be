"""Bounded calls: a call past its CPU or memory limit is stopped, undone and answered with a 422
`resource_limit`; the engines that run C code bound themselves; every write is charged to the
session's budget by one size model. One test per attack class of issue 24."""

from __future__ import annotations

import base64
import json
import sys
import threading

from compoworld.core import Service, tool
from compoworld.core.environment import Environment
from compoworld.core.limits import Budget, CallLimits, value_bytes
from compoworld.serve.mcp_server import EnvSession


class Runaway(Service):
    """A service whose tools misbehave on purpose."""

    name = "runaway"
    domain = "test"

    @tool(mutates=True)
    def spin(self) -> dict:
        """Write, then loop forever in pure Python."""
        self.store.put("_meta", "half", "written")
        n = 0
        while True:
            n += 1

    @tool(mutates=True)
    def swallow(self) -> dict:
        """Loop forever, catching every Exception (the limit is not one)."""
        self.store.put("_meta", "half", "written")
        while True:
            try:
                while True:
                    pass
            except Exception:
                continue

    @tool(mutates=True)
    def hog(self) -> dict:
        """Allocate without end."""
        held = []
        while True:
            held.append(bytearray(1 << 20))

    @tool(mutates=True)
    def quick(self, n: int = 1) -> dict:
        """Write n small records."""
        for i in range(n):
            self.store.put("_meta", f"k{i}", {"v": i})
        return {"n": n}


def _env(cpu_s: float = 0.2, memory: int = 1 << 30) -> Environment:
    env = Environment([Runaway, "sql", "workspace", "sheets", "helpdesk", "files"], seed=3, size="small")
    env.limits = CallLimits(cpu_s=cpu_s, memory_bytes=memory)
    return env


def _refused(r: dict, kind: str = "resource_limit") -> dict:
    assert r["success"] is False, r
    assert r["error"]["code"] == 422 and r["error"]["type"] == kind, r
    return r["error"]


def test_a_runaway_pure_python_call_is_stopped_and_undone() -> None:
    env = _env()
    before = env.state_hash()
    err = _refused(env.call("runaway__spin"))
    assert "CPU time limit of 0.2 s" in err["message"]
    assert env.state_hash() == before
    # a tool that catches every Exception cannot keep running either
    err = _refused(env.call("runaway__swallow"))
    assert env.state_hash() == before
    # and the environment still works afterwards, in any thread
    assert env.call("runaway__quick", {"n": 2})["success"]
    out: list[dict] = []
    t = threading.Thread(target=lambda: out.append(env.call("runaway__spin")))
    t.start()
    t.join()
    _refused(out[0])


def test_a_call_that_grows_memory_past_its_limit_is_stopped() -> None:
    env = _env(cpu_s=30, memory=64 << 20)
    before = env.state_hash()
    err = _refused(env.call("runaway__hog"))
    assert "memory past its limit of 67108864 bytes" in err["message"]
    assert env.state_hash() == before


def test_recursive_sql_is_stopped_inside_sqlite() -> None:
    env = _env()
    before = env.state_hash()
    forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
    err = _refused(env.call("sql__read_query", {"query": forever}))
    assert "CPU time limit of 0.2 s" in err["message"]
    big = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1e7) SELECT x FROM c ORDER BY x DESC"
    _refused(env.call("sql__read_query", {"query": big}))
    assert env.call("sql__create_table", {"query": "CREATE TABLE t (x)"})["success"]
    mid = env.state_hash()
    into = "INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c"
    r = env.call("sql__write_query", {"query": into})
    assert r["success"] is False and r["error"]["code"] == 422  # the time limit or the quota, first
    assert env.state_hash() == mid and env.services["sql"].rows("t") == []
    assert env.call("sql__read_query", {"query": "SELECT 1 AS one"})["data"]["rows"] == [{"one": 1}]
    assert env.state_hash() != before


def test_a_catastrophic_grep_pattern_is_stopped() -> None:
    env = _env()
    sh = lambda c: env.call("workspace__shell", {"command": c})  # noqa: E731
    assert sh("echo " + "a" * 60 + "b > x.txt")["success"]
    before = env.state_hash()
    r = sh("grep -E '(a|aa)+$' x.txt; echo next")
    assert r["success"], r
    assert "too slow to match" in r["data"]["stderr"] and r["data"]["stdout"] == "next\n"
    assert env.state_hash() == before
    assert sh("grep -c 'a*b' x.txt")["data"]["stdout"] == "1\n"  # ordinary patterns still match


def test_chained_formulas_are_evaluated_once_per_cell_and_bounded(monkeypatch) -> None:
    from compoworld.services.sheets import formula

    env = _env(cpu_s=30)
    rows, cols = 40, "ABCDEFGH"
    # each column sums the whole previous column: naive evaluation is rows ** columns cell visits
    data = {
        str(r): {c: 1 if c == "A" else f"=SUM({chr(ord(c) - 1)}1:{chr(ord(c) - 1)}{rows})" for c in cols}
        for r in range(1, rows + 1)
    }
    book = env.call("sheets__google_sheets_create_spreadsheet", {"title": "chain", "data": data})
    assert book["success"], book
    sid = book["data"]["spreadsheet_id"]
    got = env.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    assert got["success"], got
    assert str(rows**7) in json.dumps(got["data"])
    monkeypatch.setattr(formula, "MAX_CELLS", 500)
    before = env.state_hash()
    _refused(env.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid}))
    write = {"spreadsheet_id": sid, "column": "Z", "row": 1, "value": "=SUM(H1:H40)+SUM(G1:G40)"}
    _refused(env.call("sheets__google_sheets_write_to_cell", write))
    assert env.state_hash() == before


def test_bulk_creates_are_bounded_by_count() -> None:
    env = _env()
    before = env.state_hash()
    agents = [{"email": f"a{i}@example.com", "name": f"A{i}", "ticket_scope": 1} for i in range(8000)]
    err = _refused(env.call("helpdesk__freshdesk_bulk_create_agents", {"agents_data": agents}))
    assert "8000" in err["message"] and "1000" in err["message"]
    err = _refused(env.call("helpdesk__freshdesk_bulk_create_agents", {"agents_data": agents[:500]}))
    assert "at most 100" in err["message"]
    assert env.state_hash() == before
    assert env.call("helpdesk__freshdesk_bulk_create_agents", {"agents_data": agents[:3]})["success"]


def test_file_copies_are_charged_and_refused_at_the_budget() -> None:
    env = _env(cpu_s=30)
    s = EnvSession(env, state_budget=None)
    env.budget = Budget(4 << 20, used=0)
    blob = base64.b64encode(b"x" * (256 << 10)).decode()
    up = s.call(
        "files__dropbox_upload_file",
        {"dropbox_path": "/big.txt", "source_uri": f"data:text/plain;base64,{blob}"},
    )
    assert up["success"], up
    refused = None
    for i in range(40):  # each copy is tiny in arguments, 256 KiB in state
        before = env.state_hash()
        r = s.call("files__dropbox_copy_file", {"from_path": "/big.txt", "to_path": f"/copy{i}.txt"})
        if not r["success"]:
            refused = r
            break
    assert refused is not None, "copies were never refused"
    _refused(refused, "state_budget_exceeded")
    assert env.state_hash() == before and env.budget.used <= env.budget.limit
    assert s.call("files__dropbox_get_file_info", {"path": "/copy0.txt"})["success"]  # reads still work


def test_a_copied_file_is_measured_once_and_the_same(monkeypatch) -> None:
    """Copies share the content string: its size and hash (5 ms each to encode 512K non-ASCII
    characters, under the GIL) are computed once for all of them, and equal a fresh measurement."""
    import hashlib

    from compoworld.services.files import service as files

    env = Environment(services=["files"], seed=1)
    blob = base64.b64encode(bytes(range(256)) * 2048).decode()  # binary: a non-ASCII text once decoded
    up = {"dropbox_path": "/big.bin", "source_uri": f"data:application/octet-stream;base64,{blob}"}
    assert env.call("files__dropbox_upload_file", up)["success"]
    content = env.services["files"].store.tables["entries"]["/big.bin"]["content"]
    assert not content.isascii()
    measured: list[int] = []
    real = files._measure

    def counting(text: str) -> tuple[int, str]:
        if files._MEASURED.get(id(text), (None,))[0] is not text:
            measured.append(len(text))
        return real(text)

    monkeypatch.setattr(files, "_measure", counting)
    for i in range(4):
        r = env.call("files__dropbox_copy_file", {"from_path": "/big.bin", "to_path": f"/c{i}.bin"})
        assert r["success"], r
        data = "".join(content).encode()  # an equal string that is another object
        meta = r["data"]["metadata"]
        assert meta["size"] == len(data) and meta["content_hash"] == hashlib.sha256(data).hexdigest()
    assert len(measured) <= 1  # measured at most once (the upload may have measured it already)
    assert files._measure("".join(content)) == files._measure(content)


def test_small_records_are_charged_at_least_what_they_cost() -> None:
    def deep(v) -> int:
        n = sys.getsizeof(v)
        if isinstance(v, dict):
            n += sum(deep(k) + deep(x) for k, x in v.items())
        elif isinstance(v, list):
            n += sum(deep(x) for x in v)
        return n

    small = {"id": "t1", "a": 1, "b": "x", "c": True, "d": None, "e": [1, 2]}
    large = {"id": "t2", "body": "y" * 100_000}
    for rec in (small, large):
        assert value_bytes(rec) >= len(json.dumps(rec))  # never less than what a state read writes
        assert value_bytes(rec) >= 0.5 * deep(rec)  # and within 2x of what it holds in memory
    assert value_bytes(small) > 4 * len(json.dumps(small))  # small records are not undercounted


def test_every_write_is_charged_once_through_the_session() -> None:
    env = Environment([Runaway], seed=0)
    s = EnvSession(env, state_budget=50_000)
    used = env.budget.used
    assert s.call("runaway__quick", {"n": 10})["success"]
    grown = env.budget.used - used
    assert grown > 10 * 50
    assert s.call("runaway__quick", {"n": 10})["success"]  # same records again: nothing new
    assert env.budget.used - used == grown
    r = s.call("runaway__quick", {"n": 1000})
    _refused(r, "state_budget_exceeded")
    assert env.budget.used - used == grown


def test_every_environment_is_limited_by_default() -> None:
    # eval, the trainers' environments and serve stdio all call through Environment.call
    env = Environment([Runaway], seed=0)
    assert env.limits == CallLimits() and env.limits.cpu_s == 2.0
    before = env.state_hash()
    err = _refused(env.call("runaway__spin"))
    assert "CPU time limit of 2 s" in err["message"] and env.state_hash() == before


# ---- cooperative fair share (core.limits.Pacer) --------------------------------------------------
def _busy_beside(fn):
    """Run `fn()` in a thread while this one keeps the GIL busy; return its result."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    while t.is_alive():
        sum(range(2000))
    t.join()
    return out[0]


def _chained_sheet(env: Environment) -> str:
    rows, cols = 25, [chr(65 + i) for i in range(10)]
    data = {
        str(r): {c: r if c == "A" else f"=SUM({chr(ord(c) - 1)}1:{chr(ord(c) - 1)}{rows})" for c in cols}
        for r in range(1, rows + 1)
    }
    made = env.call("sheets__google_sheets_create_spreadsheet", {"title": "chain", "data": data})
    return made["data"]["spreadsheet_id"]


def test_a_heavy_call_under_a_fair_share_pauses_beside_busy_work_and_answers_the_same(monkeypatch) -> None:
    from compoworld.core import limits

    made: list[limits.Pacer] = []

    class Recording(dict):
        def __setitem__(self, k, v) -> None:
            made.append(v)
            super().__setitem__(k, v)

    answers = []
    for share in (None, 0.2):
        env = Environment(services=["sheets"], seed=3)
        env.limits = CallLimits(share=share)
        sid = _chained_sheet(env)
        monkeypatch.setattr(limits, "PACERS", Recording())
        made.clear()  # only the read's
        read = {"spreadsheet_id": sid}
        r = _busy_beside(lambda env=env, read=read: env.call("sheets__google_sheets_get_spreadsheet", read))
        assert r["success"], r
        answers.append((r, env.state_hash()))
    assert answers[0] == answers[1]  # only timing changes
    assert len(made) == 1 and made[0].share == 0.2  # none without a share; one for the call with it
    assert made[0].pauses > 0 and made[0].paused > 0


def test_a_fair_share_never_sleeps_on_an_event_loop_or_without_a_share() -> None:
    import asyncio

    from compoworld.core import limits

    async def on_loop() -> bool:
        with limits.pacing(0.2) as p:
            return p is None and threading.get_ident() not in limits.PACERS

    assert asyncio.run(on_loop())  # a sleep there would stall every coroutine on the loop
    with limits.pacing(None) as p:
        assert p is None and threading.get_ident() not in limits.PACERS
    with limits.pacing(0.5) as outer, limits.pacing(0.2) as inner:  # nested: the outer share holds
        assert inner is outer and outer.share == 0.5
    assert threading.get_ident() not in limits.PACERS
    limits.checkpoint()  # outside any: a no-op


def test_a_call_share_must_be_a_fraction() -> None:
    import pytest

    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="share must be in"):
            CallLimits(share=bad)
    assert CallLimits().share is None  # eval, stdio and trainers' environments never yield by default


def test_a_watched_loop_is_busy_only_while_it_runs_callbacks_and_heavy_work_yields_to_it(monkeypatch) -> None:
    import asyncio
    import time

    from compoworld.core import limits

    seen: dict[str, bool] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert limits.watch_loop(loop) and limits.watch_loop(loop)  # idempotent
        seen["running"] = id(loop) in limits.BUSY_LOOPS
        waiting, done = threading.Event(), loop.create_future()

        def watch() -> None:
            waiting.wait()
            for _ in range(100000):  # the loop goes back to its selector: idle
                if id(loop) not in limits.BUSY_LOOPS:
                    seen["idle"] = True
                    break
                time.sleep(0.001)
            loop.call_soon_threadsafe(done.set_result, None)

        t = threading.Thread(target=watch)
        t.start()
        waiting.set()
        await done
        seen["woken"] = id(loop) in limits.BUSY_LOOPS
        t.join()

    asyncio.run(main())
    assert seen == {"running": True, "idle": True, "woken": True}

    monkeypatch.setattr(limits, "BUSY_LOOPS", {1})  # a loop with work: heavy work yields at once

    def heavy() -> limits.Pacer:
        with limits.pacing(0.2) as p:
            t = time.thread_time()
            while time.thread_time() - t < 0.005:
                limits.checkpoint()
            return p

    p = heavy()  # on a thread with no loop of its own
    assert p.pauses > 0 and p.paused > 0
