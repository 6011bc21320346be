"""An episode's default budgets are the task's own (`agents.loop.task_budget`): a hard composed task's
reference spends over a million tokens one call a turn (ten services' tools go with every
request), so the fixed 40 turns and 200,000 tokens failed it for the budget, not the work."""

from __future__ import annotations

import asyncio

import pytest

from compoworld.agents.loop import TOKENS_FLOOR, TURNS_FLOOR, task_budget
from compoworld.agents.policies import OracleAgent
from compoworld.rollout.runner import RunConfig, episode_record
from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import Task


def _task(settings: Settings, seed: int = 5) -> Task:
    for i in range(20):
        try:
            return Task.model_validate(generate_task(seed, i, settings))
        except Rejected:
            continue
    raise AssertionError("no task")


@pytest.fixture(scope="module")
def hard() -> Task:
    return _task(Settings(k=5, difficulty="hard"))


def _cfg(turns: int = 0, tokens: int = 0, mode: str = "direct") -> RunConfig:
    return RunConfig("tasks.jsonl", "sha", "oracle", 1, mode, turns, tokens, 600.0)


def test_a_hard_task_gets_room_for_its_reference(hard: Task) -> None:
    turns, tokens = task_budget(hard)
    calls = len(hard.reference_solution)
    assert turns == max(TURNS_FLOOR, 2 * calls) and task_budget(hard, "gateway")[0] == max(
        TURNS_FLOOR, 3 * calls
    )
    assert tokens > 5 * TOKENS_FLOOR  # over a million: the fixed budget was a fifth of one reference
    small = _task(Settings(k=2, difficulty="easy"))
    assert task_budget(small)[0] == TURNS_FLOOR and task_budget(small)[1] >= TOKENS_FLOOR


@pytest.mark.parametrize("mode", ["direct", "gateway"])
def test_the_oracle_finishes_a_hard_task_within_its_own_budget(hard: Task, mode: str) -> None:
    rec = asyncio.run(episode_record(hard, OracleAgent(), 0, _cfg(mode=mode)))
    assert rec["error_class"] == "ok" and rec["V"] == 1, rec["error"]
    assert rec["budget"] == dict(zip(("turns", "tokens"), task_budget(hard, mode), strict=True))
    assert rec["turns"] <= rec["budget"]["turns"]


def test_a_budget_given_is_the_one_used(hard: Task) -> None:
    rec = asyncio.run(episode_record(hard, OracleAgent(), 0, _cfg(turns=5, tokens=10**9)))
    assert rec["budget"] == {"turns": 5, "tokens": 10**9}
    assert rec["error_class"] == "agent_limit" and "5 turns" in rec["error"]


def test_a_negative_budget_is_refused_in_one_line(hard: Task, tmp_path) -> None:
    from typer.testing import CliRunner

    from compoworld.cli.main import app
    from compoworld.tasks.model import save_tasks

    save_tasks([hard], tmp_path / "t.jsonl")
    r = CliRunner().invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tmp_path / "t.jsonl"),
            "--agent",
            "oracle",
            "--max-turns",
            "-1",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code != 0 and "--max-turns and --max-tokens must be 0" in r.output
