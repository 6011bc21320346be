"""Scripted agent behaviours over a task: the work, nothing, a skipped step, a decoy, collateral damage."""

from __future__ import annotations

import json
from typing import Any

from compoworld.core.environment import Environment
from compoworld.tasks.model import Task

# One destructive call per service, used to damage an unrelated record.
DAMAGE = {
    "email": lambda env: (
        "email__gmail_delete_email",
        {"messageId": next(iter(env.services["email"].table("messages")))},
    ),
    "kv": lambda env: ("kv__delete", {"key": next(iter(env.services["kv"].table("keys")))}),
    "boards": lambda env: (
        "boards__trello_delete_card",
        {"card_id": next(iter(env.services["boards"].table("cards")))},
    ),
    "crm": lambda env: (
        "crm__hubspot_delete_contact_by_id",
        {
            "contact_id": next(
                o["id"] for o in env.services["crm"].objects.all() if o["object_type"] == "contacts"
            )
        },
    ),
    "files": lambda env: ("files__dropbox_delete_file", {"path": "/Personal/todo.txt"}),
    "helpdesk": lambda env: (
        "helpdesk__freshdesk_delete_ticket",
        {
            "ticket_id": next(
                t["id"]
                for t in env.services["helpdesk"].tickets.all()
                if not t["deleted"] and not t["archived"]
            )
        },
    ),
    "meet": lambda env: (
        "meet__google_meet_delete_meeting",
        {"event_id": next(iter(env.services["meet"].table("meetings")))},
    ),
    "sql": lambda env: (
        "sql__write_query",
        {"query": "DELETE FROM order_items WHERE rowid = (SELECT MIN(rowid) FROM order_items)"},
    ),
    "wiki": lambda env: (
        "wiki__confluence_rename_page",
        {"page_identifier": next(iter(env.services["wiki"].table("pages"))), "title": "Renamed by mistake"},
    ),
    "shop": lambda env: (
        "shop__shopify_update_product",
        {"product_id": next(iter(env.services["shop"].table("products"))), "status": "archived"},
    ),
    "payments": lambda env: (
        "payments__cancel_subscription",
        {
            "subscription": next(
                s["id"] for s in env.services["payments"].subs.all() if s["status"] != "canceled"
            )
        },
    ),
    "community": lambda env: (
        "community__discord_send_message",
        {
            "channel_id": next(c["id"] for c in env.services["community"].channels.all() if c["type"] == 0),
            "content": "oops",
        },
    ),
    "marketing": lambda env: (
        "marketing__mailchimp_delete_campaign",
        {"campaign_id": next(iter(env.services["marketing"].table("campaigns")))},
    ),
    "bases": lambda env: (
        "bases__airtable_update_table",
        {
            "base_id": next(iter(env.services["bases"].table("bases"))),
            "table_id": next(iter(env.services["bases"].table("tables"))),
            "description": "oops",
        },
    ),
    "sms": lambda env: ("sms__delete_message", {"sid": next(iter(env.services["sms"].table("messages")))}),
    "tracker": lambda env: (
        "tracker__jira_add_comment",
        {"issue_key": next(iter(env.services["tracker"].table("issues"))), "comment": "oops"},
    ),
    "calendar": lambda env: (
        "calendar__google_calendar_delete_event",
        {
            "event_id": next(
                e["id"]
                for e in env.services["calendar"].table("events").values()
                if e["calendar_id"] == env.services["calendar"]._me
            )
        },
    ),
    "hr": lambda env: (
        "hr__bamboohr_update_employee",
        {
            "employee_id": next(iter(env.services["hr"].table("employees"))),
            "update_data": {"jobTitle": "Oops"},
        },
    ),
}


def run(task: Task, calls: list[dict[str, Any]], answer: str | None) -> tuple[Environment, dict[str, Any]]:
    env = task.environment()
    for c in calls:
        env.call(c["tool"], c["arguments"])
    return env, env.snapshot()


def reference(task: Task) -> list[dict[str, Any]]:
    return [c.model_dump() for c in task.reference_solution]


def mutating_indices(task: Task) -> list[int]:
    env = task.environment()
    return [i for i, c in enumerate(task.reference_solution) if env.tool_spec(c.tool).mutates]


def decoy_value(value: str) -> str:
    """A near-duplicate of a fact value that is still well formed for its tool."""
    if "@" in value:  # another person: a different first letter
        return ("k" if value[0] != "k" else "m") + value[1:]
    if len(value) == 10 and value[4] == "-" and value[7] == "-":  # a date: the next day
        day = int(value[8:]) % 28 + 1
        return f"{value[:8]}{day:02d}"
    if value.startswith("+"):
        return value[:-1] + str((int(value[-1]) + 1) % 10)
    return value[:-1] + ("7" if value[-1] != "7" else "3")


def on_decoy(task: Task) -> list[dict[str, Any]]:
    """The reference solution, except that the last step acts on a near-duplicate of its input fact."""
    calls = reference(task)
    last = task.dependency_graph.nodes[-1].step
    value = task.dependency_graph.edges[-1].fact.value
    out = []
    for c in calls:
        if c["step"] == last:
            c = {**c, "arguments": json.loads(json.dumps(c["arguments"]).replace(value, decoy_value(value)))}
        out.append(c)
    return out
