"""BambooHR moves: an employee's upcoming time off reveals a date; booking a day off on a date."""

from __future__ import annotations

from datetime import date, timedelta

from compoworld.services.hr.seed import emp_id
from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _employee(g: Gen, key: Fact) -> bool:
    return key.type == "person" and any(
        p.email == key.value for p in g.company.employees if p.id != g.company.me.id
    )


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("hr")
    p = next(p for p in g.company.employees if p.email == key.value)
    eid = emp_id(p.id)
    day = date.fromisoformat(value.value)
    svc.requests.create(
        {
            "employee_id": eid,
            "type_id": "77",
            "start": day.isoformat(),
            "end": (day + timedelta(days=1)).isoformat(),
            "amount": 2.0,
            "status": "denied" if decoy else "approved",
            "notes": "",
            "created": g.env.clock.iso(),
        },
        id=str(1000 + svc.next_seq("request")),
    )
    return [
        ("hr__bamboohr_get_employee_directory", {"response_format": "json"}),
        (
            "hr__bamboohr_get_time_off_requests",
            {"employee_id": eid, "status": "approved", "response_format": "json"},
        ),
    ]


def _day_off(g: Gen, fact: Fact) -> WriteStep:
    me = emp_id(g.company.me.id)
    if g.svc("hr").requests.find(
        lambda r: r["start"] <= fact.value <= r["end"] and r["status"] in ("requested", "approved"),
        employee_id=me,
    ):
        raise ValueError(f"I already have time off on {fact.value}")
    return WriteStep(
        calls=[
            (
                "hr__bamboohr_create_time_off_request",
                {
                    "employee_id": "me",
                    "start_date": fact.value,
                    "end_date": fact.value,
                    "time_off_type_id": "79",
                    "amount": 8,
                    "response_format": "json",
                },
            )
        ],
        checks=[
            (
                "a personal-time request for that day exists",
                {
                    "predicate": "record_exists",
                    "service": "hr",
                    "table": "time_off_requests",
                    "new": True,
                    "where": {"start": fact.value, "type_id": "79"},
                },
            )
        ],
        allow=[{"service": "hr", "table": "time_off_requests"}],
        phrase="request 8 hours of personal time off for me in BambooHR on that {it}",
    )


MOVES = [
    Relay(
        "hr",
        "approved_time_off",
        ("person",),
        ("date",),
        "their approved time off starting date",
        "in BambooHR",
        _plant,
        accepts=_employee,
    ),
    Write("hr", "request_day_off", ("date",), None, _day_off),
]
