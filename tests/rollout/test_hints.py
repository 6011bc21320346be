"""`eval --hints`: the agent is shown the task's hint (and subtasks), the run records it, the
report compares hinted and unhinted pass rates per family, and the SFT export drops the hint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.rollout.runner import load_run
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task, load_tasks, save_tasks
from compoworld.tasks.pipeline import generate
from tests.scripted_server import ScriptedServer, tool_calls

runner = CliRunner()


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory) -> Path:
    tasks, _ = generate(6, seed=17, settings=Settings())
    path = tmp_path_factory.mktemp("hint_tasks") / "tasks.jsonl"
    save_tasks(tasks, path)
    return path


def hint_follower(tasks: list[Task]):
    """A scripted policy that can only do the work when it is shown the hint: then it makes the
    reference's calls turn by turn; without a hint it gives up at once."""

    def act(body: dict[str, Any]) -> dict[str, Any]:
        msgs = body["messages"]
        user = next(m["content"] for m in msgs if m["role"] == "user")
        task = next(t for t in tasks if user.startswith(t.instruction))
        if "Hint:" not in user:
            return tool_calls(("finish", {"answer": ""}))
        turns = sorted({c.turn for c in task.reference_solution})
        n = sum(1 for m in msgs if m["role"] == "assistant")
        if n < len(turns):
            return tool_calls(*[(c.tool, c.arguments) for c in task.reference_solution if c.turn == turns[n]])
        return tool_calls(("finish", {"answer": task.answer or ""}))

    return act


def _eval(tasks_file: Path, out: Path, url: str, *extra: str) -> Any:
    return runner.invoke(
        app,
        ["eval", "--tasks", str(tasks_file), "--model", "m", "--base-url", url, "--server-profile", "generic",
         "--concurrency", "2", "--out", str(out), *extra],
    )  # fmt: skip


def test_hinted_and_unhinted_runs_compared_per_family_and_sft_drops_the_hint(
    tasks_file: Path, tmp_path: Path
) -> None:
    tasks = load_tasks(tasks_file)
    with ScriptedServer(default=hint_follower(tasks)) as server:
        r = _eval(tasks_file, tmp_path / "hinted", server.url, "--hints")
        assert r.exit_code == 0, r.output
        r = _eval(tasks_file, tmp_path / "plain", server.url)
        assert r.exit_code == 0, r.output
        r = _eval(tasks_file, tmp_path / "steps", server.url, "--hints", "subtasks")
        assert r.exit_code == 0, r.output
        # a run is hinted or not throughout: resuming it the other way is refused
        r = _eval(tasks_file, tmp_path / "plain", server.url, "--hints")
        assert r.exit_code != 0 and "hints" in r.output
    cfg, hinted, _ = load_run(tmp_path / "hinted")
    assert cfg["hints"] == "hint" and len(hinted) == len(tasks)
    by_id = {t.id: t for t in tasks}
    for e in hinted:
        t = by_id[e["task_id"]]
        assert e["hints"] == "hint" and e["hint_shown"] == f"\n\nHint: {t.hint}"
        assert e["messages"][1]["content"].startswith(t.instruction) and t.hint in e["messages"][1]["content"]
        assert e["V"] == 1  # the checks are the task's own: the hinted instruction changes none of them
    _, plain, _ = load_run(tmp_path / "plain")
    assert all(e["hints"] == "none" and e["hint_shown"] == "" and e["V"] == 0 for e in plain)
    _, steps, _ = load_run(tmp_path / "steps")
    for e in steps:
        assert "Steps:\n1. " + by_id[e["task_id"]].subtasks[0] in e["messages"][1]["content"]

    r = runner.invoke(
        app, ["report", str(tmp_path / "hinted"), "--against", str(tmp_path / "plain"), "--json"]
    )
    assert r.exit_code == 0, r.output
    hints = json.loads(r.output)["hints"]
    families = {t.meta["family"] for t in tasks}
    assert set(hints) == families
    for row in hints.values():
        assert row["hint"]["pass_rate"] == 1.0 and row["none"]["pass_rate"] == 0.0 and row["delta"] == 1.0
    r = runner.invoke(app, ["report", str(tmp_path / "hinted"), "--against", str(tmp_path / "plain")])
    assert r.exit_code == 0 and "hinted and unhinted, by family" in r.output
    assert "Hinted and unhinted, by family" in (tmp_path / "hinted" / "report.md").read_text()

    for keep, present in (([], False), (["--keep-hint"], True)):
        out = tmp_path / f"sft{len(keep)}.jsonl"
        r = runner.invoke(
            app, ["export", "sft", "--runs", str(tmp_path / "hinted"), "--out", str(out), *keep]
        )
        assert r.exit_code == 0, r.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == len(tasks)
        for row in rows:
            user = next(m for m in row["messages"] if m["role"] == "user")["content"]
            assert ("Hint:" in user) is present
            assert any(user.startswith(t.instruction) for t in tasks)


def test_bad_hint_mode_is_one_line(tasks_file: Path, tmp_path: Path) -> None:
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tasks_file),
            "--agent",
            "noop",
            "--hints",
            "all",
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert r.exit_code != 0 and "--hints must be one of none, hint, subtasks" in r.output
