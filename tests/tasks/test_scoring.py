"""A suite of tasks across many service combinations, scored for five agent behaviours.

The agent that does the work gets V = 1. An agent that does nothing, skips one step, acts on a
decoy, or does the work and damages an unrelated record gets V = 0 and exactly the partial score
that the failing checks leave.
"""

from __future__ import annotations

import pytest

from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify
from tests.tasks.agents import DAMAGE, mutating_indices, on_decoy, reference, run

CASES = [(11, i) for i in range(6)] + [(29, i) for i in range(3)] + [(47, i) for i in range(3)]


@pytest.fixture(scope="module")
def tasks() -> dict[tuple[int, int], Task]:
    return {
        (s, i): Task.model_validate(generate_task(s, i, Settings(k=4, distractors=4, walk_min=5, walk_max=8)))
        for s, i in CASES
    }


def weights(task: Task, failing: set[str]) -> float:
    total = sum(r.weight for r in task.rubric)
    return round(sum(r.weight for r in task.rubric if r.id not in failing) / total, 6)


def test_suite_spans_many_service_combinations(tasks) -> None:
    assert len({tuple(t.services) for t in tasks.values()}) == len(CASES) >= 10
    assert len({s for t in tasks.values() for s in t.services}) >= 15


@pytest.mark.parametrize("case", CASES)
def test_agent_behaviours(tasks, case) -> None:
    task = tasks[case]
    checks = {r.id: r for r in task.rubric}
    collateral = next(r.id for r in task.rubric if r.check["predicate"] == "no_changes_except")
    answer_ids = {r.id for r in task.rubric if r.check["predicate"].startswith("answer")}

    # the work
    _, final = run(task, reference(task), task.answer)
    good = verify(task, final, task.answer)
    assert good.passed and good.score == 1.0

    # nothing: only the collateral check holds
    nothing = verify(task, task.initial_state, None)
    assert not nothing.passed
    assert nothing.score == weights(task, set(checks) - {collateral})

    # skip the last mutating step: its checks fail, the rest hold
    skip = mutating_indices(task)[-1]
    last_step = task.reference_solution[skip].step
    calls = [c for i, c in enumerate(reference(task)) if i != skip]
    _, final = run(task, calls, task.answer)
    skipped = verify(task, final, task.answer)
    step_checks = {r.id for r in task.rubric if r.step == last_step and r.id not in answer_ids}
    assert step_checks and not skipped.passed
    assert skipped.score == weights(task, step_checks)

    # act on a decoy: the last step uses a near-duplicate of its input
    _, final = run(task, on_decoy(task), task.answer)
    decoyed = verify(task, final, task.answer)
    failing = {c.id for c in decoyed.checks if not c.passed}
    assert not decoyed.passed and failing <= step_checks  # only the checks of the misdirected step fail
    assert decoyed.score == weights(task, failing)

    # the work, plus damage to an unrelated record in a distractor service
    env, _ = run(task, reference(task), task.answer)
    victim = next((s for s in task.distractors if s in DAMAGE), None)
    if victim is None:
        pytest.skip(f"no damage call for distractors {task.distractors}")
    tool, args = DAMAGE[victim](env)
    assert env.call(tool, args)["success"]
    damaged = verify(task, env.snapshot(), task.answer)
    assert not damaged.passed
    assert {c.id for c in damaged.checks if not c.passed} == {collateral}
    assert damaged.score == weights(task, {collateral})


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
                "description": "nothing else changed",
                "check": {
                    "predicate": "no_changes_except",
                    "allow": [{"service": "chat", "table": "messages"}],
                },
            },
        ],
        reference_solution=[
            {"tool": "kv__get", "arguments": {"key": "feature:new-dashboard"}, "step": 0},
            {
                "tool": "chat__slack_user_post_message",
                "arguments": {"channel_id": general, "text": "feature:new-dashboard is ON"},
                "step": 1,
            },
        ],
        hint="Redis first.",
        subtasks=["read the flag", "post it"],
        meta={},
    )
    _, final = run(task, reference(task), None)
    assert verify(task, final, None).passed
    assert verify(task, task.initial_state, None).score == 0.5
