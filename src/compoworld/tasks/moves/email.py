"""Email moves: a message from someone that carries a fact; sending a fact to someone."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("email")
    me = g.company.me.email
    sender = key.value if key.type == "person" else g.rng.choice(g.company.contacts).email
    topic = g.rng.choice(
        ("Quick update", "Following up", "Details you asked for", "Next steps", "Re: our call")
    )
    subject = f"{topic} ({key.value})" if key.type in ("code", "customer") else topic
    body = f"Hi {g.company.me.first},\n\n{('Regarding ' + key_text(key) + '. ') if key.type != 'person' else ''}{text}\n\nBest"
    mid = svc.next_id("m", 16)
    svc.insert(
        "messages",
        {
            "id": mid,
            "threadId": svc.next_id("t", 16),
            "from": sender,
            "to": [me],
            "cc": [],
            "bcc": [],
            "subject": subject,
            "body": body,
            "htmlBody": None,
            "mimeType": "text/plain",
            "date": g.env.clock.iso() if not decoy else "2026-01-05T10:00:00Z",
            "labelIds": ["INBOX", "UNREAD"],
            "inReplyTo": None,
            "attachments": [],
        },
    )
    query = f"from:{sender}" if key.type == "person" else f'"{key.value}"'
    return [
        ("email__gmail_search_emails", {"query": query, "maxResults": 10}),
        ("email__gmail_read_email", {"messageId": mid}),
    ]


def _send(g: Gen, fact: Fact) -> WriteStep:
    if fact.type == "person":
        subject = g.rng.choice(("Checking in", "Quick question", "Follow-up from our team"))
        return WriteStep(
            calls=[
                (
                    "email__gmail_send_email",
                    {
                        "to": [fact.value],
                        "subject": subject,
                        "body": f"Hi {fact.label.split()[0]}, just following up.",
                    },
                )
            ],
            checks=[
                (
                    f"an email was sent to {fact.value}",
                    {"predicate": "message_sent", "service": "email", "to": fact.value},
                )
            ],
            allow=[{"service": "email", "table": "messages"}],
            phrase=g.rng.choice(
                (
                    "send that {it} a short follow-up email",
                    "email that {it} to follow up",
                    "drop a follow-up email to that {it}",
                )
            ),
        )
    to = g.rng.choice([p for p in g.company.employees if p.id != g.company.me.id])
    return WriteStep(
        calls=[
            (
                "email__gmail_send_email",
                {"to": [to.email], "subject": "As requested", "body": f"Here it is: {fact.value}"},
            )
        ],
        checks=[
            (
                f"{to.name} was emailed the {fact.noun}",
                {"predicate": "message_sent", "service": "email", "to": to.email, "contains": [fact.value]},
            )
        ],
        allow=[{"service": "email", "table": "messages"}],
        phrase=g.rng.choice(
            (
                f"email that {{it}} to {to.name}",
                f"send {to.name} an email with that {{it}}",
                f"forward that {{it}} to {to.name} by email",
            )
        ),
    )


MOVES = [
    Relay(
        "email",
        "email_with_fact",
        ("person", "customer", "code"),
        ("code", "amount", "date", "person", "customer", "phone"),
        "the email",
        "in my inbox",
        _plant,
    ),
    Write("email", "send_email", ("any",), None, _send),
]
