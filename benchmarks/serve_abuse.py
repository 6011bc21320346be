"""Serving beside attackers (issue 24): a quiet session's p99 call latency, alone and beside each
attack, on one `compoworld serve http` process started through the CLI (as users start it).

The quiet session makes read-only MCP calls one after another, in its own process. Each attack
runs in its own process too. Windows alternate, alone / attack / alone / attack / ... / alone, on
the same quiet session, and each attack window's p99 is divided by the mean p99 of the two alone
windows either side of it: on a shared machine a burst of load from other processes then moves
one round's ratio, not the figure, and a real regression still shows in every round. Attacks (each an agent with only its own session's token):
- `sql`: a recursive CTE without a bound, over and over (each call stops at the CPU limit);
- `regex`: a catastrophic grep pattern, `(a|aa)+$` against a line of 5,000 a's and a b;
- `formulas`: a spreadsheet whose columns each sum the previous column, read over and over;
- `bulk`: bulk-creating 8,000 helpdesk agents, over and over;
- `copies`: 1 MiB files copied until the state budget refuses, then copying on and reading state
  (the window starts from the first upload);
- `budget`: the same, built to the refusal before the window: in it every copy is refused and the
  20 MB state is read after every fifth;
- `forms`: a flood of /web form posts with 60 KB of text each;
- `streams`: 100 GET streams held open at the router (quiet session through the router too);
- `slowloris`: 1,000 connections that never finish their headers.

Prints, per attack, the median and the worst of the per-round p99 ratios (target <= 2x), the
ratio of the pooled p99s, every window's p99 and the p50s, then the server's resident memory
against (sessions x budget) + its base.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import multiprocessing as mp
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "compoworld.cli.main"]
TOKEN = "bench"
BUDGET = 32 * 1024 * 1024
QUIET_TOOL = ("chat__slack_user_list_channels", {"limit": 2})
ATTACKS = ["sql", "regex", "formulas", "bulk", "copies", "budget", "forms", "streams", "slowloris"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, path: str = "/healthz") -> None:
    for _ in range(1200):
        try:
            if httpx2.get(url + path, timeout=1).status_code < 500:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not start")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def new_session(base: str, services: list[str]) -> dict:
    r = httpx2.post(
        f"{base}/sessions",
        json={"services": services, "seed": 1},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    r.raise_for_status()
    return r.json()


# ---- the quiet session ----------------------------------------------------------------------------
def quiet_proc(session: dict, orders, results) -> None:
    asyncio.run(_quiet(session, orders, results))


async def _quiet(session: dict, orders, results) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"}, timeout=60)
    async with Client(streamable_http_client(session["mcp_url"], http_client=http)) as c:
        await c.list_tools()
        for _ in range(30):
            await c.call_tool(*QUIET_TOOL)
        results.put("ready")
        while True:
            n = await asyncio.to_thread(orders.get)
            if n is None:
                return
            lat, errors = [], 0
            for _ in range(n):
                t = time.perf_counter()
                r = await c.call_tool(*QUIET_TOOL)
                lat.append(time.perf_counter() - t)
                errors += bool(r.is_error)
            results.put((lat, errors))


# ---- the attacks ----------------------------------------------------------------------------------
def attack_proc(kind: str, base: str, router: str, ready, stop, out) -> None:
    try:
        out.put(asyncio.run(ATTACK_FNS[kind](base, router, ready, stop)))
    except Exception as e:  # report, never hang the driver
        ready.set()
        out.put({"error": f"{type(e).__name__}: {e}"[:300]})


async def _agent(session: dict):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"}, timeout=120)
    return Client(streamable_http_client(session["mcp_url"], http_client=http))


async def _loop_calls(base: str, services: list[str], setup, call, ready, stop) -> dict:
    session = new_session(base, services)
    seen = {"calls": 0, "refused": 0, "codes": set()}
    async with await _agent(session) as c:
        for name, args in setup:
            await c.call_tool(name, args)
        ready.set()
        while not stop.is_set():
            name, args = call(seen["calls"])
            r = await c.call_tool(name, args)
            seen["calls"] += 1
            if r.is_error:
                seen["refused"] += 1
                seen["codes"].add(r.structured_content["error"]["type"])
    seen["codes"] = sorted(seen["codes"])
    return seen


async def a_sql(base, router, ready, stop):
    q = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
    return await _loop_calls(base, ["sql"], [], lambda i: ("sql__read_query", {"query": q}), ready, stop)


async def a_regex(base, router, ready, stop):
    setup = [("workspace__shell", {"command": "echo " + "a" * 5000 + "b > x.txt"})]
    cmd = {"command": "grep -E '(a|aa)+$' x.txt"}
    return await _loop_calls(base, ["workspace"], setup, lambda i: ("workspace__shell", cmd), ready, stop)


async def a_formulas(base, router, ready, stop):
    rows, cols = 200, [chr(65 + i) for i in range(20)]
    data = {
        str(r): {c: 1 if c == "A" else f"=SUM({chr(ord(c) - 1)}1:{chr(ord(c) - 1)}{rows})" for c in cols}
        for r in range(1, rows + 1)
    }
    session = new_session(base, ["sheets"])
    seen = {"calls": 0, "refused": 0, "codes": set()}
    async with await _agent(session) as c:
        made = await c.call_tool("sheets__google_sheets_create_spreadsheet", {"title": "chain", "data": data})
        sid = made.structured_content["data"]["spreadsheet_id"]
        ready.set()
        while not stop.is_set():
            r = await c.call_tool("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
            seen["calls"] += 1
            if r.is_error:
                seen["refused"] += 1
                seen["codes"].add(r.structured_content["error"]["type"])
    seen["codes"] = sorted(seen["codes"])
    return seen


async def a_bulk(base, router, ready, stop):
    agents = [{"email": f"a{i}@example.com", "name": f"Agent {i}", "ticket_scope": 1} for i in range(8000)]
    call = ("helpdesk__freshdesk_bulk_create_agents", {"agents_data": agents})
    return await _loop_calls(base, ["helpdesk"], [], lambda i: call, ready, stop)


async def a_copies(base, router, ready, stop):
    return await _copies(base, ready, stop, build_first=False)


async def a_budget(base, router, ready, stop):
    return await _copies(base, ready, stop, build_first=True)


async def _copies(base, ready, stop, build_first: bool) -> dict:
    """`copies` starts the window from one upload, so it sees the state built (and hashed, and
    read) up to the budget; `budget` builds it before the window and shows the steady state past
    the refusal: every copy refused, the 20 MB state read after every fifth."""
    blob = base64.b64encode(os.urandom(512 * 1024)).decode()
    session = new_session(base, ["files"])
    control = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    seen = {"calls": 0, "refused": 0, "codes": set(), "state_mb": 0.0}
    async with await _agent(session) as c:
        up = {"dropbox_path": "/big.bin", "source_uri": f"data:application/octet-stream;base64,{blob}"}
        await c.call_tool("files__dropbox_upload_file", up)
        if build_first:
            for j in range(100):
                r = await c.call_tool(
                    "files__dropbox_copy_file", {"from_path": "/big.bin", "to_path": f"/b{j}.bin"}
                )
                if r.is_error:
                    break
            await control.get(f"{base}/sessions/{session['session_id']}/state")
        ready.set()
        i = 0
        while not stop.is_set():
            i += 1
            r = await c.call_tool(
                "files__dropbox_copy_file", {"from_path": "/big.bin", "to_path": f"/c{i}.bin"}
            )
            seen["calls"] += 1
            if r.is_error:
                seen["refused"] += 1
                seen["codes"].add(r.structured_content["error"]["type"])
            if i % 5 == 0:
                st = await control.get(f"{base}/sessions/{session['session_id']}/state")
                seen["state_mb"] = len(st.content) / 1e6
    seen["codes"] = sorted(seen["codes"])
    return seen


async def a_forms(base, router, ready, stop):
    session = new_session(base, ["browser", "helpdesk"])
    web = httpx2.AsyncClient(headers={"Authorization": f"Bearer {session['agent_token']}"}, timeout=120)
    sid = session["session_id"]
    body = b"q=" + b"z" * 60000 + b"&click=e1"
    seen = {"calls": 0, "refused": 0, "codes": set()}
    await web.get(f"{base}/web/{sid}/")
    ready.set()
    while not stop.is_set():
        r = await web.post(f"{base}/web/{sid}/", content=body)
        seen["calls"] += 1
        if r.status_code >= 400:
            seen["refused"] += 1
            seen["codes"].add(r.status_code)
    calls = httpx2.get(f"{base}/sessions/{sid}/calls", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    seen["logged_calls"] = calls["count"]
    seen["codes"] = sorted(seen["codes"])
    return seen


async def a_streams(base, router, ready, stop):
    session = new_session(router, ["chat"])
    agent = {"Authorization": f"Bearer {session['agent_token']}"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "a", "version": "1"},
        },
    }
    seen = {"held": 0, "refused": 0, "codes": set()}
    async with httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=None), limits=httpx2.Limits(max_connections=None)
    ) as h:
        held = []
        for _ in range(100):
            r = await h.post(
                session["mcp_url"],
                json=init,
                headers={**agent, "Accept": "application/json, text/event-stream"},
            )
            hdrs = {
                **agent,
                "Accept": "text/event-stream",
                "mcp-session-id": r.headers.get("mcp-session-id", ""),
            }
            resp = await h.send(h.build_request("GET", session["mcp_url"], headers=hdrs), stream=True)
            if resp.status_code == 200:
                held.append(resp)
                seen["held"] += 1
            else:
                seen["refused"] += 1
                seen["codes"].add(resp.status_code)
                await resp.aclose()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        for resp in held:
            await resp.aclose()
    seen["codes"] = sorted(seen["codes"])
    return seen


async def a_slowloris(base, router, ready, stop):
    host, port = base.removeprefix("http://").split(":")
    socks: list[socket.socket] = []
    seen = {"opened": 0, "refused_503": 0}

    def open_one() -> None:
        s = socket.socket()
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            s.connect((host, int(port)))
        socks.append(s)
        seen["opened"] += 1

    for _ in range(1000):
        open_one()
    await asyncio.sleep(0.5)
    for s in socks:
        with contextlib.suppress(OSError):
            s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
    ready.set()
    while not stop.is_set():
        await asyncio.sleep(0.2)
    for s in socks:
        try:
            if s.recv(16).startswith(b"HTTP/1.1 503"):
                seen["refused_503"] += 1
        except OSError:
            pass
        s.close()
    return seen


ATTACK_FNS = {
    "sql": a_sql,
    "regex": a_regex,
    "formulas": a_formulas,
    "bulk": a_bulk,
    "copies": a_copies,
    "budget": a_budget,
    "forms": a_forms,
    "streams": a_streams,
    "slowloris": a_slowloris,
}


def p99(lat: list[float]) -> float:
    return statistics.quantiles(lat, n=100)[98] * 1000


def run_attack(kind: str, base: str, router: str, calls: int, rounds: int) -> dict:
    """Alone and attack windows interleaved, A B A B ... A, on one quiet session: each attack
    window's p99 is compared with the alone windows either side of it, so drift or a burst of
    noise from other processes lands in one round's ratio, not in the whole figure."""
    q = new_session(router if kind == "streams" else base, ["chat"])
    orders, results = mp.Queue(), mp.Queue()
    qp = mp.Process(target=quiet_proc, args=(q, orders, results), daemon=True)
    qp.start()
    assert results.get(timeout=120) == "ready"

    def window() -> tuple[list[float], int]:
        orders.put(calls)
        return results.get(timeout=300)

    alone, beside, errors, seen = [], [], 0, {}
    lat, e = window()
    alone.append(lat)
    errors += e
    for _ in range(rounds):
        ready, stop, out = mp.Event(), mp.Event(), mp.Queue()
        ap_ = mp.Process(target=attack_proc, args=(kind, base, router, ready, stop, out), daemon=True)
        ap_.start()
        ready.wait(180)
        time.sleep(0.3)  # the attack is under way
        lat, e = window()
        beside.append(lat)
        errors += e
        stop.set()
        seen = out.get(timeout=180)
        ap_.join(30)
        lat, e = window()
        alone.append(lat)
        errors += e
    orders.put(None)
    qp.join(30)
    a99 = [p99(x) for x in alone]
    b99 = [p99(x) for x in beside]
    ratios = [b / ((a99[i] + a99[i + 1]) / 2) for i, b in enumerate(b99)]
    every_alone = [x for w in alone for x in w]
    every_beside = [x for w in beside for x in w]
    return {
        "kind": kind,
        "alone_p99": a99,
        "beside_p99": b99,
        "ratios": ratios,
        "median": statistics.median(ratios),
        "worst": max(ratios),
        "a50": statistics.median(every_alone) * 1000,
        "b50": statistics.median(every_beside) * 1000,
        "pooled": p99(every_beside) / p99(every_alone),
        "errors": errors,
        "seen": seen,
        "rounds": rounds,
    }


def report(r: dict) -> None:
    ms = " ".join(f"{x:.1f}" for x in r["alone_p99"])
    bs = " ".join(f"{x:.1f}" for x in r["beside_p99"])
    rs = " ".join(f"{x:.2f}" for x in r["ratios"])
    print(
        f"{r['kind']:10} p99 ratio median {r['median']:4.2f}x worst {r['worst']:4.2f}x (target <= 2x) | "
        f"pooled {r['pooled']:4.2f}x | p50 alone {r['a50']:.2f} ms beside {r['b50']:.2f} ms | "
        f"quiet errors {r['errors']}\n"
        f"{'':10} alone p99 ms [{ms}] | beside p99 ms [{bs}] | per-round ratios [{rs}]\n"
        f"{'':10} attacker (last round) {r['seen']}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300, help="quiet calls per window")
    ap.add_argument(
        "--rounds", type=int, default=5, help="attack windows per attack (alone windows: one more)"
    )
    ap.add_argument("--attacks", default=",".join(ATTACKS))
    args = ap.parse_args()
    kinds = [k for k in args.attacks.split(",") if k]
    if unknown := sorted(set(kinds) - set(ATTACKS)):
        sys.exit(f"unknown attack(s): {', '.join(unknown)} (choose from {', '.join(ATTACKS)})")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryDirectory() as d:
        port, rport = _port(), _port()
        base, router = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{rport}"
        server = subprocess.Popen(
            [*CLI, "serve", "http", "--port", str(port), "--control-token", TOKEN, "--results", f"{d}/r.jsonl",
             "--state-budget", str(BUDGET)],
            env=env,
        )  # fmt: skip
        rtr = subprocess.Popen(
            [*CLI, "serve", "router", "--backend", base, "--port", str(rport), "--table", f"{d}/t.jsonl"],
            env=env,
        )
        try:
            wait_up(base)
            wait_up(router, "/router/backends")
            base_rss = rss_mb(server.pid)
            rows = []
            for kind in kinds:
                r = run_attack(kind, base, router, args.calls, args.rounds)
                rows.append(r)
                report(r)
            sessions = sum(1 + r["rounds"] for r in rows)
            rss = rss_mb(server.pid)
            bound = base_rss + sessions * BUDGET / 2**20
            print(
                f"server memory: {rss:.0f} MB resident after {sessions} sessions; bound (sessions x budget) + "
                f"base = {sessions} x {BUDGET >> 20} MB + {base_rss:.0f} MB = {bound:.0f} MB "
                f"({'within' if rss <= bound else 'OVER'})"
            )
            worst = max(rows, key=lambda r: r["median"])
            spike = max(rows, key=lambda r: r["worst"])
            print(
                f"worst attack by median p99 ratio: {worst['kind']} {worst['median']:.2f}x (target <= 2x); "
                f"worst single round of any attack: {spike['kind']} {spike['worst']:.2f}x"
            )
            if any(r["errors"] for r in rows):
                sys.exit(1)
        finally:
            for p in (rtr, server):
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    main()
