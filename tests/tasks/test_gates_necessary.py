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


def test_leaving_out_a_step_in_its_service_alone_equals_a_fresh_replay() -> None:
    """`gates._without`: where every later call runs in its own service alone, only the left-out
    step's service replays; the state is the fresh replay's, the other services' tables the
    reference's own objects. A browser call among them (it reads and writes the others) replays all."""
    import contextlib

    from compoworld.tasks import gates
    from compoworld.tasks.generator import Rejected

    hard, tasks, i = Settings(k=5, difficulty="hard"), [], 0

    def browses(t: Task) -> bool:
        return any(c.tool.startswith("browser__") for c in t.reference_solution)

    while len(tasks) < 3 or not any(browses(t) for t in tasks):  # one of them reads the web app
        with contextlib.suppress(Rejected):
            tasks.append(Task.model_validate(generate_task(41, i, hard)))
        i += 1
    apart = 0
    for task in tasks:
        env = task.environment()
        calls = [c.model_dump() for c in task.reference_solution]
        marks: dict = {}
        final, _, wrote = replay(env, calls, marks=marks)
        for i in wrote:
            rest = calls[i + 1 :]
            state = gates._without(env, calls[i], marks[i], final, rest)
            env.reset()
            replay(env, calls, skip={i})
            fresh = env.state_hash()
            env.restore(state)
            assert env.state_hash() == fresh, (task.id, i)
            if gates._alone(env, [calls[i], *rest]):
                apart += 1
                name = calls[i]["tool"].split("__", 1)[0]
                assert all(  # every table (a database image) the reference's own object
                    table is final["services"][s][t] or table.get("image") is final["services"][s][t]["image"]
                    for s in final["services"]
                    if s != name
                    for t, table in state["services"][s].items()
                )
            else:
                assert any(not env.isolated(c["tool"]) for c in [calls[i], *rest])
    assert apart >= 5
    web = next(t for t in tasks if browses(t))
    browser = next(c for c in web.reference_solution if c.tool.startswith("browser__"))
    assert not gates._alone(web.environment(), [browser.model_dump()])
