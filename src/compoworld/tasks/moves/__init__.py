"""Moves: the steps services contribute to task generation, joined through typed facts.

A *relay* move plants a record in its service, found by a key fact (a person, a customer, a phone
number, a reference code) and revealing a value fact in its text; the agent must search the service
for the key to learn the value. A *write* move acts with the incoming fact (send it, file it,
schedule on it) and is checked by declarative predicates; some writes reveal a new fact of their
own (the key of the issue they created). Services declare their moves in `tasks/moves/<name>.py`.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from compoworld.core.library import Library, active
from compoworld.tasks.moves.base import (
    KEY_TYPES,
    NOUNS,
    VALUE_TYPES,
    Calls,
    Fact,
    Gen,
    Move,
    PlantError,
    Relay,
    Write,
    WriteStep,
    key_text,
    people,
    person_fact,
    sentence,
)

__all__ = [
    "KEY_TYPES",
    "NOUNS",
    "VALUE_TYPES",
    "Calls",
    "Fact",
    "Gen",
    "Move",
    "PlantError",
    "Relay",
    "Write",
    "WriteStep",
    "key_text",
    "people",
    "person_fact",
    "sentence",
    "all_moves",
    "moves_by_service",
]


def all_moves(library: Library | None = None) -> tuple[Move, ...]:
    """Moves of every service of `library` (default: the active one) that declares some.

    A hand-built service's moves live in `tasks/moves/<package>.py` (`MOVES`); services compiled
    from MCP specs bring generic moves derived from their manifests (`tasks/moves/compiled.py`)."""
    return _all_moves(library if library is not None else active())


@cache
def _all_moves(library: Library) -> tuple[Move, ...]:
    from compoworld.compiler.runtime import CompiledService

    out: list[Move] = []
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg):
        if mod in ("base", "compiled"):  # not services: the vocabulary, and the moves of compiled services
            continue
        out.extend(importlib.import_module(f"{__name__}.{mod}").MOVES)
    for cls in library.values():
        if issubclass(cls, CompiledService):
            from compoworld.tasks.moves.compiled import compiled_moves

            out.extend(compiled_moves(cls))
    return tuple(out)


all_moves.cache_clear = _all_moves.cache_clear  # type: ignore[attr-defined]


def moves_by_service(library: Library | None = None) -> dict[str, list[Move]]:
    out: dict[str, list[Move]] = {}
    for m in all_moves(library):
        out.setdefault(m.service, []).append(m)
    return out
