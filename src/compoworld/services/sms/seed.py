"""Deterministic SMS and call history with the shared company's customers and colleagues."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext


def e164(phone: str) -> str:
    return "+" + "".join(ch for ch in phone if ch.isdigit())


def seed_sms(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    ours = [
        svc.numbers.create(
            {"phone_number": n, "friendly_name": f, "capabilities": ["sms", "voice"]}, id=svc._sid("PN")
        )
        for n, f in (("+15550001000", "Main line"), ("+15550001001", "Support line"))
    ]
    people = [p for p in company.people if p.id != company.me.id]
    texts = (
        "Running 5 min late for our call",
        "Can you confirm the delivery date?",
        "Thanks, received the invoice",
        "Please call me back when you can",
        "Order arrived, all good",
        "Is the demo still on for tomorrow?",
    )
    for _ in range(ctx.scale(10, 80, 320)):
        p = rng.choice(people)
        line = rng.choice(ours)["phone_number"]
        inbound = rng.random() < 0.5
        body = rng.choice(texts)
        svc.messages.create(
            {
                "to": line if inbound else e164(p.phone),
                "from_": e164(p.phone) if inbound else line,
                "body": body,
                "direction": "inbound" if inbound else "outbound-api",
                "status": "received" if inbound else "delivered",
                "date_sent": format_time(
                    now - timedelta(days=rng.randrange(0, 30), minutes=rng.randrange(1440))
                ),
                "num_segments": 1,
            },
            id=svc._sid("SM"),
        )
    for _ in range(ctx.scale(5, 40, 160)):
        p = rng.choice(people)
        svc.calls.create(
            {
                "to": e164(p.phone),
                "from_": ours[0]["phone_number"],
                "direction": "outbound-api",
                "status": rng.choice(("completed", "completed", "busy", "no-answer")),
                "start_time": format_time(
                    now - timedelta(days=rng.randrange(0, 30), minutes=rng.randrange(1440))
                ),
                "duration": rng.randrange(30, 1800),
            },
            id=svc._sid("CA"),
        )
    opted = rng.choice(company.contacts)
    svc.optouts.create({"date": format_time(now - timedelta(days=10))}, id=e164(opted.phone))
