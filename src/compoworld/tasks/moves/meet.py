"""Meet moves: an upcoming meeting whose description carries a fact; inviting someone to a meeting."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("meet")
    start = (g.env.clock.now() + timedelta(days=g.rng.randrange(1, 6) - (20 if decoy else 0))).replace(
        hour=16, minute=0
    )
    space = svc._new_space(g.env.clock.iso())
    attendees = [{"email": key.value, "responseStatus": "accepted"}] if key.type == "person" else []
    svc.meetings.create(
        {
            "summary": f"Meet: {key_text(key)}",
            "description": text,
            "start": format_time(start),
            "end": format_time(start + timedelta(minutes=30)),
            "attendees": attendees,
            "organizer": g.company.me.email,
            "hangoutLink": space["meetingUri"],
            "space_id": space["id"],
        }
    )
    return [("meet__google_meet_list_meetings", {"max_results": 100})]


def _invite(g: Gen, fact: Fact) -> WriteStep:
    day = (g.env.clock.now() + timedelta(days=g.rng.randrange(2, 9))).date().isoformat()
    start, end = f"{day}T13:00:00Z", f"{day}T13:30:00Z"
    return WriteStep(
        calls=[
            (
                "meet__google_meet_create_meet",
                {"summary": "Intro call", "start_time": start, "end_time": end, "attendees": [fact.value]},
            )
        ],
        checks=[
            (
                "a Meet call with that contact is scheduled",
                {
                    "predicate": "event_scheduled",
                    "service": "meet",
                    "attendees": [fact.value],
                    "start": start,
                },
            )
        ],
        allow=[{"service": "meet"}],
        phrase=f"set up a 30-minute Google Meet 'Intro call' with that {{it}} on {day} at 13:00 UTC",
    )


MOVES = [
    Relay(
        "meet",
        "meeting_description",
        ("person", "customer", "code"),
        ("code", "amount", "date", "phone"),
        "the upcoming Google Meet",
        "in Google Meet",
        _plant,
    ),
    Write("meet", "invite_to_meet", ("person",), None, _invite),
]
