"""Replay trajectories written in the CompoWorld authors' published convention (gateway-compat).

The published sample (`AllSpark-Research/AgentEnv`, `CompoWorld/compoworld_example_data_20.jsonl`)
is one JSON object a line: `tools` (the four meta-tools), `messages` (assistant tool calls and tool
results) and `meta.services`. Its calls use `call_tool {tool_name, arguments}`, bare real tool names
(with a `service__` prefix only where two mounted services share a name), and un-enveloped meta-tool
results. We mount every service of the trajectory that our library has (by name, or by the real
server it models: `google_sheets`, `slack`, ...) and replay each call through `mode="gateway-compat"`.

A call counts where our library has its service. It is *accepted* when it reaches a tool (or, for a
meta-tool, a service or tool of ours): not a 404 for an unknown or ambiguous name and not a 400 on
the meta-call's own shape. Whether the tool then succeeds depends on our seeded data, not theirs,
and is reported apart.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compoworld.core.environment import Environment
from compoworld.core.gateway import alias


def library_names() -> dict[str, str]:
    """Published service name -> our service name, for every service in the library."""
    from compoworld.services import registry

    out: dict[str, str] = {}
    for name, cls in registry().items():
        out[name] = name
        a = alias(cls)
        if a:
            out.setdefault(a, name)
    return out


def _args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw if raw is not None else {}


def _owners(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Tool name (as listed) -> published service, from the trajectory's own list_tools results."""
    out: dict[str, str] = {}
    for m in messages:
        if m.get("role") != "tool" or m.get("name") != "list_tools":
            continue
        try:
            body = json.loads(m.get("content") or "")
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(body, dict) and isinstance(body.get("tools"), list):
            for t in body["tools"]:
                if isinstance(t, dict) and isinstance(t.get("name"), str):
                    out[t["name"]] = str(body.get("service"))
    return out


def replay_record(
    record: dict[str, Any], names: dict[str, str] | None = None, seed: int = 0
) -> dict[str, Any]:
    """Replay one trajectory's calls; counts per call kind and the calls not accepted."""
    names = names if names is not None else library_names()
    published = list((record.get("meta") or {}).get("services") or [])
    mounted = {p: names[p] for p in published if p in names}
    out: dict[str, Any] = {
        "services": published,
        "mounted": mounted,
        "calls": 0,
        "in_library": 0,
        "accepted": 0,
        "succeeded": 0,
        "rejected": [],
    }
    messages = record.get("messages") or []
    if not mounted:
        out["calls"] = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        return out
    env = Environment(sorted(set(mounted.values())), seed=seed)
    gw = env.gateway_for("gateway-compat")
    owners = _owners(messages)
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            name, args = fn.get("name") or "", _args(fn.get("arguments"))
            out["calls"] += 1
            if name == "list_services":
                service = None
            elif name == "list_tools":
                service = args.get("service") if isinstance(args, dict) else None
            elif name in ("describe_tool", "call_tool"):
                tool = (args.get("tool_name") or args.get("tool")) if isinstance(args, dict) else None
                tool = tool if isinstance(tool, str) else ""
                service = tool.split("__", 1)[0] if "__" in tool else owners.get(tool)
            else:
                continue  # a direct call outside the convention
            if service is not None and service not in mounted:
                continue  # a server our library does not have
            out["in_library"] += 1
            if name in ("describe_tool", "call_tool"):
                reached = gw.resolve(tool)[0] is not None
            elif name == "list_tools":
                reached = gw.service(service) is not None
            else:
                reached = True
            result = gw.call(name, args)  # run it either way: later calls see the state it leaves
            if not reached:
                err = result.get("error", {}) if isinstance(result, dict) else {}
                out["rejected"].append(
                    {"tool": name, "arguments": args, "error": str(err.get("message", ""))[:200]}
                )
                continue
            out["accepted"] += 1
            out["succeeded"] += not (isinstance(result, dict) and result.get("success") is False)
    return out


def replay_file(path: str | Path, seed: int = 0) -> dict[str, Any]:
    """Replay every trajectory of a JSONL file; totals and the share of in-library calls accepted."""
    names = library_names()
    per: list[dict[str, Any]] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            per.append(replay_record(json.loads(line), names, seed))
    return summarize(per)


def summarize(per: Iterable[dict[str, Any]]) -> dict[str, Any]:
    per = list(per)
    tot = Counter()
    servers: Counter[str] = Counter()
    for r in per:
        for k in ("calls", "in_library", "accepted", "succeeded"):
            tot[k] += r[k]
        servers.update(r["mounted"].keys())
    return {
        "trajectories": len(per),
        **dict(tot),
        "accepted_share": round(tot["accepted"] / tot["in_library"], 4) if tot["in_library"] else None,
        "servers_in_library": dict(sorted(servers.items())),
        "rejected": [x for r in per for x in r["rejected"]][:50],
    }
