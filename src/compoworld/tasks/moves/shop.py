"""Shopify moves: a customer's latest order that reveals its number or total; drafting an order."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("shop")
    cust = next((c for c in svc.customers.all() if c["email"] == key.value), None) or svc.customers.create(
        {
            "email": key.value,
            "first_name": key.label.split()[0],
            "last_name": key.label.split()[-1],
            "created_at": g.env.clock.iso(),
        }
    )
    prod = svc.products.find(status="active")[0]
    v = prod["variants"][0]
    total = value.value if value.type == "amount" else v["price"]
    name = value.value if value.type == "code" else f"#{svc.next_seq('order_number') + 1000}"
    o = svc.orders.create(
        {
            "name": name,
            "email": key.value,
            "customer_id": cust["id"],
            "total_price": total,
            "financial_status": "paid",
            "line_items": [
                {
                    "id": str(60000000 + svc.next_seq("line")),
                    "variant_id": v["id"],
                    "title": prod["title"],
                    "quantity": 1,
                    "price": total,
                }
            ],
            "cancelled_at": "2026-02-01T10:00:00Z" if decoy else None,
            "created_at": "2026-01-20T10:00:00Z" if decoy else g.env.clock.iso(),
        }
    )
    return [
        ("shop__shopify_list_customers", {"limit": 250}),
        ("shop__shopify_get_customer", {"customer_id": cust["id"]}),
        ("shop__shopify_get_order", {"order_id": o["id"]}),
    ]


def _draft(g: Gen, fact: Fact) -> WriteStep:
    svc = g.svc("shop")
    prod = g.rng.choice(svc.products.find(status="active"))
    v = prod["variants"][0]
    qty = g.rng.randrange(2, 9)
    return WriteStep(
        calls=[
            (
                "shop__shopify_create_draft_order",
                {"line_items": [{"variant_id": v["id"], "quantity": qty}], "email": fact.value},
            )
        ],
        checks=[
            (
                f"a draft order of {qty} x {prod['title']} was made for that contact",
                {
                    "predicate": "record_exists",
                    "service": "shop",
                    "table": "draft_orders",
                    "new": True,
                    "where": {
                        "email": fact.value,
                        "line_items.variant_id": v["id"],
                        "line_items.quantity": qty,
                    },
                },
            )
        ],
        allow=[{"service": "shop", "table": "draft_orders"}, {"service": "shop", "table": "customers"}],
        phrase=f"draft a Shopify order of {qty} x {prod['title']} ({v['title']}) for that {{it}}",
    )


MOVES = [
    Relay(
        "shop",
        "latest_order",
        ("person",),
        ("code", "amount"),
        "their latest (not cancelled) Shopify order",
        "in Shopify",
        _plant,
    ),
    Write("shop", "draft_order", ("person",), None, _draft),
]
