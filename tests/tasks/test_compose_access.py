"""The second composed theme (tasks.compose_access, an access review): the reference passes every
gate, lazy solvers fail, the hard tier has the papers' shape, the revocations flip when the
evidence (HR, the last-login clock) flips, and the themes share the composition machinery."""

from __future__ import annotations

import pytest

from compoworld.tasks.adversaries import solve_lazily
from compoworld.tasks.compose_access import PLANS, REASONS
from compoworld.tasks.families._common import rows, sheet_rows
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Rejected, Settings, workflow_task
from compoworld.tasks.labels import task_labels
from compoworld.tasks.model import Task
from compoworld.tasks.themes import plans_for, themes
from tests.tasks.composed_tasks import composed_tasks

ACCESS = ("composed.access_review",)
HARD = Settings(k=5, difficulty="hard", families=ACCESS)


def _tasks(settings: Settings, n: int, seed: int = 11) -> list[Task]:
    return composed_tasks(settings, n, seed)


@pytest.fixture(scope="module")
def hard() -> list[Task]:
    return _tasks(HARD, 2)


def test_hard_reviews_pass_every_gate_and_adversary(hard: list[Task]) -> None:
    assert len(hard) == 2
    for t in hard:
        bad = {g: why for g, why in run_gates(t, regenerate=True).items() if why}
        assert not bad, (t.id, bad)


def test_lazy_solvers_fail_access_reviews(hard: list[Task]) -> None:
    for t in hard:
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == lazy["oldest"] == 0 and lazy["keyword"] <= 0.25, (
            t.id,
            lazy,
        )


def test_hard_reviews_have_the_papers_shape(hard: list[Task]) -> None:
    for t in hard:
        comp = t.meta["composition"]
        assert t.meta["generator"] == "composed" and comp["theme"] == "access_review"
        assert len(t.services) == 5 and "hr" in t.services and "kv" in t.services
        assert 7 <= len(t.walk) <= 12 and len(t.walk) > len(set(t.walk))
        assert all(a != b for a, b in zip(t.walk, t.walk[1:], strict=False))
        assert t.meta["difficulty"]["decisions"] >= 3
        assert 80 <= comp["roster_rows"] <= 200
        assert len(t.reference_solution) >= 17
        assert len(t.instruction.split()) <= 120 and task_labels(t) == []
        # the goal only: no rule that rules a person out is handed over
        words = t.instruction.lower()
        assert not any(w in words for w in (*REASONS, "bamboohr", "login", "last log", "days"))
        # three writes that must agree: the keys, the log, the people told
        written = {
            c.tool.split("__")[0]
            for c in t.reference_solution
            if c.tool.split("__")[1] in _WRITES
            and (c.tool != "workspace__shell" or ">>" in c.arguments["command"])
        }
        assert len(written) >= 3, written
        edges = {(e["from"], e["to"], e["fact"]) for e in comp["edges"]}
        assert ("roster", "decide", "holders") in edges and ("policy", "decide", "idle") in edges
        assert ("people", "decide", "left") in edges


_WRITES = {
    "delete",
    "write_query",
    "google_sheets_append_rows",
    "shell",
    "gmail_send_email",
    "slack_user_post_message",
    "freshdesk_reply_to_a_ticket",
}


def _forced(i: int, settings: Settings, **force: object) -> Task:
    return Task.model_validate(workflow_task(11, i, settings, composed=True, force=force))


def _deleted(t: Task) -> set[str]:
    return {c.arguments["key"] for c in t.reference_solution if c.tool == "kv__delete"}


@pytest.mark.parametrize("why", ["left", "moved", "inactive"])
def test_the_revocations_flip_when_the_evidence_flips(why: str) -> None:
    s = Settings(k=5, difficulty="hard", families=ACCESS)
    i = next(i for i in range(20) if _ok(i, s))
    yes, no = _forced(i, s, **{why: True}), _forced(i, s, **{why: False})
    assert why in yes.meta["composition"]["branches"] and why not in no.meta["composition"]["branches"]
    # same request, same list: only HR (or the last-login date) differs, and one fewer key goes
    assert yes.instruction == no.instruction and yes.services == no.services
    assert _deleted(no) < _deleted(yes) and len(_deleted(yes) - _deleted(no)) == 1
    for t in (yes, no):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    # each world's reference fails the other's checks: the action depends on the state
    from compoworld.verify.verifier import verify

    env = no.environment()
    for c in yes.reference_solution:
        env.call(c.tool, c.arguments)
    assert not verify(no, env.snapshot(), None).passed


def _ok(i: int, s: Settings) -> bool:
    try:
        _forced(i, s)
    except Rejected:
        return False
    return True


def test_themes_share_the_machinery_and_the_draw() -> None:
    assert [t.family for t in themes()] == [
        "composed.service_credit",
        "composed.access_review",
        "composed.expense_claims",
    ]
    for k in range(4, 8):
        for p in plans_for(k, (2, 12), families=ACCESS):
            w = p.walk()
            assert len(p.services()) == k and set(w) == p.services()
            assert all(a != b for a, b in zip(w, w[1:], strict=False)) and len(w) > len(set(w))
    both = plans_for(5, (7, 12), cases=2, writes=3)
    fams = [p.family for p in both]
    # each theme that fits gets an equal share of the draw
    assert fams.count("composed.access_review") == fams.count("composed.service_credit") > 0
    assert {p.family for p in plans_for(5, (7, 12), cases=2, families=ACCESS)} == set(ACCESS)
    assert len(PLANS) == 108


def test_the_access_list_is_paged_and_a_revoked_holder_is_past_the_first_page() -> None:
    """As sheets or CSV files the export is paged (40 rows a page, a tool's rows spread by person):
    the reference reads every page, and revoking only who the first page shows fails the review."""
    from compoworld.tasks.compose_access import PAGE
    from compoworld.tasks.families._common import rows
    from compoworld.verify.verifier import verify

    s = Settings(k=5, difficulty="hard", families=ACCESS)
    seen = set()
    for i in range(40):
        try:
            t = Task.model_validate(workflow_task(17, i, s, composed=True))
        except Rejected:
            continue
        roster = t.meta["composition"]["plan"]["roster"]
        if roster == "sql" or roster in seen:
            continue
        seen.add(roster)
        env = t.environment()
        if roster == "sheets":  # the first page's sheet
            books = rows(env.call("sheets__google_sheets_list_spreadsheets", {})["data"])
            sid = next(
                x["id"] for x in books if str(x.get("title", "")).startswith("Tool access list (1 of ")
            )
            first = str(env.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid}))
        else:
            first = str(
                env.call("workspace__shell", {"command": "cat Documents/security/access_list_p1.csv"})
            )
        deletes = [c for c in t.reference_solution if c.tool == "kv__delete"]
        later = [c for c in deletes if c.arguments["key"].split(":")[-1] + "@" not in first]
        assert later, (t.id, "every revoked holder is on the first page")
        assert t.meta["composition"]["roster_rows"] > PAGE
        env = t.environment()
        for c in t.reference_solution:
            if c not in later:
                env.call(c.tool, c.arguments)
        assert not verify(t, env.snapshot(), None).passed
    assert seen == {"sheets", "workspace"}


def test_the_access_list_names_each_persons_team_and_only_the_mover_is_stale() -> None:
    """From play: a holder's rows named the team the tool is for on one row and another team on the
    rest, while BambooHR showed the first. Every row of the list names the department BambooHR
    shows, but for the mover's rows (the team they were granted in, before their move) and the
    leaver's (gone from the directory)."""
    checked = 0
    for i in range(40):
        try:
            t = Task.model_validate(workflow_task(11, i, HARD, composed=True))
        except Rejected:
            continue
        if t.meta["composition"]["plan"]["roster"] != "sql":
            continue
        env = t.environment()
        q = {"query": "SELECT email, tool, team FROM access_list"}
        rows = env.call("sql__read_query", q)["data"]["rows"]
        hr = env.call("hr__bamboohr_get_employee_directory", {"response_format": "json"})["data"]
        dept = {e["workEmail"].lower(): e["department"] for e in hr["employees"]}
        here = [r for r in rows if r["email"].lower() in dept]  # the leaver is gone from the directory
        assert len(here) < len(rows)
        stale = {r["email"] for r in here if dept[r["email"].lower()] != r["team"]}
        assert len({r["team"] for r in rows}) > 1  # people of several teams
        # the mover: revoked, or kept while the policy owner's keep for them runs (HR shows the move)
        moved = "moved" in t.meta["composition"]["branches"] or bool(t.meta["composition"].get("granted"))
        assert len(stale) == (1 if moved else 0), (t.id, stale)
        checked += 1
        if checked == 2:
            return
    raise AssertionError("too few reviews with the access list in SQL")


def _log_rows(t: Task) -> list[list[str]]:
    """The review log's rows in s0, as lists of strings (date, name, tool, reason)."""
    import csv
    import io

    env, where = t.environment(), t.meta["composition"]["plan"]["log"]
    if where == "sql":
        got = env.call("sql__read_query", {"query": "SELECT * FROM access_review_log"})["data"]["rows"]
        return [[str(r["date"]), r["name"], r["tool"], r["reason"]] for r in got]
    if where == "workspace":
        out = env.call("workspace__shell", {"command": "cat Documents/security/access_review_log.csv"})
        text = out["data"]["stdout"] if isinstance(out.get("data"), dict) else str(out)
        return list(csv.reader(io.StringIO(text)))[1:]
    books = env.call("sheets__google_sheets_list_spreadsheets", {})["data"]
    sid = next(x["id"] for x in rows(books) if x.get("title") == "Access review log")
    sheet = env.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})["data"]
    return [[str(v) for v in r] for r in sheet_rows(sheet)[1:]]


def test_last_quarters_review_of_the_tool_is_in_the_log(hard: list[Task]) -> None:
    """The request's earlier thread says last quarter's review was done and logged: the log holds
    its row for the tool, from 82-98 days ago, naming nobody who holds the tool today."""
    from datetime import date

    for t in hard:
        pattern = next(c.arguments["pattern"] for c in t.reference_solution if c.tool == "kv__list")
        tool = pattern.split(":")[1]
        today = t.environment().clock.now().date()
        rows = _log_rows(t)
        earlier = [r for r in rows if r[2] == tool]
        assert len(earlier) == 1, (t.id, tool, rows)
        assert 82 <= (today - date.fromisoformat(earlier[0][0])).days <= 98, (t.id, earlier)
        keys = t.environment().call("kv__list", {"pattern": pattern})
        assert earlier[0][1].split()[0].lower() not in str(keys).lower(), (t.id, earlier, keys)
