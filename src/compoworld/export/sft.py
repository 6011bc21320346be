"""SFT export: one conversation a line, `messages` plus `tools`, in each trainer's format.

- openai: the fine-tuning chat format; assistant tool-call arguments are JSON strings.
- trl: the conversational format of TRL's SFTTrainer; tool-call arguments are objects, tool
  messages carry the tool's `name`, and `content` is never null.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.export.tools import episode_tools


def sft_record(episode: dict[str, Any], fmt: str) -> dict[str, Any]:
    if fmt not in ("openai", "trl"):
        raise ValueError(f"unknown SFT format {fmt!r}: expected openai or trl")
    names: dict[str, str] = {}
    messages = []
    for m in episode["messages"]:
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
    services = episode.get("all_services") or episode.get("services") or []
    return {"messages": messages, "tools": episode_tools(services, episode.get("mode", "direct"))}


def export_sft(episodes: list[dict[str, Any]], out: str | Path, fmt: str, min_score: float = 1.0) -> int:
    """Write conversations of episodes that scored at least `min_score` without an error; returns how many."""
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with p.open("w") as f:
        for e in sorted(episodes, key=lambda e: (e["task_id"], e["sample"])):
            if e["score"] >= min_score and e["error_class"] == "ok":
                f.write(json.dumps(sft_record(e, fmt), ensure_ascii=False) + "\n")
                n += 1
    return n
