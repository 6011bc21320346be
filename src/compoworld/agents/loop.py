"""One episode: the chat-completions tool loop over a task's environment, recorded in full.

Robust to what real models send: arguments that are not JSON and unknown tools come back to the
model as 400 / 404 envelopes and the episode goes on; several tool calls in one turn run in order;
`content: null` is fine. An episode ends when the agent calls `finish`, replies without tool calls,
or hits a limit. Its error class tells agent errors from environment and endpoint errors.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from compoworld.agents.policies import Agent
from compoworld.agents.prompt import FINISH, FINISH_TOOL, system_prompt, task_user
from compoworld.core.envelope import failure
from compoworld.llm.client import EndpointError, EndpointTimeout
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

ERROR_CLASSES = ("ok", "agent_format", "agent_limit", "server_error", "endpoint_error", "timeout")
MAX_MALFORMED_TURNS = 3  # consecutive turns with only unusable tool calls end the episode as agent_format


@dataclass(frozen=True)
class Limits:
    max_turns: int = 40
    max_tokens: int = 200_000  # prompt + completion tokens over the whole episode


@dataclass
class Episode:
    task_id: str
    sample: int
    agent: str
    mode: str
    messages: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    answer: str | None
    checks: list[dict[str, Any]]
    V: int
    score: float
    error_class: str
    error: str | None
    usage: dict[str, int]
    turns: int
    seconds: float
    malformed_calls: int

    def record(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def run_episode(
    task: Task, agent: Agent, sample: int = 0, mode: str = "direct", limits: Limits = Limits()
) -> Episode:
    t0 = time.perf_counter()
    env = task.environment()
    tools = [*env.tools("openai", mode), FINISH_TOOL]
    user = task_user(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(env.clock.iso(), user, mode)},
        {
            "role": "user",
            "content": task.instruction
            + "\n\nWhen you are finished, call `finish` with your final answer (empty if none).",
        },
    ]
    steps: list[dict[str, Any]] = []
    state_hash = task.initial_state_hash  # reads never change state, so only writes rehash
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    answer: str | None = None
    error_class, error = "ok", None
    malformed, malformed_run, turns = 0, 0, 0
    done = False
    while not done:
        if turns >= limits.max_turns:
            error_class, error = "agent_limit", f"no finish after {limits.max_turns} turns"
            break
        try:
            reply = await agent.act(task, messages, tools)
        except EndpointTimeout as e:
            error_class, error = "timeout", str(e)
            break
        except EndpointError as e:
            error_class, error = "endpoint_error", str(e)
            break
        turns += 1
        for k in usage:
            usage[k] += reply.usage.get(k, 0)
        msg = dict(reply.message)
        messages.append(msg)
        calls = msg.get("tool_calls") or []
        if not calls:  # a final assistant message is the answer
            answer = msg.get("content") or ""
            break
        usable = 0
        for tc in calls:
            fn = tc.get("function") or {}
            name, raw = fn.get("name") or "", fn.get("arguments")
            try:
                args = (
                    json.loads(raw)
                    if isinstance(raw, str) and raw.strip()
                    else (raw if isinstance(raw, dict) else {})
                )
            except json.JSONDecodeError as e:
                args, bad = (
                    None,
                    failure(
                        400, "invalid_arguments", f"Arguments of {name or 'the call'} are not valid JSON: {e}"
                    ),
                )
            if name == FINISH:
                if isinstance(args, dict) and isinstance(args.get("answer", ""), str):
                    answer, done = args.get("answer", ""), True
                    result = {"success": True, "data": {"finished": True}}
                    usable += 1
                else:
                    result = failure(400, "invalid_arguments", 'finish takes {"answer": string}')
                    malformed += 1
            elif args is None:
                result = bad
                malformed += 1
            else:
                result = env.call(name, args)
                if (
                    not result["success"]
                    and result["error"]["code"] == 404
                    and result["error"]["type"] == "unknown_tool"
                ):
                    malformed += 1
                else:
                    usable += 1
                spec = env.tool_spec(name)
                if result["success"] and (spec is None or spec.mutates):
                    state_hash = env.state_hash()
                steps.append({"tool": name, "arguments": args, "envelope": result, "state_hash": state_hash})
                if not result["success"] and result["error"]["code"] == 500:
                    error_class, error = "server_error", result["error"]["message"]
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": tc.get("id") or "",
                    "content": json.dumps(result, ensure_ascii=False),
                }
            )
            if done:
                break
        malformed_run = 0 if usable else malformed_run + 1
        if malformed_run >= MAX_MALFORMED_TURNS:
            error_class, error = (
                "agent_format",
                f"{MAX_MALFORMED_TURNS} turns in a row without a usable tool call",
            )
            break
        if usage["prompt_tokens"] + usage["completion_tokens"] > limits.max_tokens:
            if not done:
                error_class, error = "agent_limit", f"over the {limits.max_tokens}-token budget"
            break
    result = verify(task, env.snapshot(), answer)
    return Episode(
        task_id=task.id,
        sample=sample,
        agent=agent.name,
        mode=mode,
        messages=messages,
        steps=steps,
        answer=answer,
        checks=[c.model_dump() for c in result.checks],
        V=int(result.passed),
        score=result.score,
        error_class=error_class,
        error=error,
        usage=usage,
        turns=turns,
        seconds=round(time.perf_counter() - t0, 4),
        malformed_calls=malformed,
    )
