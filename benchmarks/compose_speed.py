"""Verified composed tasks per second per core at the hard tier, and their size on disk.

    python benchmarks/compose_speed.py [--n 40] [--seed 3] [--k 5] [--difficulty hard]

Speed: `tasks generate --k 5 --difficulty hard` on one process (CPU seconds, so a busy machine
counts only this process's work), every gate and adversary run, the deterministic gate's
regeneration included. Baselines measured in the same run:
- plain gates: the same generation with the gates' shortcuts undone (every state verified in
  full, every attack run from s0 in every service, `env.diff` for each write, the attack suite
  replaying the reference, leave-one-out replays keeping every read and every service, the
  regeneration run to the end and compared byte for byte, the gate grounding and replaying the
  reference twice itself, checks in rubric order with their diagnoses, every check of s0 run
  (the guards too), no garbage-collector freeze); the kept task bytes must be identical, which shows the shortcuts decide as the plain
  gates do (the verifier's own caches, which never change a verdict, serve both);
- generation alone, once per task (what any pipeline pays), the floor no gate work can go under;
  the regeneration to the build's end is part of the gates' cost beyond it.
Where each ms goes: `--breakdown` prints the gates' phases per kept task.
Target: at least 20 verified tasks per second per core.

Storage: 10,000 such tasks on disk (extrapolated from the kept ones) as packed lines (what
`tasks generate` writes), against the same lines unpacked (s0 as a patch, every field plain) and
self-contained (`tasks export --full`). The 100 MB target is for 10,000 default tasks
(`benchmarks/taskgen.py`); the hard tier's worlds carry longer logs and histories by design, so
here the figure is printed against the default tier's line, not held to it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compoworld.tasks import adversaries, gates, pipeline  # noqa: E402
from compoworld.tasks.generator import Rejected, Settings, generate_task  # noqa: E402
from compoworld.tasks.model import Task, load_tasks, save_tasks  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402
from compoworld.verify import verifier  # noqa: E402


@contextlib.contextmanager
def plain_gates() -> Iterator[None]:
    """The gates with their shortcuts undone (what they cost before the speed work)."""
    saved = (
        verifier.Verdicts.passed,
        adversaries.Prefixes.run,
        gates._wrote,
        gates._untouched,
        adversaries.Asked.__init__,
    )
    later = (
        pipeline.Checkpoint,
        pipeline._frozen,
        gates._reached,
        verifier._FAILS_FIRST,
        verifier._Ctx.explain,
        gates._alone,
        gates._initially,
    )
    tasks: dict[int, Any] = {}
    init = verifier.Verdicts.__init__

    def remember(self: verifier.Verdicts, task: Task) -> None:
        init(self, task)
        tasks[id(self)] = task

    def full(self: verifier.Verdicts, final: dict[str, Any], answer: str | None = None, **_: Any) -> bool:
        return verifier.verify(tasks[id(self)], final, answer).passed

    def fresh(self: adversaries.Prefixes, calls: list[dict[str, Any]]) -> dict[str, Any]:
        self.env.restore(self.at[0])
        adversaries._run(self.env, calls)
        return self.env.snapshot()

    def diffed(env: Any, before: dict[str, Any]) -> bool:
        return any(
            ch.service not in env.services
            or ch.path.split("/", 1)[0] not in env.services[ch.service].ephemeral_tables
            for ch in env.diff(before, env.snapshot())
        )

    asked = saved[4]

    def replayed(self: Any, task: Task, env: Any, observed: Any = None) -> None:
        asked(self, task, env, None)

    @contextlib.contextmanager
    def unfrozen() -> Iterator[Any]:
        yield lambda: None

    pipeline.Checkpoint = lambda: None  # type: ignore[assignment,misc]
    pipeline._frozen = unfrozen
    gates._reached = lambda *a: {}
    verifier._FAILS_FIRST = {}
    verifier._Ctx.explain = True
    gates._alone = lambda *a: False
    gates._initially = lambda task, s0: verifier.verify_checks(  # every check on s0, guards too
        task.rubric, task.initial_state, s0, None, explain=False
    )
    verifier.Verdicts.__init__ = remember  # type: ignore[method-assign]
    verifier.Verdicts.passed = full  # type: ignore[method-assign]
    adversaries.Prefixes.run = fresh  # type: ignore[method-assign]
    gates._wrote = diffed
    gates._untouched = lambda a, b: False
    adversaries.Asked.__init__ = replayed  # type: ignore[method-assign]
    try:
        yield
    finally:
        verifier.Verdicts.__init__ = init  # type: ignore[method-assign]
        (
            verifier.Verdicts.passed,
            adversaries.Prefixes.run,
            gates._wrote,
            gates._untouched,
            adversaries.Asked.__init__,
        ) = saved  # type: ignore[method-assign]
        (
            pipeline.Checkpoint,
            pipeline._frozen,
            gates._reached,
            verifier._FAILS_FIRST,
            verifier._Ctx.explain,
            gates._alone,
            gates._initially,
        ) = later


@contextlib.contextmanager
def phases(into: dict[str, float]) -> Iterator[None]:
    """CPU seconds by phase of the pipeline (each phase's own time, the phases inside it apart)."""
    import gc

    from compoworld.core.environment import Environment
    from compoworld.tasks import generator, grounding, rubric, work_attacks

    spots = [
        (pipeline, "generate_task", "generation: the rest"),
        (generator, "generate_task", "generation: the rest"),
        (rubric, "derive", "generation: rubric.derive"),
        (grounding, "ground", "generation: grounding"),
        (pipeline, "run_gates", "gates: the rest (s0 verify, necessary's bookkeeping, no_leak)"),
        (gates, "replay", "gates: reference replays (solvable, necessary)"),
        (adversaries, "attack", "gates: adversaries (noop, spray, decoy, spam, collateral)"),
        (adversaries, "attack_suite", "gates: attack suite"),
        (work_attacks, "work_attacks", "gates: work attacks"),
        (adversaries.Prefixes, "run", "gates: adversaries' write runs"),
        (verifier.Verdicts, "passed", "gates: verdicts"),
        (Environment, "state_hash", "state hashes"),
    ]
    stack: list[float] = []
    saved = []

    def wrap(owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name)

        def timed_fn(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            stack.append(0.0)
            lab = label
            if label == "generation: the rest" and len(stack) > 1:  # inside the gates
                lab = "gates: regeneration to the build's end"
            try:
                return fn(*a, **k)
            finally:
                d = time.process_time() - t
                inner = stack.pop()
                into[lab] = into.get(lab, 0.0) + d - inner
                if stack:
                    stack[-1] += d

        saved.append((owner, name, fn))
        setattr(owner, name, timed_fn)

    for owner, name, label in spots:
        wrap(owner, name, label)
    # garbage collection, wherever it strikes
    began: list[float] = []

    def gc_cb(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began.append(time.process_time())
        elif began:
            into["(of which garbage collection)"] = (
                into.get("(of which garbage collection)", 0.0) + time.process_time() - began.pop()
            )

    gc.callbacks.append(gc_cb)
    try:
        yield
    finally:
        gc.callbacks.remove(gc_cb)
        for owner, name, fn in reversed(saved):
            setattr(owner, name, fn)


def timed(n: int, seed: int, settings: Settings) -> tuple[list[Task], dict[str, Any], float]:
    t = time.process_time()
    tasks, stats = generate(n, seed, settings, workers=1)
    return tasks, stats.summary(), time.process_time() - t


def main(n: int, seed: int, k: int, difficulty: str, breakdown: bool = False) -> None:
    settings = Settings(k=k, difficulty=difficulty)
    print(f"settings: --k {k} --difficulty {difficulty}, {n} tasks from seed {seed}, one process")
    for i in range(3):  # build the shared worlds and import everything outside the timings
        with contextlib.suppress(Rejected):
            gates.run_gates(Task.model_validate(generate_task(seed + 10_000, i, settings)))
    tasks, summary, fast = timed(n, seed, settings)
    with plain_gates():
        base_tasks, _, plain = timed(n, seed, settings)
    same = [t.to_json() for t in tasks] == [t.to_json() for t in base_tasks]
    t = time.process_time()
    for i in range(max(t.meta["index"] for t in tasks) + 1):  # every index the pipeline tried
        with contextlib.suppress(Rejected):
            Task.model_validate(generate_task(seed, i, settings))
    floor = time.process_time() - t
    rate, base_rate, floor_rate = len(tasks) / fast, len(base_tasks) / plain, len(tasks) / floor
    print(f"kept {len(tasks)}, rejected {summary['rejected'] or 'none'}")
    print(f"{'verified tasks/s/core':44} {rate:8.2f}   ({fast / len(tasks) * 1000:.0f} ms CPU a task)")
    print(
        f"{'  baseline: plain gates, same run':44} {base_rate:8.2f}   ratio {rate / base_rate:.2f}x; "
        f"same task bytes: {'yes' if same else 'NO'}"
    )
    print(
        f"{'  floor: generation alone, once a task':44} {floor_rate:8.2f}   "
        f"(gates cost {(fast - floor) / len(tasks) * 1000:.0f} ms a task beyond it)"
    )
    print("target >= 20 verified tasks/s/core:", "met" if rate >= 20 else "MISSED")
    with tempfile.TemporaryDirectory() as d:
        packed, plain_f, full = Path(d) / "p.jsonl", Path(d) / "u.jsonl", Path(d) / "f.jsonl"
        save_tasks(tasks, packed)
        plain_f.write_bytes(b"".join(t.to_line(pack=False) + b"\n" for t in tasks))
        save_tasks(tasks, full, full=True)
        t0 = time.perf_counter()
        back = load_tasks(packed)
        load = (time.perf_counter() - t0) / len(back) * 1000
        assert [x.to_json() for x in back] == [x.to_json() for x in tasks], "packed lines load differently"
        mb = {p: p.stat().st_size / len(tasks) * 10_000 / 1e6 for p in (packed, plain_f, full)}
    print(
        f"{'10,000 tasks on disk, packed':44} {mb[packed]:8.1f} MB   baseline unpacked {mb[plain_f]:.1f} MB "
        f"(ratio {mb[plain_f] / mb[packed]:.1f}x), full {mb[full]:.0f} MB; load {load:.2f} ms a task"
    )
    print("(the 100 MB target is for 10,000 default tasks: benchmarks/taskgen.py prints it)")
    if breakdown:
        spent: dict[str, float] = {}
        with phases(spent):
            kept, _, total = timed(n, seed, settings)
        print(f"where the CPU goes, ms per kept task ({total / len(kept) * 1000:.0f} in all):")
        for what, sec in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(f"  {what:60} {sec / len(kept) * 1000:7.1f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--difficulty", default="hard", choices=("easy", "medium", "hard"))
    ap.add_argument("--breakdown", action="store_true", help="also print the CPU per phase")
    a = ap.parse_args()
    main(a.n, a.seed, a.k, a.difficulty, a.breakdown)
