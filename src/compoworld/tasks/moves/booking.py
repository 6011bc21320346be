"""Calendly moves: what an invitee wrote when booking carries a fact."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.tasks.moves.base import Fact, Gen, Relay


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("booking")
    et = svc.types.find(active=True)[0]
    start = (g.env.clock.now() + timedelta(days=g.rng.randrange(1, 7))).replace(hour=11, minute=0)
    ev = svc.events.create(
        {
            "name": et["name"],
            "event_type": et["id"],
            "status": "canceled" if decoy else "active",
            "start_time": format_time(start),
            "end_time": format_time(start + timedelta(minutes=et["duration"])),
            "location": "Google Meet",
        }
    )
    svc.invitees.create(
        {
            "event": ev["id"],
            "name": key.label,
            "email": key.value,
            "status": "canceled" if decoy else "active",
            "questions_and_answers": [{"question": "Anything we should know?", "answer": text}],
        }
    )
    return [
        ("booking__calendly_list_events", {"status": "active", "count": 100}),
        ("booking__calendly_list_event_invitees", {"event_uuid": ev["id"]}),
    ]


MOVES = [
    Relay(
        "booking",
        "booking_answer",
        ("person",),
        ("code", "amount", "date", "phone", "customer"),
        "their active Calendly booking (what they wrote when booking)",
        "in Calendly",
        _plant,
    ),
]
