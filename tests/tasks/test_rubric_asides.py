"""The play cases of issue 22 (wave 8) on fresh tasks of the same shapes: a credit review whose
approver email names the ruled-out trap approvers aside, and an expense run whose ticket reply
lists payees who are also trap approvers. The honest texts pass; a spray naming a rival as an
approver fails."""

from __future__ import annotations

import copy

import pytest

from compoworld.tasks.gates import replay
from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify


@pytest.fixture(scope="module")
def tasks():
    # the seed of the play set (cw-81818-000012 has the first shape; the second is the first expense
    # run after it whose reply check lists payees who are also trap approvers)
    s = Settings(k=5, difficulty="hard")
    first = Task.model_validate(generate_task(81818, 12, s))
    for i in range(13, 80):
        try:
            t = Task.model_validate(generate_task(81818, i, s))
        except Rejected:
            continue
        if t.meta["family"] == "composed.expense_claims" and _texts(t, "subjects"):
            return [first, t]
    raise AssertionError("no expense run whose reply lists payees who are also trap approvers")


def _final(task):
    final, _, _ = replay(task.environment(), [c.model_dump() for c in task.reference_solution])
    return final


def _with_text(task, final, checks, extra):
    """The end state with `extra` added to every new record the (free-text) checks read."""
    out = copy.deepcopy(final)
    for check in checks:
        table = out["services"][check["service"]][check["table"]]
        before = task.initial_state["services"][check["service"]].get(check["table"], {})
        *up, leaf = check["paths"][0].split(".")
        for k, r in table.items():
            if k in before or not all(r.get(f) == v for f, v in check.get("where", {}).items()):
                continue
            for part in up:
                r = r.setdefault(part, {})
            if extra not in (r.get(leaf) or ""):
                r[leaf] = f"{r.get(leaf) or ''}\n{extra}"
    return out


def _texts(task, key):
    return [
        i.check
        for i in task.rubric
        if i.check.get("predicate") == "text_carries" and i.check.get(key) and i.check.get("key") is None
    ]


def test_rival_people_in_free_text_may_be_named_aside(tasks) -> None:
    task = tasks[0]
    checks = _texts(task, "aside")
    assert checks, "the credit review derives free-text checks with rival people"
    people = [r for r in checks[0]["aside"] if "@" not in r]
    final = _final(task)
    assert verify(task, final, task.answer).passed
    said = " ".join(f"{p} is no longer with the company." for p in people)
    honest = _with_text(task, final, checks, f"{said} Their cover is out of office, so I am asking you.")
    assert verify(task, honest, task.answer).passed
    spray = _with_text(task, final, checks, f"Please approve: {people[0]}.")
    assert not verify(task, spray, task.answer).passed


def test_rival_people_the_work_pays_may_be_listed(tasks) -> None:
    task = tasks[1]
    checks = _texts(task, "subjects")
    assert checks, "the expense run derives a reply check whose payees are also trap approvers"
    payee = next(r for r in checks[0]["subjects"] if "@" not in r)
    final = _final(task)
    listed = _with_text(task, final, checks, f"Paid: {payee} (see the payouts table).")
    assert verify(task, listed, task.answer).passed
    asked = _with_text(task, final, checks, f"{payee}, please approve the claims above the limit.")
    assert not verify(task, asked, task.answer).passed
