"""Deterministic business database drawn from the shared company."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.service import SeedContext
from compoworld.services.sql.state import SCHEMA


def seed_sql(db, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    db.executescript(SCHEMA)
    db.executemany(
        "INSERT INTO customers VALUES (?,?,?,?,?)",
        [(c.id, c.name, c.industry, c.city, c.tier) for c in company.customers],
    )
    db.executemany(
        "INSERT INTO contacts VALUES (?,?,?,?,?)",
        [(p.id, p.company_id, p.name, p.email, p.title) for p in company.contacts],
    )
    db.executemany(
        "INSERT INTO products VALUES (?,?,?,?,?)",
        [(p.id, p.sku, p.name, p.category, p.price) for p in company.products],
    )
    db.executemany(
        "INSERT INTO employees VALUES (?,?,?,?,?,?,?)",
        [(p.id, p.name, p.email, p.team, p.title, p.manager_id, p.location) for p in company.employees],
    )
    orders, items, invoices = [], [], []
    for oid in range(1, ctx.scale(30, 300, 1200) + 1):
        cust = rng.choice(company.customers)
        day = (now - timedelta(days=rng.randrange(1, 365))).date()
        chosen = rng.sample(list(company.products), rng.randrange(1, 4))
        lines = [(oid, p.id, rng.randrange(1, 20), p.price) for p in chosen]
        total = round(sum(q * price for _, _, q, price in lines), 2)
        status = rng.choice(("pending", "shipped", "delivered", "delivered", "cancelled"))
        orders.append((10000 + oid, cust.id, day.isoformat(), status, total))
        items.extend((10000 + oid, pid, q, price) for _, pid, q, price in lines)
        if status != "cancelled":
            due = day + timedelta(days=30)
            inv_status = "paid" if rng.random() < 0.6 else ("overdue" if due < now.date() else "open")
            invoices.append((f"INV-{20000 + oid}", 10000 + oid, total, inv_status, due.isoformat()))
    db.executemany("INSERT INTO orders VALUES (?,?,?,?,?)", orders)
    db.executemany("INSERT INTO order_items VALUES (?,?,?,?)", items)
    db.executemany("INSERT INTO invoices VALUES (?,?,?,?,?)", invoices)
