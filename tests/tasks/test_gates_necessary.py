"""The necessary gate: a reference step that can be left out, with V still 1, is reported (the gate
replays each leave-one-out from the reference's own state before that step)."""

from __future__ import annotations

from compoworld.tasks.gates import replay, run_gates
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task


def _task() -> Task:
    return Task.model_validate(generate_task(5, 0, Settings()))


def test_a_repeated_write_is_reported_as_unnecessary() -> None:
    task = _task()
    assert run_gates(task, regenerate=False)["necessary"] is None
    env = task.environment()
    calls = [c.model_dump() for c in task.reference_solution]
    _, _, wrote = replay(env, calls)
    last = task.reference_solution[wrote[-1]]
    doubled = task.model_copy(update={"reference_solution": [*task.reference_solution, last]})
    why = run_gates(doubled, regenerate=False)["necessary"]
    assert why is not None and last.tool in why


def test_leaving_out_a_step_from_its_mark_equals_a_fresh_replay() -> None:
    task = _task()
    env = task.environment()
    calls = [c.model_dump() for c in task.reference_solution]
    marks: dict = {}
    _, _, wrote = replay(env, calls, marks=marks)
    for i in wrote:
        env.reset()
        replay(env, calls, skip={i})
        fresh = env.state_hash()
        env.restore(marks[i])
        replay(env, calls[i + 1 :])
        assert env.state_hash() == fresh
