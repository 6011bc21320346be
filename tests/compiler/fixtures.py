"""Small MCP specs, written like real ones (defects included), for the compiler's tests."""

from __future__ import annotations

import copy
from typing import Any


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    return s


S, INT = {"type": "string"}, {"type": "integer"}

TASKER: dict[str, Any] = {
    "server": "Tasker (test fixture)",
    "domain": "project management",
    "tools": [
        {
            "name": "tasker_create_project",
            "description": "Create a project.",
            "inputSchema": _obj({"name": S, "description": S}, ["name"]),
        },
        {
            "name": "tasker_get_project",
            "description": "Get a project by id.",
            "inputSchema": _obj({"project_id": S}, ["project_id"]),
        },
        {
            "name": "tasker_list_projects",
            "description": "List projects.",
            "inputSchema": _obj({"limit": {"type": "integer", "minimum": 1, "maximum": 100}}),
        },
        {
            "name": "tasker_create_task",
            "description": "Create a task in a project.",
            "inputSchema": _obj(
                {"project_id": S, "title": S, "notes": S, "priority": INT}, ["project_id", "title"]
            ),
        },
        {
            "name": "tasker_get_task",
            "description": "Get one task.",
            "inputSchema": _obj({"task_id": S}, ["task_id"]),
        },
        {
            "name": "tasker_search_tasks",
            "description": "Search tasks by text.",
            "inputSchema": _obj({"query": S, "limit": INT}, ["query"]),
        },
        {
            "name": "tasker_update_task",
            "description": "Update a task.",
            "inputSchema": _obj({"task_id": S, "title": S, "notes": S}, ["task_id"]),
        },
        {
            "name": "tasker_delete_task",
            "description": "Delete a task.",
            "inputSchema": _obj({"task_id": S}, ["task_id"]),
        },
        {
            "name": "tasker_close_task",
            "description": "Close a task.",
            "inputSchema": _obj({"task_id": S}, ["task_id"]),
        },
        {
            "name": "tasker_add_label_to_task",
            "description": "Label a task.",
            "inputSchema": _obj({"task_id": S, "label_id": S}, ["task_id", "label_id"]),
        },
        {
            "name": "tasker_add_comment_to_task",
            "description": "Comment on a task.",
            "inputSchema": _obj({"task_id": S, "body": S}, ["task_id", "body"]),
        },
        {
            "name": "tasker_summarize_workload",
            "description": "Summarize everyone's workload in prose.",
            "inputSchema": _obj({"team": S}),
        },
        # real-world defects
        {"name": "tasker_get_task_count", "inputSchema": _obj({"project_id": S}, ["project_id"])},
        {
            "name": "tasker.export-report",
            "description": "Export a report.",
            "inputSchema": {
                "type": "object",
                "properties": {"fmt": {"$ref": "#/$defs/Format"}},
                "$defs": {"Format": {"type": "string", "enum": ["csv", "pdf"]}},
            },
        },
        {
            "name": "tasker_update_project",
            "description": "Update a project.",
            "inputSchema": _obj(
                {
                    "project_id": S,
                    "name": S,
                    "description": {"type": "string", "description": "Optional new text"},
                    "code": {"type": "string", "pattern": "(?<!x"},
                    "budget": {"type": "int"},
                },
                ["project_id", "name", "description", "code", "budget"],
            ),
        },
        {"description": "a tool with no name"},
        "not even an object",
    ],
}

CRM: dict[str, Any] = {
    "tools": [
        {
            "name": "create_contact",
            "description": "Create a contact.",
            "inputSchema": _obj({"email": S, "first_name": S, "last_name": S, "notes": S}, ["email"]),
        },
        {
            "name": "get_contact_by_email",
            "description": "Find a contact by email.",
            "inputSchema": _obj({"email": S}, ["email"]),
        },
        {
            "name": "search_contacts",
            "description": "Search contacts.",
            "inputSchema": _obj({"query": S}, ["query"]),
        },
        {
            "name": "delete_contact",
            "description": "Delete a contact.",
            "inputSchema": _obj({"contact_id": S}, ["contact_id"]),
        },
        {
            "name": "send_message",
            "description": "Send a message to a contact.",
            "inputSchema": _obj({"contact_id": S, "text": S}, ["contact_id", "text"]),
        },
        {"name": "list_messages", "description": "List messages.", "inputSchema": _obj({"contact_id": S})},
    ]
}


def tasker() -> dict[str, Any]:
    return copy.deepcopy(TASKER)


def crm() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": copy.deepcopy(CRM)}
