"""Stripe moves: an open invoice that reveals an amount or invoice number; creating a customer."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("payments")
    cust = next((c for c in svc.customers.all() if c["name"] == key.value), None) or svc.customers.create(
        {"name": key.value, "email": None, "created": int(g.env.clock.epoch())}
    )
    price = svc.prices.all()[0]
    cents = int(round(float(value.value) * 100)) if value.type == "amount" else price["unit_amount"]
    inv = svc.invoices.create(
        {
            "customer": cust["id"],
            "status": "void" if decoy else "open",
            "lines": [
                {
                    "id": svc.next_id("il_", 14),
                    "price": price["id"],
                    "quantity": 1,
                    "amount": cents,
                    "description": text,
                }
            ],
            "total": cents,
            "amount_due": 0 if decoy else cents,
            "number": value.value
            if value.type == "code"
            else f"{cust['id'][-6:].upper()}-{svc.next_seq('invno'):04d}",
            "due_date": "2026-03-30",
            "created": int(g.env.clock.epoch()),
        }
    )
    return [
        ("payments__list_customers", {"limit": 100}),
        ("payments__list_invoices", {"customer": cust["id"]}),
        ("payments__retrieve_invoice", {"invoice": inv["id"]}),
    ]


def _customer(g: Gen, fact: Fact) -> WriteStep:
    return WriteStep(
        calls=[("payments__create_customer", {"name": fact.value})],
        checks=[
            (
                "a Stripe customer exists for it",
                {
                    "predicate": "record_exists",
                    "service": "payments",
                    "table": "customers",
                    "new": True,
                    "where": {"name": fact.value},
                },
            )
        ],
        allow=[{"service": "payments", "table": "customers"}],
        phrase="create a Stripe customer for that {it}",
    )


MOVES = [
    Relay(
        "payments",
        "open_invoice",
        ("customer",),
        ("amount", "code"),
        "the customer's open Stripe invoice",
        "in Stripe",
        _plant,
    ),
    Write("payments", "create_customer", ("customer",), None, _customer),
]
