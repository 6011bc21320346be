"""Deterministic Stripe account: the company sells its products to the shared customers."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.service import SeedContext


def seed_payments(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    base = int(now.timestamp())
    prices = []
    for p in company.products:
        prod = svc.products.create(
            {"name": p.name, "description": f"{p.category}: {p.name}", "created": base - 300 * 86400}
        )
        prices.append(
            svc.prices.create(
                {
                    "product": prod["id"],
                    "unit_amount": int(round(p.price * 100)),
                    "currency": "usd",
                    "recurring": "month" if p.category == "Software" else None,
                }
            )
        )
    for i, (name, pct, off, dur) in enumerate(
        (
            ("Welcome 10%", 10.0, None, "once"),
            ("Loyalty", 15.0, None, "forever"),
            ("Spring $50", None, 5000, "once"),
        )
    ):
        svc.coupons.create(
            {
                "name": name,
                "percent_off": pct,
                "amount_off": off,
                "currency": "usd" if off else None,
                "duration": dur,
            },
            id=f"COUPON{i + 1}",
        )
    customers = []
    for cust in company.customers:
        contact = company.person(cust.contact_ids[0])
        customers.append(
            svc.customers.create(
                {"name": cust.name, "email": contact.email, "created": base - rng.randrange(30, 400) * 86400}
            )
        )
    for _ in range(ctx.scale(12, 90, 360)):
        c = rng.choice(customers)
        created = base - rng.randrange(1, 90) * 86400
        status = rng.choice(("paid", "paid", "paid", "open", "open", "draft", "void"))
        lines = []
        for price in rng.sample(prices, rng.randrange(1, 3)):
            q = rng.randrange(1, 10)
            lines.append(
                {
                    "id": svc.next_id("il_", 14),
                    "price": price["id"],
                    "quantity": q,
                    "amount": q * price["unit_amount"],
                    "description": svc.products.get(price["product"])["name"],
                }
            )
        total = sum(x["amount"] for x in lines)
        due = (now - timedelta(days=(base - created) // 86400) + timedelta(days=30)).date().isoformat()
        inv = svc.invoices.create(
            {
                "customer": c["id"],
                "status": status,
                "lines": lines,
                "total": total,
                "number": None
                if status == "draft"
                else f"{c['id'][-6:].upper()}-{svc.next_seq('invno'):04d}",
                "amount_paid": total if status == "paid" else 0,
                "amount_due": 0 if status in ("paid", "void") else total,
                "due_date": None if status == "draft" else due,
                "created": created,
            }
        )
        if status == "paid":
            pi = svc.intents.create(
                {
                    "customer": c["id"],
                    "amount": total,
                    "currency": "usd",
                    "status": "succeeded",
                    "invoice": inv["id"],
                    "created": created + 3600,
                }
            )
            svc.invoices.update(inv["id"], {"payment_intent": pi["id"]})
            if rng.random() < 0.04:
                svc.disputes.create(
                    {
                        "charge": "ch_" + pi["id"][3:],
                        "payment_intent": pi["id"],
                        "amount": total,
                        "currency": "usd",
                        "reason": rng.choice(("fraudulent", "product_not_received", "duplicate")),
                        "status": "needs_response",
                    }
                )
    for c in rng.sample(customers, min(len(customers), ctx.scale(3, 12, 40))):
        price = rng.choice([p for p in prices if p["recurring"]] or prices)
        svc.subs.create(
            {
                "customer": c["id"],
                "status": rng.choice(("active", "active", "past_due", "trialing")),
                "items": [
                    {"id": svc.next_id("si_", 14), "price": price["id"], "quantity": rng.randrange(1, 25)}
                ],
                "current_period_end": (now + timedelta(days=rng.randrange(1, 30))).date().isoformat(),
            }
        )
