"""Deterministic calendars for the environment's user and free/busy for colleagues."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META
from compoworld.services._contacts import seed_contacts

TITLES = (
    "{customer} weekly sync",
    "1:1 with {first}",
    "{team} standup",
    "Quarterly review: {customer}",
    "Demo of {product} for {customer}",
    "Interview: {team} candidate",
    "Planning: {product} roadmap",
    "Lunch with {first}",
    "Renewal call: {customer}",
    "Budget review",
)


def seed_calendar(svc, ctx: SeedContext) -> None:
    company, rng = ctx.company, ctx.rng
    me = company.me
    svc.store.put(META, "owner", me.email)
    cals = [
        (me.email, f"{me.name}", True, "owner", False, False),
        (
            "team-" + me.team.lower().replace(" ", "-") + "@group.calendar",
            f"Team {me.team}",
            False,
            "writer",
            False,
            False,
        ),
        ("holidays@group.calendar", "Holidays", False, "reader", False, False),
        ("oncall@group.calendar", "On-call rota", False, "writer", True, False),
        ("old-project@group.calendar", "Old project", False, "owner", False, True),
    ]
    for cid, summary, primary, role, hidden, deleted in cals:
        svc.insert(
            "calendars",
            {
                "id": cid,
                "summary": summary,
                "primary": primary,
                "timeZone": "UTC",
                "accessRole": role,
                "hidden": hidden,
                "deleted": deleted,
            },
        )
    for c in seed_contacts(company, rng):
        svc.insert("contacts", c)
    now = ctx.clock.now().replace(minute=0, second=0)
    colleagues = [p for p in company.employees if p.id != me.id]
    n = ctx.scale(25, 220, 800)
    for _ in range(n):
        day = rng.randrange(-14, 22)
        start = (now + timedelta(days=day)).replace(hour=rng.choice((8, 9, 10, 11, 13, 14, 15, 16)))
        if start.weekday() >= 5:
            start -= timedelta(days=2)
        dur = rng.choice((30, 30, 45, 60, 60, 90))
        cust = rng.choice(company.customers)
        other = rng.choice(colleagues)
        title = rng.choice(TITLES).format(
            customer=cust.name, first=other.first, team=me.team, product=rng.choice(company.products).name
        )
        guests = rng.sample(colleagues, rng.randrange(0, 4))
        if "customer" in title or cust.name in title:
            guests.append(company.person(rng.choice(cust.contact_ids)))
        cal = me.email if rng.random() < 0.85 else cals[1][0]
        svc.insert(
            "events",
            {
                "id": svc.next_id("ev", 16),
                "calendar_id": cal,
                "summary": title,
                "description": "",
                "location": rng.choice(("", "Room 4A", "Zoom", "Cafe", "HQ Boardroom")),
                "start": format_time(start),
                "end": format_time(start + timedelta(minutes=dur)),
                "attendees": [
                    {"email": g.email, "responseStatus": rng.choice(("accepted", "needsAction", "tentative"))}
                    for g in guests
                ],
                "organizer": me.email if rng.random() < 0.6 else other.email,
                "visibility": "default",
                "recurrence": [],
                "hangoutLink": None,
                "status": "confirmed",
            },
        )
    for p in colleagues:
        for _ in range(ctx.scale(2, 6, 10)):
            day = rng.randrange(-3, 14)
            start = (now + timedelta(days=day)).replace(hour=rng.randrange(8, 17))
            svc.insert(
                "busy",
                {
                    "id": svc.next_id("fb", 12),
                    "calendar_id": p.email,
                    "start": format_time(start),
                    "end": format_time(start + timedelta(minutes=rng.choice((30, 60, 120)))),
                },
            )
