"""Verified tasks per second on one core, every gate and adversary included (regeneration too).

Baseline, measured in the same run: generating the same tasks without any gate, so the ratio
shows what verification costs. By default at --k 5 (composed work, `tasks.compose`); --k 0 for the
hand-built families at their own K. Target: at least 20 verified tasks per second per core, with the
grounded gate and all six adversaries (noop, spray, decoy, collateral, spam, answer dump).

Also the size on disk of 10,000 tasks (extrapolated from the kept ones), compact (s0 as a patch on
the seeded base world) against full (s0 embedded); target: under 100 MB uncompressed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compoworld.tasks.generator import Settings, base_world, generate_task  # noqa: E402
from compoworld.tasks.model import load_tasks, save_tasks  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402


def main(n: int = 200, seed: int = 1, k: int = 5, difficulty: str = "") -> None:
    """At --k 5 (the issue's figure) tasks are composed work; --k 0 measures the hand-built families."""
    settings = Settings(k=k, difficulty=difficulty)
    print(f"settings: k={k or 'each family'}, difficulty={difficulty or 'default for K'}")
    for block in range(0, n, 100):  # build the shared worlds outside the timings
        generate_task(seed, block, settings)
    t = time.perf_counter()
    raw = 0
    for i in range(n):
        try:
            generate_task(seed, i, settings)
            raw += 1
        except Exception:  # noqa: BLE001 (a rejected plan still costs time)
            pass
    bare = time.perf_counter() - t
    tasks, stats = generate(n, seed, settings, workers=1)
    s = stats.summary()
    print(
        f"tasks: {len(tasks)} kept, rejected {s['rejected'] or 'none'}; {s['distinct_service_sets']} distinct service sets"
    )
    print(f"{'generation without gates':36} {raw / bare:8.1f} tasks/s")
    print(
        f"{'verified (every gate and adversary)':36} {s['tasks_per_second']:8.1f} tasks/s   gates cost {bare / raw * 1000:.1f} -> "
        f"{stats.seconds / len(tasks) * 1000:.1f} ms per task ({(stats.seconds / len(tasks)) / (bare / raw):.1f}x)"
    )
    print("target >= 20 verified tasks/s/core:", "met" if s["tasks_per_second"] >= 20 else "MISSED")
    with tempfile.TemporaryDirectory() as d:
        compact, full = Path(d) / "compact.jsonl", Path(d) / "full.jsonl"
        save_tasks(tasks, compact)
        save_tasks(tasks, full, full=True)
        t = time.perf_counter()
        back = load_tasks(compact)
        load = (time.perf_counter() - t) / len(back) * 1000
        assert [x.to_json() for x in back] == [x.to_json() for x in tasks], "compact rebuild differs"
        c, f = (p.stat().st_size / len(tasks) * 10_000 / 1e6 for p in (compact, full))
    print(
        f"{'10,000 tasks on disk, compact':36} {c:8.1f} MB   full {f:.1f} MB ({f / c:.1f}x); load {load:.2f} ms a task"
    )
    print("target < 100 MB for 10,000 tasks:", "met" if c < 100 else "MISSED")
    base_world.cache_clear()


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=200)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--difficulty", default="", choices=("", "easy", "medium", "hard"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    main(a.n, a.seed, a.k, a.difficulty)
