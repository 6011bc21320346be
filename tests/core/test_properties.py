"""Atomicity and isolation over every tool of every library service, with random and hostile arguments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compoworld.core.envelope import is_envelope
from compoworld.core.environment import Environment
from compoworld.core.state import META
from compoworld.services import registry
from tests.strategies import DATES, arguments_for

SERVICES = list(registry())


def pools(env: Environment) -> dict[str, list[str]]:
    """Real keys, emails and words of every service, so arguments often name existing records."""
    ids: list[str] = ["primary"]
    emails: list[str] = [env.company.me.email, "new.person@example.com"]
    text: list[str] = [
        "invoice",
        "renewal",
        "general",
        "Hello there",
        "is:unread",
        "from:" + env.company.me.email,
    ]
    for svc in env.services.values():
        for name, table in svc.store.tables.items():
            if name == META:
                continue
            ids.extend(sorted(table)[:6])
            for rec in list(table.values())[:4]:
                if isinstance(rec, dict):
                    for v in rec.values():
                        if isinstance(v, str) and "@" in v and len(v) < 60:
                            emails.append(v)
                        elif isinstance(v, str) and len(v) < 40:
                            text.append(v)
    out = {"id": ids, "email": emails, "text": text, "date": DATES}
    for svc in env.services.values():
        for name, table in svc.store.tables.items():
            if name != META:
                singular = name.removesuffix("s")
                out[f"table:{singular}"] = out.get(f"table:{singular}", []) + sorted(table)[:8]
    return out


@pytest.fixture(scope="module")
def world() -> Environment:
    return Environment(services=SERVICES, seed=7, size="small")


TOOLS = [(s, t) for s in SERVICES for t in registry()[s].tool_specs]


@pytest.mark.parametrize(("service", "tool"), TOOLS, ids=[f"{s}__{t}" for s, t in TOOLS])
def test_every_call_is_atomic_isolated_and_valid(world: Environment, service: str, tool: str) -> None:
    env = world
    spec = registry()[service].tool_specs[tool]
    pool = pools(env)
    name = f"{service}__{tool}"

    @given(args=arguments_for(spec.input_schema, pool), st_data=st.data())
    def run(args, st_data) -> None:
        env.reset()
        before = env.service_hashes()
        result = env.call(name, args)
        assert is_envelope(result), result
        after = env.service_hashes()
        if not result["success"]:
            assert result["error"]["code"] != 500, result
            assert after == before, f"failed call changed state: {result}"
        else:
            if not spec.mutates:
                assert after == before, "a read-only tool changed state"
            changed = {s for s in before if before[s] != after[s]}
            # an interface (the browser) acts through other services' tools, as a user would
            allowed = set(before) if registry()[service].acts_on_others else {service}
            assert changed <= allowed, f"call to {service} changed {changed}"
        assert all(v is None for v in env.validate().values()), env.validate()

    run()
