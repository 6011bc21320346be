"""The deterministic gate's regeneration (issue 22: verified tasks per second).

The pipeline hands the gates the `Checkpoint` its generation recorded where the build ended; a
regeneration that draws the same stops there (`SameBuild`), one that draws otherwise is compared
byte for byte. A nondeterministic build is still caught, through the pipeline and through
`tasks check` (which regenerates in full).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from compoworld.tasks import generator, workflow
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Checkpoint, Rejected, SameBuild, Settings, generate_task
from compoworld.tasks.model import Task
from compoworld.tasks.pipeline import generate, make_one

HARD = Settings(k=5, difficulty="hard")


def _first(settings: Settings, seed: int) -> tuple[int, Task, Checkpoint]:
    for i in range(20):
        cp = Checkpoint()
        try:
            return i, Task.model_validate(generate_task(seed, i, settings, cp)), cp
        except Rejected:
            continue
    raise AssertionError("no task in 20 indices")


@pytest.fixture
def drifting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that reads process state (a counter shared by every generation, as a family reading
    the wall clock would): each generation's s0 is a second later than the last one's."""
    counter = itertools.count()
    plain = workflow.Builder.begin

    def begin(self: workflow.Builder) -> None:
        self.env.clock.advance(seconds=next(counter))  # s0 a second later each generation
        plain(self)

    monkeypatch.setattr(workflow.Builder, "begin", begin)


@pytest.mark.parametrize("settings", [HARD, Settings()], ids=["hard", "default"])
def test_a_regeneration_that_draws_the_same_stops_at_the_build(settings: Settings) -> None:
    i, task, cp = _first(settings, seed=61)
    assert cp.digest is not None
    with pytest.raises(SameBuild):
        generate_task(61, i, settings, cp)
    again = Checkpoint()  # a fresh checkpoint is recorded, never matched: the whole task comes back
    assert Task.model_validate(generate_task(61, i, settings, again)).to_json() == task.to_json()
    assert again.digest == cp.digest
    # the gate with the checkpoint decides as the full regeneration
    assert run_gates(task, checkpoint=cp)["deterministic"] is None
    assert run_gates(task)["deterministic"] is None


def test_another_draw_goes_the_long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    i, task, cp = _first(HARD, seed=62)
    cp.digest = b"\0" * 16  # as if the first build had drawn otherwise
    reached: list[bool] = []
    plain = generator._build_digest

    def seen(*a: Any) -> bytes:
        reached.append(True)
        return plain(*a)

    monkeypatch.setattr(generator, "_build_digest", seen)
    # the regeneration runs to the end and its bytes equal the task's: the gate passes
    assert run_gates(task, checkpoint=cp)["deterministic"] is None
    assert reached


def test_a_nondeterministic_build_is_caught(drifting: None) -> None:
    i, task, cp = _first(HARD, seed=63)
    with_checkpoint = run_gates(task, checkpoint=cp)["deterministic"]
    full = run_gates(task)["deterministic"]  # what `tasks check` runs
    assert with_checkpoint and "regenerat" in with_checkpoint
    assert full and "regenerat" in full


def test_the_pipeline_rejects_a_nondeterministic_build(drifting: None) -> None:
    got = [make_one(64, i, HARD)[1] for i in range(6)]
    assert "deterministic" in got
    assert None not in got  # no task of a drifting build is kept


def test_the_pipeline_keeps_the_same_tasks_as_full_regeneration(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, _ = generate(3, 65, HARD)

    class Never(Checkpoint):  # records nothing: every regeneration runs in full
        def __setattr__(self, name: str, value: Any) -> None:
            object.__setattr__(self, name, None)

    from compoworld.tasks import pipeline

    monkeypatch.setattr(pipeline, "Checkpoint", Never)
    full, _ = generate(3, 65, HARD)
    assert [t.to_json() for t in fast] == [t.to_json() for t in full]


def test_the_second_replay_is_the_generations_run_when_it_left_the_same_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compoworld.core.environment import Environment

    _, task, cp = _first(HARD, seed=66)
    assert cp.final_hash is not None
    resets: list[bool] = []
    plain = Environment.reset

    def reset(self: Environment) -> None:
        resets.append(True)
        plain(self)

    monkeypatch.setattr(Environment, "reset", reset)
    assert run_gates(task, regenerate=False, checkpoint=cp)["deterministic"] is None
    assert not resets  # the generation's run and the gate's replay: two runs, one state
    cp.final_hash = "0" * 32  # as if the generation had ended elsewhere: the gate replays again
    assert run_gates(task, regenerate=False, checkpoint=cp)["deterministic"] is None
    assert resets


def test_a_tool_that_drifts_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from compoworld.core.environment import Environment

    _, task, cp = _first(HARD, seed=67)
    counter = itertools.count()
    plain = Environment.call

    def call(self: Environment, name: str, arguments: Any = None) -> dict[str, Any]:
        out = plain(self, name, arguments)
        self.clock.advance(seconds=next(counter))  # each call moves the clock further than the last
        return out

    monkeypatch.setattr(Environment, "call", call)
    why = run_gates(task, regenerate=False, checkpoint=cp)["deterministic"]
    assert why and "replays" in why


def test_a_run_hands_the_garbage_collector_back_as_it_found_it() -> None:
    import gc

    was, frozen = gc.get_threshold(), gc.get_freeze_count()
    generate(1, 68, Settings())
    assert gc.get_threshold() == was and gc.get_freeze_count() == frozen


def test_one_task_in_full_every_is_regenerated_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's own check of the purity claim: a sample of indices skips no work."""
    from compoworld.tasks import pipeline

    seen: dict[int, Any] = {}
    plain = pipeline.run_gates

    def spy(task: Task, **kw: Any) -> Any:
        seen[task.meta["index"]] = kw.get("checkpoint")
        return plain(task, **kw)

    monkeypatch.setattr(pipeline, "run_gates", spy)
    for index in (0, pipeline.FULL_EVERY, 1):
        make_one(65, index, Settings())
    assert seen.get(0, "unset") is None and seen.get(pipeline.FULL_EVERY, "unset") is None, seen
    assert isinstance(seen.get(1), Checkpoint), seen
