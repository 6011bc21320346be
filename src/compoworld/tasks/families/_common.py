"""Helpers families share for planting into the seeded world (before `b.begin()`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.core.company import Person
from compoworld.tasks.workflow import Builder, PlantError


def ago(b: Builder, days: float = 0, hours: float = 0) -> str:
    return format_time(b.now - timedelta(days=days, hours=hours))


def ahead(b: Builder, days: float = 0, hours: float = 0) -> str:
    return format_time(b.now + timedelta(days=days, hours=hours))


def inbox_mail(
    b: Builder,
    sender: str,
    to: str,
    subject: str,
    body: str,
    when: datetime,
    thread: str | None = None,
    labels: tuple[str, ...] = ("INBOX", "UNREAD"),
) -> dict[str, Any]:
    """Plant an email (unread in the inbox by default) as the email service stores it."""
    svc = b.svc("email")
    rec = {
        "id": svc.next_id("m", 16),
        "threadId": thread or svc.next_id("t", 16),
        "from": sender,
        "to": [to],
        "cc": [],
        "bcc": [],
        "subject": subject,
        "body": body,
        "htmlBody": None,
        "mimeType": "text/plain",
        "date": format_time(when),
        "labelIds": list(labels),
        "inReplyTo": None,
        "attachments": [],
    }
    svc.insert("messages", rec)
    return rec


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


def hd_ticket(
    b: Builder,
    requester: dict[str, Any],
    subject: str,
    text: str,
    status: int = 2,
    days_ago: float = 1,
    priority: int = 2,
    **extra: Any,
) -> dict[str, Any]:
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
    return [
        r for r in b.svc("crm").store.tables.get("objects", {}).values() if r["object_type"] == object_type
    ]


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


def wiki_page(
    b: Builder,
    space: dict[str, Any],
    title: str,
    content: str,
    days_ago: float = 20,
    author: str | None = None,
) -> dict[str, Any]:
    ts = format_time(b.now - timedelta(days=days_ago))
    return b.svc("wiki").pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space.get("homepage_id"),
            "author_id": author or b.me.email,
            "created_at": ts,
            "updated_at": ts,
        }
    )


def team_space(b: Builder, name: str | None = None) -> dict[str, Any]:
    """The wiki space of team `name` (mine without one)."""
    wiki = b.svc("wiki")
    team = next(t for t in b.company.teams if t.name == (name or b.me.team))
    key = team.slug.upper()[:10]
    hits = wiki.spaces.find(lambda s: s["key"] == key)
    if not hits:
        raise PlantError(f"no wiki space {key}")
    return hits[0]


def bases_row(
    b: Builder, t: dict[str, Any], fid: dict[str, str], values: dict[str, Any], days_ago: float
) -> dict[str, Any]:
    svc = b.svc("bases")
    return svc.records.create(
        {
            "table_id": t["id"],
            "createdTime": format_time(b.now - timedelta(days=days_ago)),
            "fields": {fid[k]: v for k, v in values.items()},
        },
        id="rec" + svc.next_id("", 14),
    )


def sheet_rows(data: Any) -> list[list[Any]]:
    """Rows of a get_spreadsheet answer as lists of cell values (column A first)."""
    out: list[list[Any]] = []
    for s in (data or {}).get("sheets", []):
        rs = s.get("rows") or {}
        for _, r in sorted(rs.items(), key=lambda kv: int(kv[0])) if isinstance(rs, dict) else enumerate(rs):
            if isinstance(r, dict):
                width = max((ord(k) - 64 for k in r), default=0)
                out.append([r.get(chr(65 + i), "") for i in range(width)])
            else:
                out.append(list(r))
    return out


def sheet(b: Builder, title: str, tab: str, table: list[list[Any]], days_ago: float = 5) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for r, row in enumerate(table, start=1):
        for c, v in enumerate(row):
            cells[f"{chr(65 + c)}{r}"] = v
    return b.svc("sheets").books.create(
        {
            "title": title,
            "sheets": [{"sheetId": 0, "title": tab, "cells": cells}],
            "modified": ago(b, days=days_ago),
        }
    )


def next_business_day(d: datetime) -> datetime:
    d = d + timedelta(days=1)
    while d.weekday() >= 5:
        d += timedelta(days=1)
    return d


def crm_contact(b: Builder, email: str) -> dict[str, Any]:
    for r in b.svc("crm").objects.find(object_type="contacts"):
        if (r["properties"].get("email") or "").lower() == email.lower():
            return r
    raise PlantError(f"no CRM contact {email}")


def bases_table(
    b: Builder, base: str | dict[str, Any], table: str, desc: str, fields: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """A new Airtable table in `base` (its name, or the base record), and its field ids by name."""
    svc = b.svc("bases")
    if isinstance(base, str):
        found = next((x for x in svc.bases.all() if x["name"] == base), None)
        if found is None:
            raise PlantError(f"no Airtable base {base}")
        base = found
    t = svc._create_table(base["id"], table, desc, fields)
    return t, {f["name"]: f["id"] for f in svc.fields.find(table_id=t["id"])}
