"""Deterministic Meet history: past and upcoming meetings with colleagues and customers."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def seed_meet(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    svc.store.put(META, "owner", company.me.email)
    people = [p for p in company.people if p.id != company.me.id]
    for _ in range(ctx.scale(10, 60, 200)):
        start = (now + timedelta(days=rng.randrange(-20, 20))).replace(
            hour=rng.choice((9, 10, 11, 14, 15, 16)), minute=rng.choice((0, 30))
        )
        guests = rng.sample(people, rng.randrange(1, 5))
        cust = rng.choice(company.customers)
        past = start < now
        space = svc._new_space(format_time(start - timedelta(days=1)))
        svc.meetings.create(
            {
                "summary": rng.choice(
                    (
                        f"Sync with {cust.name}",
                        f"{guests[0].first} / {company.me.first} 1:1",
                        "Sprint review",
                        f"{cust.name} demo",
                        "Hiring debrief",
                    )
                ),
                "start": format_time(start),
                "end": format_time(start + timedelta(minutes=rng.choice((30, 45, 60)))),
                "attendees": [
                    {
                        "email": g.email,
                        "responseStatus": rng.choice(("accepted", "accepted", "declined", "tentative"))
                        if past
                        else "needsAction",
                    }
                    for g in guests
                ],
                "organizer": company.me.email,
                "hangoutLink": space["meetingUri"],
                "space_id": space["id"],
            }
        )
        if past:
            joined = [g for g in guests if rng.random() < 0.8]
            svc.spaces.update(
                space["id"],
                {
                    "participants": [
                        {"email": g.email, "displayName": g.name, "joined": format_time(start)}
                        for g in joined
                    ]
                },
            )
