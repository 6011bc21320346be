"""Airtable moves: an event registration reveals its session date; registering an attendee."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _table(g: Gen) -> tuple[dict, dict]:
    svc = g.svc("bases")
    base = next(b for b in svc.bases.all() if b["name"] == "Events")
    table = next(t for t in svc.tables.find(base_id=base["id"]) if t["name"] == "Attendees")
    return base, table


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("bases")
    base, table = _table(g)
    fid = {f["name"]: f["id"] for f in svc.fields.find(table_id=table["id"])}
    svc.records.create(
        {
            "table_id": table["id"],
            "createdTime": g.env.clock.iso(),
            "fields": {
                fid["Name"]: key.label,
                fid["Email"]: key.value,
                fid["Status"]: "Cancelled" if decoy else "Registered",
                fid["Session"]: value.value,
            },
        },
        id="rec" + svc.next_id("", 14),
    )
    return [
        (
            "bases__airtable_list_records",
            {
                "base_id": base["id"],
                "table_id": "Attendees",
                "filter_by_formula": f"AND({{Email}} = '{key.value}', {{Status}} = 'Registered')",
            },
        )
    ]


def _register(g: Gen, fact: Fact) -> WriteStep:
    base, table = _table(g)
    fid = {f["name"]: f["id"] for f in g.svc("bases").fields.find(table_id=table["id"])}
    return WriteStep(
        calls=[
            (
                "bases__airtable_create_records",
                {
                    "base_id": base["id"],
                    "table_id": "Attendees",
                    "records": [
                        {"fields": {"Email": fact.value, "Name": fact.label, "Status": "Registered"}}
                    ],
                },
            )
        ],
        checks=[
            (
                "that contact is registered for the summit",
                {
                    "predicate": "record_exists",
                    "service": "bases",
                    "table": "records",
                    "new": True,
                    "where": {f"fields.{fid['Email']}": fact.value, f"fields.{fid['Status']}": "Registered"},
                },
            )
        ],
        allow=[{"service": "bases", "table": "records"}],
        phrase="register that {it} for the customer summit (Airtable 'Events' base, 'Attendees' table, status Registered)",
    )


MOVES = [
    Relay(
        "bases",
        "registration_session",
        ("person",),
        ("date",),
        "their registered summit session date",
        "in Airtable",
        _plant,
    ),
    Write("bases", "register_attendee", ("person",), None, _register),
]
