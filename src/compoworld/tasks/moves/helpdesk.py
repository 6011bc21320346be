"""Helpdesk moves: a ticket whose description carries a fact; opening a ticket for a contact."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("helpdesk")
    email = key.value if key.type == "person" else g.rng.choice(g.company.contacts).email
    requester = svc.contacts.find(lambda c: (c["email"] or "") == email)
    rid = (
        requester[0]["id"]
        if requester
        else svc.contacts.create(
            {
                "name": key.label,
                "email": email,
                "created_at": g.env.clock.iso(),
                "updated_at": g.env.clock.iso(),
            }
        )["id"]
    )
    now = g.env.clock.iso()
    subject = (
        f"Question about {key_text(key)}"
        if key.type != "person"
        else g.rng.choice(("Account question", "Need help", "Follow-up"))
    )
    t = svc.tickets.create(
        {
            "subject": subject,
            "description": f"<p>{text}</p>",
            "requester_id": rid,
            "status": 5 if decoy else 2,
            "priority": 2,
            "source": 1,
            "created_at": now,
            "updated_at": now,
        }
    )
    if key.type == "person":
        return [
            ("helpdesk__freshdesk_list_tickets", {"email": email, "status": 2}),
            ("helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": t["id"]}),
        ]
    return [
        ("helpdesk__freshdesk_filter_tickets", {"query": "status:2"}),
        ("helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": t["id"]}),
    ]


def _open(g: Gen, fact: Fact) -> WriteStep:
    subject = g.rng.choice(("Onboarding call request", "Access request", "Billing question"))
    known = g.svc("helpdesk").contacts.find(lambda c: (c["email"] or "").lower() == fact.value.lower())
    if known:  # the ticket must name that very contact as requester
        checks = [
            (
                f"a ticket '{subject}' was opened for that contact",
                {
                    "predicate": "record_exists",
                    "service": "helpdesk",
                    "table": "tickets",
                    "new": True,
                    "where": {"subject": subject, "requester_id": known[0]["id"]},
                },
            )
        ]
    else:  # a new contact is created for the requester
        checks = [
            (
                f"a ticket '{subject}' was opened",
                {
                    "predicate": "record_exists",
                    "service": "helpdesk",
                    "table": "tickets",
                    "new": True,
                    "where": {"subject": subject},
                },
            ),
            (
                "that contact was added as the requester",
                {
                    "predicate": "record_exists",
                    "service": "helpdesk",
                    "table": "contacts",
                    "new": True,
                    "where": {"email": fact.value},
                },
            ),
        ]
    return WriteStep(
        calls=[
            (
                "helpdesk__freshdesk_create_ticket",
                {"subject": subject, "description": "<p>Opened on their behalf.</p>", "email": fact.value},
            )
        ],
        checks=checks,
        allow=[{"service": "helpdesk", "table": "tickets"}, {"service": "helpdesk", "table": "contacts"}],
        phrase=g.rng.choice(
            (
                f"open a Freshdesk ticket titled '{subject}' for that {{it}}",
                f"create a support ticket '{subject}' with that {{it}} as requester",
            )
        ),
        extract=lambda r: str(r["id"]),
    )


MOVES = [
    Relay(
        "helpdesk",
        "ticket_description",
        ("person", "customer", "code"),
        ("code", "amount", "date", "person", "phone"),
        "the open support ticket",
        "in Freshdesk",
        _plant,
    ),
    Write("helpdesk", "open_ticket", ("person",), "code", _open),
]
