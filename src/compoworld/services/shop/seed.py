"""Deterministic store: the company's hardware and add-ons sold to customers' buyers."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext


def seed_shop(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    t0 = format_time(now - timedelta(days=200))
    locs = [
        svc.locations.create({"name": n, "city": c})
        for n, c in (("Main warehouse", "Rotterdam"), ("East depot", "Newark"), ("Retail store", "London"))
    ]
    variants = []
    for p in company.products:
        prod_id = svc.products.new_id()
        vs = []
        editions = (("Standard", 1.0), ("Pro", 1.5)) if p.category == "Hardware" else (("Default", 1.0),)
        for title, mult in editions:
            vid = str(40000000 + svc.next_seq("variant"))
            inv = str(50000000 + svc.next_seq("invitem"))
            sku = f"{p.sku}-{title[:3].upper()}"
            vs.append(
                {
                    "id": vid,
                    "title": title,
                    "price": f"{p.price * mult:.2f}",
                    "sku": sku,
                    "inventory_item_id": inv,
                }
            )
            svc.inventory.create(
                {"sku": sku, "variant_id": vid, "levels": {loc["id"]: rng.randrange(0, 60) for loc in locs}},
                id=inv,
            )
        prod = svc.products.create(
            {
                "title": p.name,
                "body_html": f"<p>{p.name} by {company.name}</p>",
                "vendor": company.name,
                "product_type": p.category,
                "tags": p.category.lower(),
                "variants": vs,
                "status": "active" if rng.random() < 0.9 else "draft",
                "created_at": t0,
                "updated_at": t0,
            },
            id=prod_id,
        )
        variants += [(prod, v) for v in vs]
    for cat in ("Hardware", "Software", "Services"):
        svc.collections.create(
            {"title": cat, "product_ids": [p["id"] for p in svc.products.all() if p["product_type"] == cat]}
        )
    customers = []
    for person in company.contacts[: ctx.scale(8, 60, 240)]:
        customers.append(
            svc.customers.create(
                {
                    "email": person.email,
                    "first_name": person.first,
                    "last_name": person.last,
                    "created_at": t0,
                }
            )
        )
    for _ in range(ctx.scale(15, 120, 480)):
        c = rng.choice(customers)
        lines = []
        for prod, v in rng.sample(variants, rng.randrange(1, 3)):
            q = rng.randrange(1, 6)
            lines.append(
                {
                    "id": str(60000000 + svc.next_seq("line")),
                    "variant_id": v["id"],
                    "title": f"{prod['title']} - {v['title']}",
                    "quantity": q,
                    "price": v["price"],
                }
            )
        total = sum(float(x["price"]) * x["quantity"] for x in lines)
        created = now - timedelta(days=rng.randrange(0, 90), hours=rng.randrange(24))
        state = rng.choice(("open", "open", "fulfilled", "fulfilled", "cancelled"))
        if state == "fulfilled":
            lines = [{**x, "fulfilled_quantity": x["quantity"]} for x in lines]
        n = svc.next_seq("order_number") + 1000
        order = svc.orders.create(
            {
                "name": f"#{n}",
                "email": c["email"],
                "customer_id": c["id"],
                "line_items": lines,
                "total_price": f"{total:.2f}",
                "financial_status": "pending" if state == "open" and rng.random() < 0.3 else "paid",
                "fulfillment_status": "fulfilled" if state == "fulfilled" else None,
                "cancelled_at": format_time(created + timedelta(days=1)) if state == "cancelled" else None,
                "closed_at": format_time(created + timedelta(days=3)) if state == "fulfilled" else None,
                "created_at": format_time(created),
            }
        )
        if state != "cancelled":
            svc.customers.update(
                c["id"],
                {
                    "orders_count": c["orders_count"] + 1,
                    "total_spent": f"{float(c['total_spent']) + total:.2f}",
                },
            )
            c.update(svc.customers.get(c["id"]))
        if state == "fulfilled":
            svc.fulfillments.create(
                {
                    "order_id": order["id"],
                    "location_id": locs[0]["id"],
                    "line_items": [{"id": x["id"], "quantity": x["quantity"]} for x in lines],
                    "tracking_company": "UPS",
                    "tracking_number": f"1Z{svc.next_seq('track'):010d}",
                    "created_at": format_time(created + timedelta(days=2)),
                }
            )
    svc.rules.create(
        {
            "title": "Welcome 10%",
            "value_type": "percentage",
            "value": "-10.0",
            "target_type": "line_item",
            "target_selection": "all",
            "allocation_method": "across",
            "starts_at": t0,
            "once_per_customer": True,
        }
    )
