"""Workflow tasks: business requests across services, built from the shared company's real relations.

A *family* is one kind of work ("refund a duplicate charge within the wiki's refund limit, then tell
the customer"). Its `build(b)` plants what the work needs into the seeded world (records that agree
with every other service: the Freshdesk requester is the HubSpot contact and the Stripe customer),
plants the traps real work has (a stale record, a near-duplicate, a do-not-contact flag, a closed
item), calls `b.begin()` to fix s0, then *does the work* through the tools, turn by turn, using only
what the instruction and earlier observations showed; and finally states the goal the way a person
would ask for it.

Everything else is derived, never hand-declared: the walk (services of consecutive calls), the
information edges (which observation each identifying value came from), the collateral allow-list
(exactly the records the reference changed, and per table how many it created), and the guards.
The generator then runs every gate and adversary on the result (`tasks.gates`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from compoworld.core.company import Company, Customer, Person
from compoworld.core.environment import Environment

DOMAINS = (
    "sales",
    "support",
    "hr",
    "finance",
    "engineering",
    "marketing",
    "ecommerce",
    "scheduling",
    "project_management",
    "docs_compliance",
    "it_admin",
    "data_reporting",
    "recruiting",
)


class PlantError(RuntimeError):
    """Planting failed: a bug in a family, or a world it cannot use (the task is rejected)."""


class Unsolvable(RuntimeError):
    """A reference call failed: the family's plan does not work in this world."""


@dataclass(frozen=True)
class Family:
    name: str  # "support.refund_within_policy"
    domain: str  # one of DOMAINS
    services: tuple[str, ...]
    build: Callable[[Builder], None]
    summary: str = ""


FAMILIES: dict[str, Family] = {}


def family(name: str, domain: str, services: tuple[str, ...] | list[str], summary: str = ""):
    """Register a workflow family (`tasks/families/<domain>.py`)."""
    if domain not in DOMAINS:
        raise ValueError(f"family {name}: unknown domain {domain!r}; known: {', '.join(DOMAINS)}")

    def register(fn: Callable[[Builder], None]) -> Callable[[Builder], None]:
        if name in FAMILIES:
            raise ValueError(f"family {name} is registered twice")
        FAMILIES[name] = Family(
            name, domain, tuple(sorted(services)), fn, summary or (fn.__doc__ or "").strip()
        )
        return fn

    return register


@dataclass
class Builder:
    """What a family uses to plant, solve and describe one task (see the module docstring)."""

    env: Environment
    rng: random.Random
    company: Company
    family: Family
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    goals: list[dict[str, Any]] = field(default_factory=list)
    guards: list[dict[str, Any]] = field(default_factory=list)
    traps: list[dict[str, Any]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)
    knobs: Counter = field(default_factory=Counter)
    answer: str | None = None
    instruction: str = ""
    hint: str = ""
    subtasks: list[str] = field(default_factory=list)
    s0: dict[str, Any] | None = None
    h0: str = ""
    persona: dict[str, Any] | None = None  # in a persona world: who the work is for, with story lines
    story_used: dict[str, Any] | None = None
    _turn: int = 0
    _batch: bool = False
    _used: set[str] = field(default_factory=set)

    # ---- the world ---------------------------------------------------------------------------
    @property
    def me(self) -> Person:
        return self.company.me

    @property
    def now(self) -> datetime:
        return self.env.clock.now()

    def iso(self, when: datetime) -> str:
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")

    def days(self, n: float) -> datetime:
        return self.now + timedelta(days=n)

    def svc(self, name: str) -> Any:
        return self.env.services[name]

    def pick(self, seq: Any, n: int | None = None) -> Any:
        seq = list(seq)
        if not seq:
            raise PlantError("nothing to pick from")
        return self.rng.choice(seq) if n is None else self.rng.sample(seq, n)

    def unused(self, seq: Any, key: Callable[[Any], str] = str) -> list[Any]:
        """The items of `seq` not yet used in this task."""
        return [x for x in seq if key(x) not in self._used]

    def fresh(self, seq: Any, n: int = 1, key: Callable[[Any], str] = str) -> list[Any]:
        """`n` distinct items not yet used in this task (people, customers, products)."""
        pool = self.unused(seq, key)
        if len(pool) < n:
            raise PlantError(f"need {n} unused items, have {len(pool)}")
        out = self.rng.sample(pool, n)
        self._used.update(key(x) for x in out)
        return out

    def person(self, external: bool | None = None, team: str | None = None, exclude: tuple = ()) -> Person:
        pool = (
            self.company.contacts
            if external
            else self.company.employees
            if external is False
            else self.company.people
        )
        pool = [
            p for p in pool if p.id != self.me.id and p.id not in exclude and (team is None or p.team == team)
        ]
        return self.fresh(pool, 1, key=lambda p: p.id)[0]

    def customer(self, exclude: tuple = (), where: Callable[[Customer], bool] | None = None) -> Customer:
        pool = [c for c in self.company.customers if c.id not in exclude and (where is None or where(c))]
        return self.fresh(pool, 1, key=lambda c: c.id)[0]

    def story(self, kinds: tuple[str, ...] = ()) -> tuple[Customer, dict[str, Any] | None]:
        """The customer the work is about: in a persona world, one of the persona's running story
        lines (of these kinds, if any matches), else a fresh customer. The story gives the reason."""
        stories = [s for s in (self.persona or {}).get("stories", []) if not kinds or s["kind"] in kinds]
        stories = [s for s in stories if any(c.name == s["customer"] for c in self.company.customers)]
        if stories:
            st = self.rng.choice(stories)
            cust = next(c for c in self.company.customers if c.name == st["customer"])
            self._used.add(cust.id)
            self.story_used = {"id": st["id"], "kind": st["kind"], "customer": st["customer"]}
            return cust, st
        return self.customer(), None

    def contact_of(self, cust: Customer) -> Person:
        return self.company.person(cust.contact_ids[0])

    def manager_of(self, p: Person) -> Person | None:
        return self.company.person(p.manager_id) if p.manager_id else None

    def code(self, prefix: str) -> str:
        while True:
            c = f"{prefix}-{self.rng.randrange(10000, 99999)}"
            if c not in self._used:
                self._used.add(c)
                return c

    def plant(self, tool: str, args: dict[str, Any]) -> Any:
        """Run a tool while planting (before s0); a failure is a family bug or an unusable world."""
        if self.s0 is not None:
            raise RuntimeError("plant() after begin(): the reference must use call()")
        r = self.env.call(tool, args)
        if not r["success"]:
            raise PlantError(f"{tool} failed while planting: {r['error']['message']}")
        return r["data"]

    def begin(self) -> None:
        """Planting is over: fix s0. Everything after this is the reference solution."""
        for svc in self.env.services.values():
            svc.store.commit()
            if hasattr(svc, "_dirty"):
                svc._dirty = True
        self.s0 = self.env.snapshot()
        self.h0 = self.env.state_hash()

    # ---- the reference solution --------------------------------------------------------------
    def call(self, tool: str, args: dict[str, Any]) -> Any:
        """Do one step of the work for real. Each call is its own turn unless inside `together()`."""
        if self.s0 is None:
            raise RuntimeError("call() before begin()")
        r = self.env.call(tool, args)
        if not r["success"]:
            raise Unsolvable(f"reference call {tool} failed: {r['error']['message']}")
        if not self._batch:
            self._turn += 1
        self.calls.append({"tool": tool, "arguments": args, "turn": self._turn})
        self.results.append(r)
        return r["data"]

    @contextmanager
    def together(self) -> Iterator[None]:
        """Calls that go out in one assistant turn (none may use another's result)."""
        self._turn += 1
        self._batch = True
        try:
            yield
        finally:
            self._batch = False

    # ---- checks ------------------------------------------------------------------------------
    def goal(self, description: str, check: dict[str, Any], weight: float = 1.0) -> None:
        self.goals.append({"description": description, "check": check, "weight": weight, "kind": "goal"})

    def guard(self, description: str, check: dict[str, Any]) -> None:
        self.guards.append({"description": description, "check": check, "weight": 1.0, "kind": "guard"})

    def expect_message(
        self,
        service: str,
        to: Person | str | list[str],
        contains: list[str] = (),  # type: ignore[assignment]
        description: str | None = None,
        exclude: list[str] = (),  # type: ignore[assignment]
    ) -> None:
        """A message went to exactly this recipient (email or name both pass) and carries the facts;
        one that also names a rival value (`exclude`) does not count."""
        forms = [to.email, to.name] if isinstance(to, Person) else [to] if isinstance(to, str) else list(to)
        check = {
            "predicate": "message_sent",
            "service": service,
            "to": forms,
            "contains": list(contains),
            "exclusive": True,
        }
        if exclude:
            check["exclude"] = [str(x) for x in exclude]
        self.goal(
            description
            or f"a message went to {forms[-1]}" + (f" with {', '.join(contains)}" if contains else ""),
            check,
        )

    def no_message(self, service: str, to: Person | str | list[str], why: str) -> None:
        forms = [to.email, to.name] if isinstance(to, Person) else [to] if isinstance(to, str) else list(to)
        self.guard(why, {"predicate": "message_not_sent", "service": service, "to": forms})

    def expect_record(self, service: str, table: str, where: dict[str, Any], description: str) -> None:
        self.goal(
            description,
            {"predicate": "record_exists", "service": service, "table": table, "new": True, "where": where},
        )

    def expect_change(
        self, service: str, table: str, key: Any, field: str, to: Any, description: str
    ) -> None:
        self.goal(
            description,
            {
                "predicate": "field_changed",
                "service": service,
                "table": table,
                "key": str(key),
                "field": field,
                "to": to,
            },
        )

    def keep(self, service: str, table: str, key: Any, why: str) -> None:
        """A trap record stays exactly as it was."""
        self.guard(
            why, {"predicate": "record_unchanged", "service": service, "table": table, "key": str(key)}
        )

    def not_written(self, service: str, value: str, why: str, tables: list[str] = ()) -> None:  # type: ignore[assignment]
        self.guard(
            why,
            {"predicate": "value_not_written", "service": service, "value": value, "tables": list(tables)},
        )

    def trap(
        self, kind: str, description: str, swap: dict[Any, Any] | None = None, answer: str | None = None
    ) -> None:
        """Declare a candidate a careless agent would act on; `swap` maps the target's values to its."""
        self.traps.append(
            {
                "kind": kind,
                "description": description,
                "swap": {str(k): str(v) for k, v in (swap or {}).items()},
                "answer": answer,
            }
        )
        self.knobs["traps"] += 1

    def ask(
        self, value: Any, kind: str = "text", alternates: tuple = (), exclude: tuple = (), what: str = ""
    ) -> None:
        """The final reply must give `value` (and none of the competing candidates in `exclude`)."""
        self.answer = str(value)
        self.goal(
            f"the reply gives {what or 'the answer'} ({value})",
            {
                "predicate": "answer_matches",
                "value": str(value),
                "kind": kind,
                "alternates": [str(x) for x in alternates],
                "exclude": [str(x) for x in exclude if str(x) != str(value)],
            },
        )

    def composed(self, *values: Any) -> None:
        """Values the agent works out itself (a sum, a count, a derived date) and then writes: they
        need no earlier observation (the grounded gate sources them as "composed")."""
        self.made.extend(str(v) for v in values)

    def fact(self, *values: Any) -> None:
        """Intermediate facts the agent must find: the instruction may not name them."""
        self.facts.extend(str(v) for v in values)

    def decide(self, n: int = 1) -> None:
        self.knobs["decisions"] += n

    def aggregate(self, n: int = 1) -> None:
        self.knobs["aggregates"] += n

    # ---- the text ------------------------------------------------------------------------------
    def say(self, *variants: str) -> str:
        return self.rng.choice(variants)

    def write(self, instruction: str, hint: str, subtasks: list[str]) -> None:
        self.instruction = " ".join(instruction.split()) if "\n" not in instruction else instruction.strip()
        self.hint = hint
        self.subtasks = subtasks


def first_name(p: Person) -> str:
    return p.first
