"""CRM moves: a deal whose description carries a fact; logging a follow-up task."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("crm")
    now = g.env.clock.iso() if not decoy else "2025-11-02T09:00:00Z"
    name = f"{key.value} - {g.rng.choice(('expansion', 'renewal', 'pilot', 'upsell'))}"
    svc.objects.create(
        {
            "object_type": "deals",
            "properties": {
                "dealname": name,
                "amount": None,
                "dealstage": "qualifiedtobuy",
                "pipeline": "default",
                "description": text,
            },
            "createdAt": now,
            "updatedAt": now,
        }
    )
    return [
        (
            "crm__hubspot_search_by_property",
            {
                "object_type": "deals",
                "property_name": "dealname",
                "operator": "STARTS_WITH",
                "value": key.value,
                "properties": ["dealname", "description"],
                "limit": 20,
            },
        )
    ]


def _task(g: Gen, fact: Fact) -> WriteStep:
    subject = f"Follow up on {fact.value}"
    return WriteStep(
        calls=[
            (
                "crm__hubspot_create_task",
                {
                    "properties": {
                        "hs_timestamp": g.env.clock.iso(),
                        "hs_task_subject": subject,
                        "hs_task_type": "TODO",
                    }
                },
            )
        ],
        checks=[
            (
                "a HubSpot task mentions it",
                {
                    "predicate": "record_exists",
                    "service": "crm",
                    "table": "objects",
                    "new": True,
                    "where": {"object_type": "tasks", "properties.hs_task_subject": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "crm", "table": "objects"}],
        phrase=g.rng.choice(
            (
                "create a HubSpot to-do task whose subject includes that {it}",
                "log a follow-up task in HubSpot naming that {it}",
            )
        ),
    )


MOVES = [
    Relay(
        "crm",
        "deal_description",
        ("customer",),
        ("code", "amount", "date", "person", "phone"),
        "the open HubSpot deal for that customer",
        "in HubSpot",
        _plant,
    ),
    Write("crm", "create_task", ("any",), None, _task),
]
