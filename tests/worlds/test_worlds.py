"""Persona worlds: generation, cumulative replayable days, the gates, and the CLI."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.worlds import Persona, build_days, make_personas, similarity
from compoworld.worlds.builder import DayRejected


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("worlds")
    r = CliRunner().invoke(
        app, ["worlds", "build", "--personas", "10", "--days", "5", "--seed", "3", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    return out


def test_ten_personas_five_days_build_and_pass_check(built: Path) -> None:
    meta = json.loads((built / "world.json").read_text())
    assert len(meta["personas"]) == 10 and not meta["rejected"]
    for p in meta["personas"]:
        assert len(p["hashes"]) == 5 and len(set(p["hashes"])) == 5  # every day changes the world
        assert all(a < b for a, b in zip(p["records"], p["records"][1:], strict=False))  # it grows day by day
        assert p["files"][-1] > p["files"][0]
    r = CliRunner().invoke(app, ["worlds", "check", str(built)])
    assert r.exit_code == 0 and "50/50" in r.output, r.output
    r = CliRunner().invoke(app, ["worlds", "show", str(built), "--persona", "p001", "--day", "2"])
    assert r.exit_code == 0 and "day 2" in r.output and "story s1" in r.output


def test_no_two_personas_are_near_duplicates(built: Path) -> None:
    people = [
        Persona(**json.loads((built / p / "persona.json").read_text()))
        for p in sorted(x.name for x in built.iterdir() if x.is_dir())
    ]
    assert all(similarity(a, b) <= 0.6 for a, b in combinations(people, 2))
    again, _ = make_personas(3, 10)
    assert [p.to_dict() for p in again] == [p.to_dict() for p in people]  # from the seed alone


def test_days_are_cumulative_and_deterministic() -> None:
    p = make_personas(11, 1)[0][0]
    three = build_days(p, 11, 3)
    five = build_days(p, 11, 5)
    assert [d["hash"] for d in five[:3]] == [d["hash"] for d in three]  # W(c, d) builds on W(c, d-1)
    story_days = {}
    for d in five:
        for a in d["activities"]:
            story_days.setdefault(a["story"], set()).add(d["day"])
    assert any(len(days) >= 3 for days in story_days.values())  # story lines run across days


def test_tampering_and_failing_activities_are_reported(built: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "w"
    shutil.copytree(built, copy)
    f = copy / "p002" / "day3.json"
    d = json.loads(f.read_text())
    d["hash"] = "0" * 32
    f.write_text(json.dumps(d))
    r = CliRunner().invoke(app, ["worlds", "check", str(copy)])
    assert r.exit_code == 1 and "p002 day 3" in r.output
    p = make_personas(5, 1)[0][0]
    p.services = [s for s in p.services if s != "workspace"]  # skills that write files now fail
    with pytest.raises(DayRejected) as e:
        build_days(p, 5, 5)
    assert e.value.activity.split("(")[0] in ("file_report", "meeting_with_notes")
    r = CliRunner().invoke(app, ["worlds", "check", str(tmp_path / "nothing")])
    assert r.exit_code == 2


def test_xai_tasks_start_from_a_persona_day(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "xai.jsonl"
    r = CliRunner().invoke(
        app,
        [
            "tasks",
            "generate",
            "--world",
            str(built),
            "--n",
            "6",
            "--k",
            "4",
            "--distractors",
            "1",
            "--interfaces",
            "gui,mcp,cli",
            "--seed",
            "8",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    for t in tasks:
        w = t["meta"]["world"]
        persona = json.loads((built / w["persona"] / "persona.json").read_text())
        assert set(t["services"]) <= {*persona["services"], "browser"}
        day = json.loads((built / w["persona"] / f"day{w['day']}.json").read_text())
        s0 = t["initial_state"]["services"]
        for svc in set(t["services"]) & set(persona["services"]) - {"workspace"}:
            # the task's history is the persona's: their day's records are all in s0
            for table, rows in day["snapshot"]["services"][svc].items():
                if not table.startswith("_"):
                    assert set(rows) <= set(s0[svc][table])
    r = CliRunner().invoke(app, ["tasks", "check", str(out)])
    assert r.exit_code == 0 and "6/6" in r.output, r.output


def test_a_model_may_propose_personas_and_plans_validated_and_stored(tmp_path: Path) -> None:
    from compoworld.core.company import make_company
    from tests.scripted_server import ScriptedServer, say

    base, _ = make_personas(21, 2)
    cust = [c.name for c in make_company(base[0].world_seed, "small").customers]
    good = {
        "occupation": "support lead",
        "habits": ["reads tickets first"],
        "stories": [{"kind": "renewal", "customer": cust[0]}, {"kind": "onboarding", "customer": cust[1]}],
        "plan": {
            str(d): [{"story": "s1", "skill": "email_thread"}, {"story": "s2", "skill": "file_report"}]
            for d in (1, 2)
        },
    }
    bad = {**good, "occupation": "astronaut"}
    with ScriptedServer([say(json.dumps(good)), say(json.dumps(bad))]) as server:
        r = CliRunner().invoke(
            app,
            [
                "worlds",
                "build",
                "--personas",
                "2",
                "--days",
                "2",
                "--seed",
                "21",
                "--out",
                str(tmp_path),
                "--model",
                "scripted",
                "--base-url",
                server.url,
            ],
        )
    assert r.exit_code == 0, r.output
    p0 = json.loads((tmp_path / "p000" / "persona.json").read_text())
    assert (
        p0["proposed_by"] == "scripted"
        and p0["occupation"] == "support lead"
        and p0["plan"]["1"][1]["skill"] == "file_report"
    )
    day1 = json.loads((tmp_path / "p000" / "day1.json").read_text())
    assert [a["skill"] for a in day1["activities"]] == ["email_thread", "file_report"]
    assert json.loads((tmp_path / "p001" / "persona.json").read_text())["proposed_by"] == "offline"
    # the stored plan replays without any model
    r = CliRunner().invoke(app, ["worlds", "check", str(tmp_path)])
    assert r.exit_code == 0 and "4/4" in r.output
