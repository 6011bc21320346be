"""The shape of a task set, as a person reading it would measure it.

Instruction length, how varied the openings are, subtasks per task, how many tasks write in two or
more services, how often one service is visited three or more times, each domain's share of walk
steps, family balance, and which library services the set uses at all.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Any

from compoworld.tasks.model import Task


def opening(instruction: str) -> str:
    """The opening shape: the first two words, lower-cased, without punctuation."""
    words = re.findall(r"[a-z']+", instruction.casefold())
    return " ".join(words[:2])


def shape(tasks: list[Task]) -> dict[str, Any]:
    from compoworld.services import registry

    n = len(tasks) or 1
    lib = registry()
    words = [len(t.instruction.split()) for t in tasks]
    openings = Counter(opening(t.instruction) for t in tasks)
    steps = Counter(lib[s].domain if s in lib else s for t in tasks for s in t.walk)
    families = Counter(t.meta.get("family", "chain") for t in tasks)
    work = Counter(t.meta.get("work_domain", "chain") for t in tasks)
    used = {s for t in tasks for s in t.walk}
    return {
        "tasks": len(tasks),
        "median_words": statistics.median(words) if words else 0,
        "p95_words": sorted(words)[int(0.95 * (len(words) - 1))] if words else 0,
        "top_opening": openings.most_common(1)[0] if openings else ("", 0),
        "top_opening_share": round(openings.most_common(1)[0][1] / n, 4) if openings else 0.0,
        "mean_subtasks": round(sum(len(t.subtasks) for t in tasks) / n, 2),
        "share_writing_2plus_services": round(
            sum(len(t.meta.get("difficulty", {}).get("write_services", [])) >= 2 for t in tasks) / n, 4
        ),
        "share_one_service_3plus_visits": round(
            sum(max(Counter(t.walk).values()) >= 3 for t in tasks if t.walk) / n, 4
        ),
        "top_domain_share_of_steps": round(steps.most_common(1)[0][1] / (sum(steps.values()) or 1), 4)
        if steps
        else 0.0,
        "top_domain": steps.most_common(1)[0][0] if steps else "",
        "families": len(families),
        "top_family_share": round(families.most_common(1)[0][1] / n, 4) if families else 0.0,
        "work_domains": len(work),
        "services_used": len(used),
        "library_services_unused": sorted(set(lib) - used),
    }


# The papers' figures `tasks stats` prints beside a set's own.
PAPERS = {
    "K": "CompoWorld: K = 5 services",
    "D": "CompoWorld: D = 5 distractors",
    "L": "CompoWorld: L = 7-12 steps",
    "subtasks": "WildAWM: 4.2 subtasks",
    "interface_switches": "WildAWM: 3.1 interface switches",
    "interface_revisit": "WildAWM: 74.5% revisit an interface",
}


def _dist(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"min": 0, "p10": 0, "median": 0, "mean": 0, "p90": 0, "max": 0}
    s = sorted(xs)

    def q(p: float) -> float:
        return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]

    return {
        "min": s[0],
        "p10": q(0.1),
        "median": statistics.median(s),
        "mean": round(statistics.fmean(s), 2),
        "p90": q(0.9),
        "max": s[-1],
    }


def depth(tasks: list[Task], labels: bool = True) -> dict[str, Any]:
    """How deep a set is: K, D, L, calls, decisions, aggregates, writes, revisits, switches, words,
    tiers, generators; with `labels`, how many planted records label themselves wrong."""
    n = len(tasks) or 1
    diff = [t.meta.get("difficulty", {}) for t in tasks]
    iw = [t.meta.get("interface_walk") for t in tasks]
    out: dict[str, Any] = {
        "tasks": len(tasks),
        "generators": dict(Counter(t.meta.get("generator", "?") for t in tasks)),
        "tiers": dict(Counter(d.get("tier", "-") for d in diff)),
        "K": _dist([t.meta.get("K", len(t.services)) for t in tasks]),
        "D": _dist([t.meta.get("D", len(t.distractors)) for t in tasks]),
        "L": _dist([len(t.walk) for t in tasks]),
        "share_L_7_12": round(sum(7 <= len(t.walk) <= 12 for t in tasks) / n, 4),
        "revisit_share": round(sum(len(t.walk) > len(set(t.walk)) for t in tasks) / n, 4),
        "reference_calls": _dist([len(t.reference_solution) for t in tasks]),
        "decisions": _dist([d.get("decisions", 0) for d in diff]),
        "aggregates": _dist([d.get("aggregates", 0) for d in diff]),
        "write_services": _dist([len(d.get("write_services", [])) for d in diff]),
        "share_writes_3plus_services": round(sum(len(d.get("write_services", [])) >= 3 for d in diff) / n, 4),
        "aggregated_rows": _dist(
            [  # each theme names its aggregated list: the usage rows, an access list (newer: aggregated_rows)
                c.get("aggregated_rows", c.get("usage_rows", c.get("roster_rows", 0)))
                for t in tasks
                if (c := t.meta.get("composition"))
            ]
        ),
        "subtasks": _dist([len(t.subtasks) for t in tasks]),
        "instruction_words": _dist([len(t.instruction.split()) for t in tasks]),
    }
    if any(iw):
        sw = [t.meta.get("interface_switches", 0) for t in tasks if t.meta.get("interface_walk")]
        out["interface_switches"] = _dist(sw)
        out["interface_revisit"] = round(
            sum(
                len(r := [x for i, x in enumerate(w) if i == 0 or w[i - 1] != x]) > len(set(r))
                for w in iw
                if w
            )
            / max(1, sum(1 for w in iw if w)),
            4,
        )
    if labels:
        from compoworld.tasks.labels import task_labels

        hits = [(t.id, h) for t in tasks for h in task_labels(t)]
        out["labelled_records"] = len(hits)
        out["labelled_examples"] = [f"{tid}: {s}.{tb} {k} says {p!r}" for tid, (s, tb, k, p) in hits[:5]]
    return out
