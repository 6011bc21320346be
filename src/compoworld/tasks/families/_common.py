"""Helpers families share for planting into the seeded world (before `b.begin()`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.core.company import Person
from compoworld.tasks.workflow import Builder, PlantError


def ago(b: Builder, days: float = 0, hours: float = 0) -> str:
    return format_time(b.now - timedelta(days=days, hours=hours))


def ahead(b: Builder, days: float = 0, hours: float = 0) -> str:
    return format_time(b.now + timedelta(days=days, hours=hours))


def chat_user(p: Person) -> str:
    from compoworld.services.chat.seed import user_id

    return user_id(p.id)


def chat_channel(b: Builder, name: str, members: list[Person] = (), topic: str = "") -> str:  # type: ignore[assignment]
    """The id of the Slack channel `name`, created (with me and `members`) if the seed has none."""
    svc = b.svc("chat")
    found = svc.store.tables.get("channels", {})
    for cid, ch in found.items():
        if ch["name"] == name:
            return cid
    cid = svc.next_id("C", 10, "upper")
    me = chat_user(b.me)
    svc.insert(
        "channels",
        {
            "id": cid,
            "name": name,
            "is_private": False,
            "is_im": False,
            "is_archived": False,
            "created": int(b.env.clock.epoch()) - 86400 * 90,
            "creator": me,
            "topic": topic,
            "purpose": topic or f"Discussion for {name}",
            "members": sorted({me, *(chat_user(p) for p in members)}),
        },
    )
    return cid


def hd_company(b: Builder, name: str) -> dict[str, Any]:
    hits = b.svc("helpdesk").companies.find(lambda c: c["name"] == name)
    if not hits:
        raise PlantError(f"no helpdesk company {name}")
    return hits[0]


def hd_contact(b: Builder, p: Person) -> dict[str, Any]:
    hits = b.svc("helpdesk").contacts.find(lambda c: (c.get("email") or "").lower() == p.email.lower())
    if not hits:
        raise PlantError(f"no helpdesk contact {p.email}")
    return hits[0]


def hd_ticket(b: Builder, requester: dict[str, Any], subject: str, text: str, status: int = 2, days_ago: float = 1, priority: int = 2, **extra: Any) -> dict[str, Any]:
    when = ago(b, days=days_ago)
    return b.svc("helpdesk").tickets.create(
        {
            "subject": subject,
            "description": f"<p>{text}</p>",
            "requester_id": requester["id"],
            "company_id": requester.get("company_id"),
            "status": status,
            "priority": priority,
            "source": 1,
            "created_at": when,
            "updated_at": when,
            **extra,
        }
    )


def crm_objects(b: Builder, object_type: str) -> list[dict[str, Any]]:
    return [r for r in b.svc("crm").store.tables.get("objects", {}).values() if r["object_type"] == object_type]


def crm_company(b: Builder, name: str) -> dict[str, Any]:
    for rec in crm_objects(b, "companies"):
        if (rec.get("properties") or {}).get("name") == name:
            return rec
    raise PlantError(f"no CRM company {name}")


def in_crm(b: Builder):
    """A filter for `b.customer(where=...)`: customers the CRM has a company record for."""
    names = {(r.get("properties") or {}).get("name") for r in crm_objects(b, "companies")}
    return lambda c: c.name in names


def rows(data: Any) -> list[dict[str, Any]]:
    """The records of a list response, whatever the server calls the list (results, channels, ...)."""
    if isinstance(data, list):
        return [x for x in data if isinstance(x, dict)]
    if isinstance(data, dict):
        for v in data.values():
            if isinstance(v, list) and (not v or isinstance(v[0], dict)):
                return [x for x in v if isinstance(x, dict)]
    return []
