"""The core property tests (atomicity, isolation, valid state, determinism) over compiled services."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.core.envelope import is_envelope
from compoworld.core.environment import Environment
from tests.compiler.fixtures import crm, tasker
from tests.core.test_properties import pools
from tests.strategies import arguments_for

TASKER = service_from_manifest(compile_spec(tasker(), "tasker"))
CRM = service_from_manifest(compile_spec(crm(), "crm_fixture"))
TOOLS = [
    (c.name, n) for c in (TASKER, CRM) for n, t in c.tool_specs.items() if c.ops[n]["kind"] != "simulated"
]


@pytest.fixture(scope="module")
def world() -> Environment:
    return Environment([TASKER, CRM, "email"], seed=11, size="small")


@pytest.mark.parametrize(("service", "tool"), TOOLS, ids=[f"{s}__{t}" for s, t in TOOLS])
def test_compiled_calls_are_atomic_isolated_and_valid(world: Environment, service: str, tool: str) -> None:
    env = world
    spec = env.tool_spec(f"{service}__{tool}")
    pool = pools(env)

    @settings(max_examples=40, deadline=None)
    @given(args=arguments_for(spec.input_schema, pool), st_data=st.data())
    def run(args, st_data) -> None:
        env.reset()
        before = env.service_hashes()
        result = env.call(f"{service}__{tool}", args)
        assert is_envelope(result) and result["simulated"] is False, result
        after = env.service_hashes()
        if not result["success"]:
            assert result["error"]["code"] != 500, result
            assert after == before, f"failed call changed state: {result}"
        else:
            if not spec.mutates:
                assert after == before, "a read-only tool changed state"
            assert {s for s in before if before[s] != after[s]} <= {service}
        assert all(v is None for v in env.validate().values()), env.validate()

    run()


def test_compiled_services_are_deterministic_and_rebuild_from_snapshots() -> None:
    a = Environment([TASKER, CRM], seed=4, size="small")
    b = Environment([TASKER, CRM], seed=4, size="small")
    assert a.state_hash() == b.state_hash()
    assert Environment([TASKER, CRM], seed=5, size="small").state_hash() != a.state_hash()
    pid = sorted(a.services["tasker"].table("projects"))[0]
    for env in (a, b):
        r = env.call("tasker__tasker_create_task", {"project_id": pid, "title": "t"})
        assert r["success"]
    assert a.state_hash() == b.state_hash()  # same ids minted
    import json

    snap = json.loads(json.dumps(a.snapshot()))
    c = Environment([TASKER, CRM], seed=0, size="small")
    c.restore(snap)
    assert c.state_hash() == a.state_hash()
    assert c.call("tasker__tasker_create_task", {"project_id": pid, "title": "u"}) == a.call(
        "tasker__tasker_create_task", {"project_id": pid, "title": "u"}
    )
