"""Generation end to end: gates, determinism across processes, coverage, the CLI, and task files."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import TASK_FORMAT, Task, export_parquet, load_tasks, save_tasks
from compoworld.tasks.pipeline import generate

runner = CliRunner()


@pytest.fixture(scope="module")
def batch() -> list[Task]:
    tasks, stats = generate(60, seed=5, settings=Settings())
    assert stats.kept == 60
    return tasks


def test_every_task_passes_every_gate_and_adversary(batch: list[Task]) -> None:

    for t in batch[:25]:
        assert all(why is None for why in run_gates(t, regenerate=False).values()), t.id
        assert t.meta["gates"] == "pass"
        assert t.meta["L"] == len(t.walk) and t.meta["K"] == len(t.services) and len(t.distractors) == 5
        assert set(t.walk) == set(t.services) and len(set(t.walk)) < len(t.walk)  # covers K, revisits one
        assert all(a != b for a, b in zip(t.walk, t.walk[1:], strict=False))
        assert t.dependency_graph.edges or t.meta["composed"]  # information flows between the steps
        assert all(e.target > e.source for e in t.dependency_graph.edges)
        assert sum(r.check["predicate"] == "no_changes_except" for r in t.rubric) == 1
        assert any(r.kind == "guard" and r.check["predicate"] != "no_changes_except" for r in t.rubric)
        assert t.hint and 3 <= len(t.subtasks) <= 6 and t.instruction
        assert t.format_version == TASK_FORMAT and t.meta["family"] and t.meta["work_domain"]


def test_reference_turns_are_grounded_and_noop_scores_zero(batch: list[Task]) -> None:
    from compoworld.verify.verifier import verify

    for t in batch:
        turns = [c.turn for c in t.reference_solution]
        assert turns == sorted(turns) and len(set(turns)) >= len(t.walk)
        for c in t.reference_solution:
            for src in c.sources.values():
                assert src in ("instruction", "system", "composed") or (
                    src.startswith("obs:")
                    and t.reference_solution[int(src[4:])].turn < c.turn  # shown by an earlier turn
                )
        assert verify(t, t.initial_state, None).score == 0.0


def test_coverage_and_diversity(batch: list[Task]) -> None:
    assert len({t.meta["family"] for t in batch}) >= 20
    domains = Counter(t.meta["work_domain"] for t in batch)
    assert len(domains) >= 8, domains
    openings = Counter(" ".join(t.instruction.split()[:2]) for t in batch)
    assert len(openings) >= 20 and max(openings.values()) <= 0.15 * len(batch), openings.most_common(3)
    assert sum(len(t.meta["difficulty"]["write_services"]) >= 2 for t in batch) >= 0.4 * len(batch)


def test_no_intermediate_fact_in_any_instruction(batch: list[Task]) -> None:
    for t in batch:
        for e in t.dependency_graph.edges:
            assert len(e.fact.value) <= 2 or e.fact.value.casefold() not in t.instruction.casefold()
        for f in t.meta["facts"]:
            assert f.casefold() not in t.instruction.casefold()


def test_same_seed_same_bytes_in_another_process() -> None:
    code = (
        "from compoworld.tasks.pipeline import generate; from compoworld.tasks.generator import Settings; import sys; "
        "sys.stdout.buffer.write(b''.join(t.to_json() for t in generate(4, 9, Settings())[0]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}  # set order must not leak into the bytes
    a = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout
    b = b"".join(t.to_json() for t in generate(4, 9, Settings())[0])
    assert a == b
    assert generate(1, 10, Settings())[0][0].to_json() != generate(1, 9, Settings())[0][0].to_json()


def test_knobs_are_recorded_and_respected() -> None:
    from compoworld.tasks.generator import Rejected

    kept = 0
    for i in range(10):
        try:
            t = Task.model_validate(generate_task(3, i, Settings(k=3, distractors=2, families=("support.",))))
        except Rejected:
            continue
        kept += 1
        assert (t.meta["K"], t.meta["D"]) == (3, 2) and t.meta["family"].startswith("support.")
        assert t.meta["difficulty"]["traps"] == len(t.traps) >= 1
    assert kept >= 5


def test_old_task_files_are_refused_with_a_clear_message(tmp_path: Path, batch: list[Task]) -> None:
    old = json.loads(batch[0].to_json())
    old.pop("format_version")
    f = tmp_path / "old.jsonl"
    f.write_text(json.dumps(old) + "\n")
    with pytest.raises(ValueError, match=r"old.jsonl:1: task format 1 is not supported.*regenerate"):
        load_tasks(f)
    r = runner.invoke(app, ["tasks", "check", str(f)])
    assert r.exit_code == 2 and "task format 1" in " ".join(r.output.split())  # rich wraps lines


def test_cli_generate_check_show_and_tampering(tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    r = runner.invoke(
        app, ["tasks", "generate", "--n", "6", "--seed", "2", "--walk", "3:8", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "distinct service sets" in r.output and "tasks per second" in r.output
    r = runner.invoke(app, ["tasks", "check", str(out), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["passed"] == 6 and "adversary:spray" in summary["failures_by_gate"]
    r = runner.invoke(app, ["tasks", "check", str(out)])
    assert r.exit_code == 0 and "spray gets V = 0" in r.output and "grounded" in r.output
    r = runner.invoke(app, ["tasks", "audit", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert set(json.loads(r.output)["pass_rate"]) == {"every", "recent", "oldest", "first", "keyword"}
    # --oldest is a no-op kept for old scripts: the same solvers run
    r = runner.invoke(app, ["tasks", "audit", str(out), "--json", "--oldest"])
    assert r.exit_code == 0, r.output
    assert set(json.loads(r.output)["pass_rate"]) == {"every", "recent", "oldest", "first", "keyword"}
    tasks = load_tasks(out)
    r = runner.invoke(app, ["tasks", "show", str(out), "--id", tasks[1].id])
    assert r.exit_code == 0 and tasks[1].id in r.output and "reference solution" in r.output
    assert runner.invoke(app, ["tasks", "show", str(out), "--id", "nope"]).exit_code == 2
    # tamper: leak a fact, drop a mutating step, make s0 already satisfied
    fact = next(e.fact.value for e in tasks[0].dependency_graph.edges if len(e.fact.value) > 3)
    leaked = tasks[0].model_copy(update={"instruction": tasks[0].instruction + " " + fact})
    env = tasks[1].environment()
    keep = [c for c in tasks[1].reference_solution if not env.tool_spec(c.tool).mutates]
    broken = tasks[1].model_copy(update={"reference_solution": keep})
    trivial = tasks[2].model_copy(update={"rubric": [r for r in tasks[2].rubric if r.kind == "guard"]})
    # a planted record with a field its service's model lacks (its own tools would refuse to update it)
    s0 = copy.deepcopy(tasks[3].initial_state)
    name, table, key = next(
        (n, t, k)
        for n, svc in sorted(s0["services"].items())
        if isinstance(svc, dict)
        for t, rows in sorted(svc.items())
        if isinstance(rows, dict) and not t.startswith("_")
        for k, rec in rows.items()
        if isinstance(rec, dict) and "id" in rec
    )
    s0["services"][name][table][key] = {**s0["services"][name][table][key], "not_a_field": "x"}
    malformed = tasks[3].model_copy(update={"initial_state": s0})
    bad = tmp_path / "bad.jsonl"
    save_tasks([leaked, broken, trivial, malformed, *tasks[4:]], bad)
    r = runner.invoke(app, ["tasks", "check", str(bad), "--json", "--no-regenerate"])
    assert r.exit_code == 1
    summary = json.loads(r.output)
    assert summary["failed"] == 4
    assert "no_leak" in summary["failures"][leaked.id] and "solvable" in summary["failures"][broken.id]
    assert "initial_unsatisfied" in summary["failures"][trivial.id]
    assert "well_formed" in summary["failures"][malformed.id]
    r = runner.invoke(app, ["tasks", "generate", "--n", "2", "--walk", "9:3", "--out", str(out)])
    assert r.exit_code != 0 and "--walk" in r.output
    r = runner.invoke(app, ["tasks", "generate", "--n", "2", "--families", "nope.", "--out", str(out)])
    assert r.exit_code != 0 and "no workflow family matches" in r.output


def test_task_files_roundtrip_gzip_parquet_and_errors(tmp_path: Path, batch: list[Task]) -> None:
    gz = tmp_path / "t.jsonl.gz"
    save_tasks(batch[:3], gz)
    assert [t.to_json() for t in load_tasks(gz)] == [t.to_json() for t in batch[:3]]
    pq = tmp_path / "t.parquet"
    export_parquet(batch[:3], pq)
    import pyarrow.parquet as papq

    table = papq.read_table(pq)
    assert table.num_rows == 3 and json.loads(table.column("rubric")[0].as_py())[0]["id"] == "c1"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(batch[0].to_json().decode() + f'\n{{"id": 1, "format_version": {TASK_FORMAT}}}\n')
    with pytest.raises(ValueError, match=r"broken.jsonl:2: invalid task: field"):
        load_tasks(broken)
    broken.write_text("not json\n")
    with pytest.raises(ValueError, match=r"broken.jsonl:1: not valid JSON"):
        load_tasks(broken)
    with pytest.raises(FileNotFoundError):
        load_tasks(tmp_path / "missing.jsonl")


def test_xai_tasks_cross_gui_mcp_and_cli_and_revisit_one() -> None:
    from compoworld.tasks.gates import run_gates
    from compoworld.tasks.generator import interface_of

    tasks, _ = generate(4, seed=4, settings=Settings(distractors=1, interfaces=("cli", "gui", "mcp")))
    for t in tasks:
        used = [interface_of(c.tool.split("__", 1)[0]) for c in t.reference_solution]
        assert {"gui", "mcp", "cli"} <= set(used)
        runs = [
            x
            for i, x in enumerate(t.meta["interface_walk"])
            if i == 0 or t.meta["interface_walk"][i - 1] != x
        ]
        assert len(runs) > len(set(runs)) and t.meta["interface_switches"] >= 2  # returns to an interface
        assert t.hint and len(t.subtasks) >= 3
        assert all(v is None for v in run_gates(t).values())
        assert len(set(t.meta["page_kinds"]) - {"home"}) >= 2  # GUI steps use more than one kind of page
    # the interfaces gate fails a task whose reference never touches a declared interface
    t = tasks[0]
    cut = t.model_copy(
        update={"reference_solution": [c for c in t.reference_solution if not c.tool.startswith("browser__")]}
    )
    assert run_gates(cut, regenerate=False)["interfaces"] is not None
