"""A scripted cross-service session: what an agent's trajectory looks like, end to end, offline."""

from __future__ import annotations

import time

from rich.console import Console
from rich.table import Table


def run_demo(console: Console, seed: int = 0) -> None:
    from compoworld.core.environment import Environment

    t0 = time.perf_counter()
    env = Environment(services=["email", "chat", "calendar"], seed=seed)
    built = time.perf_counter() - t0
    console.print(
        f"[bold]Environment[/bold] {', '.join(env.services)} (seed {seed}) for "
        f"{env.company.me.name} <{env.company.me.email}> at {env.company.name}: "
        f"{len(env.tool_names)} tools, built in {built * 1000:.0f} ms"
    )
    log = Table(title="Scripted session")
    for col in ("#", "tool", "ok", "result"):
        log.add_column(col)

    def step(name: str, args: dict) -> dict:
        r = env.call(name, args)
        brief = str(r["data"] if r["success"] else r["error"])
        log.add_row(str(len(log.rows) + 1), name, "yes" if r["success"] else "[red]no[/red]", brief[:90])
        return r

    inbox = step("email__gmail_search_emails", {"query": "is:unread subject:invoice", "maxResults": 5})
    msgs = inbox["data"]["messages"]
    first = msgs[0] if msgs else None
    if first:
        thread = step("email__gmail_read_email", {"messageId": first["id"]})
        sender = thread["data"]["messages"][0]["from"]
        step(
            "email__gmail_modify_email",
            {"messageId": first["id"], "removeLabelIds": ["UNREAD"], "addLabelIds": ["Label_2"]},
        )
        channels = step("chat__slack_user_list_channels", {"channel_name": "general"})["data"]["channels"]
        target = channels[0]["id"] if channels else "CUNKNOWN"
        step(
            "chat__slack_user_post_message",
            {"channel_id": target, "text": f"Invoice from {sender}: {first['subject']}"},
        )
        step(
            "calendar__google_calendar_create_event",
            {
                "summary": "Review invoice",
                "start_datetime": "2026-03-03T11:00:00Z",
                "end_datetime": "2026-03-03T10:00:00Z",
                "attendees": [sender],
            },
        )  # ends before it starts: a business-rule error, and the state is unchanged
        step(
            "calendar__google_calendar_create_event",
            {
                "summary": f"Review: {first['subject']}",
                "start_datetime": "2026-03-03T10:00:00Z",
                "end_datetime": "2026-03-03T10:30:00Z",
                "attendees": [sender],
            },
        )
    console.print(log)
    changes = env.diff()
    console.print(
        f"[bold]{len(changes)} changes[/bold] since the initial state; state hash {env.state_hash()}"
    )
    for c in changes[:12]:
        console.print(f"  {c.op:6} {c.service}:{c.path}")
    t = time.perf_counter()
    env.reset()
    elapsed = time.perf_counter() - t
    console.print(f"reset in {elapsed * 1e6:.0f} µs; changes left after reset: {len(env.diff())}")
