"""Mailchimp moves: subscribing a contact to an audience."""

from __future__ import annotations

from compoworld.services.marketing.service import subscriber_hash
from compoworld.tasks.moves.base import Fact, Gen, Write, WriteStep


def _subscribe(g: Gen, fact: Fact) -> WriteStep:
    svc = g.svc("marketing")
    options = [
        a
        for a in sorted(svc.audiences.all(), key=lambda a: a["name"])
        if not svc.members.get(f"{a['id']}:{subscriber_hash(fact.value)}")
    ]
    aud = g.rng.choice(options or svc.audiences.all())
    if not options:
        raise ValueError("the contact is already on every audience")
    return WriteStep(
        calls=[
            (
                "marketing__mailchimp_add_member_to_audience",
                {"list_id": aud["id"], "email_address": fact.value, "tags": ["task"]},
            )
        ],
        checks=[
            (
                f"that contact is on the '{aud['name']}' audience",
                {
                    "predicate": "record_exists",
                    "service": "marketing",
                    "table": "members",
                    "new": True,
                    "where": {"list_id": aud["id"], "email_address": fact.value},
                },
            )
        ],
        allow=[{"service": "marketing", "table": "members"}],
        phrase=f"add that {{it}} to the '{aud['name']}' Mailchimp audience",
    )


MOVES = [Write("marketing", "subscribe", ("person",), None, _subscribe)]
