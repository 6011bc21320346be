"""Persona worlds: generation, cumulative replayable days, the gates, and the CLI."""

from __future__ import annotations

import json
import shutil
from itertools import combinations
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.worlds import Persona, build_days, make_personas, open_world, similarity
from compoworld.worlds.builder import DayRejected, base_env, state_bytes


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("worlds") / "w"
    r = CliRunner().invoke(
        app, ["worlds", "build", "--personas", "4", "--days", "9", "--seed", "3", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    return out


def test_personas_build_days_double_replayed_and_check(built: Path) -> None:
    meta = json.loads((built / "world.json").read_text())
    assert len(meta["personas"]) == 4 and not meta["rejected"]
    for p in meta["personas"]:
        assert len(p["hashes"]) == 9 and len(set(p["hashes"])) == 9  # every day changes the world
        sizes = [d["bytes"] for d in p["days"]]
        assert all(a < b for a, b in zip(sizes, sizes[1:], strict=False))  # it grows day by day
        assert len(p["replay_s"]) == 9  # the second replay ran every day too
    r = CliRunner().invoke(app, ["worlds", "check", str(built)])
    assert r.exit_code == 0 and "36/36" in r.output, r.output
    r = CliRunner().invoke(app, ["worlds", "show", str(built), "--persona", "p001", "--day", "2"])
    assert r.exit_code == 0 and "day 2" in r.output and "story s1" in r.output
    r = CliRunner().invoke(app, ["worlds", "report", str(built), "--json"])
    rep = json.loads(r.output)
    assert rep["summary"]["states"] == 36 and rep["summary"]["events_ratio"] > 1  # the last day is busier


def test_stored_patches_rebuild_the_replayed_state(built: Path) -> None:
    w = open_world(built)
    p = w.persona("p002")
    days = build_days(p, 3, 9)
    env = base_env(p, "small")  # day 0
    st = w.state("p002", 9)
    from compoworld.core.environment import Environment

    again = Environment.from_snapshot(p.services, st)
    assert again.state_hash() == days[-1]["hash"] == w.day("p002", 9)["hash"]
    assert state_bytes(st) == days[-1]["bytes"]  # the running size is the real size
    assert w.state("p002", 4)["clock"] == days[3]["clock"]
    assert env.state_hash() != again.state_hash()


def test_no_two_personas_are_near_duplicates(built: Path) -> None:
    w = open_world(built)
    people = [w.persona(p["id"]) for p in w.meta["personas"]]
    assert all(similarity(a, b) <= 0.6 for a, b in combinations(people, 2))
    again, _ = make_personas(3, 4)
    assert [p.to_dict() for p in again] == [p.to_dict() for p in people]  # from the seed alone


def test_story_lines_span_days_and_interleave() -> None:
    p = make_personas(11, 1)[0][0]
    five = build_days(p, 11, 12)
    three = build_days(p, 11, 3)
    # W(c, d) builds on W(c, d-1); only the horizon's last day (the wrap-up) depends on the horizon
    assert [d["hash"] for d in five[:2]] == [d["hash"] for d in three[:2]]
    assert five[2]["hash"] != three[2]["hash"] and three[2]["activities"][-1]["skill"] == "wrap_up"
    story_days: dict[str, set[int]] = {}
    for d in five:
        for a in d["activities"]:
            if a.get("story"):
                story_days.setdefault(a["story"], set()).add(d["day"])
    assert sum(len(v) >= 3 for v in story_days.values()) >= 2  # several lines run across days...
    busy = [d for d in five if len({a.get("story") for a in d["activities"] if a.get("story")}) >= 2]
    assert busy  # ... and interleave on one day
    last = five[-1]["ledger"]
    exports = last["exports"]
    assert len(exports) >= 5 and last["reports"]  # exports written on weekdays, read back by the reports
    # mail threads span weeks: one thread's messages (ours and the contact's replies) over >= 7 days
    dates: dict[str, set[str]] = {}
    for d in five:
        for m in d["patch"].get("email", {}).get("messages", {}).get("set", {}).values():
            dates.setdefault(m["threadId"], set()).add(m["date"][:10])
    assert max(len(v) for v in dates.values()) >= 4  # a thread written in on four or more days
    from datetime import date

    longest = max((date.fromisoformat(max(v)) - date.fromisoformat(min(v))).days for v in dates.values())
    assert longest >= 7


def test_tampering_and_failing_activities_are_reported(built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "w"
    shutil.copytree(built, copy)
    f = copy / "p002" / "day003.json"
    f.write_bytes(f.read_bytes().replace(b'"day":3', b'"day":4', 1))
    r = CliRunner().invoke(app, ["worlds", "check", str(copy)])
    assert r.exit_code == 1 and "p002/day003.json" in r.output and "tampered" in r.output
    p = make_personas(5, 1)[0][0]
    p.services = [s for s in p.services if s != "workspace"]  # skills that write files now fail
    with pytest.raises(DayRejected) as e:
        build_days(p, 5, 5)
    assert e.value.day >= 1 and e.value.activity
    r = CliRunner().invoke(app, ["worlds", "check", str(tmp_path / "nothing")])
    assert r.exit_code == 2


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
    out = tmp_path / "m"
    with ScriptedServer([say(json.dumps(good)), say(json.dumps(bad))]) as server:
        r = CliRunner().invoke(
            app,
            ["worlds", "build", "--personas", "2", "--days", "2", "--seed", "21", "--out", str(out),
             "--model", "scripted", "--base-url", server.url],
        )  # fmt: skip
    assert r.exit_code == 0, r.output
    w = open_world(out)
    p0 = w.persona("p000")
    assert (
        p0.proposed_by == "scripted"
        and p0.occupation == "support lead"
        and p0.plan["1"][1]["skill"] == "file_report"
    )
    assert [a["skill"] for a in w.day("p000", 1)["activities"]] == ["setup", "email_thread", "file_report"]
    assert w.persona("p001").proposed_by == "offline"
    r = CliRunner().invoke(app, ["worlds", "check", str(out)])  # the stored plan replays without any model
    assert r.exit_code == 0 and "4/4" in r.output


def test_persona_round_trips() -> None:
    p = make_personas(2, 1)[0][0]
    assert Persona(**p.to_dict()) == p


SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"


@pytest.mark.skipif(
    not (SPECS / "klavis_shopify.json").is_file(), reason="shared/mcp-specs is not checked out"
)
def test_compiled_services_join_persona_worlds_where_a_skill_fits(tmp_path: Path, monkeypatch) -> None:
    from compoworld.compiler import compile_spec
    from compoworld.compiler.library import library_for
    from compoworld.core import library
    from compoworld.worlds.compiled import fit

    def clear() -> None:
        fit.cache_clear()

    (tmp_path / "shopify.json").write_text(
        json.dumps(compile_spec(SPECS / "klavis_shopify.json", "shopify", 0))
    )
    library.use(library_for(str(tmp_path / "shopify.json")))
    clear()
    try:
        create, _, update, _, _ = fit("shopify")
        assert "create" in create and "update" in update
        p = make_personas(4, 1)[0][0]
        assert p.services[-1] == "shopify"
        days = build_days(p, 4, 4)
        kept = [a for d in days for a in d["activities"] if a["skill"] == "compiled_work"]
        assert kept and "shopify" in days[0]["services_touched"]
        assert any("shopify" in d["patch"] for d in days[1:])  # records revised on later days
        again = build_days(p, 4, 4)
        assert [d["hash"] for d in again] == [d["hash"] for d in days]
        out = tmp_path / "w"
        r = CliRunner().invoke(
            app,
            ["--manifests", str(tmp_path / "shopify.json"), "worlds", "build", "--personas", "1"]
            + ["--days", "3", "--seed", "4", "--out", str(out)],
        )
        assert r.exit_code == 0, r.output
        library.use(None)
        clear()
        r = CliRunner().invoke(app, ["worlds", "check", str(out)])
        assert r.exit_code == 1 and "shopify" in r.output and "--manifests" in r.output
        r = CliRunner().invoke(
            app, ["worlds", "check", str(out), "--manifests", str(tmp_path / "shopify.json")]
        )
        assert r.exit_code == 0, r.output
    finally:
        library.use(None)
        clear()


def test_the_planner_follows_habits_the_calendar_and_open_story_lines() -> None:
    from compoworld.worlds.planner import date_of, open_stories, plan_day

    p = make_personas(9, 1)[0][0]
    weekdays = [d for d in range(1, 29) if date_of(d).weekday() < 5]

    def share(habits: list[str], skill: str) -> float:
        q = Persona(**{**p.to_dict(), "habits": habits})
        led = {"stories": open_stories(q), "recent": []}
        return sum(any(a["skill"] == skill for a in plan_day(q, 9, d, led)[0]) for d in weekdays) / len(
            weekdays
        )

    assert share(["blocks focus time"], "focus_block") == 1.0
    assert share(["answers email first thing"], "focus_block") < 0.7
    q = Persona(**{**p.to_dict(), "habits": ["logs every customer call in the CRM"]})
    led = {"stories": open_stories(q), "recent": []}
    acts = plan_day(q, 9, 3, led)[0]
    assert any(a["skill"] == "crm_note" for a in acts)  # the habit adds story work
    assert {a["story"] for a in acts if a["skill"] == "advance"} <= {s["id"] for s in led["stories"]}
    friday = next(d for d in weekdays if date_of(d).weekday() == 4)
    assert any(a["skill"] == "weekly_report" for a in plan_day(q, 9, friday, led)[0])
    saturday = next(d for d in range(1, 10) if date_of(d).weekday() == 5)
    assert not any(a["skill"] == "daily_export" for a in plan_day(q, 9, saturday, led)[0])
    last = plan_day(q, 9, saturday, led, last=True)[0]  # the wrap-up happens whatever the weekday
    assert last[-1]["skill"] == "wrap_up" and sum(a["skill"] == "advance" for a in last) == len(
        led["stories"]
    )
