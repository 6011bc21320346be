"""One episode: the chat-completions tool loop over a task's environment, recorded in full.

Robust to what real models send: arguments that are not JSON and unknown tools come back to the
model as 400 / 404 envelopes and the episode goes on; several tool calls in one turn run in order;
`content: null` is fine. An episode ends when the agent calls `finish`, replies without tool calls,
or hits a limit. Its error class tells agent errors from environment and endpoint errors:

- `agent_format`: `MAX_MALFORMED_TURNS` turns in a row without a usable call. A call is unusable when
  its arguments are not JSON, its tool is unknown, or (in the gateway modes) a meta-tool answered 404:
  a model looping on `list_tools("nope")` makes no progress;
- `agent_limit`: the turn or token budget ran out;
- `context_overflow`: the prompt no longer fits the model's window (after compaction, where on);
- `server_error`: a tool failed with 500 (a bug of ours);
- `endpoint_error` / `timeout`: the endpoint failed. These are `ENDPOINT_FAILURES`: the runner does
  not count such an episode as finished, and a rerun tries it again.

With `Limits.compact_history`, tool results older than the last `keep_results` turns are replaced by
one summary line per call before each request, and once more (all of them) when the server reports
an overflow. Each request's finish reason, retries and abandoned attempts go into the episode.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from compoworld.agents.policies import Agent
from compoworld.core.envelope import envelope_text, failure
from compoworld.llm.client import ContextOverflow, EndpointError, EndpointTimeout, ServerOverrun
from compoworld.rewards.format import MAX_MALFORMED_TURNS  # turns in a row that make agent_format
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH, FINISH_TOOL, system_prompt, task_user
from compoworld.verify.verifier import verify

ERROR_CLASSES = (
    "ok",
    "agent_format",
    "agent_limit",
    "context_overflow",
    "server_error",
    "endpoint_error",
    "timeout",
    "server_overrun",  # the server ignored max_tokens (or then ran past the deadline): not retried
)
ENDPOINT_FAILURES = frozenset({"endpoint_error", "timeout"})  # not finished: retried on rerun
GATEWAY_MODES = ("gateway", "gateway-compat")
COMPACTED = "[compacted] "
KEEP_SCREENSHOTS = 3  # screenshots kept as images in the conversation; older ones become a line of text


def _without_screenshot(result: dict[str, Any], shots: list[str]) -> dict[str, Any]:
    """A computer action's envelope for a tool message (text only in Chat Completions): the PNG
    moves to a user message with an image part, the rest (url, marks) stays."""
    data = result.get("data") if result.get("success") else None
    if not (
        isinstance(data, dict) and data.get("type") == "screenshot" and isinstance(data.get("data"), str)
    ):
        return result
    shots.append(data["data"])
    return {**result, "data": {**{k: v for k, v in data.items() if k != "data"}, "image": "shown below"}}


def _screenshot_message(messages: list[dict[str, Any]], shots: list[str]) -> dict[str, Any]:
    kept = 0
    for m in reversed(messages):  # older screenshots: a line of text, so the context stays bounded
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            kept += sum(1 for p in m["content"] if p.get("type") == "image_url")
            if kept >= KEEP_SCREENSHOTS:
                m["content"] = [
                    p
                    if p.get("type") != "image_url"
                    else {"type": "text", "text": "[earlier screenshot omitted]"}
                    for p in m["content"]
                ]
    parts: list[dict[str, Any]] = [{"type": "text", "text": "The screen after your last action:"}]
    parts += [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b}"}}
        for b in shots[-KEEP_SCREENSHOTS:]
    ]
    return {"role": "user", "content": parts}


@dataclass(frozen=True)
class Limits:
    max_turns: int = 40
    max_tokens: int = 200_000  # prompt + completion tokens over the whole episode
    compact_history: bool = False  # replace old tool results by a summary line per call
    keep_results: int = 2  # with compaction: the last N turns keep their full tool results


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
    requests: list[dict[str, Any]]  # per request: finish_reason, retries, usage, seconds
    abandoned: dict[str, int]  # attempts the endpoint failed or that timed out, and their prompt tokens
    compacted: int  # tool results replaced by a summary line
    # the tool names the episode was offered, in order (SFT rows carry exactly these)
    offered: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return dict(self.__dict__)


def tool_list(env: Any, mode: str) -> list[dict[str, Any]]:
    return [*env.tools("openai", mode), FINISH_TOOL]


def tool_tokens(services: list[str], mode: str = "direct") -> int:
    """Estimated prompt tokens of the tool list alone (the schemas sent with every request)."""
    from compoworld.core.environment import check_name, tool_entry
    from compoworld.core.gateway import COMPAT_SPECS, SPECS
    from compoworld.llm.profiles import estimate_tokens
    from compoworld.services import get_service

    if mode == "direct":
        entries = [
            tool_entry(check_name(s, t), spec, "openai")
            for s in services
            for t, spec in get_service(s).tool_specs.items()
        ]
    else:
        specs = COMPAT_SPECS if mode == "gateway-compat" else SPECS
        entries = [tool_entry(n, spec, "openai") for n, spec in specs.items()]
    return estimate_tokens(json.dumps([*entries, FINISH_TOOL], ensure_ascii=False))


# the budgets' floors: what a small task gets whatever its reference spends
TURNS_FLOOR, TOKENS_FLOOR = 40, 200_000


def task_budget(task: Task, mode: str = "direct") -> tuple[int, int]:
    """The turn and token budgets an episode of `task` gets by default: twice the calls of its
    reference (three times through the gateway; at least 40 turns), and three times the tokens its
    reference would spend one call a turn, the tool list sent with every request (at least
    200,000). A hard composed task's reference alone spends over a million that way (ten services'
    tools are some 35,000 tokens a request), so a fixed budget fails it for the budget, not the work."""
    from compoworld.llm.profiles import estimate_tokens

    tools = tool_tokens(list(task.all_services), mode)
    env = task.environment()
    history = estimate_tokens(task.instruction) + 500  # the system prompt and the instruction
    spent = 0
    for c in task.reference_solution:
        result = env.call(c.tool, c.arguments)
        history += estimate_tokens(json.dumps(c.arguments)) + estimate_tokens(envelope_text(result)) + 20
        spent += tools + history
    # through the gateway an agent also lists and describes tools before calling them
    per_call = 2 if mode == "direct" else 3
    return max(TURNS_FLOOR, per_call * len(task.reference_solution)), max(TOKENS_FLOOR, 3 * spent)


def compact(messages: list[dict[str, Any]], keep: int) -> int:
    """Replace the tool results of all but the last `keep` assistant turns by one summary line per
    call (`[compacted] tool(args) -> ok, 12 items` or `-> error 404: ...`); returns how many."""
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    cutoff = turns[-keep] if keep and len(turns) >= keep else (len(messages) if not keep else 0)
    calls: dict[str, tuple[str, Any]] = {}
    n = 0
    for m in messages[:cutoff]:
        if m["role"] == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                calls[tc.get("id") or ""] = (fn.get("name") or "", fn.get("arguments"))
        elif m["role"] == "tool" and not str(m.get("content", "")).startswith(COMPACTED):
            name, args = calls.get(m.get("tool_call_id") or "", ("tool", None))
            m["content"] = COMPACTED + _summary(name, args, m.get("content"))
            n += 1
    return n


def _summary(name: str, args: Any, content: Any) -> str:
    a = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    a = a if len(a) <= 120 else a[:117] + "..."
    try:
        env = json.loads(content) if isinstance(content, str) else content
    except json.JSONDecodeError:
        env = None
    if isinstance(env, dict) and env.get("success") is False:
        e = env.get("error") or {}
        return f"{name}({a}) -> error {e.get('code')}: {str(e.get('message', ''))[:100]}"
    data = env.get("data", env) if isinstance(env, dict) else env
    if isinstance(data, list):
        what = f"{len(data)} items"
    elif isinstance(data, dict):
        what = f"{len(data)} fields"
    else:
        what = "done"
    return f"{name}({a}) -> ok, {what}"


def _unusable(result: dict[str, Any], name: str, mode: str, env: Any) -> bool:
    if result.get("success") is not False:
        return False
    code, kind = result["error"]["code"], result["error"]["type"]
    if mode in GATEWAY_MODES and name in env.gateway_for(mode).specs:
        return code == 404  # a gateway call that goes nowhere is not progress
    return code == 404 and kind == "unknown_tool"


async def run_episode(
    task: Task, agent: Agent, sample: int = 0, mode: str = "direct", limits: Limits = Limits()
) -> Episode:
    t0 = time.perf_counter()
    env = task.environment()
    tools = tool_list(env, mode)
    gateway = env.gateway_for(mode) if mode in GATEWAY_MODES else None
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
    requests: list[dict[str, Any]] = []
    abandoned = {"attempts": 0, "prompt_tokens_est": 0}
    state_hash = task.initial_state_hash  # reads never change state, so only writes rehash
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    answer: str | None = None
    error_class, error = "ok", None
    malformed, malformed_run, turns, compacted = 0, 0, 0, 0
    done = False

    def count_abandoned(attempts: Any) -> None:
        for a in attempts or ():
            abandoned["attempts"] += 1
            abandoned["prompt_tokens_est"] += int(a.get("prompt_tokens_est", 0))

    while not done:
        if turns >= limits.max_turns:
            error_class, error = "agent_limit", f"no finish after {limits.max_turns} turns"
            break
        if limits.compact_history:
            compacted += compact(messages, limits.keep_results)
        try:
            try:
                reply = await agent.act(task, messages, tools)
            except ContextOverflow as e:
                if not limits.compact_history or not (n := compact(messages, 0)):
                    raise
                count_abandoned(e.attempts)
                compacted += n
                reply = await agent.act(task, messages, tools)
        except ContextOverflow as e:
            count_abandoned(e.attempts)
            error_class, error = "context_overflow", str(e)
            break
        except ServerOverrun as e:
            count_abandoned(e.attempts)
            error_class, error = "server_overrun", str(e)
            break
        except EndpointTimeout as e:
            count_abandoned(e.attempts)
            error_class, error = "timeout", str(e)
            break
        except EndpointError as e:
            count_abandoned(e.attempts)
            error_class, error = "endpoint_error", str(e)
            break
        turns += 1
        count_abandoned(reply.attempts)
        requests.append(
            {
                "finish_reason": reply.finish_reason,
                "retries": reply.retries,
                "usage": dict(reply.usage),
                "seconds": reply.seconds,
            }
        )
        for k in usage:
            usage[k] += reply.usage.get(k, 0)
        msg = dict(reply.message)
        messages.append(msg)
        calls = msg.get("tool_calls") or []
        if not calls:  # a final assistant message is the answer
            answer = msg.get("content") or ""
            break
        usable = 0
        shots: list[str] = []  # this turn's screenshots (computer interface): shown after the tool messages
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
                if gateway is not None and name in gateway.specs:
                    result = gateway.call(name, args)
                else:
                    result = env.call(name, args)
                if _unusable(result, name, mode, env):
                    malformed += 1
                else:
                    usable += 1
                spec = env.tool_spec(name)
                if result.get("success") is not False and (spec is None or spec.mutates):
                    state_hash = env.state_hash()
                steps.append({"tool": name, "arguments": args, "envelope": result, "state_hash": state_hash})
                if result.get("success") is False and result["error"]["code"] == 500:
                    error_class, error = "server_error", result["error"]["message"]
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": tc.get("id") or "",
                    "content": envelope_text(_without_screenshot(result, shots)),
                }
            )
            if done:
                break
        if shots:
            messages.append(_screenshot_message(messages, shots))
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
        requests=requests,
        abandoned=abandoned,
        compacted=compacted,
        offered=[t["function"]["name"] for t in tools],
    )
