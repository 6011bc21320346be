"""Validators for what trainers accept: OpenAI's fine-tuning chat format and TRL's conversational format."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

ROLES = {"system", "user", "assistant", "tool"}


_CHECKED: set[str] = set()


def _tools_ok(tools: Any) -> None:
    assert isinstance(tools, list) and tools
    for t in tools:
        assert t["type"] == "function" and set(t) == {"type", "function"}
        fn = t["function"]
        assert fn["name"] and len(fn["name"]) <= 64 and all(c.isalnum() or c in "_-" for c in fn["name"])
        key = json.dumps(fn["parameters"], sort_keys=True)
        if key not in _CHECKED:  # the same schemas recur in every record: check each once
            jsonschema.Draft202012Validator.check_schema(fn["parameters"])
            _CHECKED.add(key)


def validate_openai(record: dict[str, Any]) -> None:
    """OpenAI chat fine-tuning: messages (+ tools); tool-call arguments are JSON strings; every tool
    message answers a tool_call_id of the preceding assistant turn; the example ends on the assistant."""
    assert set(record) <= {"messages", "tools", "parallel_tool_calls"}
    _tools_ok(record["tools"])
    names = {t["function"]["name"] for t in record["tools"]}
    pending: set[str] = set()
    msgs = record["messages"]
    assert msgs[0]["role"] in ("system", "user") and any(m["role"] == "assistant" for m in msgs)
    for m in msgs:
        assert m["role"] in ROLES
        if m["role"] == "assistant":
            assert not pending, "a tool call was left unanswered"
            assert m.get("content") is not None or m.get("tool_calls")
            for tc in m.get("tool_calls") or []:
                assert tc["type"] == "function" and tc["id"]
                assert isinstance(tc["function"]["arguments"], str)
                json.loads(tc["function"]["arguments"])
                assert tc["function"]["name"] in names
                pending.add(tc["id"])
        elif m["role"] == "tool":
            assert isinstance(m["content"], str) and m["tool_call_id"] in pending
            pending.discard(m["tool_call_id"])
        else:
            assert isinstance(m["content"], str) and m["content"]
    assert not pending


def validate_trl(record: dict[str, Any]) -> None:
    """TRL conversational SFT: messages with string content (never null), assistant tool calls whose
    arguments are objects, tool messages naming their tool; tools as JSON-schema functions."""
    assert set(record) == {"messages", "tools"}
    _tools_ok(record["tools"])
    called: list[str] = []
    for m in record["messages"]:
        assert m["role"] in ROLES and isinstance(m["content"], str)
        if m["role"] == "assistant":
            for tc in m.get("tool_calls") or []:
                assert tc["type"] == "function" and isinstance(tc["function"]["arguments"], dict)
                called.append(tc["function"]["name"])
        if m["role"] == "tool":
            assert m["name"] in called
