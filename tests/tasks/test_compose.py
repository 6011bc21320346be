"""Composed work (tasks.compose): stages wired output to input; every gate and adversary passes,
lazy solvers fail, the branch flips when the evidence flips, and no planted record labels itself."""

from __future__ import annotations

import pytest

from compoworld.tasks.adversaries import solve_lazily
from compoworld.tasks.compose import PLANS, Stage, wire
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Rejected, Settings, workflow_task
from compoworld.tasks.labels import label_in, labelled, task_labels
from compoworld.tasks.model import Task
from compoworld.tasks.themes import plans_for
from compoworld.tasks.workflow import PlantError
from tests.tasks.composed_tasks import composed_tasks

CREDIT = ("composed.service_credit",)  # the credit theme's own plans (tasks.compose_access has its tests)
HARD = Settings(k=5, difficulty="hard", families=CREDIT)


def _tasks(settings: Settings, n: int, seed: int = 41) -> list[Task]:
    return composed_tasks(settings, n, seed)


@pytest.fixture(scope="module")
def hard() -> list[Task]:
    return _tasks(HARD, 4)


def test_hard_tasks_pass_every_gate_and_adversary(hard: list[Task]) -> None:
    assert len(hard) == 4
    for t in hard:
        bad = {g: why for g, why in run_gates(t, regenerate=True).items() if why}
        assert not bad, (t.id, bad)


def test_lazy_solvers_fail_composed_tasks(hard: list[Task]) -> None:
    for t in hard:
        lazy = solve_lazily(t)
        # guesses among tied candidates count their share of ties
        assert lazy["every"] == lazy["recent"] == lazy["oldest"] == 0 and lazy["keyword"] <= 0.25, (
            t.id,
            lazy,
        )


def test_hard_tasks_have_the_papers_shape(hard: list[Task]) -> None:
    for t in hard:
        assert t.meta["generator"] == "composed" and t.meta["difficulty"]["tier"] == "hard"
        assert len(t.services) == 5 and len(t.distractors) == 5
        assert 7 <= len(t.walk) <= 12
        assert all(a != b for a, b in zip(t.walk, t.walk[1:], strict=False))  # no service twice in a row
        assert len(t.walk) > len(set(t.walk))  # a revisit
        assert t.meta["difficulty"]["decisions"] >= 3
        assert 80 <= t.meta["composition"]["usage_rows"] <= 200
        assert len(t.instruction.split()) <= 120
        assert task_labels(t) == []
        # stages are wired: the usage total needs the window the request gave, the decision the total
        edges = {(e["from"], e["to"], e["fact"]) for e in t.meta["composition"]["edges"]}
        assert ("request", "usage", "window") in edges and ("usage", "decide", "amount") in edges


def _forced(seed: int, index: int, settings: Settings, **force: object) -> Task:
    return Task.model_validate(workflow_task(seed, index, settings, composed=True, force=force))


def _find(settings: Settings, want) -> tuple[int, Task]:
    for i in range(40):
        try:
            t = _forced(7, i, settings)
        except Rejected:
            continue
        if want(t):
            return i, t
    raise AssertionError("no task of that plan")


def test_the_branch_flips_when_the_limit_in_force_flips() -> None:
    s = Settings(k=4, difficulty="medium", families=CREDIT)
    i, _ = _find(s, lambda t: t.meta["composition"]["plan"]["request"] == "helpdesk")
    within = _forced(7, i, s, within=1)
    above = _forced(7, i, s, within=0)
    assert within.meta["composition"]["branches"] == ["approve"]
    assert above.meta["composition"]["branches"] == ["review"]
    # same request, same usage: only the policy's limit (the evidence) differs
    assert within.services == above.services and within.walk[:3] == above.walk[:3]
    assert within.instruction.split(" at ")[0].split()[-2:] == above.instruction.split(" at ")[0].split()[-2:]
    status = [c for c in within.reference_solution if c.tool == "helpdesk__freshdesk_update_ticket"]
    assert status and status[0].arguments["status"] == 4  # credited: resolved
    assert not [c for c in above.reference_solution if c.tool == "helpdesk__freshdesk_update_ticket"]
    for t in (within, above):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    # each world's reference fails the other's checks: the action depends on the state
    from compoworld.verify.verifier import verify

    env = above.environment()
    for c in within.reference_solution:
        env.call(c.tool, c.arguments)
    assert not verify(above, env.snapshot(), None).passed


def test_the_approver_flips_when_hr_shows_the_account_manager_left() -> None:
    s = Settings(k=5, difficulty="medium", families=CREDIT)
    i, _ = _find(s, lambda t: t.meta["composition"]["plan"]["people"])
    stay = _forced(7, i, s, owner_left=False)
    left = _forced(7, i, s, owner_left=True)
    assert stay.meta["composition"]["owner_left"] == [False] and left.meta["composition"]["owner_left"] == [
        True
    ]

    def told(t: Task) -> set[str]:
        out = set()
        for c in t.reference_solution:
            a = c.arguments
            out |= set(a.get("to", []) if c.tool == "email__gmail_send_email" else a.get("notify_emails", []))
            if c.tool == "chat__slack_user_post_message":
                out.add(a["text"].split(",")[0].split(":")[0].replace("FYI ", ""))
        return out

    assert told(stay) != told(left)
    for t in (stay, left):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}


def test_every_k_from_2_to_7_has_plans_and_walks_obey_the_rules() -> None:
    for k in range(2, 8):
        plans = plans_for(k, (2, 12), families=CREDIT)
        assert plans, k
        for p in plans:
            w = p.walk()
            assert len(p.services()) == k and set(w) == p.services()
            assert all(a != b for a, b in zip(w, w[1:], strict=False)) and len(w) > len(set(w))
    assert len(PLANS) > 100


def test_wiring_refuses_a_need_no_earlier_stage_gives() -> None:
    def nothing(w: object) -> None:
        return None

    a = Stage("a", "target", (), ("case",), nothing, nothing, "")
    b = Stage("b", "aggregate", ("case", "window"), ("amount",), nothing, nothing, "")
    with pytest.raises(PlantError, match="needs window"):
        wire([a, b])
    with pytest.raises(PlantError, match="vocabulary"):
        wire([Stage("c", "magic", (), (), nothing, nothing, "")])
    assert wire([a, Stage("b", "aggregate", ("case",), (), nothing, nothing, "")]) == [("a", "b", "case")]


def test_label_scanner_finds_planted_labels_and_spares_evidence() -> None:
    for text in (
        "AR balances sheet (old copy, do not use)",
        "Superseded.",
        "(handled last year)",
        "(2025, archived)",
    ):
        assert label_in(text), text
    for text in ("Status: closed", "Effective 2025-01-01", "the active (not archived) project", "Version: 3"):
        assert label_in(text) is None, text
    base = {"services": {"wiki": {"pages": {"1": {"title": "Policy"}}}}}
    s0 = {"services": {"wiki": {"pages": {"1": {"title": "Policy"}, "2": {"title": "Policy (superseded)"}}}}}
    assert labelled(s0, base) == [("wiki", "pages", "2", "superseded")]
    assert labelled(base, base) == []


def test_generate_at_k5_never_writes_a_chain_task() -> None:
    for t in _tasks(Settings(k=5), 2, seed=3):
        assert t.meta["generator"] == "composed" and len(t.services) == 5


def test_cli_generate_by_tier_and_stats(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from compoworld.cli.main import app

    out = tmp_path / "t.jsonl"
    r = CliRunner().invoke(
        app,
        [
            "tasks",
            "generate",
            "--k",
            "4",
            "--difficulty",
            "medium",
            "--n",
            "2",
            "--seed",
            "3",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["tasks", "stats", str(out), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["tasks"] == 2 and d["generators"] == {"composed": 2} and d["tiers"] == {"medium": 2}
    assert d["K"]["min"] == d["K"]["max"] == 4 and d["labelled_records"] == 0
    r = CliRunner().invoke(app, ["tasks", "generate", "--difficulty", "brutal", "--out", str(out)])
    assert r.exit_code == 2 and "--difficulty takes easy, medium, hard" in " ".join(r.output.split())


def test_play_driver_shows_no_ground_truth_until_finish(tmp_path, hard: list[Task]) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    from compoworld.tasks.model import save_tasks

    t = hard[0]
    f = tmp_path / "t.jsonl"
    save_tasks([t], f)
    play = [sys.executable, str(Path(__file__).resolve().parents[2] / "tools" / "play.py")]
    s = tmp_path / "s"
    out = subprocess.run(
        [*play, "start", str(f), "--id", t.id, "--session", str(s)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert t.instruction in out.stdout and "=== tools" in out.stdout
    shown = out.stdout + "".join(p.read_text() for p in s.iterdir())
    assert t.hint not in shown and all(r.description not in shown for r in t.rubric)
    svc = t.reference_solution[0].tool.split("__")[0]  # the list paged by service: only its tools
    one = subprocess.run([*play, "tools", str(s), "--service", svc], capture_output=True, text=True)
    names = [json.loads(x)["name"] for x in one.stdout.splitlines()[1:]]
    assert names and all(n.startswith(f"{svc}__") for n in names), one.stdout + one.stderr
    assert all(f'"name": "{n}"' in out.stdout for n in names) and len(names) < out.stdout.count('"name": ')
    bad = subprocess.run([*play, "tools", str(s), "--service", "nope"], capture_output=True, text=True)
    assert bad.returncode != 0 and "no tools of a service 'nope'" in bad.stderr and svc in bad.stderr
    assert (
        out.stdout.rstrip().splitlines()[-1].startswith("=== services: ")
        and svc in out.stdout.splitlines()[-1]
    )
    for c in t.reference_solution[:2]:
        r = subprocess.run(
            [*play, "call", str(s), c.tool, json.dumps(c.arguments)], capture_output=True, text=True
        )
        assert r.returncode == 0 and r.stdout.startswith('{"success":true'), r.stdout + r.stderr
    with (s / "calls.jsonl").open("a") as fh:  # a session is plain files: the rest of the reference
        for c in t.reference_solution[2:]:
            fh.write(json.dumps({"tool": c.tool, "arguments": c.arguments}) + "\n")
    r = subprocess.run([*play, "finish", str(s), ""], capture_output=True, text=True)
    assert r.stdout.startswith("PASS"), r.stdout
    assert json.loads((s / "verdict.json").read_text())["passed"] is True


def test_someone_who_left_writes_nothing_after_leaving() -> None:
    """Account managers and access holders who left (Inactive in BambooHR) have no email or Slack
    post dated after they left: the seed's later messages of theirs are dropped, so nothing reads as
    them still at work (seed 42424 held three such worlds before)."""
    from datetime import datetime

    checked = 0
    for t in composed_tasks(Settings(k=5, difficulty="hard"), 24, 42424):
        env = t.environment()
        if "hr" not in env.services:
            continue
        for e in env.services["hr"].employees.all():
            if e.get("status") != "Inactive" or not e.get("lastChanged"):
                continue
            checked += 1
            since = e["lastChanged"]
            if "email" in env.services:
                mails = env.services["email"].store.tables.get("messages", {}).values()
                assert not [
                    m for m in mails if m["from"].lower() == e["workEmail"].lower() and m["date"] > since
                ]
            if "chat" in env.services:
                cut = datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
                users = env.services["chat"].store.tables.get("users", {}).values()
                who = {u["id"] for u in users if (u.get("email") or "").lower() == e["workEmail"].lower()}
                posts = env.services["chat"].store.tables.get("messages", {}).values()
                assert not [m for m in posts if m.get("user") in who and float(m["ts"]) > cut]
    assert checked >= 3


def test_policy_pages_sit_with_their_owners_not_with_me() -> None:
    """A policy's Confluence pages are written by its owner (the one its text names, where it names
    one) in their team's space, else by the lead of the team that owns such policies, in that team's
    space: never by me, whoever I am (from play, wave 16: "written by Elena herself")."""
    import re

    from tests.tasks.composed_tasks import composed_tasks

    homes = {
        "composed.service_credit": "Customer Success",
        "composed.expense_claims": "Finance",
        "composed.access_review": "Operations",
    }
    seen = 0
    for family, home in homes.items():
        for t in composed_tasks(Settings(k=5, difficulty="hard", families=(family,)), 8, 4040):
            if t.meta["composition"]["plan"]["policy"] != "wiki":
                continue
            wiki = t.environment().services["wiki"]
            me = t.meta["user"].split("<")[1].rstrip(">")
            pages = [p for p in wiki.pages.all() if re.search(r"[Pp]olicy.* v\d$", p["title"])]
            assert pages, t.id
            text = " ".join(p["content"] for p in pages)
            owner = re.search(r"Policy owner: [^(]+\(([^)]+)\)", text)
            for p in pages:
                space = wiki.spaces.get(p["space_id"])
                assert p["author_id"] != me, (t.id, p["title"])
                if owner:
                    assert p["author_id"] == owner.group(1), (t.id, p["author_id"], owner.group(1))
                else:
                    assert space["name"] == home, (t.id, space["name"])
            seen += 1
    assert seen >= 3
