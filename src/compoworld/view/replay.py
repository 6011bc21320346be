"""Replays for the pages: the reference and an episode's calls, each with the state diff it made.

Both run the recorded calls again on a fresh environment in the task's s0 (calls are deterministic
code), so a diff is the one the call really made; an episode's replayed state hash is compared with
the one recorded, so a page says when a replay does not match its recording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compoworld.agents.loop import GATEWAY_MODES
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH

MAX_CHANGES = 200  # per call: a call that rewrites a whole table shows its first changes and a count


@dataclass
class Change:
    service: str
    path: str
    op: str
    before: Any
    after: Any


@dataclass
class CallView:
    n: int
    tool: str
    arguments: Any
    result: dict[str, Any]
    mutates: bool
    changes: list[Change] = field(default_factory=list)
    more_changes: int = 0
    sources: dict[str, str] = field(default_factory=dict)
    step: int | None = None
    turn: int | None = None
    recorded_hash: str | None = None
    replay_hash: str | None = None
    page_html: str | None = None  # the page the browser showed after this call (the GUI interface)
    screenshot: str | None = None  # a recorded image (data URI), where the episode kept one


def _target(env: Any, tool: str, args: Any) -> str:
    """The service tool a gateway meta-call runs (call_tool(tool=...)), or the tool itself."""
    if isinstance(args, dict):
        inner = args.get("tool") or args.get("tool_name") or args.get("name")
        if tool in ("call_tool",) and isinstance(inner, str):
            return inner
    return tool


def _page_html(env: Any) -> str | None:
    """The browser's current page as HTML (a faithful picture of what the GUI showed)."""
    from compoworld.interfaces.web import render

    browser = env.services.get("browser")
    if browser is None:
        return None
    tab = browser.table("tabs").get("main") or {}
    page = render(env, tab.get("url") or "/", {k: v["text"] for k, v in browser.table("facts").items()})
    return page.html(tab.get("inputs") or {}) if page is not None else None


def _run(env: Any, tool: str, args: Any, mode: str) -> tuple[dict[str, Any], bool, list[Change], int]:
    gateway = env.gateway_for(mode) if mode in GATEWAY_MODES else None
    target = _target(env, tool, args)
    spec = env.tool_spec(target)
    mutates = spec is None or spec.mutates
    before = env.snapshot() if mutates else None
    if gateway is not None and tool in gateway.specs:
        result = gateway.call(tool, args if isinstance(args, dict) else {})
    else:
        result = env.call(tool, args if isinstance(args, dict) else {})
    changes: list[Change] = []
    more = 0
    if before is not None and result.get("success") is not False:
        diff = env.diff(before, env.snapshot())
        changes = [Change(c.service, c.path, c.op, c.before, c.after) for c in diff[:MAX_CHANGES]]
        more = max(0, len(diff) - MAX_CHANGES)
    return result, mutates and bool(changes), changes, more


def reference_timeline(task: Task) -> list[CallView]:
    """Each reference call with its arguments, result, grounding sources and the diff it made."""
    env = task.environment()
    out = []
    for i, c in enumerate(task.reference_solution):
        result, mutates, changes, more = _run(env, c.tool, c.arguments, "direct")
        out.append(
            CallView(
                n=i,
                tool=c.tool,
                arguments=c.arguments,
                result=result,
                mutates=mutates,
                changes=changes,
                more_changes=more,
                sources=dict(c.sources),
                step=c.step,
                turn=c.turn,
                page_html=_page_html(env) if c.tool.startswith("browser__") else None,
            )
        )
    return out


def episode_calls(task: Task | None, episode: dict[str, Any]) -> list[CallView]:
    """The episode's calls in order, replayed on the task's s0 when the task is known (else as
    recorded, without diffs)."""
    steps = episode.get("steps") or []
    mode = episode.get("mode") or "direct"
    env = task.environment() if task is not None else None
    out = []
    for i, s in enumerate(steps):
        tool, args = s.get("tool") or "", s.get("arguments")
        view = CallView(
            n=i,
            tool=tool,
            arguments=args,
            result=s.get("envelope") or {},
            mutates=False,
            recorded_hash=s.get("state_hash"),
            screenshot=s.get("screenshot") if isinstance(s.get("screenshot"), str) else None,
        )
        if env is not None:
            _, view.mutates, view.changes, view.more_changes = _run(env, tool, args, mode)
            view.replay_hash = env.state_hash()
            if _target(env, tool, args).startswith("browser__"):
                view.page_html = _page_html(env)
        out.append(view)
    return out


@dataclass
class Turn:
    role: str
    content: str | None
    calls: list[tuple[dict[str, Any], CallView | None, str | None]]  # (tool_call, replayed call, result text)


def conversation(episode: dict[str, Any], calls: list[CallView]) -> list[Turn]:
    """The messages turn by turn; each assistant tool call is paired with its recorded step (steps
    hold every call but `finish` and calls whose arguments were not JSON) and its tool message."""
    messages = episode.get("messages") or []
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    j = 0
    out = []
    for m in messages:
        role = m.get("role") or ""
        if role == "tool":
            continue
        pairs: list[tuple[dict[str, Any], CallView | None, str | None]] = []
        for tc in m.get("tool_calls") or []:
            name = (tc.get("function") or {}).get("name") or ""
            view = None
            if name != FINISH and j < len(calls) and calls[j].tool == name:
                view = calls[j]
                j += 1
            pairs.append((tc, view, results.get(tc.get("id") or "")))
        content = m.get("content")
        out.append(Turn(role, content if isinstance(content, str) else None, pairs))
    return out


def check_links(rubric: list[Any], calls: list[CallView]) -> dict[str, list[int]]:
    """Per rubric item, the calls whose diff touched what its check names (service, table, key)."""
    out: dict[str, list[int]] = {}
    for item in rubric:
        chk = item.check if hasattr(item, "check") else item.get("check", {})
        svc, table, key = chk.get("service"), chk.get("table"), chk.get("key")
        hits = []
        for c in calls:
            for ch in c.changes:
                parts = ch.path.split("/")
                if svc and ch.service != svc:
                    continue
                if table and parts[0] != table:
                    continue
                if key is not None and (len(parts) < 2 or parts[1] != str(key)):
                    continue
                hits.append(c.n)
                break
        out[item.id if hasattr(item, "id") else item["id"]] = hits
    return out
