"""The third composed theme (tasks.compose_expense, an expense-claims run): the reference passes every
gate, lazy solvers fail, the hard tier has the papers' shape, and each claim's outcome flips when its
evidence flips (an earlier payout of its receipt in the log; the limit of the version in force)."""

from __future__ import annotations

import pytest

from compoworld.tasks.adversaries import solve_lazily
from compoworld.tasks.compose import version_numbers
from compoworld.tasks.compose_expense import PLANS, ExpensePlan
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Rejected, Settings, workflow_task
from compoworld.tasks.labels import task_labels
from compoworld.tasks.model import Task
from compoworld.tasks.themes import plans_for
from compoworld.verify.verifier import verify
from tests.tasks.composed_tasks import composed_tasks

EXPENSE = ("composed.expense_claims",)
HARD = Settings(k=5, difficulty="hard", families=EXPENSE)


def _tasks(settings: Settings, n: int, seed: int = 11) -> list[Task]:
    return composed_tasks(settings, n, seed)


@pytest.fixture(scope="module")
def hard() -> list[Task]:
    return _tasks(HARD, 2)


def test_hard_runs_pass_every_gate_and_adversary(hard: list[Task]) -> None:
    assert len(hard) == 2
    for t in hard:
        bad = {g: why for g, why in run_gates(t, regenerate=True).items() if why}
        assert not bad, (t.id, bad)


def test_lazy_solvers_fail_expense_runs(hard: list[Task]) -> None:
    for t in hard:
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, (t.id, lazy)


def test_hard_runs_have_the_papers_shape(hard: list[Task]) -> None:
    for t in hard:
        comp = t.meta["composition"]
        assert t.meta["generator"] == "composed" and comp["theme"] == "expense_claims"
        assert len(t.services) == 5
        assert 7 <= len(t.walk) <= 12 and len(t.walk) > len(set(t.walk))
        assert all(a != b for a, b in zip(t.walk, t.walk[1:], strict=False))
        assert t.meta["difficulty"]["decisions"] >= 3
        assert 80 <= comp["claims_rows"] <= 200
        assert len(t.reference_solution) >= 20
        assert len(t.instruction.split()) <= 120 and task_labels(t) == []
        # the goal only: no rule that rules a claim out is handed over
        words = t.instruction.lower()
        assert not any(w in words for w in ("limit", "receipt", "duplicate", "approv", "paid before"))
        assert {"pay", "approval", "duplicate"} <= set(comp["branches"])
        edges = {(e["from"], e["to"], e["fact"]) for e in comp["edges"]}
        assert ("evidence", "decide", "paid_before") in edges and ("policy", "decide", "limits") in edges


def _forced(i: int, settings: Settings, **force: object) -> Task:
    return Task.model_validate(workflow_task(11, i, settings, composed=True, force=force))


def _ok(i: int, s: Settings, **force: object) -> bool:
    """Both the drawn world and the forced one build (a flip may meet a plant error of its own)."""
    try:
        _forced(i, s)
        _forced(i, s, **force)
    except Rejected:
        return False
    return True


@pytest.mark.parametrize("evidence", ["duplicate", "over"])
def test_a_claim_flips_when_its_evidence_flips(evidence: str) -> None:
    s = Settings(k=5, difficulty="hard", families=EXPENSE)
    i = next(i for i in range(20) if _ok(i, s, **{evidence: False}))
    yes, no = _forced(i, s), _forced(i, s, **{evidence: False})
    want = "duplicate" if evidence == "duplicate" else "approval"
    # fewer claims of that outcome (a raised limit may clear another claim of the category too)
    assert yes.meta["composition"]["branches"].count(want) > no.meta["composition"]["branches"].count(want)
    # same request, same claims: only the log (or the policy's limit) differs
    assert yes.instruction == no.instruction and yes.services == no.services
    for t in (yes, no):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    # each world's reference fails the other's checks: the action depends on the state
    env = no.environment()
    for c in yes.reference_solution:
        env.call(c.tool, c.arguments)
    assert not verify(no, env.snapshot(), None).passed


def test_plans_cover_their_services_and_persona_worlds_fit() -> None:
    assert len(PLANS) == 162
    for k in range(4, 7):
        for p in plans_for(k, (7, 12), cases=2, writes=3, families=EXPENSE):
            w = p.walk(2)
            assert len(p.services()) == k and set(w) == p.services()
            assert all(a != b for a, b in zip(w, w[1:], strict=False)) and len(w) > len(set(w))
    # a persona with a workspace, a mailbox, Slack, Freshdesk and sheets gets hard work at K = 4
    # crossing the web app, the shell and MCP
    persona = {"workspace", "email", "chat", "helpdesk", "sheets", "browser"}
    fits = plans_for(4, (7, 12), allowed=persona, need={"browser", "workspace"}, cases=2, writes=3)
    assert any(isinstance(p, ExpensePlan) for p in fits)


def test_versions_are_numbered_by_effective_date_not_named_by_it() -> None:
    from datetime import date

    assert version_numbers([date(2026, 1, 5), date(2024, 6, 1), date(2026, 4, 1)]) == [2, 1, 3]


def test_a_persona_world_at_k4_crossing_every_interface_gets_composed_work() -> None:
    # gui is reached by the browser or the computer: a plan needs one of them, not both (requiring
    # both fitted no plan, and generation rejected every index of such a world)
    import random

    from compoworld.tasks.generator import composed_plans, interface_of

    s = Settings(k=4, difficulty="hard", interfaces=("cli", "gui", "mcp"))
    persona = {"workspace", "email", "calendar", "chat", "helpdesk", "sheets", "browser"}
    for seed in range(5):
        plan, tier = composed_plans(s, random.Random(seed), persona)
        w = plan.walk(2)
        seq = [interface_of(x) for x in w]
        assert tier == "hard" and plan.services() <= persona and len(plan.services()) == 4
        assert {"cli", "gui", "mcp"} <= set(seq) and sum(
            a != b for a, b in zip(seq, seq[1:], strict=False)
        ) >= 3


def test_a_persona_world_draws_only_personas_some_composed_work_fits(monkeypatch) -> None:
    # a persona without Freshdesk has no plan crossing the web app at K = 4: drawing it only to
    # reject the index made 129 of 159 draws on a 3-persona world plan rejections
    import random

    from compoworld.tasks import generator

    common = ["calendar", "chat", "email", "sheets", "workspace"]
    idx = {
        "personas": {
            "p0": {"services": [*common, "crm"], "world_seed": 1},
            "p1": {"services": [*common, "helpdesk"], "world_seed": 2},
        },
        "day_choices": [3, 4],
    }
    monkeypatch.setattr(generator, "_world_index", lambda folder: idx)
    s = Settings(k=4, difficulty="hard", interfaces=("cli", "gui", "mcp"))
    fits = [generator.composed_fits(s, [*p["services"], "browser"]) for p in idx["personas"].values()]
    assert fits == [False, True]
    drawn = {
        generator.persona_day("w", random.Random(i), lambda sv: generator.composed_fits(s, sv))["persona"]
        for i in range(20)
    }
    assert drawn == {"p1"}
    assert {generator.persona_day("w", random.Random(i))["persona"] for i in range(20)} == {"p0", "p1"}


def test_the_batch_is_what_the_list_shows_submitted_and_the_list_is_left_as_it_is() -> None:
    """From play: "the February claims are in" on March 2 left claims of March 1 in doubt, and the
    earlier claims showing paid or rejected led a careful agent to set the batch's statuses too. The
    request names the batch by what the claims list shows (every claim still marked submitted), no
    month; the policy says the list's status column is finance's (the earlier rows, paid or rejected,
    agree), so the reference leaves it and a status set on a claim of the batch fails."""
    import re

    months = "January|February|March|April|May|June|July|August|September|October|November|December"
    for i in range(40):
        try:
            t = _forced(i, HARD)
        except Rejected:
            continue
        if t.meta["composition"]["plan"]["claims"] != "sql":
            continue
        env = t.environment()
        seen = " ".join(str(env.call(c.tool, c.arguments)) for c in t.reference_solution)
        assert "still marked submitted in the claims list" in seen
        assert not re.search(rf"\b({months})\b (claims|batch)", seen), t.id
        assert "the claims list itself is left as it is" in seen
        s0 = t.environment()
        q = {"query": "SELECT claim_id, status FROM expense_claims"}
        rows = s0.call("sql__read_query", q)["data"]["rows"]
        batch = sorted(r["claim_id"] for r in rows if r["status"] == "submitted")
        assert {r["status"] for r in rows} == {"paid", "rejected", "submitted"}
        # the batch the reference works is every claim still marked submitted
        named = {c for c in batch if c in " ".join(str(x.arguments) for x in t.reference_solution)}
        # (but a claim its employee withdrew: not paid, nobody told)
        withdrawn = {
            c for c in batch if any(f"{c} was not paid (withdrawn)" in g.description for g in t.rubric)
        }
        assert named | withdrawn == set(batch) and not named & withdrawn
        q = f"UPDATE expense_claims SET status = 'paid' WHERE claim_id = '{batch[0]}'"
        assert env.call("sql__write_query", {"query": q})["success"]
        assert not verify(t, env.snapshot(), None).passed
        return
    raise AssertionError("no expense run with its claims in SQL")
