"""The viewer at 10,000 episodes: how long a page takes, against parsing the run per request.

Builds a run of N episodes (default 10,000) from real oracle episodes of generated tasks (each a
whole record: messages, steps, envelopes, checks; about 20 KB), serves it with `compoworld view`'s
app on uvicorn, and times, as medians over repeated requests:

- indexing the run once at startup (one pass, a summary row and a byte offset per line);
- the run page (figures, charts, failure classes, the first 50 episodes);
- a page of the episode list deep in the run (the API the page's "load more" calls);
- one episode's page (read by its offset, replayed against the task for its diffs);
- in Chromium (where installed): navigating to the run page until it has loaded.

Baseline, measured in the same run: what a viewer without the index pays per request, parsing every
line of episodes.jsonl (`rollout.runner.load_run`) and summarising it. Target (issue 29): a page of a
10,000-episode run in under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def build_run(root: Path, n: int) -> tuple[Path, Path]:
    from compoworld.agents.policies import OracleAgent
    from compoworld.rollout.runner import RunConfig, file_sha, run_eval
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.model import save_tasks
    from compoworld.tasks.pipeline import generate

    tasks, _ = generate(40, seed=0, settings=Settings())
    tasks_file = root / "tasks.jsonl"
    save_tasks(tasks, tasks_file)
    seed_run = root / "seed_run"
    cfg = RunConfig(str(tasks_file), file_sha(tasks_file), "oracle", 1, "direct", 40, 200_000, 600.0)
    asyncio.run(run_eval(tasks, OracleAgent(), cfg, seed_run))
    records = [json.loads(x) for x in (seed_run / "episodes.jsonl").read_text().splitlines()]
    big = root / "big"
    big.mkdir()
    (big / "config.json").write_text(
        json.dumps({**json.loads((seed_run / "config.json").read_text()), "k": 1})
    )
    with (big / "episodes.jsonl").open("w") as f:
        for i in range(n):
            rec = dict(records[i % len(records)])
            rec["sample"] = i // len(records)
            if i % 4 == 0:  # a quarter fail, so the failure classes and charts have work to do
                rec["V"], rec["score"] = 0, 0.0
                rec["checks"] = [{**c, "passed": j != 0} for j, c in enumerate(rec["checks"])]
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    return tasks_file, big


def median_ms(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import httpx
    import uvicorn

    from compoworld.rollout.metrics import summarize
    from compoworld.rollout.runner import load_run
    from compoworld.view import Viewer, view_app

    root = Path(tempfile.mkdtemp(prefix="view-bench-"))
    try:
        tasks_file, big = build_run(root, args.episodes)
        size = (big / "episodes.jsonl").stat().st_size
        t = time.perf_counter()
        viewer = Viewer(tasks_file, [big])
        index_ms = (time.perf_counter() - t) * 1000
        run = viewer.runs["big"]
        last = run.rows[-1]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(view_app(viewer), host="127.0.0.1", port=port, log_level="error")
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        client = httpx.Client(base_url=base, timeout=60)
        urls = {
            "run page (charts + first 50)": "/runs/big",
            "episode list, page at 9,900": f"/api/runs/big/episodes?offset={args.episodes - 100}&limit=100&html=1",
            "episode page (last episode)": f"/runs/big/episodes/{last.task_id}/{last.sample}",
            "task list (first 50)": "/tasks",
        }
        for u in urls.values():  # warm: first requests build the caches a session keeps
            assert client.get(u).status_code == 200, u
        rows = [(name, median_ms(lambda u=u: client.get(u), args.repeat)) for name, u in urls.items()]

        def naive() -> None:
            _, eps, _ = load_run(big)
            summarize(eps, 1)

        baseline = median_ms(naive, max(1, args.repeat // 2))
        browser_ms = None
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                b = pw.chromium.launch(
                    executable_path=chromium,
                    args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                page = b.new_page()
                page.goto(f"{base}/runs/big")
                browser_ms = median_ms(lambda: page.goto(f"{base}/runs/big", wait_until="load"), args.repeat)
                b.close()
        server.should_exit = True
        print(
            f"run: {args.episodes} episodes, {size / 1e6:.0f} MB of episodes.jsonl; indexed once in {index_ms:.0f} ms"
        )
        print(
            f"{'figure':34} {'median':>10} {'baseline (parse the run per request)':>38} {'ratio':>8}  target"
        )
        for name, ms in rows:
            print(f"{name:34} {ms:>8.1f}ms {baseline:>36.1f}ms {baseline / ms:>7.1f}x  < 1000 ms")
        if browser_ms is not None:
            print(
                f"{'Chromium: run page to load':34} {browser_ms:>8.1f}ms {baseline:>36.1f}ms {baseline / browser_ms:>7.1f}x  < 1000 ms"
            )
        else:
            print("Chromium: not installed, browser timing skipped")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
