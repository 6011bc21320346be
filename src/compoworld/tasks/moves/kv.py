"""Redis moves: a note key that carries a fact; storing a fact under a key."""

from __future__ import annotations

import re

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("kv")
    k = f"{'stale' if decoy else 'note'}:{_slug(key_text(key))}"
    if svc.keys.get(k):
        k += f":{g.rng.randrange(1000)}"
    svc.keys.create({"value": text}, id=k)
    return [("kv__list", {"pattern": "note:*"}), ("kv__get", {"key": k})]


def _store(g: Gen, fact: Fact) -> WriteStep:
    k = f"followup:{g.rng.randrange(1000, 9999)}"
    return WriteStep(
        calls=[("kv__set", {"key": k, "value": fact.value})],
        checks=[
            (
                f"Redis key {k} holds it",
                {
                    "predicate": "record_exists",
                    "service": "kv",
                    "table": "keys",
                    "where": {"id": k, "value": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "kv", "table": "keys", "key": k}],
        phrase=f"store that {{it}} in Redis under the key {k}",
    )


MOVES = [
    Relay(
        "kv",
        "note_key",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the 'note:' key",
        "in Redis",
        _plant,
    ),
    Write("kv", "store_key", ("any",), None, _store),
]
