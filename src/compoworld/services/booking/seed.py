"""Deterministic Calendly: event types the user offers and the meetings customers booked."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def seed_booking(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    me = company.me
    svc.store.put(
        META,
        "user",
        {
            "name": me.name,
            "email": me.email,
            "slug": me.email.split("@")[0].replace(".", "-"),
            "timezone": me.timezone,
        },
    )
    types = [
        svc.types.create({"name": n, "slug": n.lower().replace(" ", "-"), "duration": d, "active": a})
        for n, d, a in (
            ("Intro call", 15, True),
            ("Product demo", 30, True),
            ("Quarterly review", 60, True),
            ("Office hours", 30, False),
        )
    ]
    days = ("monday", "tuesday", "wednesday", "thursday", "friday")
    svc.schedules.create(
        {
            "name": "Working hours",
            "default": True,
            "timezone": me.timezone,
            "rules": [{"type": "wday", "wday": d, "from": "09:00", "to": "17:00"} for d in days],
        }
    )
    svc.schedules.create(
        {
            "name": "Mornings only",
            "default": False,
            "timezone": me.timezone,
            "rules": [{"type": "wday", "wday": d, "from": "08:00", "to": "12:00"} for d in days[:3]],
        }
    )
    for _ in range(ctx.scale(6, 40, 160)):
        et = rng.choice(types[:3])
        start = (now + timedelta(days=rng.randrange(-30, 30))).replace(
            hour=rng.randrange(9, 17), minute=rng.choice((0, 30))
        )
        status = "canceled" if rng.random() < 0.15 else "active"
        ev = svc.events.create(
            {
                "name": et["name"],
                "event_type": et["id"],
                "status": status,
                "start_time": format_time(start),
                "end_time": format_time(start + timedelta(minutes=et["duration"])),
                "location": "Google Meet",
                "cancel_reason": "Customer rescheduled" if status == "canceled" else None,
            }
        )
        cust = rng.choice(company.customers)
        p = company.person(rng.choice(cust.contact_ids))
        svc.invitees.create(
            {
                "event": ev["id"],
                "name": p.name,
                "email": p.email,
                "status": status,
                "questions_and_answers": [
                    {
                        "question": "What would you like to discuss?",
                        "answer": f"{rng.choice(company.products).name} for {cust.name}",
                    }
                ],
            }
        )
