"""The computer interface: screenshot p50/p99, an action's round trip, sessions per browser process,
beside bare Playwright on the same Chromium screenshotting the same page (HTML served from memory).

Targets: an uncached screenshot within 1.5x of bare Playwright's; a cached one (unchanged page) <= 1 ms.
Run: .venv/bin/python benchmarks/computer.py [--n 40] [--sessions 16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from compoworld.core.environment import Environment
from compoworld.interfaces.computer import LAUNCH_ARGS, ORIGIN, BrowserPool, chromium_path
from compoworld.interfaces.webapp import WebApp

SERVICES = ["browser", "chat", "computer", "email", "helpdesk"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def env_on(pool: BrowserPool) -> Environment:
    env = Environment(SERVICES, seed=6, size="small")
    env.services["computer"].pool = pool
    return env


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def bare(html: dict[str, bytes], n: int, at: tuple[int, int]) -> tuple[list[float], list[float]]:
    """Bare Playwright: the same pages from memory, screenshot; and click a link + load + screenshot."""
    from playwright.async_api import async_playwright

    async def run() -> tuple[list[float], list[float]]:
        pw = await async_playwright().start()
        b = await pw.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
        ctx = await b.new_context(viewport={"width": 1280, "height": 800})

        async def route(r):
            path = r.request.url[len(ORIGIN) :].split("?")[0]
            await r.fulfill(status=200, headers={"content-type": html[path][0]}, body=html[path][1])

        await ctx.route("**/*", route)
        page = await ctx.new_page()
        await page.goto(ORIGIN + "/tickets")
        shots, clicks = [], []
        for _ in range(n):
            t = time.perf_counter()
            await page.screenshot(type="png", animations="disabled", caret="hide")
            shots.append((time.perf_counter() - t) * 1000)
        for _ in range(n):
            await page.goto(ORIGIN + "/")
            t = time.perf_counter()
            async with page.expect_navigation(wait_until="load"):
                await page.mouse.click(*at)  # the Tickets app in the sidebar
            await page.screenshot(type="png", animations="disabled", caret="hide")
            clicks.append((time.perf_counter() - t) * 1000)
        await b.close()
        await pw.stop()
        return shots, clicks

    return asyncio.run(run())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--sessions", type=int, default=16)
    a = ap.parse_args()
    if chromium_path() is None:
        sys.exit("no Chromium: apt-get install chromium (or set COMPOWORLD_CHROMIUM)")
    env = env_on(BrowserPool())
    app = WebApp(env)
    pages = {}
    for p in ("/", "/tickets", "/_assets/DejaVuSans.ttf", "/_assets/DejaVuSans-Bold.ttf"):
        st, h, body = app.handle("GET", p)
        pages[p] = (h["content-type"], body)
    cold = BrowserPool(cache_entries=0)  # every screenshot rendered
    e = env_on(cold)
    e.call("computer__screenshot", {})
    home = e.call("computer__screenshot", {"marks": True})["data"]
    tk = next(m for m in home["marks"] if m["label"] == "Tickets")
    b_shot, b_click = bare(pages, a.n, (tk["x"], tk["y"]))
    e.call("computer__click", {"x": tk["x"], "y": tk["y"]})
    ours = timed(lambda: e.call("computer__screenshot", {}), a.n)

    def click_round_trip() -> None:
        e.call("computer__key", {"combo": "alt+Left"})  # back home, untimed below

    clicks = []
    for _ in range(a.n):
        click_round_trip()
        t = time.perf_counter()
        r = e.call("computer__click", {"x": tk["x"], "y": tk["y"]})
        clicks.append((time.perf_counter() - t) * 1000)
        assert r["success"] and r["data"]["url"] == "/tickets", r

    warm = BrowserPool()
    w = env_on(warm)
    w.call("computer__screenshot", {})
    cached = timed(lambda: w.call("computer__screenshot", {}), max(a.n, 200))
    assert warm.renders == 1

    # sessions per browser process: the Chromium tree's memory (unique set size) with 1, then N sessions
    import psutil

    cold.close()
    warm.close()

    def chromium_rss() -> int:
        me = psutil.Process()
        return sum(
            c.memory_full_info().uss
            for c in me.children(recursive=True)
            if "chrom" in (c.name() or "").lower()
        )

    many = BrowserPool()
    envs = [env_on(many)]
    envs[0].call("computer__screenshot", {})
    one = chromium_rss()
    for _ in range(a.sessions - 1):
        s = env_on(many)
        s.call("computer__screenshot", {})
        envs.append(s)
    per = (chromium_rss() - one) / max(1, a.sessions - 1)
    per_8g = int((8 * 2**30 - one) / per) if per > 0 else 0

    print(f"{'figure':44} {'p50':>9} {'p99':>9}   baseline (bare Playwright) p50/p99   ratio p50")
    rows = [
        ("screenshot, rendered (no cache)", ours, "page.screenshot", b_shot),
        ("click a link: load + screenshot (round trip)", clicks, "mouse.click + load + screenshot", b_click),
    ]
    for name, xs, bname, bs in rows:
        r = statistics.median(xs) / statistics.median(bs)
        print(
            f"{name:44} {pct(xs, 0.5):7.2f}ms {pct(xs, 0.99):7.2f}ms   {bname:32} {pct(bs, 0.5):6.2f}/{pct(bs, 0.99):6.2f}ms"
            f"  {r:5.2f}x  (target <= 1.5x)"
        )
    print(
        f"{'screenshot, unchanged page (cached)':44} {pct(cached, 0.5):7.3f}ms {pct(cached, 0.99):7.3f}ms   target <= 1 ms"
    )
    print(
        f"sessions per browser process: {a.sessions} sessions on one Chromium, {per / 2**20:.1f} MiB each "
        f"(first {one / 2**20:.0f} MiB) -> about {per_8g} sessions in 8 GiB"
    )
    for p in (many,):
        p.close()


if __name__ == "__main__":
    main()
