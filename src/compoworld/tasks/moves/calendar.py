"""Calendar moves: an upcoming event whose notes carry a fact; scheduling on a date."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("calendar")
    start = (g.env.clock.now() + timedelta(days=g.rng.randrange(1, 8))).replace(
        hour=g.rng.choice((10, 11, 14, 15)), minute=0
    )
    if decoy:
        start -= timedelta(days=21)
    attendees = [{"email": key.value, "responseStatus": "accepted"}] if key.type == "person" else []
    summary = f"Call with {key.label}" if key.type == "person" else f"{key_text(key)} review"
    svc.insert(
        "events",
        {
            "id": svc.next_id("ev", 16),
            "calendar_id": g.company.me.email,
            "summary": summary,
            "description": text,
            "location": "Zoom",
            "start": format_time(start),
            "end": format_time(start + timedelta(minutes=30)),
            "attendees": attendees,
            "organizer": g.company.me.email,
            "visibility": "default",
            "recurrence": [],
            "hangoutLink": None,
            "status": "confirmed",
        },
    )
    lo = g.env.clock.now()
    return [
        (
            "calendar__google_calendar_list_events",
            {
                "min_end_datetime": format_time(lo),
                "max_start_datetime": format_time(lo + timedelta(days=10)),
                "max_results": 200,
            },
        )
    ]


def _schedule(g: Gen, fact: Fact) -> WriteStep:
    guest = g.rng.choice([p for p in g.company.employees if p.id != g.company.me.id])
    hour = g.rng.choice((9, 10, 11, 14, 15, 16))
    start, end = f"{fact.value}T{hour:02d}:00:00Z", f"{fact.value}T{hour:02d}:30:00Z"
    return WriteStep(
        calls=[
            (
                "calendar__google_calendar_create_event",
                {
                    "summary": "Planning sync",
                    "start_datetime": start,
                    "end_datetime": end,
                    "attendees": [guest.email],
                },
            )
        ],
        checks=[
            (
                f"an event with {guest.name} is on the calendar on that date",
                {
                    "predicate": "event_scheduled",
                    "service": "calendar",
                    "attendees": [guest.email],
                    "date": fact.value,
                },
            )
        ],
        allow=[{"service": "calendar", "table": "events"}],
        phrase=g.rng.choice(
            (
                f"book a 30-minute meeting with {guest.name} at {hour:02d}:00 UTC on that {{it}}",
                f"put a half-hour sync with {guest.name} on my calendar at {hour:02d}:00 UTC that {{it}}",
            )
        ),
    )


MOVES = [
    Relay(
        "calendar",
        "event_notes",
        ("person", "customer", "code"),
        ("code", "amount", "person", "phone", "customer"),
        "the upcoming calendar event",
        "on my calendar",
        _plant,
    ),
    Write("calendar", "schedule_on_date", ("date",), None, _schedule),
]
