"""Rollouts on Ray: episodes per second with 1 and 2 actors on a local cluster, and what the Ray path
adds per tool step against the local runner.

All runs play the same oracle episodes (every reference turn, then `finish`) of the same tasks,
k samples each, through `run_eval`, so only where episodes run differs:
- baseline, measured in the same run: the local asyncio runner in this process;
- Ray with 1 actor and with 2 actors (`rollout.cluster.RayExecutor`), the driver writing the run.

Per-step overhead = (Ray wall time - local wall time) / tool steps, at 1 actor. On a 2-core machine
the second actor has at most one core of its own, so the 2-actor figure shows scheduling, not scale.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(n_tasks: int = 40, k: int = 4) -> None:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    from compoworld.agents.policies import OracleAgent
    from compoworld.rollout.cluster import RayExecutor, connect
    from compoworld.rollout.runner import RunConfig, load_run, run_eval
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    tasks = generate(n_tasks, 3, Settings())[0]
    steps = sum(len({c.turn for c in t.reference_solution}) + 1 for t in tasks) * k
    cfg = RunConfig("bench", "bench", "oracle", k, "direct", 40, 200_000, 600.0)
    ray = connect("local", num_cpus=2)
    rows = []
    with tempfile.TemporaryDirectory() as d:

        def timed(name: str, execute=None) -> float:
            t = time.perf_counter()
            asyncio.run(run_eval(tasks, OracleAgent(), cfg, Path(d) / name, concurrency=32, execute=execute))
            wall = time.perf_counter() - t
            eps = load_run(Path(d) / name)[1]
            assert len(eps) == n_tasks * k and all(e["V"] == 1 for e in eps), name
            return wall

        timed("warm")  # build the shared worlds once
        local = timed("local")
        for actors in (1, 2):
            ex = RayExecutor("local", actors, {"kind": "oracle"}, cfg, per_actor=32)
            ray.get([a.pid.remote() for a in ex.actors])  # actors up before the clock starts
            rows.append((actors, timed(f"ray{actors}", ex)))
            ex.close()
    ray.shutdown()
    episodes = n_tasks * k
    print(f"{episodes} oracle episodes ({steps} assistant turns) of {n_tasks} tasks, k={k}")
    print(f"{'path':28} {'wall s':>8} {'episodes/s':>12} {'ratio to local':>15}")
    print(f"{'local runner (baseline)':28} {local:8.2f} {episodes / local:12.1f} {1.0:15.2f}")
    for actors, wall in rows:
        print(f"{f'Ray, {actors} actor(s)':28} {wall:8.2f} {episodes / wall:12.1f} {local / wall:15.2f}")
    one = rows[0][1]
    print(f"Ray path overhead per assistant turn (1 actor vs local): {(one - local) / steps * 1e3:.3f} ms")


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:3]))
