"""What a full reference rollout of the exported tasks needs from a trainer's length settings.

A trainer's defaults silently cut rollouts: TRL's `max_completion_length` (the whole multi-turn
completion, tool results included), verl's `data.max_response_length` (the same, in tokens),
`multi_turn.max_tool_response_length` (characters of one tool result; 256 by default, which cuts most
envelopes), `max_parallel_calls` (calls of one turn that run; 1 by default) and the turn budgets. A
cut rollout scores 0 however well the policy did. `rollout_needs(tasks, mode)` replays each task's
reference (with `finish`) the way the trainers see it, in the rows' mode, and measures the longest;
`trl_settings` and `verl_settings` turn that into the values to set (with headroom: a policy that
explores needs more than the reference). `compoworld export rl` prints them for the tasks it wrote.

Token counts are exact with a tokenizer (its chat template renders the conversation, tools
included), else estimated at 3 characters a token (`llm.profiles.estimate_tokens`; real BPE
tokenizers give 3.5 to 4.5 on JSON, so the estimate errs long).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from compoworld.agents.policies import oracle_turns
from compoworld.core.envelope import envelope_text
from compoworld.export.tools import episode_tools
from compoworld.llm.profiles import estimate_tokens
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH

HEADROOM = 1.5  # the settings leave room for a policy that takes a longer way than the reference
# verl's own per-response wrapping of a tool result in the hermes (Qwen2.5) template
_RESPONSE_WRAP = "<|im_start|>user\n<tool_response>\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n"


class RolloutNeeds:
    """The longest reference rollout of a task set, measured as the trainers see it."""

    def __init__(self, **values: Any) -> None:
        self.tasks: int = values["tasks"]
        self.mode: str = values["mode"]
        self.turns: int = values["turns"]  # assistant turns, finish included
        self.calls_per_turn: int = values["calls_per_turn"]  # the most calls one turn makes
        self.tool_response_chars: int = values["tool_response_chars"]  # the longest single tool result
        self.prompt_tokens: int = values["prompt_tokens"]  # system + user + the tool schemas
        self.completion_tokens: int = values["completion_tokens"]  # after the prompt: calls and results
        self.exact: bool = values["exact"]  # counted with a tokenizer
        self.longest_task: str = values["longest_task"]  # the task with the longest completion

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def reference_conversation(task: Task, mode: str = "gateway") -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The reference rollout's messages (prompt, then each turn's calls and the tools' results) and
    each turn's result texts, from a replay on a fresh copy of the task."""
    from compoworld.export.rl import prompt_messages
    from compoworld.integrations.verl import Rollout

    turns = [*oracle_turns(task, gateway=mode == "gateway"), [(FINISH, {"answer": task.answer or ""})]]
    r = Rollout(task)
    messages = list(prompt_messages(task, mode))
    results: list[list[str]] = []
    n = 0
    for t, calls in enumerate(turns, 1):
        msg: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": []}
        out = []
        for name, args in calls:
            cid = f"call_{n}"
            n += 1
            msg["tool_calls"].append(
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            )
            out.append((cid, envelope_text(r.call(name, args, turn=t))))
        messages.append(msg)
        messages.extend({"role": "tool", "tool_call_id": cid, "content": text} for cid, text in out)
        results.append([text for _, text in out])
    return messages, results


def _lengths(task: Task, mode: str, tokenizer: Any) -> tuple[int, int, list[list[str]]]:
    messages, results = reference_conversation(task, mode)
    tools = episode_tools(task.all_services, mode)
    prompt = messages[:2]
    if tokenizer is not None:
        p = len(tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=True))
        full = len(tokenizer.apply_chat_template(messages, tools=tools, tokenize=True))
        return p, max(0, full - p), results
    p = estimate_tokens(json.dumps(prompt, ensure_ascii=False) + json.dumps(tools, ensure_ascii=False))
    text = []
    for m in messages[2:]:
        if m["role"] == "assistant":
            text.extend(
                "<tool_call>\n" + json.dumps(c["function"], ensure_ascii=False) + "\n</tool_call>\n"
                for c in m["tool_calls"]
            )
        else:
            text.append(_RESPONSE_WRAP + m["content"])
    return p, estimate_tokens("".join(text)), results


def rollout_needs(tasks: Iterable[Task], mode: str = "gateway", tokenizer: Any = None) -> RolloutNeeds:
    """Measure every task's reference rollout in `mode`; the maxima over the set."""
    best: dict[str, Any] = {
        "tasks": 0,
        "mode": mode,
        "turns": 0,
        "calls_per_turn": 0,
        "tool_response_chars": 0,
        "prompt_tokens": 0,
        "completion_tokens": -1,
        "exact": tokenizer is not None,
        "longest_task": "",
    }
    for task in tasks:
        p, c, results = _lengths(task, mode, tokenizer)
        best["tasks"] += 1
        best["turns"] = max(best["turns"], len(results))
        best["calls_per_turn"] = max(best["calls_per_turn"], max(len(r) for r in results))
        best["tool_response_chars"] = max(
            best["tool_response_chars"], max(len(x) for r in results for x in r)
        )
        best["prompt_tokens"] = max(best["prompt_tokens"], p)
        if c > best["completion_tokens"]:
            best["completion_tokens"], best["longest_task"] = c, task.id
    if not best["tasks"]:
        raise ValueError("no tasks to measure")
    return RolloutNeeds(**best)


def _up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def trl_settings(needs: RolloutNeeds) -> dict[str, int]:
    """GRPOConfig values under which the longest reference rollout fits, with headroom."""
    return {
        "max_completion_length": _up(needs.completion_tokens * HEADROOM, 1024),
        "max_tool_calling_iterations": _up(needs.turns * HEADROOM, 8),
    }


def verl_settings(needs: RolloutNeeds) -> dict[str, int]:
    """verl overrides (`key=value`) under which the longest reference rollout runs whole."""
    return {
        "data.max_prompt_length": _up(needs.prompt_tokens * 1.1, 512),
        "data.max_response_length": _up(needs.completion_tokens * HEADROOM, 1024),
        "actor_rollout_ref.rollout.multi_turn.max_assistant_turns": _up(needs.turns * HEADROOM, 8),
        "actor_rollout_ref.rollout.multi_turn.max_user_turns": _up(needs.turns * HEADROOM, 8),
        "actor_rollout_ref.rollout.multi_turn.max_parallel_calls": max(8, needs.calls_per_turn),
        "actor_rollout_ref.rollout.multi_turn.max_tool_response_length": _up(
            needs.tool_response_chars * 1.25, 1024
        ),
    }


def summary(needs: RolloutNeeds, fmt: str) -> list[str]:
    """The lines `export rl` prints: what the longest reference needs, and the settings to use."""
    how = "exact" if needs.exact else "estimated, 3 chars a token"
    lines = [
        f"longest reference rollout of {needs.tasks} task(s) ({needs.mode} mode; {how}): "
        f"{needs.completion_tokens} completion tokens ({needs.longest_task}), prompt {needs.prompt_tokens} "
        f"tokens, {needs.turns} turns, up to {needs.calls_per_turn} calls a turn, tool results up to "
        f"{needs.tool_response_chars} characters"
    ]
    if fmt == "trl":
        s = trl_settings(needs)
        lines.append("GRPOConfig(" + ", ".join(f"{k}={v}" for k, v in s.items()) + ")  # or longer")
    else:
        lines.append(" ".join(f"{k}={v}" for k, v in verl_settings(needs).items()) + "  # or longer")
    return lines
