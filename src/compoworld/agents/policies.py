"""Policies that produce the next assistant message: an LLM behind an endpoint, and two baselines."""

from __future__ import annotations

import json
from typing import Any, Protocol

from compoworld.llm.client import LLMClient, Reply
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH


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
    """Replays the task's grounded reference, one recorded turn per assistant turn, then finishes
    with its answer. In gateway mode it discovers as an honest agent must: `list_services` first,
    then `list_tools` for a service and `describe_tool` for a tool before their first `call_tool`,
    so gateway SFT data never calls a tool it has not been shown."""

    name = "oracle"

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        call = next((t for t in tools if t["function"]["name"] == "call_tool"), None)
        compat = call is not None and "tool_name" in call["function"]["parameters"].get("properties", {})
        plan = oracle_turns(task, call is not None, compat)
        if turn < len(plan):
            return _reply(plan[turn], turn)
        return _reply([(FINISH, {"answer": task.answer or ""})], turn)


def oracle_turns(
    task: Task, gateway: bool = False, compat: bool = False
) -> list[list[tuple[str, dict[str, Any]]]]:
    """The reference as assistant turns of tool calls (direct tool names, or gateway meta-calls;
    `compat`: the published convention, `call_tool(tool_name, arguments)`)."""
    turns: list[list[tuple[str, dict[str, Any]]]] = []
    last = None
    for c in task.reference_solution:
        key = (c.turn, c.step) if c.turn else (None, c.step)  # format-1 style calls: one step a turn
        if key != last:
            turns.append([])
            last = key
        turns[-1].append((c.tool, c.arguments))
    if not gateway:
        return turns
    out: list[list[tuple[str, dict[str, Any]]]] = [[("list_services", {})]]
    listed: set[str] = set()
    described: set[str] = set()
    for calls in turns:
        services = [n.split("__", 1)[0] for n, _ in calls if n.split("__", 1)[0] not in listed]
        if services:
            out.append([("list_tools", {"service": s}) for s in dict.fromkeys(services)])
            listed.update(services)
        new = [n for n, _ in calls if n not in described]
        if new:
            out.append([("describe_tool", {"tool": n}) for n in dict.fromkeys(new)])
            described.update(new)
        key = "tool_name" if compat else "tool"
        out.append([("call_tool", {key: n, "arguments": a}) for n, a in calls])
    return out


class NoopAgent:
    """Does nothing and finishes at once: the floor of every metric."""

    name = "noop"

    async def act(self, task: Task, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return _reply([(FINISH, {"answer": ""})], 0)
