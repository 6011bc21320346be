"""The moves vocabulary: facts, the generation context (`Gen`), relay and write moves, and the
helpers service moves share. Each `tasks/moves/<service>.py` builds its `MOVES` from these; the package
(`tasks.moves`) gathers them (`all_moves`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compoworld.core.company import Company, Person
from compoworld.core.environment import Environment

KEY_TYPES = ("person", "customer", "phone", "code")
VALUE_TYPES = ("person", "customer", "phone", "code", "amount", "date")
NOUNS = {
    "person": "contact",
    "customer": "customer",
    "phone": "phone number",
    "code": "reference number",
    "amount": "amount",
    "date": "date",
}


@dataclass(frozen=True)
class Fact:
    type: str
    value: str  # what checks compare: an email, a name, an E.164 number, a code, "1234.50", "2026-03-12"
    label: str  # how a person would name it in a sentence

    @property
    def noun(self) -> str:
        return NOUNS[self.type]


@dataclass
class Gen:
    """Everything a move may use while planting and building calls."""

    env: Environment
    rng: random.Random
    company: Company
    named: dict[str, str] = field(default_factory=dict)  # things the instruction names (channels, files, ...)
    used: set[str] = field(default_factory=set)  # values already used in this task (keep facts unique)

    def svc(self, name: str) -> Any:
        return self.env.services[name]

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run a tool during planting; a failure is a generator bug and stops the task."""
        r = self.env.call(tool, args)
        if not r["success"]:
            raise PlantError(f"{tool} failed while planting: {r['error']['message']}")
        return r["data"]


class PlantError(RuntimeError):
    pass


Calls = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Relay:
    service: str
    name: str
    keys: tuple[str, ...]
    gives: tuple[str, ...]
    noun: str  # what the agent looks for: "the email", "the ticket", ...
    where: str  # where it lives, in words: "in my inbox", "in Zendesk", ...
    plant: Callable[
        [Gen, Fact, Fact, str, bool], Calls
    ]  # (gen, key, value, text, is_decoy) -> read calls that find it
    accepts: Callable[[Gen, Fact], bool] | None = None  # extra condition on the key (e.g. an employee)
    mutates: bool = False


@dataclass(frozen=True)
class Write:
    service: str
    name: str
    needs: tuple[str, ...]  # fact types accepted ("any" accepts every value type)
    gives: str | None  # fact type revealed by the call's result, if any
    build: Callable[[Gen, Fact], WriteStep]
    mutates: bool = True


@dataclass
class WriteStep:
    calls: Calls
    checks: list[tuple[str, dict[str, Any]]]  # (description, check)
    allow: list[dict[str, Any]]  # collateral allow-list entries
    phrase: str  # what to do, with "{it}" standing for the incoming fact
    extract: Callable[[dict[str, Any]], str] | None = None  # result of the last call -> revealed value


Move = Relay | Write


# ---- helpers shared by service moves -------------------------------------------------------
def sentence(rng: random.Random, value: Fact) -> str:
    """A sentence that carries a value fact, phrased as people write it."""
    t = {
        "code": (
            "The reference number is {v}.",
            "Please quote {v} in anything you send.",
            "Our reference: {v}.",
        ),
        "amount": ("The amount is {v} USD.", "It comes to {v} USD in total.", "Total due: {v} USD."),
        "date": ("The new date is {v}.", "We agreed on {v}.", "Please plan for {v}."),
        "person": (
            "Please loop in {label} ({v}).",
            "{label} ({v}) is the right contact for this.",
            "Talk to {label} ({v}) about it.",
        ),
        "customer": ("This concerns the {v} account.", "It is for our customer {v}.", "The customer is {v}."),
        "phone": ("Call them on {v}.", "Their direct line is {v}.", "Best number: {v}."),
    }[value.type]
    return rng.choice(t).format(v=value.value, label=value.label)


def people(g: Gen, external: bool | None = None) -> list[Person]:
    me = g.company.me.id
    pool = g.company.contacts if external else g.company.employees if external is False else g.company.people
    return [p for p in pool if p.id != me]


def person_fact(p: Person) -> Fact:
    return Fact("person", p.email, p.name)


def key_text(key: Fact) -> str:
    """How a key appears inside a planted record's text (names for people, the value otherwise)."""
    return key.label if key.type == "person" else key.value
