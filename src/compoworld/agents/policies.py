"""Policies that produce the next assistant message: an LLM behind an endpoint, and two baselines."""

from __future__ import annotations

import json
from typing import Any, Protocol

from compoworld.agents.prompt import FINISH
from compoworld.llm.client import LLMClient, Reply
from compoworld.tasks.model import Task


class Agent(Protocol):
    name: str

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply: ...


class LLMAgent:
    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.name = client.config.model

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return await self.client.chat(messages, tools)


def _reply(calls: list[tuple[str, dict[str, Any]]], turn: int) -> Reply:
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for i, (n, a) in enumerate(calls)
        ],
    }
    return Reply(
        message=msg, usage={"prompt_tokens": 0, "completion_tokens": 0}, finish_reason="tool_calls", retries=0
    )


class OracleAgent:
    """Replays the task's reference solution (one step per turn), then finishes with its answer."""

    name = "oracle"

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        steps = sorted({c.step for c in task.reference_solution})
        gateway = any(t["function"]["name"] == "call_tool" for t in tools)
        if turn < len(steps):
            calls = [(c.tool, c.arguments) for c in task.reference_solution if c.step == steps[turn]]
            if gateway:
                calls = [("call_tool", {"tool": n, "arguments": a}) for n, a in calls]
            return _reply(calls, turn)
        return _reply([(FINISH, {"answer": task.answer or ""})], turn)


class NoopAgent:
    """Does nothing and finishes at once: the floor of every metric."""

    name = "noop"

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return _reply([(FINISH, {"answer": ""})], 0)
