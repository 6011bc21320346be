"""SQL moves: an open invoice row that reveals an amount; recording an insight."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("sql")
    cust = next((c for c in g.company.customers if c.name == key.value), None)
    if cust is None:
        raise ValueError("sql relay needs a known customer")
    amount = value.value
    svc.db.set_authorizer(None)
    oid = svc.db.execute("SELECT COALESCE(MAX(id), 10000) + 1 FROM orders").fetchone()[0]
    svc.db.execute(
        "INSERT INTO orders VALUES (?,?,?,?,?)",
        (oid, cust.id, "2026-02-27", "delivered" if decoy else "shipped", float(amount)),
    )
    svc.db.execute(
        "INSERT INTO invoices VALUES (?,?,?,?,?)",
        (f"INV-{oid + 10000}", oid, float(amount), "paid" if decoy else "open", "2026-03-29"),
    )
    from compoworld.services.sql.service import _authorizer

    svc.db.set_authorizer(_authorizer)
    svc._dirty, svc._hash = True, None
    return [
        (
            "sql__read_query",
            {
                "query": "SELECT i.id, i.amount, i.status FROM invoices i JOIN orders o ON o.id = i.order_id "
                f"JOIN customers c ON c.id = o.customer_id WHERE c.name = '{cust.name}' AND i.status = 'open'"
            },
        )
    ]


def _insight(g: Gen, fact: Fact) -> WriteStep:
    return WriteStep(
        calls=[("sql__append_insight", {"insight": f"Follow-up needed: {fact.value}"})],
        checks=[
            (
                "the insight memo records it",
                {
                    "predicate": "record_exists",
                    "service": "sql",
                    "table": "insights",
                    "new": True,
                    "where": {"text": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "sql", "table": "insights"}],
        phrase="record that {it} as a business insight in the SQL memo",
    )


MOVES = [
    Relay(
        "sql",
        "open_invoice_amount",
        ("customer",),
        ("amount",),
        "the customer's open invoice (status 'open')",
        "in the SQL database",
        _plant,
    ),
    Write("sql", "append_insight", ("any",), None, _insight),
]
