"""SMS moves: a text received from a number carries a fact; texting a number."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("sms")
    line = sorted(svc.numbers.all(), key=lambda n: n["phone_number"])[0]["phone_number"]
    when = g.env.clock.now() - timedelta(days=25 if decoy else 0, minutes=5)
    svc.messages.create(
        {
            "to": line,
            "from_": key.value,
            "body": ("(old) " if decoy else "") + text,
            "direction": "inbound",
            "status": "received",
            "date_sent": format_time(when),
            "num_segments": 1,
        },
        id=svc._sid("SM"),
    )
    return [("sms__list_messages", {"from_number": key.value})]


def _text(g: Gen, fact: Fact) -> WriteStep:
    body = g.rng.choice(
        (
            "Thanks, we got your message and will call you back today.",
            "Confirmed, see you then.",
            "Received, thank you!",
        )
    )
    return WriteStep(
        calls=[("sms__send_sms", {"to": fact.value, "body": body})],
        checks=[
            (
                "a text was sent to that number",
                {
                    "predicate": "message_sent",
                    "service": "sms",
                    "to": fact.value,
                    "contains": [body.split(",")[0]],
                },
            )
        ],
        allow=[{"service": "sms", "table": "messages"}],
        phrase=f'text that {{it}}: "{body}"',
    )


MOVES = [
    Relay(
        "sms",
        "text_from_number",
        ("phone",),
        ("code", "amount", "date", "person", "customer"),
        "the latest text from that number",
        "in SMS",
        _plant,
    ),
    Write("sms", "send_text", ("phone",), None, _text),
]
