"""Ray on a local cluster: generation is byte-identical to a local run; rollouts equal the local
runner's, and an actor killed mid-run loses and duplicates nothing."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")

from compoworld.tasks.generator import Settings  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_AUTH_MODE"] = "disabled"
    from compoworld.rollout.cluster import connect

    r = connect("local", num_cpus=2)
    yield r
    r.shutdown()


def test_generation_over_ray_is_byte_identical(cluster) -> None:
    local, stats_l = generate(12, 17, Settings())
    remote, stats_r = generate(12, 17, Settings(), ray_address="local")
    assert b"".join(t.to_json() for t in remote) == b"".join(t.to_json() for t in local)
    assert stats_r.rejected == stats_l.rejected


def _local_and_ray(tmp_path, cluster, kill_after: int | None = None):
    import asyncio

    from compoworld.agents.policies import OracleAgent
    from compoworld.rollout.cluster import RayExecutor
    from compoworld.rollout.runner import RunConfig, load_run, run_eval
    from compoworld.tasks.model import save_tasks

    tasks = generate(10, 23, Settings())[0]
    f = tmp_path / "tasks.jsonl"
    save_tasks(tasks, f)
    cfg = RunConfig(str(f), "sha", "oracle", 3, "direct", 40, 200_000, 120.0)
    asyncio.run(run_eval(tasks, OracleAgent(), cfg, tmp_path / "local", concurrency=8))
    ex = RayExecutor("local", 2, {"kind": "oracle"}, cfg, per_actor=4)
    victim = ex.actors[0]
    seen = [0]

    def progress(n: int) -> None:
        seen[0] += n
        if kill_after is not None and seen[0] == kill_after:
            cluster.kill(victim)  # the actor dies with episodes in flight

    asyncio.run(
        run_eval(tasks, OracleAgent(), cfg, tmp_path / "ray", concurrency=8, on_progress=progress, execute=ex)
    )
    ex.close()
    return load_run(tmp_path / "local")[1], load_run(tmp_path / "ray")[1], ex


def _outcomes(episodes):
    return sorted((e["task_id"], e["sample"], e["V"], e["score"], e["error_class"]) for e in episodes)


def test_rollouts_on_ray_equal_the_local_runner(tmp_path, cluster) -> None:
    local, remote, _ = _local_and_ray(tmp_path, cluster)
    assert len(remote) == len(local) == 30
    assert _outcomes(remote) == _outcomes(local)


def test_a_killed_actor_loses_and_duplicates_nothing(tmp_path, cluster) -> None:
    local, remote, ex = _local_and_ray(tmp_path, cluster, kill_after=5)
    keys = [(e["task_id"], e["sample"]) for e in remote]
    assert len(keys) == len(set(keys)) == 30  # every episode once
    assert _outcomes(remote) == _outcomes(local)
    assert ex.restarts >= 1  # the dead actor was replaced
