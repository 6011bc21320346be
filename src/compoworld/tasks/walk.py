"""The walk planner: L steps over K services, each step a move joined to the next by a typed fact.

A walk covers all K services, never repeats a service on adjacent steps, revisits at least one,
and ends with a write. Relays carry facts (a relay's output is the next relay's key); the step
before the last may be a write that reveals a fact (the key of the issue it filed) for the last.
The search is a randomized depth-first search with coverage pruning, so every choice is a pure
function of the rng.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from compoworld.tasks.moves import KEY_TYPES, Move, Relay, Write


@dataclass(frozen=True)
class PlannedStep:
    service: str
    move: Move
    needs: str  # fact type consumed
    gives: str | None  # fact type produced


def accepts(move: Write, fact_type: str | None) -> bool:
    return fact_type is not None and ("any" in move.needs or fact_type in move.needs)


def plan_walk(
    rng: random.Random, services: list[str], moves: dict[str, list[Move]], length: int, budget: int = 4000
) -> list[PlannedStep] | None:
    """A random walk satisfying every constraint, or None when the search budget runs out."""
    budget_left = [budget]
    relays = {s: [m for m in moves.get(s, []) if isinstance(m, Relay)] for s in services}
    writes = {s: [m for m in moves.get(s, []) if isinstance(m, Write)] for s in services}
    use_pre = rng.random() < 0.35

    def dfs(
        i: int, prev_s: str | None, prev_t: str | None, uncovered: frozenset[str], path: list[PlannedStep]
    ) -> list[PlannedStep] | None:
        budget_left[0] -= 1
        if budget_left[0] < 0:
            return None
        remaining = length - i
        if len(uncovered) > remaining:
            return None
        order = [s for s in services if s != prev_s]
        rng.shuffle(order)
        order.sort(key=lambda s: s not in uncovered)  # cover what is missing first
        if i == length - 1:  # the final write
            for s in order:
                if uncovered - {s}:
                    continue
                opts = [m for m in writes[s] if accepts(m, prev_t)]
                if opts:
                    m = rng.choice(opts)
                    return [*path, PlannedStep(s, m, prev_t, m.gives)]
            return None
        if (
            i == length - 2 and use_pre and prev_t is not None
        ):  # a write that reveals a code for the final write
            for s in order:
                opts = [m for m in writes[s] if m.gives == "code" and accepts(m, prev_t)]
                if opts:
                    m = rng.choice(opts)
                    found = dfs(i + 1, s, "code", uncovered - {s}, [*path, PlannedStep(s, m, prev_t, "code")])
                    if found:
                        return found
        for s in order:
            options = []
            for m in relays[s]:
                keys = [k for k in m.keys if prev_t is None or k == prev_t]
                for k in keys:
                    for g in m.gives:
                        if g in KEY_TYPES or i >= length - 3:
                            options.append((m, k, g))
            rng.shuffle(options)
            for m, k, g in options[:4]:
                found = dfs(i + 1, s, g, uncovered - {s}, [*path, PlannedStep(s, m, k, g)])
                if found:
                    return found
        return None

    walk = dfs(0, None, None, frozenset(services), [])
    if walk is None or len({s.service for s in walk}) == len(walk):
        return None
    return walk
