"""Persona worlds at scale: tasks from a large world's last day against tasks from a 1 MB world.

One run builds (or takes, with --world) a large persona world and a small one, generates tasks from
the last day of each, and measures per task, for both:
- the task line's bytes (s0 is a patch on the world's day, never the whole state);
- loading the task file: the first task (the world's day rebuilt from its patches, then cached)
  and each task after it;
- reset after the reference solution ran (env.reset(): copy-on-write, what an RL loop pays);
- the state hash after that episode's writes, and after the reset;
- a snapshot after the episode (it copies the tables the episode wrote, so it grows with them);
- a cold restore of s0 into a fresh environment (from_snapshot), for scale.
It prints each figure for both worlds and the ratio large / small; the target for reset and hash is
at most 2x, whatever the size of the state.

  python benchmarks/worlds.py                      # builds 2 personas x 30 days (large) and 3 x 3 (default)
  python benchmarks/worlds.py --world W@30 --small S   # worlds you built, e.g. the 10 x 30 large one
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compoworld.tasks.generator import Settings  # noqa: E402
from compoworld.tasks.model import load_tasks, save_tasks  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402
from compoworld.worlds import build_world, make_personas, open_world  # noqa: E402
from compoworld.worlds.builder import state_bytes  # noqa: E402


def build(out: Path, personas: int, days: int, size: str) -> Path:
    people, _ = make_personas(5, personas, size=size)
    t = time.perf_counter()
    summary = build_world(people, 5, days, out, size=size)
    print(
        f"built {out.name}: {len(summary['personas'])} personas x {days} days ({size}) in {time.perf_counter() - t:.1f}s"
    )
    return out


def measure(spec: str, n: int, where: Path, seed: int) -> dict[str, float]:
    path, _, day = spec.rpartition("@") if "@" in spec else (spec, "", "")
    w = open_world(path)
    last = int(day) if day else w.days
    mib = statistics.median(state_bytes(w.state(p["id"], last)) / 2**20 for p in w.meta["personas"])
    tasks, _ = generate(n, seed=seed, settings=Settings(world=f"{Path(path).resolve()}@{last}"))
    f = where / "tasks.jsonl"
    save_tasks(tasks, f)
    line_bytes = statistics.median(len(x) for x in f.read_bytes().splitlines())
    # loading: a fresh process's caches are cold; clear this one's
    from compoworld.tasks import model
    from compoworld.worlds import store

    store._LIVED.clear()
    store._PARTS.clear()
    store._seeded.cache_clear()
    model._SORTED_BASES.clear()
    model._TABLE_DIGESTS.clear()
    for x in store._OPEN.values():
        x._states.clear()
    store._OPEN.clear()
    from compoworld.tasks import generator

    generator.base_world.cache_clear()
    os.environ[store.ENV_PATH] = str(Path(path).resolve().parent)  # found by name and digest, as a user would
    t = time.perf_counter()
    loaded = load_tasks(f)
    load_all = time.perf_counter() - t
    t = time.perf_counter()
    load_tasks(f)  # every world day now cached: the per-task cost of the file format itself
    warm = (time.perf_counter() - t) / len(loaded)
    resets, hashes, clean, cold, snaps = [], [], [], [], []
    for task in loaded:
        env = task.environment()
        for _ in range(30):
            for c in task.reference_solution:
                env.call(c.tool, c.arguments)
            t = time.perf_counter_ns()
            env.state_hash()
            hashes.append(time.perf_counter_ns() - t)
            t = time.perf_counter_ns()
            env.reset()
            resets.append(time.perf_counter_ns() - t)
            t = time.perf_counter_ns()
            env.state_hash()
            clean.append(time.perf_counter_ns() - t)
        for _ in range(10):  # apart: a snapshot moves the base a later reset returns to
            for c in task.reference_solution:
                env.call(c.tool, c.arguments)
            t = time.perf_counter_ns()
            env.snapshot()
            snaps.append(time.perf_counter_ns() - t)
            env.reset()
        for _ in range(3):
            t = time.perf_counter_ns()
            type(env).from_snapshot(task.all_services, task.initial_state).state_hash()
            cold.append(time.perf_counter_ns() - t)
    return {
        "persona state MiB (median)": mib,
        "tasks": len(loaded),
        "task line KiB": line_bytes / 1024,
        "load: whole file, cold ms": 1e3 * load_all,
        "load: per task, warm ms": 1e3 * warm,
        "reset after the episode us": statistics.median(resets) / 1e3,
        "hash after the episode us": statistics.median(hashes) / 1e3,
        "hash after the reset us": statistics.median(clean) / 1e3,
        "snapshot after the episode us": statistics.median(snaps) / 1e3,
        "cold from_snapshot + hash ms": statistics.median(cold) / 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--world", help="a large world (DIR or DIR@DAY); default: build 2 personas x 30 days, large"
    )
    ap.add_argument(
        "--small", help="a small world (about 1 MB); default: build 3 personas x 3 days, default size"
    )
    ap.add_argument("--tasks", type=int, default=6, help="tasks from each world")
    ap.add_argument("--seed", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big = a.world or str(build(root / "large", 2, 30, "large"))
        small = a.small or str(build(root / "small", 3, 3, "default"))
        (root / "a").mkdir()
        (root / "b").mkdir()
        rows_big = measure(big, a.tasks, root / "a", a.seed)
        rows_small = measure(small, a.tasks, root / "b", a.seed)
    print(f"\n{'figure':34} {'large world':>14} {'1 MB world':>14} {'ratio':>8}  target")
    for key, v in rows_big.items():
        s = rows_small[key]
        target = "<= 2x" if key.startswith(("reset", "hash")) else ""
        ratio = v / s if s else float("inf")
        print(f"{key:34} {v:>14.3f} {s:>14.3f} {ratio:>7.2f}x  {target}")
    worst = max(rows_big[k] / rows_small[k] for k in rows_big if k.startswith(("reset", "hash")))
    print(
        f"\nreset and hash, large / 1 MB world: at most {worst:.2f}x ({'met' if worst <= 2 else 'NOT met'}: target <= 2x)"
    )


if __name__ == "__main__":
    main()
