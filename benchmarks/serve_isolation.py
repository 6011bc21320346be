"""One hostile session cannot slow another: p99 call latency of a quiet session, alone and beside a
session that grows its state and verifies it over and over. A's client runs in its own process.

One `compoworld serve http` process on loopback. Session B (quiet) makes read-only tool calls one
after another over MCP; its latencies are measured in the same run, in alternating rounds:
- alone (the baseline: A paused, nothing of it in flight);
- while session A, on the same server, fills its workspace with 1 MiB files (`cp`, `>>`) until its
  state budget refuses it (422), then keeps writing, reading its whole state (`GET /state`) and
  verifying (`POST /verify`) in a loop.

Prints B's p50 / p99 both times, the ratio of the p99s (target <= 2x), and what A achieved (bytes
held, refusals, verifications). Issue 15: before the fix, one verify of such a session took 25 s
on the event loop and stalled every other session for as long.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2

CALLS = 3000  # B's measured calls in each condition, alone and beside A
ROUNDS = 6  # the two conditions alternate, so drift in the machine's load hits both alike
BUDGET = 32 * 1024 * 1024
DEADLINE_S = 240


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_server(port: int, tasks_file: str, results: str) -> None:
    import uvicorn

    from compoworld.serve.http import KEEP_ALIVE_S, Store, build_app
    from compoworld.tasks.model import load_tasks

    store = Store({t.id: t for t in load_tasks(tasks_file)}, "direct", 3600, Path(results), BUDGET)
    app, _ = build_app(store, "bench", f"http://127.0.0.1:{port}")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", timeout_keep_alive=KEEP_ALIVE_S)


def wait_up(port: int) -> None:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


async def quiet(url: str, token: str, tool: tuple[str, dict], go, idle) -> tuple[list, list, int]:
    """B's calls, in alternating phases: A paused and idle (alone), then A running (beside)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    alone, beside, errors = [], [], 0
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=client)) as c:
        await c.list_tools()
        for _ in range(20):  # warm up
            await c.call_tool(*tool)
        for _ in range(ROUNDS):
            for lat in (alone, beside):
                if lat is alone:
                    go.clear()
                    await asyncio.to_thread(idle.wait, 120)  # nothing of A's in flight
                else:
                    go.set()
                    await asyncio.sleep(0.2)
                for _ in range(CALLS // ROUNDS):
                    t = time.perf_counter()
                    r = await c.call_tool(*tool)
                    lat.append(time.perf_counter() - t)
                    errors += bool(r.is_error)
    return alone, beside, errors


def run_hostile(base: str, session: dict, go, idle, stop, full, out) -> None:
    """Session A's agent and trainer, in their own process (so B's client does not share its CPU)."""
    out.put(asyncio.run(hostile(base, session, go, idle, stop, full)))


async def hostile(base: str, session: dict, go, idle, stop, full) -> dict[str, int]:
    """Grow the workspace to the budget with 1 MiB files, then keep writing, verifying and reading."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    seen = {"ok_writes": 0, "refused": 0, "verifies": 0, "state_reads": 0, "state_bytes": 0}
    control = httpx2.AsyncClient(base_url=base, headers={"Authorization": "Bearer bench"}, timeout=120)
    sid = session["session_id"]
    agent = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"}, timeout=120)
    async with Client(streamable_http_client(session["mcp_url"], http_client=agent)) as c:
        sh = "workspace__shell"
        await c.call_tool(sh, {"command": "echo " + "x" * 8000 + " > a.txt"})
        for _ in range(7):  # 8 KB -> 1 MiB
            await c.call_tool(sh, {"command": "cat a.txt a.txt > b.txt; cp b.txt a.txt"})
        i = 0
        while not stop.is_set():
            if full.is_set() and not go.is_set():
                idle.set()
                await asyncio.sleep(0.01)
                continue
            idle.clear()
            i += 1
            r = await c.call_tool(sh, {"command": f"cp a.txt f{i}.txt; cat a.txt >> big{i % 3}.txt"})
            if r.is_error:
                seen["refused"] += 1
                assert r.structured_content["error"]["code"] == 422, r.structured_content
                full.set()
            else:
                seen["ok_writes"] += 1
            if i % 4 == 0:
                st = await control.get(f"/sessions/{sid}/state")
                seen["state_reads"] += 1
                seen["state_bytes"] = len(st.content)
            if i % 2 == 0:
                v = await control.post(f"/sessions/{sid}/verify", json={})
                assert v.status_code == 200, v.text
                seen["verifies"] += 1
    return seen


def p(lat: list[float], q: int) -> float:
    return statistics.quantiles(lat, n=100)[q - 1] * 1000


async def drive(port: int, quiet_task, loud_task) -> None:
    base = f"http://127.0.0.1:{port}"
    http = httpx2.AsyncClient(base_url=base, headers={"Authorization": "Bearer bench"}, timeout=60)
    b = (await http.post("/sessions", json={"task_id": quiet_task.id})).json()
    first = quiet_task.reference_solution[0]
    read = (first.tool, first.arguments)
    a = (await http.post("/sessions", json={"task_id": loud_task.id})).json()
    go, idle, stop, full, out = mp.Event(), mp.Event(), mp.Event(), mp.Event(), mp.Queue()
    go.set()
    loud = mp.Process(target=run_hostile, args=(base, a, go, idle, stop, full, out), daemon=True)
    loud.start()
    await asyncio.to_thread(full.wait, 120)  # A reaches its budget first
    alone, beside, errors = await quiet(b["mcp_url"], b["agent_token"], read, go, idle)
    stop.set()
    go.set()
    seen = await asyncio.to_thread(out.get, True, 120)
    loud.join(10)
    print(f"{'quiet session B':34} {'p50':>9} {'p99':>9}")
    print(f"{'  alone (baseline)':34} {statistics.median(alone) * 1000:7.2f}ms {p(alone, 99):7.2f}ms")
    print(f"{'  beside hostile A':34} {statistics.median(beside) * 1000:7.2f}ms {p(beside, 99):7.2f}ms")
    print(
        f"hostile A: {seen['ok_writes']} writes, {seen['refused']} refused (422) at the {BUDGET} byte "
        f"budget, {seen['verifies']} verifications, {seen['state_reads']} state reads of "
        f"{seen['state_bytes'] / 1e6:.1f} MB"
    )
    ratio = p(beside, 99) / p(alone, 99)
    print(f"p99 ratio beside / alone: {ratio:.2f}x (target <= 2x)")
    print(f"errors in B's calls: {errors} (target 0)")
    if errors or not seen["refused"]:
        sys.exit(1)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.model import save_tasks
    from compoworld.tasks.pipeline import generate

    quiet_tasks, _ = generate(1, seed=91, settings=Settings())
    loud_tasks, _ = generate(1, seed=5, settings=Settings(interfaces=("cli", "mcp")))
    assert "workspace" in loud_tasks[0].all_services
    with tempfile.TemporaryDirectory() as d:
        tfile = Path(d) / "tasks.jsonl"
        save_tasks([*quiet_tasks, *loud_tasks], tfile)
        port = _port()
        server = mp.Process(target=run_server, args=(port, str(tfile), str(Path(d) / "r.jsonl")))
        server.start()
        try:
            wait_up(port)
            asyncio.run(asyncio.wait_for(drive(port, quiet_tasks[0], loud_tasks[0]), DEADLINE_S))
        finally:
            server.terminate()


if __name__ == "__main__":
    main()
