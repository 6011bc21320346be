"""The system prompt and the finish tool every episode shares (part of a task: references are grounded in it)."""

from __future__ import annotations

from typing import Any

FINISH = "finish"
FINISH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FINISH,
        "description": "Call this once the task is complete. Put your final answer (if the task asks a question) in 'answer'.",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "Your final answer, or an empty string."}
            },
            "required": ["answer"],
            "additionalProperties": False,
        },
    },
}


def system_prompt(now_iso: str, user: str, mode: str) -> str:
    if mode == "direct":
        how = "Tools are namespaced as service__tool."
    elif mode == "gateway-compat":
        how = (
            "Discover tools with list_services, list_tools and describe_tool, then run them with "
            "call_tool(tool_name, arguments)."
        )
    else:
        how = "Discover tools with list_services, list_tools and describe_tool, then run them with call_tool."
    return (
        f"You are an assistant that completes tasks for {user} by calling tools. The current date and time is {now_iso} "
        f"(simulated; use it for relative dates). {how} Every tool returns a JSON envelope: "
        '{"success": true, "data": ...} or {"success": false, "error": {...}}; read errors and correct your call. '
        f"When you are done, call the `{FINISH}` tool with your final answer (an empty string if the task asks "
        "no question): a reply without a tool call ends the task unfinished."
    )


def task_user(task: Any) -> str:
    """Who the agent works for, as its system prompt names them (name and email where known)."""
    meta = getattr(task, "meta", None) or {}
    if meta.get("user"):
        return str(meta["user"])
    owner = task.initial_state.get("services", {}).get("email", {}).get("_meta", {}).get("owner")
    return owner or "the user"


def task_system_prompt(task: Any, mode: str = "direct") -> str:
    return system_prompt(task.initial_state.get("clock", ""), task_user(task), mode)


HINT_MODES: tuple[str, ...] = ("none", "hint", "subtasks")


def hint_suffix(task: Any, mode: str) -> str:
    """What `eval --hints` adds to the user message: the task's hint, and with `subtasks` its
    ordered steps too ("" for `none`). Episodes record it, so an export can take it out again."""
    if mode not in HINT_MODES:
        raise ValueError(f"unknown hint mode {mode!r}: expected one of {', '.join(HINT_MODES)}")
    if mode == "none" or not (task.hint or (mode == "subtasks" and task.subtasks)):
        return ""
    out = f"\n\nHint: {task.hint}" if task.hint else ""
    if mode == "subtasks" and task.subtasks:
        out += "\n\nSteps:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(task.subtasks, 1))
    return out
