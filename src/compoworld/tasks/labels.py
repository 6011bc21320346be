"""Planted records must not label themselves wrong: evidence lives elsewhere, not in the record.

A careless agent is not fooled by a decoy that says "old copy, do not use". `labelled` finds the
records a task planted (those of s0 that differ from the seeded world it was planted on) whose
text says such a thing; the generator rejects those tasks and `tasks stats` counts them.
"""

from __future__ import annotations

import re
from typing import Any

# phrases that tell the reader a record is not the one to use (rather than letting evidence show it)
LABELS = (
    r"do not use",
    r"don'?t use",
    r"superseded",
    r"old copy",
    r"outdated",
    r"deprecated",
    r"obsolete",
    r"no longer (?:valid|used|in use|applies|current)",
    r"handled last (?:year|quarter|month)",
    r"since fixed",
    r"fixed last (?:year|quarter|month)",
    r"ignore (?:this|it)",
    r"please ignore",
    r"not the current",
    r"\b(?:stale|wrong) (?:copy|version|record|draft)",
    r"replaced by",
    r"[(,]\s*archived\)",
    r"do not (?:use|add|edit|touch)",
    r"\bdecoy\b",
)
_LABEL = re.compile("|".join(f"(?:{p})" for p in LABELS), re.I)


def label_in(text: str) -> str | None:
    m = _LABEL.search(text)
    return m.group(0) if m else None


def _texts(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _texts(x)]
    if isinstance(v, list):
        return [t for x in v for t in _texts(x)]
    return []


def labelled(s0: dict[str, Any], base: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(service, table, key, phrase) for each record of s0 that is new or changed against `base`
    and whose text labels it wrong."""
    out = []
    for svc, state in (s0.get("services") or {}).items():
        before = (base.get("services") or {}).get(svc) or {}
        if state is before:
            continue
        tables = state.get("tables", state) if isinstance(state, dict) else {}
        old_tables = before.get("tables", before) if isinstance(before, dict) else {}
        for table, recs in tables.items() if isinstance(tables, dict) else ():
            if not isinstance(recs, dict) or table.startswith("_"):
                continue
            old = old_tables.get(table) if isinstance(old_tables, dict) else None
            old = old if isinstance(old, dict) else {}
            for key, rec in recs.items():
                if old.get(key) == rec:
                    continue
                for text in _texts(rec):
                    hit = label_in(text)
                    if hit:
                        out.append((svc, table, str(key), hit))
                        break
    return out


def task_labels(task: Any) -> list[tuple[str, str, str, str]]:
    """The labelled planted records of a task (its s0 against the world it was planted on)."""
    from compoworld.core.environment import seeded_world  # what tasks.generator.base_world gives
    from compoworld.core.library import active
    from compoworld.worlds.store import persona_world

    m = task.meta
    if task.world is not None:
        w = task.world if isinstance(task.world, dict) else task.world.model_dump()
        base = seeded_world(active(), w["seed"], w["size"])
    elif m.get("world"):
        base = persona_world(
            m["world"]["dir"], m["world"]["persona"], m["world"]["day"], m.get("size", "small")
        )
    else:
        return []
    s0 = task.initial_state if isinstance(task.initial_state, dict) else task.initial_state.model_dump()
    return labelled(s0, base)
