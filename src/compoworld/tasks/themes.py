"""The composed themes: each a piece of work built from the shared stages of `tasks.compose` (the
credit review there, the access review in `tasks.compose_access`, the expense claims in
`tasks.compose_expense`), and the draw over them.

Its own module, above the themes, so a theme imports the shared stages and is never imported back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compoworld.tasks import compose as credit
from compoworld.tasks import compose_access, compose_expense
from compoworld.tasks.workflow import Builder


@dataclass(frozen=True)
class Theme:
    """One piece of work composed from the shared stages: its family name, its plan variants (each
    with services(), write_services() and walk(cases)) and the function that composes a plan."""

    family: str
    plans: list[Any]
    compose: Callable[..., dict[str, Any]]


def themes() -> list[Theme]:
    """Every composed theme, the credit review (`tasks.compose`) first."""
    return [
        Theme(credit.Plan.family, credit.PLANS, credit._compose_credit),
        Theme(compose_access.AccessPlan.family, compose_access.PLANS, compose_access.compose),
        Theme(compose_expense.ExpensePlan.family, compose_expense.PLANS, compose_expense.compose),
    ]


def plans_for(
    k: int,
    walk: tuple[int, int],
    allowed: set[str] | None = None,
    need: set[str] = frozenset(),  # type: ignore[assignment]
    accept: Callable[[list[str]], bool] | None = None,
    cases: int = 1,
    writes: int = 0,
    families: tuple[str, ...] = (),
) -> list[Any]:
    """The plans of every theme (or of `families`, by name or prefix) that fit; each theme that fits
    gets an equal share of the list, so a uniform draw picks each theme equally often."""
    per = []
    for th in themes():
        if families and not any(th.family == f or th.family.startswith(f) for f in families):
            continue
        out = []
        for p in th.plans:
            svcs = p.services()
            if len(svcs) != k or (allowed is not None and not svcs <= allowed) or not need <= svcs:
                continue
            if len(p.write_services()) < writes:
                continue
            w = p.walk(cases)
            if not walk[0] <= len(w) <= walk[1] or len(w) == len(set(w)):
                continue
            if accept is not None and not accept(w):
                continue
            out.append(p)
        if out:
            per.append(out)
    if len(per) <= 1:
        return per[0] if per else []
    size = max(len(x) for x in per)
    return [x[i % len(x)] for x in per for i in range(size)]


def compose(
    b: Builder, plan: Any, tier: dict[str, Any], tier_name: str, force: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Compose `plan` with its theme's composer (`themes()`)."""
    th = next(t for t in themes() if t.family == plan.family)
    return th.compose(b, plan, tier, tier_name, force)
