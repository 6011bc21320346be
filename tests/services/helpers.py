"""Small helpers for service tests: call and assert success or a specific error."""

from __future__ import annotations

from typing import Any

from compoworld.core.environment import Environment


def ok(env: Environment, tool: str, args: dict[str, Any] | None = None) -> Any:
    r = env.call(tool, args or {})
    assert r["success"], r
    return r["data"]


def err(env: Environment, tool: str, args: dict[str, Any], code: int, type_: str | None = None) -> str:
    before = env.state_hash()
    r = env.call(tool, args)
    assert not r["success"], r
    assert r["error"]["code"] == code, r
    if type_ is not None:
        assert r["error"]["type"] == type_, r
    assert env.state_hash() == before
    return r["error"]["message"]
