"""Curriculum from failures: generate where a model fails, keep a floor everywhere, grow K and L.

`--target RUN_DIR` reads a run's episodes (their task's family, K, difficulty and service set) and
weights the workflow families by their failure rate. A family the run saw few times is shrunk toward
a prior: the failure rate of what it shares with families the run did see (its K, its difficulty
tier, its services), so service sets and knobs inform families the run never drew. Each family then
gets `floor / F` of the tasks for coverage, and the rest in proportion to its failure rate.

`--schedule N` makes N rounds: round r draws from the families whose K is at most the r-th step of a
ladder from the smallest to the largest K, and (with --walk MIN:MAX) walks whose longest length grows
from MIN to MAX; the same failure weights apply inside each round.

Every cell (a family in a round) is an ordinary generation with `families=(name,)` and a seed derived
from the run's seed and the cell, so every task regenerates from its own meta and passes every gate;
`meta["curriculum"]` records the weights it was drawn with.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from compoworld.tasks.generator import Settings, eligible_families
from compoworld.tasks.model import Task

PRIOR_WEIGHT = 2.0  # episodes' worth of the prior in a family's shrunk failure rate
KNOBS = ("K", "difficulty", "service_set", "service")


def tier_of(meta: dict[str, Any]) -> str:
    """The difficulty tier a task records (generator with tiers), else one derived from its work."""
    d = meta.get("difficulty")
    for tier in (
        meta.get("tier"),
        d.get("tier") if isinstance(d, dict) else d,
        (meta.get("settings") or {}).get("difficulty"),
    ):
        if isinstance(tier, str) and tier:
            return tier
    d = d if isinstance(d, dict) else {}
    decisions = int(d.get("decisions") or 0) + int(d.get("aggregates") or 0)
    calls = int(d.get("tool_calls") or 0)
    return "hard" if decisions >= 3 or calls >= 15 else "medium" if decisions >= 2 or calls >= 8 else "easy"


@dataclass
class FailureTable:
    """Episodes and failures per value of each dimension (family and the knobs)."""

    counts: dict[str, dict[str, list[int]]] = field(default_factory=lambda: defaultdict(dict))
    episodes: int = 0
    failures: int = 0

    def add(self, dim: str, value: str, failed: bool) -> None:
        c = self.counts[dim].setdefault(value, [0, 0])
        c[0] += 1
        c[1] += int(failed)

    def rate(self, dim: str, value: str) -> tuple[int, float] | None:
        c = self.counts.get(dim, {}).get(value)
        return (c[0], c[1] / c[0]) if c and c[0] else None

    def as_json(self) -> dict[str, Any]:
        return {
            dim: {v: {"episodes": n, "failure_rate": round(f / n, 4)} for v, (n, f) in sorted(vals.items())}
            for dim, vals in self.counts.items()
        }


def failure_table(episodes: list[dict[str, Any]], metas: dict[str, dict[str, Any]]) -> FailureTable:
    """Failures by family and knob. `metas` maps task ids to their task's meta (a run's task file);
    an episode whose task is not there counts by what the episode itself records (K, services)."""
    t = FailureTable()
    for e in episodes:
        failed = not e.get("V")
        meta = metas.get(e.get("task_id", ""), {})
        services = sorted(e.get("services") or [])
        t.episodes += 1
        t.failures += int(failed)
        if meta.get("family"):
            t.add("family", meta["family"], failed)
        k = meta.get("K", e.get("K"))
        if k is not None:
            t.add("K", str(k), failed)
        if meta:
            t.add("difficulty", tier_of(meta), failed)
        if services:
            t.add("service_set", ",".join(services), failed)
            for s in services:
                t.add("service", s, failed)
    return t


@dataclass(frozen=True)
class Arm:
    """What the curriculum weighs: a workflow family, or (for composed work) a K of the tier."""

    name: str
    k: int
    services: tuple[str, ...]
    override: dict[str, Any]


def arms(settings: Settings) -> list[Arm]:
    """The families the settings allow; where they give composed work instead (a tier, K >= 4),
    each K the tier allows."""
    from compoworld.tasks import generator

    composed = getattr(generator, "uses_composition", None)
    if composed is not None and composed(settings):
        from compoworld.tasks.compose import TIERS

        tier = settings.difficulty or ("hard" if settings.k >= 6 else "medium" if settings.k >= 4 else "easy")
        lo, hi = TIERS[tier]["k"]
        ks = [settings.k] if settings.k else list(range(lo, hi + 1))
        return [Arm(f"K={k}", k, (), {"k": k}) for k in ks]
    return [
        Arm(f.name, len(f.services), tuple(sorted(f.services)), {"families": (f.name,)})
        for f in eligible_families(settings)
    ]


def arm_rates(items: list[Arm], table: FailureTable) -> dict[str, dict[str, Any]]:
    """Per arm: its observed episodes and failure rate, the prior from its knobs, and the shrunk rate."""
    overall = table.failures / table.episodes if table.episodes else 0.5
    out = {}
    for a in items:
        evidence: list[tuple[int, float]] = []
        knobs = [("K", str(a.k))]
        if a.services:
            knobs.append(("service_set", ",".join(a.services)))
        for dim, v in knobs:
            if (r := table.rate(dim, v)) is not None:
                evidence.append(r)
        evidence.extend(r for s in a.services if (r := table.rate("service", s)) is not None)
        n_ev = sum(n for n, _ in evidence)
        prior = sum(n * r for n, r in evidence) / n_ev if n_ev else overall
        seen = table.rate("family", a.name) if a.services else table.rate("K", str(a.k))
        n, rate = seen if seen is not None else (0, 0.0)
        shrunk = (n * rate + PRIOR_WEIGHT * prior) / (n + PRIOR_WEIGHT)
        out[a.name] = {
            "episodes": n,
            "failure_rate": round(rate, 4),
            "prior": round(prior, 4),
            "rate": shrunk,
        }
    return out


def shares(rates: dict[str, float], floor: float) -> dict[str, float]:
    """floor / F each, and the rest in proportion to the rates (evenly where every rate is 0)."""
    if not rates:
        return {}
    f = len(rates)
    total = sum(rates.values())
    return {name: floor / f + (1 - floor) * (r / total if total > 0 else 1 / f) for name, r in rates.items()}


def allocate(n: int, share: dict[str, float], floor: float) -> dict[str, int]:
    """Whole counts summing to n by largest remainder, none below its floor: floor(n * floor / F),
    and at least one task per family whenever n covers every family."""
    if not share:
        return {}
    names = sorted(share)
    minimum = max(math.floor(n * floor / len(names) + 1e-9), 1 if n >= len(names) else 0)
    exact = {k: n * share[k] for k in names}
    counts = {k: max(minimum, math.floor(exact[k])) for k in names}
    while sum(counts.values()) < n:  # hand out the remainders, largest first
        k = max(names, key=lambda x: (exact[x] - counts[x], share[x], x))
        counts[k] += 1
    while sum(counts.values()) > n:  # the floors took too much: take back from the largest
        k = max((x for x in names if counts[x] > minimum), key=lambda x: (counts[x] - exact[x], counts[x], x))
        counts[k] -= 1
    return counts


def cell_seed(seed: int, *parts: Any) -> int:
    h = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


@dataclass
class Round:
    index: int
    max_k: int
    walk: tuple[int, int]
    counts: dict[str, int]
    weights: dict[str, float]
    made: dict[str, int] = field(default_factory=dict)  # what each cell made (after top-ups)
    skipped: dict[str, str] = field(default_factory=dict)  # cells that could not make their tasks, and why


def k_ladder(items: list[Arm], rounds: int) -> list[int]:
    """The largest K of each round: from the smallest K the arms have to the largest."""
    ks = sorted({a.k for a in items})
    if rounds <= 1 or len(ks) == 1:
        return [ks[-1]] * max(rounds, 1)
    return [ks[min(len(ks) - 1, math.ceil((r + 1) * len(ks) / rounds) - 1)] for r in range(rounds)]


def walk_ladder(settings: Settings, rounds: int, own: tuple[int, int] | None = None) -> list[tuple[int, int]]:
    """Each round's walk range: the longest walk grows from --walk's MIN to its MAX (or across `own`,
    the composed tier's range, where --walk is not given)."""
    lo, hi = (settings.walk_min, settings.walk_max) if settings.walk_max or own is None else own
    if not hi or rounds <= 1:
        return [(settings.walk_min, settings.walk_max)] * max(rounds, 1)
    return [(lo, max(lo, round(lo + (hi - lo) * (r + 1) / rounds))) for r in range(rounds)]


def composed_walk(settings: Settings) -> tuple[int, int] | None:
    """The walk range of the composed tier these settings draw from (None for hand-built families)."""
    from compoworld.tasks import generator

    composed = getattr(generator, "uses_composition", None)
    if composed is None or not composed(settings):
        return None
    from compoworld.tasks.compose import TIERS

    tier = settings.difficulty or ("hard" if settings.k >= 6 else "medium" if settings.k >= 4 else "easy")
    return tuple(TIERS[tier]["walk"])


@dataclass
class Plan:
    target: str | None
    floor: float
    rounds: list[Round]
    rates: dict[str, dict[str, Any]]
    knobs: dict[str, Any]
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "floor": self.floor,
            "failure_rates": {k: round(v["rate"], 4) for k, v in self.rates.items()},
            "knobs": self.knobs,
            "rounds": [
                {
                    "round": r.index,
                    "max_k": r.max_k,
                    "walk": list(r.walk),
                    "counts": r.counts,
                    "made": r.made,
                    "skipped": r.skipped,
                    "weights": {k: round(v, 4) for k, v in r.weights.items()},
                }
                for r in self.rounds
            ],
        }


def plan(
    n: int,
    settings: Settings,
    table: FailureTable | None = None,
    floor: float = 0.2,
    rounds: int = 1,
    target: str | None = None,
) -> Plan:
    """How many tasks of each family each round gets (n per round)."""
    if not 0 <= floor <= 1:
        raise ValueError(f"the coverage floor must be in [0, 1], got {floor}")
    if rounds < 1:
        raise ValueError(f"--schedule needs at least 1 round, got {rounds}")
    items = arms(settings)
    if not items:
        raise ValueError(
            "the curriculum weights workflow families, and these settings allow none "
            "(see `compoworld tasks families`)"
        )
    table = table or FailureTable()
    rates = arm_rates(items, table)
    overrides = {a.name: a.override for a in items}
    out = []
    own = composed_walk(settings)
    ladder = zip(k_ladder(items, rounds), walk_ladder(settings, rounds, own), strict=True)
    for r, (max_k, walk) in enumerate(ladder):
        if own is not None and walk[1]:  # a walk must be long enough to cover K services and revisit one
            walk = (walk[0], min(own[1], max(walk[1], max_k + 2)))
        names = [a.name for a in items if a.k <= max_k]
        w = shares({x: rates[x]["rate"] for x in names}, floor)
        out.append(Round(r + 1, max_k, walk, allocate(n, w, floor), w))
    return Plan(target, floor, out, rates, table.as_json(), overrides)


def generate_plan(
    p: Plan,
    seed: int,
    settings: Settings,
    workers: int = 1,
    on_progress: Callable[[int], None] | None = None,
    ray_address: str | None = None,
) -> list[tuple[list[Task], Any]]:
    """Each round's tasks (families interleaved) and its merged statistics.

    A cell that cannot make its tasks (its family is rejected by a gate on every try) is recorded in
    the round's `skipped`, and what it left short is made by the other cells, by weight."""
    from compoworld.tasks.pipeline import Stats, generate

    results = []
    for r in p.rounds:
        stats = Stats()
        made: dict[str, list[Task]] = {x: [] for x, c in sorted(r.counts.items()) if c}
        nxt = dict.fromkeys(made, 0)

        def run_cell(name: str, count: int, r: Round = r, made=made, nxt=nxt, stats=stats) -> None:
            over = p.overrides.get(name, {"families": (name,)})
            cell = replace(settings, **over, walk_min=r.walk[0], walk_max=r.walk[1])
            cseed = cell_seed(seed, r.index, name)
            if (workers > 1 or ray_address is not None) and nxt[name] == 0:
                try:
                    tasks, st = generate(count, cseed, cell, workers, on_progress, ray_address)
                except RuntimeError as e:
                    r.skipped[name] = str(e)
                    return
                nxt[name] = max((t.meta.get("index", 0) for t in tasks), default=-1) + 1
            else:  # index by index: a cell of 2 makes 2, not a chunk of 8
                tasks, st, nxt[name], why = _generate_serial(count, cseed, cell, on_progress, nxt[name])
                if why:
                    r.skipped[name] = why
            stats.kept += st.kept
            stats.rejected.update(st.rejected)
            stats.seconds += st.seconds
            stats.service_sets |= st.service_sets
            stats.move_sequences |= st.move_sequences
            made[name].extend(tasks)

        for name in list(made):
            run_cell(name, r.counts[name])
        short = sum(r.counts[x] - len(made[x]) for x in made)
        while short > 0:  # top up from the cells that can make tasks, keeping to their weights
            live = [x for x in made if x not in r.skipped]
            if not live:
                raise RuntimeError(f"round {r.index}: no family could make a task ({r.skipped})")
            x = max(live, key=lambda x: (r.weights[x] / (len(made[x]) + 1), x))
            before = len(made[x])
            run_cell(x, 1)
            short -= len(made[x]) - before
        r.made = {x: len(v) for x, v in made.items()}
        for name, tasks in made.items():
            for t in tasks:
                t.meta["curriculum"] = {
                    "target": p.target,
                    "round": r.index,
                    "rounds": len(p.rounds),
                    "floor": p.floor,
                    "weight": round(r.weights[name], 4),
                    "failure_rate": round(p.rates[name]["rate"], 4),
                }
        mixed = [t for group in _interleave(list(made.values())) for t in group]
        ids = [t.id for t in mixed]
        if len(set(ids)) != len(ids):
            raise RuntimeError("two curriculum cells drew the same task id; choose another --seed")
        results.append((mixed, stats))
    return results


def _generate_serial(
    n: int, seed: int, settings: Settings, on_progress: Callable[[int], None] | None, start: int = 0
) -> tuple[list[Task], Any, int, str | None]:
    """What `pipeline.generate` keeps, made one index at a time from `start` (the same tasks, in the
    same order); the next index, and why it stopped short (None when it made all n)."""
    import time

    from compoworld.tasks.pipeline import Stats, make_one

    stats, kept, i, t0 = Stats(), [], start, time.perf_counter()
    while stats.kept < n:
        task, why = make_one(seed, i, settings)
        i += 1
        if task is None:
            stats.rejected[why] += 1
            if sum(stats.rejected.values()) > 10 * n + 20:
                stats.seconds = time.perf_counter() - t0
                return kept, stats, i, f"too many rejections ({dict(stats.rejected)})"
            continue
        kept.append(task)
        stats.kept += 1
        stats.service_sets.add(tuple(task.services))
        stats.move_sequences.add(
            (tuple(task.services), tuple(f"{x.service}.{x.move}" for x in task.dependency_graph.nodes))
        )
        if on_progress:
            on_progress(1)
    stats.seconds = time.perf_counter() - t0
    return kept, stats, i, None


def _interleave(groups: list[list[Task]]) -> list[list[Task]]:
    """Round-robin over the families, so a prefix of the file is a mix (not one family first)."""
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.append([g[i] for g in groups if i < len(g)])
    return out
