"""Curriculum from failures: `tasks generate --target RUN_DIR` and `--schedule`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.tasks.curriculum import FailureTable, allocate, arm_rates, arms, plan
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import load_tasks
from tests.view.runs import FAMILIES, make_tasks, scripted_run

runner = CliRunner()


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("curriculum")
    tasks = make_tasks(d / "tasks.jsonl", n=16, seed=21)
    counts = Counter(t.meta["family"] for t in tasks)
    fail = sorted(counts, key=lambda f: (-counts[f], f))[0]  # the family the run saw most
    return {"dir": d, "fail": fail, "run": scripted_run(d / "tasks.jsonl", tasks, d / "run", fail)}


def test_the_failing_family_gets_the_largest_share_and_every_family_its_floor(failing_run) -> None:
    d, fail = failing_run["dir"], failing_run["fail"]
    out = d / "next.jsonl"
    n, floor = 30, 0.3
    r = runner.invoke(
        app,
        ["tasks", "generate", "--n", str(n), "--seed", "4", "--families", ",".join(FAMILIES)]
        + ["--target", str(failing_run["run"]), "--floor", str(floor), "--out", str(out)],
    )
    assert r.exit_code == 0, r.output
    tasks = load_tasks(out)
    got = Counter(t.meta["family"] for t in tasks)
    fams = [a.name for a in arms(Settings(families=FAMILIES))]
    summary = json.loads((d / "next.curriculum.json").read_text())
    skipped = summary["rounds"][0]["skipped"]  # a family no gate lets through is said, not hidden
    assert len(tasks) == n and set(got) | set(skipped) == set(fams)  # every family is still drawn
    assert fail not in skipped and len(skipped) < len(fams) / 2
    assert got[fail] > max(c for f, c in got.items() if f != fail)  # the most where the model fails
    assert min(got.values()) >= int(n * floor / len(fams))
    # the weights are in meta and in the summary
    weights = summary["rounds"][0]["weights"]
    assert max(weights, key=weights.get) == fail and summary["rounds"][0]["made"] == dict(got)
    assert all(w >= floor / len(fams) - 1e-4 for w in weights.values())  # (rounded to 4 places)
    assert {t.meta["curriculum"]["weight"] for t in tasks if t.meta["family"] == fail} == {weights[fail]}
    assert fail in r.output
    # a curriculum task is an ordinary task: it regenerates from its meta and passes every gate
    assert not any(run_gates(tasks[0], regenerate=True).values())


def test_schedule_grows_k_over_rounds(failing_run, tmp_path: Path) -> None:
    out = tmp_path / "sched.jsonl"
    r = runner.invoke(
        app,
        ["tasks", "generate", "--n", "6", "--seed", "2", "--families", ",".join(FAMILIES)]
        + ["--target", str(failing_run["run"]), "--schedule", "2", "--out", str(out)],
    )
    assert r.exit_code == 0, r.output
    first, second = load_tasks(tmp_path / "sched.round1.jsonl"), load_tasks(tmp_path / "sched.round2.jsonl")
    assert len(first) == len(second) == 6
    assert max(t.meta["K"] for t in first) < max(t.meta["K"] for t in second)
    assert {t.meta["curriculum"]["round"] for t in second} == {2}


def test_allocation_keeps_floors_and_sums() -> None:
    share = {"a": 0.8, "b": 0.1, "c": 0.1}
    for n in (3, 10, 97):
        c = allocate(n, share, 0.3)
        assert sum(c.values()) == n and min(c.values()) >= max(1, int(n * 0.3 / 3))
        assert c["a"] == max(c.values())
    assert sum(allocate(2, share, 0.3).values()) == 2  # fewer tasks than families: no floor of 1


def test_a_family_the_run_never_drew_inherits_from_its_services_and_k() -> None:
    items = {a.name: a for a in arms(Settings(families=FAMILIES))}
    t = FailureTable()
    for name, failed in (("docs.contract_retention_archive", True), ("hr.offboard_leaver", False)):
        a = items[name]
        for _ in range(6):  # the run failed every episode over files+wiki, and passed calendar+hr
            t.add("family", name, failed)
            t.add("K", str(a.k), failed)
            t.add("service_set", ",".join(a.services), failed)
            for s in a.services:
                t.add("service", s, failed)
            t.episodes, t.failures = t.episodes + 1, t.failures + int(failed)
    rates = {k: v["rate"] for k, v in arm_rates(list(items.values()), t).items()}
    assert rates["docs.contract_retention_archive"] > rates["docs.fix_moved_file_link"] > 0.5
    # never drawn: files+wiki (failed) weighs more than boards+hr (hr passed), both at K=2
    assert rates["docs.fix_moved_file_link"] > rates["hr.manager_change"]
    assert rates["hr.manager_change"] > rates["hr.offboard_leaver"]


def test_bad_curriculum_input_is_one_clear_error(tmp_path: Path) -> None:
    r = runner.invoke(
        app, ["tasks", "generate", "--n", "2", "--target", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]
    )
    assert r.exit_code == 2 and "not a run directory" in r.output
    with pytest.raises(ValueError, match="floor"):
        plan(4, Settings(families=FAMILIES), floor=1.5)
