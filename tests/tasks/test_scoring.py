"""A suite of tasks across many families, scored for the behaviours a policy could try.

The agent that does the work gets V = 1 and score 1. Doing nothing scores 0 (guards are a condition
on the credit, never a share of it). Skipping the last write loses V and keeps only the credit of
the goals that still hold. Acting on a trap, or doing the work and damaging an unrelated record,
fails a guard and scores 0.
"""

from __future__ import annotations

import pytest

from compoworld.tasks.adversaries import swap_args, write_calls
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify
from tests.tasks.agents import DAMAGE, mutating_indices, reference, run

CASES = [(11, i) for i in range(8)] + [(29, i) for i in range(4)] + [(47, i) for i in range(4)]


@pytest.fixture(scope="module")
def tasks() -> dict[tuple[int, int], Task]:
    from compoworld.tasks.generator import Rejected

    out = {}
    for s, i in CASES:
        try:
            out[(s, i)] = Task.model_validate(generate_task(s, i, Settings()))
        except Rejected:
            continue
    return out


def goal_share(task: Task, passing: set[str]) -> float:
    goals = [r for r in task.rubric if r.kind == "goal"]
    return round(sum(r.weight for r in goals if r.id in passing) / sum(r.weight for r in goals), 6)


def test_suite_spans_many_families(tasks) -> None:
    assert len(tasks) >= 12
    assert len({t.meta["family"] for t in tasks.values()}) >= 8
    assert len({s for t in tasks.values() for s in t.services}) >= 12


@pytest.mark.parametrize("case", CASES)
def test_agent_behaviours(tasks, case) -> None:
    if case not in tasks:
        pytest.skip("rejected by the generator")
    task = tasks[case]
    # the work
    env, final = run(task, reference(task), task.answer)
    good = verify(task, final, task.answer)
    assert good.passed and good.score == 1.0

    # nothing: no credit at all
    nothing = verify(task, task.initial_state, None)
    assert not nothing.passed and nothing.score == 0.0

    # skip the last mutating step: V = 0, and only the goals that still hold earn credit
    skip = mutating_indices(task)[-1]
    calls = [c for i, c in enumerate(reference(task)) if i != skip]
    _, final = run(task, calls, task.answer)
    skipped = verify(task, final, task.answer)
    assert not skipped.passed and skipped.score < 1.0
    passing = {c.id for c in skipped.checks if c.passed}
    guards_ok = all(c.passed for c in skipped.checks if c.kind == "guard")
    assert skipped.score == (goal_share(task, passing) if guards_ok else 0.0)

    # act on each trap instead of the target: a guard fails, so no credit
    for trap in task.traps:
        if not trap.swap:
            continue
        swapped = [{**c, "arguments": swap_args(c["arguments"], trap.swap)} for c in write_calls(env, task)]
        _, final = run(task, swapped, trap.answer or task.answer)
        decoyed = verify(task, final, trap.answer or task.answer)
        assert not decoyed.passed, trap

    # the work, plus damage to an unrelated record in a distractor service
    env, _ = run(task, reference(task), task.answer)
    victim = next((s for s in task.distractors if s in DAMAGE), None)
    if victim is None:
        pytest.skip(f"no damage call for distractors {task.distractors}")
    tool, args = DAMAGE[victim](env)
    assert env.call(tool, args)["success"]
    damaged = verify(task, env.snapshot(), task.answer)
    assert not damaged.passed and damaged.score == 0.0
    failing = {c.id for c in damaged.checks if not c.passed}
    assert failing == {r.id for r in task.rubric if r.check["predicate"] == "no_changes_except"}


def test_a_hand_written_task() -> None:
    """Tasks can be written by hand: plain data with an instruction, a rubric and a reference solution."""
    from compoworld.core.environment import Environment

    env = Environment(services=["chat", "kv"], seed=1, size="small")
    general = env.call("chat__slack_user_list_channels", {"channel_name": "general"})["data"]["channels"][0][
        "id"
    ]
    task = Task(
        id="hand-1",
        instruction="Read the feature flag feature:new-dashboard in Redis and post its value in #general.",
        services=["chat", "kv"],
        distractors=[],
        initial_state=env.snapshot(),
        initial_state_hash=env.state_hash(),
        dependency_graph={
            "nodes": [
                {"step": 0, "service": "kv", "move": "read", "mutates": False},
                {"step": 1, "service": "chat", "move": "post", "mutates": True},
            ],
            "edges": [{"source": 0, "target": 1, "fact": {"type": "code", "value": "on"}}],
        },
        walk=["kv", "chat"],
        rubric=[
            {
                "id": "posted",
                "description": "the flag value was posted",
                "check": {
                    "predicate": "record_exists",
                    "service": "chat",
                    "table": "messages",
                    "new": True,
                    "where": {"channel": general, "text": {"contains": "feature:new-dashboard is on"}},
                },
                "step": 1,
            },
            {
                "id": "clean",
                "kind": "guard",
                "description": "nothing else changed",
                "check": {
                    "predicate": "no_changes_except",
                    "allow": [{"service": "chat", "table": "messages"}],
                },
            },
        ],
        reference_solution=[
            {"tool": "kv__get", "arguments": {"key": "feature:new-dashboard"}, "step": 0, "turn": 1},
            {
                "tool": "chat__slack_user_post_message",
                "arguments": {"channel_id": general, "text": "feature:new-dashboard is ON"},
                "step": 1,
                "turn": 2,
            },
        ],
        hint="Redis first.",
        subtasks=["read the flag", "post it"],
        meta={},
    )
    _, final = run(task, reference(task), None)
    assert verify(task, final, None).passed
    assert verify(task, task.initial_state, None).score == 0.0  # guards earn no credit
