"""Generating a verified task set: run the generator, apply every gate, count rejections by cause."""

from __future__ import annotations

import contextlib
import gc
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from compoworld.core.library import Library, chosen, using
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Checkpoint, Rejected, Settings, generate_task
from compoworld.tasks.model import Task


@dataclass
class Stats:
    kept: int = 0
    rejected: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    service_sets: set = field(default_factory=set)
    move_sequences: set = field(default_factory=set)

    def summary(self) -> dict:
        return {
            "kept": self.kept,
            "rejected": dict(self.rejected),
            "distinct_service_sets": len(self.service_sets),
            "distinct_move_sequences": len(self.move_sequences),
            "seconds": round(self.seconds, 2),
            "tasks_per_second": round(self.kept / self.seconds, 1) if self.seconds else None,
        }


FULL_EVERY = 16


def make_one(seed: int, index: int, settings: Settings) -> tuple[Task | None, str | None]:
    """A task that passed every gate, or the name of the gate (or stage) that rejected it."""
    # the regeneration stops where the build ends if it drew the same; one task in FULL_EVERY is
    # regenerated in full and compared byte for byte, so the claim that what follows the build is
    # pure is checked in every run, not only by `tasks check`
    checkpoint = Checkpoint() if index % FULL_EVERY else None
    try:
        task = Task.model_validate(generate_task(seed, index, settings, checkpoint))
    except Rejected as e:
        return None, e.gate
    # the first failing gate is reported
    gates = run_gates(task, regenerate=True, stop_early=True, checkpoint=checkpoint)
    failed = [g for g, why in gates.items() if why and not g.startswith("adversary:")]
    if failed:
        if failed[0] == "adversarial":
            return None, next(g for g, why in gates.items() if why and g.startswith("adversary:"))
        return None, failed[0]
    # every gate and adversary passed (`tasks check` re-runs them and reports each); one word, not
    # fourteen entries, because a task file holds thousands of tasks
    task.meta["gates"] = "pass"
    return task, None


def _chunk(args: tuple[int, int, int, Settings]) -> list[tuple[int, Task | None, str | None]]:
    seed, start, stop, settings = args
    return [(i, *make_one(seed, i, settings)) for i in range(start, stop)]


def generate(
    n: int,
    seed: int,
    settings: Settings,
    workers: int = 1,
    on_progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
    library: Library | None = None,
) -> tuple[list[Task], Stats]:
    """`_generate` on `library`'s services (default: the active library; forked workers inherit it,
    Ray tasks are sent it)."""
    with using(library):
        return _generate(n, seed, settings, workers, on_progress, ray_address)


def _generate(
    n: int,
    seed: int,
    settings: Settings,
    workers: int = 1,
    on_progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> tuple[list[Task], Stats]:
    """Exactly `n` kept tasks (indices in order), with statistics. Results do not depend on `workers`
    or on where they run: with `ray_address` ("auto", "local" or a cluster address) the chunks are
    Ray tasks, gathered in index order, so the output is byte-identical to a local run."""
    if settings.pool:
        from compoworld.tasks.moves import moves_by_service

        known = set(moves_by_service())
        if any(s not in known for s in settings.pool):  # a compiled service with families needs no moves
            from compoworld.tasks.families.compiled import compiled_families

            known |= {f.name.split(".")[1] for f in compiled_families().values()}
        unknown = [s for s in settings.pool if s not in known]
        if unknown:
            raise RuntimeError(
                f"no moves for service(s) {', '.join(unknown)}; services with moves: {', '.join(sorted(known))}"
            )
        if settings.k > len(settings.pool):
            raise RuntimeError(f"K={settings.k} is more than the {len(settings.pool)} services given")
    stats = Stats()
    kept: list[Task] = []
    t0 = time.perf_counter()
    results = (
        _results_ray(seed, settings, ray_address)
        if ray_address is not None
        else _results(seed, settings, workers)
    )
    with _frozen() as freeze:
        _collect(n, stats, kept, results, on_progress, freeze)
    stats.seconds = time.perf_counter() - t0
    return kept, stats


@contextlib.contextmanager
def _frozen() -> Iterator[Callable[[], None]]:
    """What lives through the whole run (the library, the seeded worlds, the caches; built before
    and by the first task) is kept out of the garbage collector's full passes, which otherwise
    scan it again and again (tens of ms each), and the young generation is collected every 50k
    allocations, not 700 (a task allocates millions, few of them in cycles); both are handed back
    when the run ends."""
    was = gc.get_threshold()

    def freeze() -> None:
        gc.collect()  # garbage is collected, not kept for the whole run
        gc.freeze()

    freeze()
    gc.set_threshold(max(was[0], 50_000), *was[1:])
    try:
        yield freeze
    finally:
        gc.set_threshold(*was)
        gc.unfreeze()


def _collect(
    n: int,
    stats: Stats,
    kept: list[Task],
    results: Iterator[tuple[int, Task | None, str | None]],
    on_progress: Callable[[int], None] | None,
    freeze: Callable[[], None],
) -> None:
    for i, task, why in results:
        if i == 0:
            freeze()  # the first task built the world and filled the caches
        if task is None:
            stats.rejected[why] += 1
            # bounded: settings that reject every index must stop with the causes, not run forever
            if sum(stats.rejected.values()) > 10 * n + 100:
                raise RuntimeError(
                    f"too many rejections ({dict(stats.rejected)}) with {stats.kept} of {n} kept; check the settings"
                )
            continue
        kept.append(task)
        stats.kept += 1
        stats.service_sets.add(tuple(task.services))
        stats.move_sequences.add(
            (tuple(task.services), tuple(f"{x.service}.{x.move}" for x in task.dependency_graph.nodes))
        )
        if on_progress:
            on_progress(1)
        if stats.kept >= n:
            break


def _results(seed: int, settings: Settings, workers: int) -> Iterator[tuple[int, Task | None, str | None]]:
    chunk = 8
    if workers <= 1:
        i = 0
        while True:
            yield from _chunk((seed, i, i + chunk, settings))
            i += chunk
    with ProcessPoolExecutor(max_workers=workers) as pool:
        start = 0
        while True:
            batch = [(seed, start + k * chunk, start + (k + 1) * chunk, settings) for k in range(workers * 2)]
            start += workers * 2 * chunk
            for res in pool.map(_chunk, batch):
                yield from res


def _results_ray(
    seed: int, settings: Settings, address: str
) -> Iterator[tuple[int, Task | None, str | None]]:
    """The same chunks as `_results`, run as Ray tasks a window at a time and yielded in order."""
    from compoworld.core.cluster import connect

    ray = connect(address)
    remote = ray.remote(_chunk_json)
    chunk, window = 8, max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    start = 0
    pending = []
    try:
        while True:
            while len(pending) < window:
                pending.append(remote.remote((seed, start, start + chunk, settings), chosen()))
                start += chunk
            for i, tj, why in ray.get(pending.pop(0)):
                yield i, (Task.model_validate_json(tj) if tj is not None else None), why
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _chunk_json(
    args: tuple[int, int, int, Settings], library: Library | None = None
) -> list[tuple[int, bytes | None, str | None]]:
    """A chunk with tasks as their canonical bytes (what crosses the cluster is what is written)."""
    with using(library):
        return [(i, t.to_json() if t is not None else None, why) for i, t, why in _chunk(args)]
