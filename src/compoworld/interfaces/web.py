"""Web pages over the services' state (the GUI interface), as element trees with stable ids.

A page is a list of elements (heading, text, link, textbox, button); buttons submit their form
through the same tools agents call over MCP. Rendering reads state only. The text browser shows a
page as accessibility-tree-like lines (`[e3] link "Q3 invoice" -> /inbox/…`); the HTTP app renders
the same elements as HTML with `data-eid` attributes for a real browser.
"""

from __future__ import annotations

from typing import Any

from compoworld.interfaces.page import IMAGE, Element, Page  # noqa: F401  (re-exported: web.Page)


def render(env: Any, url: str, facts: dict[str, str]) -> Page | None:
    """The page at `url` for this environment's state, or None when there is no such page."""
    page = _render(env, url, facts)
    if page is not None:
        page.services = set(env.services)  # type: ignore[attr-defined]  # the screen's sidebar shows these apps
    return page


def _render(env: Any, url: str, facts: dict[str, str]) -> Page | None:
    parts = [p for p in url.split("?")[0].split("/") if p]
    svcs = env.services
    if parts and parts[0] in ("shop", "sheets", "wiki", "files"):
        from compoworld.interfaces.apps import app_page

        return app_page(env, parts[0], parts[1:], url)
    if not parts:
        page = Page("/", "Home")
        page.add("link", "Accounts", href="/accounts")
        for name, path, label in (
            ("email", "/inbox", "Inbox"),
            ("chat", "/channels", "Channels"),
            ("calendar", "/calendar", "Calendar"),
            ("helpdesk", "/tickets", "Tickets"),
            ("helpdesk", "/companies", "Companies"),
            ("crm", "/crm", "CRM"),
            ("shop", "/orders", "Orders"),
        ):
            if name in svcs:
                page.add("link", label, href=path)
        return page
    head, rest = parts[0], parts[1:]
    if head == "accounts":  # the account-notes app: its notes are shown by no MCP tool
        if not rest:
            page = Page(url, "Accounts")
            for name in sorted(n for n in facts if not n.startswith(IMAGE)):
                page.add("link", name, href=f"/accounts/{slug(name)}")
            return page
        name = next((n for n in facts if slug(n) == rest[0] and not n.startswith(IMAGE)), None)
        if name is None:
            return None
        page = Page(url, name)
        page.add("heading", "Internal account notes")
        page.add("text", facts[name])
        if IMAGE + name in facts:
            page.add("image", "Account contact card", meta={"card": facts[IMAGE + name]})
        return page
    if head == "inbox" and "email" in svcs:
        msgs = svcs["email"].table("messages")
        if not rest:
            page = Page(url, f"Inbox ({len(msgs)})")
            for m in sorted(msgs.values(), key=lambda m: (m.get("date") or "", m["id"]), reverse=True)[:50]:
                page.add(
                    "link",
                    f"{m.get('subject') or '(no subject)'} — {m.get('from')}",
                    href=f"/inbox/{m['id']}",
                )
            page.add("link", "Compose", href="/inbox/compose")  # last: the rows keep their ids
            return page
        if rest[0] == "compose" and "compose" not in msgs:
            page = Page(url, "New message")
            to, subject, body = (
                page.add("textbox", "To", meta={"line": True}),
                page.add("textbox", "Subject", meta={"line": True}),
                page.add("textbox", "Body"),
            )
            page.add(
                "button",
                "Send",
                action={
                    "tool": "email__gmail_send_email",
                    "inputs": {"to": to.id, "subject": subject.id, "body": body.id},
                    "lists": ["to"],
                    "args": {},
                    "then": "/inbox",
                },
            )
            return page
        m = msgs.get(rest[0])
        if m is None:
            return None
        page = Page(url, m.get("subject") or "(no subject)")
        page.add("text", f"From: {m.get('from')}")
        page.add("text", f"To: {', '.join(m.get('to') or [])}")
        page.add("text", f"Date: {m.get('date')}")
        page.add("text", m.get("body") or "")
        box = page.add("textbox", "Reply")
        page.add(
            "button",
            "Send reply",
            action={
                "tool": "email__gmail_send_email",
                "inputs": {"body": box.id},
                "args": {
                    "to": [m.get("from")],
                    "subject": "Re: " + (m.get("subject") or ""),
                    "threadId": m.get("threadId"),
                },
                "then": "/inbox",
            },
        )
        return page
    if head == "channels" and "chat" in svcs:
        chat = svcs["chat"]
        if not rest:
            page = Page(url, "Channels")
            for c in sorted(chat.table("channels").values(), key=lambda c: c["name"]):
                if not c.get("is_im"):
                    page.add("link", f"#{c['name']}", href=f"/channels/{c['id']}")
            return page
        c = chat.table("channels").get(rest[0])
        if c is None:
            return None
        page = Page(url, f"#{c['name']}")
        users = chat.table("users")
        for m in sorted(
            (m for m in chat.table("messages").values() if m["channel"] == c["id"]), key=lambda m: m["ts"]
        )[-30:]:
            who = users.get(m["user"], {}).get("real_name") or m["user"]
            page.add("text", f"{who}: {m['text']}")
        box = page.add("textbox", "Message")
        page.add(
            "button",
            "Post",
            action={
                "tool": "chat__slack_user_post_message",
                "inputs": {"text": box.id},
                "args": {"channel_id": c["id"]},
                "then": url,
            },
        )
        return page
    if head == "crm" and "crm" in svcs:
        objs = svcs["crm"].table("objects")
        if not rest:
            page = Page(url, "CRM records")
            for o in sorted(objs.values(), key=lambda o: (o["object_type"], str(o["id"]))):
                props = o.get("properties") or {}
                label = (
                    props.get("name")
                    or props.get("dealname")
                    or props.get("subject")
                    or " ".join(x for x in (props.get("firstname"), props.get("lastname")) if x)
                    or o["id"]
                )
                page.add("link", f"{o['object_type']}: {label}", href=f"/crm/{o['id']}")
            return page
        o = objs.get(rest[0])
        if o is None:
            return None
        page = Page(url, f"{o['object_type']} {o['id']}")
        for k, v in sorted((o.get("properties") or {}).items()):
            page.add("text", f"{k}: {v}")
        return page
    if head == "orders" and "shop" in svcs:
        orders = svcs["shop"].table("orders")
        if not rest:
            page = Page(url, "Orders")
            for o in sorted(orders.values(), key=lambda o: str(o.get("created_at")), reverse=True):
                page.add(
                    "link",
                    f"{o['name']} {o.get('email')} {o.get('total_price')} [{o.get('financial_status')}]",
                    href=f"/orders/{o['id']}",
                )
            return page
        o = orders.get(rest[0])
        if o is None:
            return None
        page = Page(url, f"Order {o['name']}")
        page.add("text", f"Customer: {o.get('email')}  Total: {o.get('total_price')}")
        page.add("text", f"Payment: {o.get('financial_status')}  Fulfillment: {o.get('fulfillment_status')}")
        for li in o.get("line_items") or []:
            page.add(
                "text", f"{li.get('quantity')} x {li.get('title') or li.get('sku')} at {li.get('price')}"
            )
        return page
    if head == "calendar" and "calendar" in svcs and not rest:
        page = Page(url, "Calendar")
        page.today = env.clock.now().date()  # type: ignore[attr-defined]  # the week grid marks today
        for e in sorted(svcs["calendar"].table("events").values(), key=lambda e: str(e.get("start")))[:60]:
            start = e["start"].get("dateTime") if isinstance(e.get("start"), dict) else e.get("start")
            end = e["end"].get("dateTime") if isinstance(e.get("end"), dict) else e.get("end")
            page.add("text", f"{start}  {e.get('summary')}", meta={"start": start, "end": end})
        page.add("link", "New event", href="/calendar/new")  # last: the events keep their ids
        return page
    if head == "calendar" and "calendar" in svcs and rest == ["new"]:
        page = Page(url, "New event")
        title = page.add("textbox", "Title", meta={"line": True})
        day = page.add("textbox", "Date (YYYY-MM-DD)", meta={"kind": "date"})  # a date picker on the screen
        start = page.add("textbox", "Starts (HH:MM)", meta={"kind": "time"})
        end = page.add("textbox", "Ends (HH:MM)", meta={"kind": "time"})
        page.add(
            "button",
            "Save event",
            action={
                "tool": "calendar__google_calendar_create_event",
                "inputs": {"summary": title.id, "day": day.id, "start": start.id, "end": end.id},
                # the pickers give 2026-03-04 and 10:00: the tool takes ISO date-times
                "templates": {"start_datetime": "{day}T{start}:00Z", "end_datetime": "{day}T{end}:00Z"},
                "args": {},
                "then": "/calendar",
            },
        )
        return page
    if head == "tickets" and "helpdesk" in svcs:
        hd = svcs["helpdesk"]
        if not rest:
            page = Page(url, "Tickets")
            for t in sorted(
                hd.table("tickets").values(), key=lambda t: int(t["id"]) if str(t["id"]).isdigit() else 0
            ):
                page.add(
                    "link", f"#{t['id']} {t['subject']} [{_status(t['status'])}]", href=f"/tickets/{t['id']}"
                )
            return page
        t = hd.table("tickets").get(rest[0])
        if t is None:
            return None
        page = Page(url, f"Ticket #{t['id']}: {t['subject']}")
        page.add("text", f"Status: {_status(t['status'])}")
        page.add("text", t.get("description") or "")
        for c in sorted(
            (c for c in hd.table("conversations").values() if str(c["ticket_id"]) == str(t["id"])),
            key=lambda c: str(c["id"]),
        ):
            page.add("text", f"{c.get('from_email') or 'agent'}: {c.get('body')}")
        if t.get("company_id") is not None:
            page.add("link", "Company", href=f"/companies/{t['company_id']}")
        page.add(
            "button",
            "Close ticket",
            action={
                "tool": "helpdesk__freshdesk_update_ticket",
                "inputs": {},
                "args": {"ticket_id": int(t["id"]) if str(t["id"]).isdigit() else t["id"], "status": 5},
                "then": url,
            },
        )
        return page
    if head == "companies" and "helpdesk" in svcs:
        hd = svcs["helpdesk"]
        if not rest:
            page = Page(url, "Companies")
            for c in sorted(hd.table("companies").values(), key=lambda c: c["name"]):
                page.add("link", c["name"], href=f"/companies/{c['id']}")
            return page
        c = hd.table("companies").get(rest[0])
        if c is None:
            return None
        page = Page(url, c["name"])
        page.add("text", f"Tier: {c.get('account_tier')}  Renewal: {c.get('renewal_date')}")
        # a detail that only this page shows: no MCP tool returns it
        if c["name"] in facts:
            page.add("heading", "Internal account notes")
            page.add("text", facts[c["name"]])
        return page
    return None


def _status(code: Any) -> str:
    return {2: "open", 3: "pending", 4: "resolved", 5: "closed"}.get(code, str(code))


def slug(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
