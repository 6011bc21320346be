"""What the compiled families share: a service's name as people say it, and a colleague's request by
email (planted, found and read by the reference, replied to on its thread).

`compiled` (record families) and `compiled_info` (questions to info tools) both use these; neither
imports the other's module for them.
"""

from __future__ import annotations

import re
from datetime import timedelta
from functools import lru_cache
from typing import Any

from compoworld.core.company import Person
from compoworld.tasks.families._common import inbox_mail, rows
from compoworld.tasks.workflow import Builder

ACRONYMS = {
    "crm",
    "api",
    "hr",
    "hris",
    "sms",
    "ai",
    "ats",
    "pos",
    "uk",
    "us",
    "sdk",
    "sql",
    "kv",
    "mcp",
    "id",
}


TLDS = {"com", "io", "org", "net", "co", "dev", "app", "ai", "hu", "uk", "de", "fr", "api", "v1", "v2", "v3"}


def display(manifest: dict[str, Any]) -> str:
    """A service's name as people say it: `apideck_com_crm (open-mcp, ...)` -> `Apideck CRM`."""
    raw = str(manifest.get("server") or manifest.get("service") or "").split("(")[0].strip()
    parts = [p for p in re.split(r"[_\s]+", raw) if p]
    if len(parts) > 1:
        parts = [p for p in parts if p.lower() not in TLDS] or parts
    out = []
    for p in parts:
        lo = p.lower()
        out.append(
            p.upper() if lo in ACRONYMS else p if any(ch.isupper() for ch in p[1:]) else p.capitalize()
        )
    return " ".join(out) or str(manifest.get("service"))


def _mail(b: Builder, sender: Person, subject: str, body: str, hours_ago: float) -> dict[str, Any]:
    return inbox_mail(b, sender.email, b.me.email, subject, body, b.now - timedelta(hours=hours_ago))


def _colleague(b: Builder) -> Person:
    """A colleague whose first name is theirs alone (so `from:first` finds only their mail)."""
    firsts = [p.first for p in b.company.people]
    pool = [p for p in b.company.employees if p.id != b.me.id and firsts.count(p.first) == 1]
    return b.fresh(pool, 1, key=lambda p: p.id)[0]


def _read_request(b: Builder, who: Person, subject: str) -> tuple[dict[str, Any], str]:
    """The reference finds the colleague's email and reads it: (its summary, its body)."""
    found = b.call("email__gmail_search_emails", {"query": f"from:{who.first.lower()}", "maxResults": 10})
    msg = next(m for m in rows(found) if m["subject"] == subject)
    full = b.call("email__gmail_read_email", {"messageId": msg["id"]})
    return msg, full["messages"][-1]["body"]


def _reply(b: Builder, who: Person, msg: dict[str, Any], body: str) -> None:
    b.call(
        "email__gmail_send_email",
        {"to": [who.email], "subject": f"Re: {msg['subject']}", "body": body, "threadId": msg["threadId"]},
    )


@lru_cache(maxsize=512)
def _probe_world(service: str) -> dict[str, Any]:
    from compoworld.core.environment import Environment

    return Environment(services=[service, "email"], seed=0, size="small").snapshot()
