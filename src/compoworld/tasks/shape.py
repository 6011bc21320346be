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
