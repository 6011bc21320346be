"""SFT export: one conversation a line, `messages` plus `tools`, in each trainer's format.

- openai: the fine-tuning chat format; assistant tool-call arguments are JSON strings.
- trl: the conversational format of TRL's SFTTrainer; tool-call arguments are objects, tool
  messages carry the tool's `name`, and `content` is never null.

**Which tools a row carries.** The tools its conversation was held with: the episode's own list
(episodes record the names; older runs are rebuilt from their mode and services), or the gateway's
five where the conversation is rewritten in gateway form:
- `tools="offered"`: exactly the episode's list. A direct-mode episode offers every tool of the
  task's services and its distractors (5 by default): 100 to 235 tools. A row over
  `MAX_OPENAI_TOOLS` (128, the Chat Completions limit) is refused with `TooManyTools`, a one-line
  message naming the task and the fix.
- `tools="gateway"` (the default): a direct-mode episode is rewritten in gateway form, exactly as
  the gateway would have answered: `list_services` first, `list_tools` for a service and
  `describe_tool` for a tool before their first use, then each call as `call_tool(tool, arguments)`
  with the result the episode got (the same envelope: `call_tool` runs the same tool on the same
  state). The row carries the 4 meta-tools plus `finish`. Gateway-mode episodes are written as they
  ran. On 20 oracle tasks (counted with the BPE of `integrations.tiny`): 5 tools a row, 4.6k to
  10.4k tokens, the first assistant token at about 800 (direct rows: 100 to 171 tools, 19k to 31k tokens, the first assistant token at 21k to 30k).
- `tools="auto"`: the offered list when it has at most 128 tools, else the gateway form (every row
  fits a Chat Completions request; the direct ones still open with 100 to 128 schemas).
- `tools="task"`: a direct episode as it ran, offering only the tools of the task's own services
  (and of any other service it called), not the distractors': a bounded set, about K/(K+D) of the
  offered list.

Whatever the choice, `length_summary` says how long the rows are: TRL's `SFTConfig` cuts rows at
`max_length` (1024 by default), and a cut row loses its assistant tokens.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from compoworld.core.envelope import envelope_text
from compoworld.core.gateway import Gateway
from compoworld.export.tools import MAX_OPENAI_TOOLS, Catalog, episode_tools, tools_named
from compoworld.tasks.prompt import FINISH, system_prompt

TOOL_CHOICES = ("auto", "offered", "gateway", "task")
TRL_DEFAULT_MAX_LENGTH = 1024  # SFTConfig's default: a longer row loses the assistant tokens past it


class TooManyTools(ValueError):
    """A row would list more tools than Chat Completions accepts."""


def offered_tools(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools the episode was offered: by the names it recorded, or rebuilt from its mode."""
    mode = episode.get("mode", "direct")
    if episode.get("offered"):
        return tools_named(episode["offered"], mode)
    return episode_tools(episode.get("all_services") or episode.get("services") or [], mode)


def episode_services(episode: dict[str, Any]) -> list[str]:
    """The services an episode's environment had: from the tools it was offered, else its record."""
    names = [n for n in episode.get("offered") or [] if "__" in n]
    services = list(dict.fromkeys(n.split("__", 1)[0] for n in names))
    services = services or episode.get("all_services") or episode.get("services") or []
    if not services:
        raise ValueError(f"task {episode.get('task_id', '?')}: the episode records no services or tools")
    return services


def _how(mode: str) -> str:
    """The sentence of the system prompt that says how tools are reached in `mode`."""
    a, b = system_prompt("\0", "\1", "direct"), system_prompt("\0", "\1", "gateway")
    i = 0
    while a[i] == b[i]:
        i += 1
    j = 0
    while a[-1 - j] == b[-1 - j]:
        j += 1
    return (a if mode == "direct" else b)[i : len(a if mode == "direct" else b) - j]


def _args(raw: Any, task_id: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        out = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        out = None
    if not isinstance(out, dict):
        raise ValueError(
            f"task {task_id}: a tool call's arguments are not a JSON object, so it has no gateway form"
        )
    return out


def gateway_messages(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """A direct-mode episode's conversation in gateway form (see the module's note)."""
    task_id = episode.get("task_id", "?")
    catalog = Catalog(episode_services(episode))
    gw = Gateway(catalog)  # type: ignore[arg-type]  # discovery reads only what Catalog has
    direct_how, gateway_how = _how("direct"), _how("gateway")
    out: list[dict[str, Any]] = []
    started, listed, described = False, set(), set()
    n = 0

    def discovery(calls: list[tuple[str, dict[str, Any]]]) -> None:
        nonlocal n
        msg = {"role": "assistant", "content": None, "tool_calls": []}
        results = []
        for name, args in calls:
            cid = f"gw_{n}"
            n += 1
            msg["tool_calls"].append(
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            )
            results.append(
                {"role": "tool", "tool_call_id": cid, "content": envelope_text(gw.call(name, args))}
            )
        out.append(msg)
        out.extend(results)

    unknown: dict[str, str] = {}  # tool_call_id -> the gateway's answer to a call of no known tool
    for m in episode["messages"]:
        m = dict(m)
        if m["role"] == "system":
            if direct_how not in (m.get("content") or ""):
                raise ValueError(f"task {task_id}: its system prompt is not the direct-mode prompt")
            m["content"] = m["content"].replace(direct_how, gateway_how)
        elif m["role"] == "tool" and m.get("tool_call_id") in unknown:
            m["content"] = unknown[m["tool_call_id"]]
        elif m["role"] == "assistant" and m.get("tool_calls"):
            calls = [(tc, tc["function"]["name"]) for tc in m["tool_calls"]]
            direct = [name for _, name in calls if name != FINISH]
            if direct and not started:
                discovery([("list_services", {})])
                started = True
            svcs = [
                s for name in direct if (s := name.split("__", 1)[0]) in catalog.services and s not in listed
            ]
            if svcs:
                discovery([("list_tools", {"service": s}) for s in dict.fromkeys(svcs)])
                listed.update(svcs)
            new = [name for name in direct if catalog.tool_spec(name) is not None and name not in described]
            if new:
                discovery([("describe_tool", {"tool": t}) for t in dict.fromkeys(new)])
                described.update(new)
            rewritten = []
            for tc, name in calls:
                if name == FINISH:
                    rewritten.append(tc)
                    continue
                args = {"tool": name, "arguments": _args(tc["function"].get("arguments"), task_id)}
                if catalog.tool_spec(name) is None:
                    unknown[tc["id"]] = envelope_text(gw.call("call_tool", args))
                rewritten.append(
                    {
                        "id": tc["id"],
                        "type": "function",
                        "function": {"name": "call_tool", "arguments": json.dumps(args)},
                    }
                )
            m["tool_calls"] = rewritten
        out.append(m)
    return out


def _object_args(raw: Any) -> bool:
    try:
        _args(raw, "")
    except ValueError:
        return False
    return True


def without_malformed_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation without tool calls whose arguments are not a JSON object, and without the
    errors they got: a row teaches the calls that worked, never malformed JSON (the episode retried)."""
    dropped: set[str] = set()
    out = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            keep = [tc for tc in m["tool_calls"] if _object_args(tc["function"].get("arguments"))]
            dropped |= {tc.get("id", "") for tc in m["tool_calls"] if tc not in keep}
            if len(keep) != len(m["tool_calls"]):
                if not keep and not (m.get("content") or "").strip():
                    continue
                m = {**m, "tool_calls": keep} if keep else {k: v for k, v in m.items() if k != "tool_calls"}
        elif m["role"] == "tool" and m.get("tool_call_id") in dropped:
            continue
        out.append(m)
    return out


def task_services(episode: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
    """The services a direct row offers with `tools="task"`: the task's own (not its distractors'),
    plus any other service the episode called, so that every call of the row is to an offered tool."""
    called = {
        (tc.get("function") or {}).get("name", "").split("__", 1)[0]
        for m in messages
        if m.get("role") == "assistant"
        for tc in m.get("tool_calls") or []
    }
    own = set(episode.get("services") or [])
    return [s for s in episode_services(episode) if s in own or s in called]


def sft_record(episode: dict[str, Any], fmt: str, tools: str = "gateway") -> dict[str, Any]:
    if fmt not in ("openai", "trl"):
        raise ValueError(f"unknown SFT format {fmt!r}: expected openai or trl")
    if tools not in TOOL_CHOICES:
        raise ValueError(f"unknown tools choice {tools!r}: expected {', '.join(TOOL_CHOICES)}")
    offered = offered_tools(episode)
    episode = {**episode, "messages": without_malformed_calls(episode["messages"])}
    source = episode["messages"]
    if episode.get("mode", "direct") == "direct" and tools == "task":
        offered = episode_tools(task_services(episode, source), "direct")
    if episode.get("mode", "direct") == "direct" and (
        tools == "gateway" or (tools == "auto" and len(offered) > MAX_OPENAI_TOOLS)
    ):
        source, offered = gateway_messages(episode), episode_tools([], "gateway")
    elif fmt == "openai" and len(offered) > MAX_OPENAI_TOOLS:
        raise TooManyTools(
            f"task {episode.get('task_id', '?')}: its episode offered {len(offered)} tools, over the "
            f"{MAX_OPENAI_TOOLS} Chat Completions accepts; export with --tools gateway (the default) or auto, or run it "
            "with --mode gateway or fewer --distractors"
        )
    names: dict[str, str] = {}
    messages = []
    for m in source:
        m = dict(m)
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = []
            for tc in m["tool_calls"]:
                fn = tc["function"]
                names[tc["id"]] = fn["name"]
                args = fn["arguments"]
                if fmt == "trl":
                    args = json.loads(args) if isinstance(args, str) and args.strip() else (args or {})
                elif not isinstance(args, str):
                    args = json.dumps(args)
                calls.append(
                    {"id": tc["id"], "type": "function", "function": {"name": fn["name"], "arguments": args}}
                )
            m["tool_calls"] = calls
            if fmt == "trl" and m.get("content") is None:
                m["content"] = ""
        elif m["role"] == "tool" and fmt == "trl":
            m["name"] = names.get(m.get("tool_call_id", ""), "")
        messages.append(m)
    return {"messages": messages, "tools": offered}


def sft_rows(
    episodes: list[dict[str, Any]],
    fmt: str,
    min_score: float = 1.0,
    tools: str = "gateway",
    keep_hint: bool = False,
) -> list[dict[str, Any]]:
    """The rows of episodes that scored at least `min_score` without an error, by task and sample.
    A hinted episode (`eval --hints`) is written without its hint unless `keep_hint`, as WildAWM's
    data is: the model learns to do the work from the instruction alone."""
    return [
        sft_record(e if keep_hint else without_hint(e), fmt, tools)
        for e in sorted(episodes, key=lambda e: (e["task_id"], e["sample"]))
        if e["score"] >= min_score and e["error_class"] == "ok"
    ]


def without_hint(e: dict[str, Any]) -> dict[str, Any]:
    """The episode with the hint it recorded taken out of its first user message."""
    shown = e.get("hint_shown")
    if not shown:
        return e
    msgs = list(e["messages"])
    for i, m in enumerate(msgs):
        if m.get("role") == "user" and isinstance(m.get("content"), str) and shown in m["content"]:
            msgs[i] = {**m, "content": m["content"].replace(shown, "", 1)}
            break
    return {**e, "messages": msgs}


def export_sft(
    episodes: list[dict[str, Any]], out: str | Path, fmt: str, min_score: float = 1.0, tools: str = "gateway"
) -> int:
    """Write conversations of episodes that scored at least `min_score` without an error; returns how many."""
    return write_rows(sft_rows(episodes, fmt, min_score, tools), out)


def write_rows(rows: list[dict[str, Any]], out: str | Path) -> int:
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return len(rows)


def _first_assistant(messages: list[dict[str, Any]]) -> int:
    return next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))


def row_lengths(rows: list[dict[str, Any]], tokenizer: Any = None) -> list[tuple[int, int]]:
    """Per row: (tokens of the whole row, tokens before its first assistant turn).

    With a tokenizer, the row rendered by its chat template with its tools, counted exactly (the
    arguments are objects as templates take them). Without, an estimate from the JSON text
    (`estimate_tokens`: one token per 3 characters, which overestimates)."""
    from compoworld.llm.profiles import estimate_tokens

    out = []
    for r in rows:
        msgs, tools = r["messages"], r["tools"]
        k = _first_assistant(msgs)
        if tokenizer is None:
            head = estimate_tokens(json.dumps([tools, msgs[:k]], ensure_ascii=False))
            out.append((head + estimate_tokens(json.dumps(msgs[k:], ensure_ascii=False)), head))
            continue
        msgs = [_template_ready(m) for m in msgs]
        full = tokenizer.apply_chat_template(msgs, tools=tools, tokenize=True, return_dict=False)
        head = tokenizer.apply_chat_template(
            msgs[:k], tools=tools, tokenize=True, add_generation_prompt=True, return_dict=False
        )
        out.append((len(full), len(head)))
    return out


def _template_ready(m: dict[str, Any]) -> dict[str, Any]:
    """A message as chat templates take it: arguments as objects, content never null."""
    m = dict(m)
    if m.get("content") is None:
        m["content"] = ""
    if m.get("tool_calls"):
        m["tool_calls"] = [
            {**tc, "function": {**tc["function"], "arguments": _loads(tc["function"]["arguments"])}}
            for tc in m["tool_calls"]
        ]
    return m


def _loads(a: Any) -> Any:
    if isinstance(a, str):
        try:
            return json.loads(a) if a.strip() else {}
        except json.JSONDecodeError:
            return a
    return a


def length_summary(rows: list[dict[str, Any]], tokenizer: Any = None) -> dict[str, Any]:
    """Tools per row and token lengths (whole row, and before the first assistant token)."""
    if not rows:
        return {"rows": 0}
    lengths = row_lengths(rows, tokenizer)
    total = sorted(a for a, _ in lengths)
    head = sorted(b for _, b in lengths)
    ntools = [len(r["tools"]) for r in rows]
    return {
        "rows": len(rows),
        "tools_max": max(ntools),
        "tokens_min": total[0],
        "tokens_median": int(statistics.median(total)),
        "tokens_max": total[-1],
        "first_assistant_median": int(statistics.median(head)),
        "first_assistant_max": head[-1],
        "counted": "tokenizer" if tokenizer is not None else "estimate (chars/3)",
        "over_trl_default": sum(1 for t in total if t > TRL_DEFAULT_MAX_LENGTH),  # cut under SFTConfig()
    }
