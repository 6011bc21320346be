"""Finance workflows: Stripe invoices and charges reconciled against Shopify orders, the books and the AR sheet."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.core.company import Customer, Person
from compoworld.tasks.families._common import ago, hd_contact, hd_ticket, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family


# ---- planting helpers (this module's own) ---------------------------------------------------
def stripe_customer(b: Builder, cust: Customer) -> dict[str, Any]:
    hits = b.svc("payments").customers.find(lambda c: c["name"] == cust.name)
    if not hits:
        raise PlantError(f"no Stripe customer {cust.name}")
    return hits[0]


def stripe_price(b: Builder, product_name: str) -> dict[str, Any]:
    svc = b.svc("payments")
    prod = next((p for p in svc.products.all() if p["name"] == product_name), None)
    if prod is None:
        raise PlantError(f"no Stripe product {product_name}")
    return next(p for p in svc.prices.all() if p["product"] == prod["id"])


def shop_customer(b: Builder, p: Person) -> dict[str, Any]:
    svc = b.svc("shop")
    hits = svc.customers.find(lambda c: c["email"].lower() == p.email.lower())
    if hits:
        return hits[0]
    return svc.customers.create(
        {"email": p.email, "first_name": p.first, "last_name": p.last, "created_at": ago(b, days=200)}
    )


def shop_variant(b: Builder, product_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The product and its base variant (the one priced as in Stripe)."""
    for prod in b.svc("shop").products.all():
        if prod["title"] == product_name:
            return prod, prod["variants"][0]
    raise PlantError(f"no shop product {product_name}")


def shop_order(
    b: Builder,
    sc: dict[str, Any],
    items: list[tuple[str, int]],
    days_ago: float,
    fulfilled: bool = True,
    tracking: str | None = None,
) -> dict[str, Any]:
    svc = b.svc("shop")
    lines, total = [], 0.0
    for name, q in items:
        prod, v = shop_variant(b, name)
        lines.append(
            {
                "id": str(60000000 + svc.next_seq("line")),
                "variant_id": v["id"],
                "title": f"{prod['title']} - {v['title']}",
                "quantity": q,
                "price": v["price"],
                "fulfilled_quantity": q if fulfilled else 0,
            }
        )
        total += float(v["price"]) * q
    created = b.now - timedelta(days=days_ago)
    order = svc.orders.create(
        {
            "name": f"#{svc.next_seq('order_number') + 1000}",
            "email": sc["email"],
            "customer_id": sc["id"],
            "line_items": lines,
            "total_price": f"{total:.2f}",
            "financial_status": "paid",
            "fulfillment_status": "fulfilled" if fulfilled else None,
            "closed_at": format_time(created + timedelta(days=3)) if fulfilled else None,
            "created_at": format_time(created),
        }
    )
    cur = svc.customers.get(sc["id"])
    svc.customers.update(
        sc["id"],
        {"orders_count": cur["orders_count"] + 1, "total_spent": f"{float(cur['total_spent']) + total:.2f}"},
    )
    if fulfilled:
        loc = sorted(svc.locations.all(), key=lambda x: x["id"])[0]["id"]
        svc.fulfillments.create(
            {
                "order_id": order["id"],
                "location_id": loc,
                "line_items": [{"id": x["id"], "quantity": x["quantity"]} for x in lines],
                "tracking_company": b.pick(("UPS", "FedEx", "DHL")),
                "tracking_number": tracking or f"1Z{b.rng.randrange(10**9, 10**10)}",
                "created_at": format_time(created + timedelta(days=2)),
            }
        )
    return order


def stripe_invoice(
    b: Builder,
    sc: dict[str, Any],
    items: list[tuple[str, int]],
    status: str,
    days_ago: float,
    memo: str = "",
    due_in: float = 30,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An invoice (lines priced from Stripe's prices) and, if paid, its payment intent."""
    svc = b.svc("payments")
    lines = []
    for name, q in items:
        price = stripe_price(b, name)
        lines.append(
            {
                "id": svc.next_id("il_", 14),
                "price": price["id"],
                "quantity": q,
                "amount": q * price["unit_amount"],
                "description": f"{name}{memo}",
            }
        )
    total = sum(x["amount"] for x in lines)
    created = int((b.now - timedelta(days=days_ago)).timestamp())
    due = (b.now - timedelta(days=days_ago) + timedelta(days=due_in)).date().isoformat()
    inv = svc.invoices.create(
        {
            "customer": sc["id"],
            "status": status,
            "lines": lines,
            "total": total,
            "number": None if status == "draft" else f"{sc['id'][-6:].upper()}-{svc.next_seq('invno'):04d}",
            "amount_paid": total if status == "paid" else 0,
            "amount_due": 0 if status in ("paid", "void") else total,
            "due_date": None if status == "draft" else due,
            "created": created,
        }
    )
    pi = None
    if status == "paid":
        pi = svc.intents.create(
            {
                "customer": sc["id"],
                "amount": total,
                "currency": "usd",
                "status": "succeeded",
                "invoice": inv["id"],
                "created": created + 3600,
            }
        )
        inv = svc.invoices.update(inv["id"], {"payment_intent": pi["id"]})
    return inv, pi


def _products(b: Builder, where=lambda p: True) -> list[str]:
    names = {p["title"] for p in b.svc("shop").products.all() if p["status"] == "active"}
    return [p.name for p in b.company.products if p.name in names and where(p)]


def _money(cents: int) -> str:
    return f"{cents / 100:.2f}"


def _find_customer(b: Builder, data: Any, email: str) -> str:
    return next(c["id"] for c in rows(data) if (c.get("email") or "").lower() == email.lower())


# ---- families -------------------------------------------------------------------------------
@family("finance.refund_double_billed_line", "finance", ("helpdesk", "shop", "payments"))
def refund_double_billed_line(b: Builder) -> None:
    """A customer says they were billed more than their Shopify order: reconcile the Stripe invoice and refund the extra."""
    cust = b.customer()
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    sc = shop_customer(b, person)
    stc = stripe_customer(b, cust)
    if (stc.get("email") or "").lower() != person.email.lower():
        raise PlantError("Stripe billing email is not the first contact")
    cheap = _products(b, lambda p: p.price < 1000)
    dup, other = b.pick(cheap, 2)
    extra = b.pick([n for n in _products(b) if n not in (dup, other)])
    q_other = b.rng.randrange(2, 5)
    order = shop_order(b, sc, [(other, q_other), (dup, 1)], days_ago=12)
    older = shop_order(b, sc, [(extra, 1)], days_ago=40)
    newer = shop_order(b, sc, [(other, 1), (extra, 1)], days_ago=5)
    memo = lambda o: f" (Shopify order {o['name']})"  # noqa: E731
    inv, pi = stripe_invoice(
        b, stc, [(other, q_other), (dup, 1), (dup, 1)], "paid", 11, f" (order {order['name']})"
    )
    inv_old, pi_old = stripe_invoice(b, stc, [(extra, 1)], "paid", 39, memo(older))
    inv_new, pi_new = stripe_invoice(b, stc, [(other, 1), (extra, 1)], "paid", 4, memo(newer))
    subject = b.say(
        "Charged more than our order", "Invoice does not match our order", "Overcharged on last order"
    )
    old_t = hd_ticket(
        b,
        contact,
        "Question about invoice",
        f"Can you resend the invoice for order {older['name']}?",
        status=5,
        days_ago=35,
    )
    t = hd_ticket(
        b,
        contact,
        subject,
        f"Hi, we were charged more than the total of our Shopify order {order['name']}. One line seems to be billed twice. "
        "Can you refund the difference?",
        status=2,
        days_ago=1,
    )
    b.begin()
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    cid = next(c["id"] for c in rows(found) if c["email"] == person.email)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid})
    tk = next(x for x in rows(tickets) if x["status"] == 2 and "order" in x["description"].lower())
    assert tk["id"] == t["id"]
    oname = "#" + tk["description"].split("order #", 1)[1].split(".", 1)[0]
    o = b.call("shop__shopify_get_order", {"order_id": oname})
    email = o["email"]
    custs = b.call("payments__list_customers", {"limit": 100, "email": email})
    stc_id = _find_customer(b, custs, email)
    invs = b.call("payments__list_invoices", {"customer": stc_id, "limit": 100})
    match = next(i for i in rows(invs) if any(o["name"] in ln["description"] for ln in i["lines"]))
    assert match["id"] == inv["id"]
    b.decide()
    order_cents = round(float(o["total_price"]) * 100)
    diff = match["total"] - order_cents
    seen: set[str] = set()
    dup_line = next(ln for ln in match["lines"] if (ln["price"] in seen or seen.add(ln["price"])))
    assert diff == dup_line["amount"] > 0
    b.aggregate()
    b.call("payments__create_refund", {"payment_intent": match["payment_intent"], "amount": diff})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tk["id"],
            "body": f"Hi {person.first}, you were right: one line of order {o['name']} was billed twice. "
            f"We have refunded ${_money(diff)} to your card.",
        },
    )
    b.fact(o["name"], _money(diff), inv["id"])
    b.expect_change(
        "payments",
        "payment_intents",
        pi["id"],
        "amount_refunded",
        diff,
        f"{_money(diff)} was refunded on the charge",
    )
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": t["id"], "kind": "reply", "body": {"contains": _money(diff).removesuffix(".00")}},
        "the customer's ticket got a reply with the refunded amount",
    )
    b.keep("payments", "payment_intents", pi_new["id"], "the newer, correct charge was not refunded")
    b.keep("payments", "payment_intents", pi_old["id"], "the older charge was not refunded")
    b.keep("helpdesk", "tickets", old_t["id"], "the old closed ticket was left alone")
    b.trap("recent", "the newer charge for another order, billed correctly", swap={pi["id"]: pi_new["id"]})
    b.trap("stale", "an older paid invoice of the same customer", swap={pi["id"]: pi_old["id"]})
    b.trap("closed", "an old closed ticket from the same person", swap={t["id"]: old_t["id"]})
    ask = b.say(
        f"sort out {person.name}'s overcharge complaint: refund only what Stripe billed above the Shopify order and reply on the ticket",
        f"check {person.name}'s billing complaint ({cust.name}) against their Shopify order, refund the overcharge in Stripe and answer their ticket",
        f"handle {person.name}'s ticket about being overcharged: refund what Stripe took above the Shopify order and let them know",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                f"{person.name} from {cust.name} opened a ticket saying the card charge was higher than their order",
                "Refunds go back on the original charge, only for the amount billed in error",
                "",
            ),
        ),
        hint="Read the open ticket for the order number, get the Shopify order total, find the Stripe invoice of that order, refund the difference on its payment, then reply on the ticket.",
        subtasks=[
            f"Find {person.name}'s open billing ticket in Freshdesk",
            "Look up the Shopify order it names",
            "Find the Stripe invoice of that order and compare totals",
            "Refund the difference on the invoice's payment",
            "Reply on the ticket with the refunded amount",
        ],
    )


def sql_invoice(b: Builder, cust: Customer, amount: float, status: str, due: str, order_day: str) -> str:
    """An order and its invoice in the business database; the invoice id."""
    from compoworld.services.sql.service import _authorizer

    svc = b.svc("sql")
    svc.db.set_authorizer(None)
    try:
        oid = svc.db.execute("SELECT COALESCE(MAX(id), 10000) + 1 FROM orders").fetchone()[0]
        st = "delivered" if status != "open" else "shipped"
        svc.db.execute("INSERT INTO orders VALUES (?,?,?,?,?)", (oid, cust.id, order_day, st, amount))
        iid = f"INV-{oid + 10000}"
        svc.db.execute("INSERT INTO invoices VALUES (?,?,?,?,?)", (iid, oid, amount, status, due))
    finally:
        svc.db.set_authorizer(_authorizer)
    svc._dirty, svc._hash = True, None
    return iid


def new_sheet(b: Builder, title: str, cells: dict[str, Any], days_ago: float) -> str:
    svc = b.svc("sheets")
    return svc.books.create(
        {
            "title": title,
            "sheets": [{"sheetId": 0, "title": "Sheet1", "cells": cells}],
            "modified": ago(b, days=days_ago),
        }
    )["id"]


def _day(b: Builder, n: float) -> str:
    return (b.now + timedelta(days=n)).date().isoformat()


@family("finance.chase_new_overdue", "finance", ("sheets", "sql", "email"))
def chase_new_overdue(b: Builder) -> None:
    """Chase the invoices that went overdue in the last two weeks, skipping payment-plan customers; log it in the tracker."""
    targets = [b.customer(), b.customer()]
    plan = b.customer()
    other = b.customer()
    for c in targets:
        for _ in range(b.rng.randrange(1, 3)):
            sql_invoice(
                b,
                c,
                b.rng.randrange(20, 300) * 50.0,
                "overdue",
                _day(b, -b.rng.randrange(2, 13)),
                _day(b, -40),
            )
    plan_inv = sql_invoice(b, plan, b.rng.randrange(20, 300) * 50.0, "overdue", _day(b, -5), _day(b, -35))
    open_inv = sql_invoice(b, other, b.rng.randrange(20, 300) * 50.0, "open", _day(b, 9), _day(b, -21))
    paid_inv = sql_invoice(b, other, b.rng.randrange(20, 300) * 50.0, "paid", _day(b, -6), _day(b, -36))
    old_inv = sql_invoice(
        b, other, b.rng.randrange(20, 300) * 50.0, "overdue", _day(b, -b.rng.randrange(40, 80)), _day(b, -100)
    )
    cells: dict[str, Any] = {
        "A1": "Customer",
        "B1": "Billing contact",
        "C1": "Payment plan",
        "D1": "Last reminder",
    }
    old_cells: dict[str, Any] = {"A1": "Customer", "B1": "Billing contact", "C1": "Status"}
    row_of: dict[str, int] = {}
    billing: dict[str, Person] = {}
    for r, c in enumerate(b.company.customers, start=2):
        billing[c.name] = b.company.person(c.contact_ids[0])
        row_of[c.name] = r
        cells[f"A{r}"], cells[f"B{r}"] = c.name, billing[c.name].email
        cells[f"C{r}"] = "yes" if c.id == plan.id else "no"
        if c.id == plan.id:
            cells[f"D{r}"] = _day(b, -20)
        stale = b.company.person(c.contact_ids[-1])
        old_cells.update({f"A{r}": c.name, f"B{r}": stale.email, f"C{r}": "chased"})
    sid = new_sheet(b, "Collections tracker 2026", cells, days_ago=3)
    old_sid = new_sheet(b, "Overdue collections tracker 2025", old_cells, days_ago=1)
    b.begin()
    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    s_id = next(x["id"] for x in rows(books) if x["title"] == "Collections tracker 2026")
    assert s_id == sid
    sheet = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": s_id})
    grid = sheet["sheets"][0]["rows"]
    info = {
        r["A"]: (int(k), r.get("B"), str(r.get("C", "")).lower())
        for k, r in grid.items()
        if k != "1" and r.get("A")
    }
    res = b.call(
        "sql__read_query",
        {
            "query": "SELECT i.id, i.amount, i.due_date, c.name AS customer FROM invoices i "
            "JOIN orders o ON o.id = i.order_id JOIN customers c ON c.id = o.customer_id "
            "WHERE i.status = 'overdue' ORDER BY i.due_date DESC"
        },
    )
    lo, today = _day(b, -14), _day(b, 0)
    due: dict[str, list[dict[str, Any]]] = {}
    for r in rows(res):
        if lo <= r["due_date"] < today:
            due.setdefault(r["customer"], []).append(r)
    b.decide(2)
    chase = sorted(n for n in due if info[n][2] != "yes")
    skipped = sorted(n for n in due if info[n][2] == "yes")
    assert set(c.name for c in targets) <= set(chase) and plan.name in skipped
    with b.together():
        for n in chase:
            ids = ", ".join(f"{r['id']} (due {r['due_date']})" for r in due[n])
            b.call(
                "email__gmail_send_email",
                {
                    "to": [info[n][1]],
                    "subject": f"Overdue invoice reminder - {n}",
                    "body": f"Hello, our records show the following invoice(s) for {n} are now overdue: {ids}. "
                    f"Could you arrange payment or let us know when to expect it?\n\nBest regards,\n{b.me.name}",
                },
            )
    with b.together():
        for n in chase:
            b.call(
                "sheets__google_sheets_write_to_cell",
                {"spreadsheet_id": s_id, "column": "D", "row": info[n][0], "value": today},
            )
    for n in chase:
        b.expect_message("email", [info[n][1], billing[n].name], contains=[r["id"] for r in due[n]])
        b.goal(
            f"the tracker's last-reminder date of {n} is today",
            {
                "predicate": "record_exists",
                "service": "sheets",
                "table": "spreadsheets",
                "new": True,
                "where": {"id": sid, f"sheets.cells.D{row_of[n]}": {"at": today}},
            },
        )
    b.aggregate()
    b.fact(*[r["id"] for n in chase for r in due[n]])
    for c in (plan, other):
        if c.name not in chase:
            b.no_message("email", billing[c.name], f"{c.name} was not chased")
    for c in b.company.customers:
        b.no_message(
            "email",
            b.company.person(c.contact_ids[-1]).email,
            "nobody was chased at the archived sheet's stale contact",
        )
    b.guard(
        f"{plan.name}'s row (payment plan) still shows its old reminder date",
        {
            "predicate": "record_exists",
            "service": "sheets",
            "table": "spreadsheets",
            "where": {"id": sid, f"sheets.cells.D{row_of[plan.name]}": _day(b, -20)},
        },
    )
    b.keep("sheets", "spreadsheets", old_sid, "the archived 2025 tracker was left alone")
    first = chase[0]
    b.trap(
        "policy_exception",
        "a customer on a payment plan with a new overdue invoice",
        swap={info[first][1]: billing[plan.name].email},
    )
    b.trap("stale", "the archived tracker with stale contacts", swap={sid: old_sid})
    b.trap(
        "near_duplicate",
        "invoices that are open, paid or overdue for months",
        swap={info[first][1]: billing[other.name].email},
    )
    del plan_inv, open_inv, paid_inv, old_inv
    b.write(
        frame(
            b.rng,
            b.say(
                "chase the invoices that went overdue in the last two weeks and log today's date as the last reminder in the collections tracker",
                "send a payment reminder for every invoice that became overdue in the past 14 days, then update the collections tracker",
                "email reminders for the invoices that turned overdue over the last two weeks and note the reminder date in our collections tracker",
            ),
            context=b.say(
                "Reminders go to the billing contact in the collections tracker",
                "Use the billing contacts from the collections tracker",
            ),
        ),
        hint="Read the 2026 collections tracker in Sheets, query overdue invoices with their due dates and customers in SQL, keep the ones due in the last 14 days of customers not on a payment plan, email each billing contact, then write today's date in their Last reminder cell.",
        subtasks=[
            "Open the Collections tracker 2026 sheet",
            "Query overdue invoices with due date and customer",
            "Keep those due in the last two weeks, not on a payment plan",
            "Email each billing contact with their invoice numbers",
            "Write today's date as the last reminder in the tracker",
        ],
    )


def _billing_contact(b: Builder, cust: Customer) -> tuple[Person, dict[str, Any]]:
    person = b.contact_of(cust)
    stc = stripe_customer(b, cust)
    if (stc.get("email") or "").lower() != person.email.lower():
        raise PlantError("Stripe billing email is not the first contact")
    return person, stc


def _stripe_products(b: Builder) -> list[str]:
    svc = b.svc("payments")
    priced = {p["product"] for p in svc.prices.all() if p.get("active", True)}
    have = {p["name"] for p in svc.products.all() if p["id"] in priced}
    return [p.name for p in b.company.products if p.name in have]


def _line_key(inv: dict[str, Any]) -> tuple:
    return tuple(sorted((ln["price"], ln["quantity"]) for ln in inv["lines"]))


@family("finance.void_duplicate_invoice", "finance", ("helpdesk", "payments"))
def void_duplicate_invoice(b: Builder) -> None:
    """A customer was invoiced twice for the same purchase: void the open duplicate (not the paid original) and reply."""
    cust = b.customer()
    person, stc = _billing_contact(b, cust)
    contact = hd_contact(b, person)
    names = _stripe_products(b)
    a, c, d = b.pick(names, 3)
    qa = b.rng.randrange(2, 5)
    items = [(a, qa), (c, 1)]
    orig, pi = stripe_invoice(b, stc, items, "paid", b.rng.randrange(18, 26))
    dup, _ = stripe_invoice(b, stc, items, "open", b.rng.randrange(12, 17))
    near, _ = stripe_invoice(
        b,
        stc,
        [(a, qa + 1), (c, 1)],
        "open",
        b.rng.randrange(7, 11),
        " (re-order of the same purchase plus one, not a duplicate; customer to pay on Stripe)",
    )
    newer, _ = stripe_invoice(b, stc, [(d, 1)], "open", b.rng.randrange(1, 4))
    old_t = hd_ticket(
        b,
        contact,
        "Duplicate invoice",
        f"We say {d} was invoiced twice: a second invoice for the same purchase. Please void the duplicate invoice "
        "in Stripe (not the one we paid) and reply to let us know on this ticket.",
        status=5,
        days_ago=b.rng.randrange(60, 120),
    )
    t = hd_ticket(
        b,
        contact,
        b.say("Duplicate invoice", "We were billed twice", "Second invoice for the same purchase"),
        f"Hi, we received a second invoice for exactly the same purchase ({qa} x {a} and 1 x {c}). "
        "We already paid the first one. Could you cancel the duplicate?",
        status=2,
        days_ago=1,
    )
    b.begin()
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    hc = next(x for x in rows(found) if x["email"] == person.email)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hc["id"]})
    tk = next(x for x in rows(tickets) if x["status"] == 2)
    assert tk["id"] == t["id"]
    custs = b.call("payments__list_customers", {"limit": 100, "email": hc["email"]})
    st_id = _find_customer(b, custs, hc["email"])
    invs = rows(b.call("payments__list_invoices", {"customer": st_id, "limit": 100}))
    paid = [i for i in invs if i["status"] == "paid"]
    twin = next(i for i in invs if i["status"] == "open" and any(_line_key(i) == _line_key(p) for p in paid))
    assert twin["id"] == dup["id"]
    b.decide(2)
    b.call("payments__void_invoice", {"invoice": twin["id"]})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tk["id"],
            "body": f"Hi {person.first}, sorry about that: invoice {twin['number']} duplicated the one you already paid, "
            "so we have voided it. Nothing more is due for that purchase.",
        },
    )
    b.fact(dup["number"], dup["id"])
    b.expect_change(
        "payments", "invoices", dup["id"], "status", "void", "the open duplicate invoice is voided"
    )
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": t["id"], "kind": "reply", "body": {"contains": dup["number"]}},
        "the ticket got a reply naming the voided invoice",
    )
    b.keep("payments", "invoices", orig["id"], "the paid original stays paid")
    b.keep("payments", "invoices", near["id"], "the open invoice with a different quantity stays open")
    b.keep("payments", "invoices", newer["id"], "the newest open invoice (another purchase) stays open")
    b.keep("helpdesk", "tickets", old_t["id"], "the old closed ticket was left alone")
    b.trap("recent", "the newest open invoice, for another purchase", swap={dup["id"]: newer["id"]})
    b.trap(
        "near_duplicate",
        "an open invoice of the same products with another quantity",
        swap={dup["id"]: near["id"]},
    )
    b.trap("closed", "an old closed ticket about double invoicing", swap={t["id"]: old_t["id"]})
    del pi
    ask = b.say(
        f"void the duplicate Stripe invoice {cust.name} got for one purchase, per {person.name}'s ticket, and let them know on the ticket",
        f"deal with {person.name}'s duplicate-invoice ticket: cancel (void) the duplicate invoice and reply to them",
        f"void the duplicate Stripe invoice {cust.name} complained about in {person.name}'s ticket and answer the ticket",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                f"{person.first} says it is the same purchase twice",
                "",
            ),
        ),
        hint="Read the open ticket, find the customer's invoices in Stripe, find the open invoice with exactly the lines of a paid one, void it, reply on the ticket with its number.",
        subtasks=[
            f"Find {person.name}'s open ticket",
            "List the customer's Stripe invoices",
            "Find the open invoice whose lines match the paid one exactly",
            "Void it",
            "Reply on the ticket naming the voided invoice",
        ],
    )


@family("finance.outstanding_balance_to_sheet", "finance", ("sheets", "payments"))
def outstanding_balance_to_sheet(b: Builder) -> None:
    """Work out what a customer still owes in Stripe (open invoices only), answer it and log it in the AR sheet."""
    cust = b.customer()
    _, stc = _billing_contact(b, cust)
    names = _stripe_products(b)
    opens = []
    for _ in range(b.rng.randrange(2, 4)):
        inv, _ = stripe_invoice(
            b, stc, [(b.pick(names), b.rng.randrange(1, 4))], "open", b.rng.randrange(3, 40)
        )
        opens.append(inv)
    paid, _ = stripe_invoice(b, stc, [(b.pick(names), 2)], "paid", b.rng.randrange(20, 50))
    void, _ = stripe_invoice(b, stc, [(b.pick(names), 1)], "open", b.rng.randrange(10, 30))
    void = b.svc("payments").invoices.update(
        void["id"], {"status": "void", "amount_due": 0, "total": void["total"]}
    )
    draft, _ = stripe_invoice(b, stc, [(b.pick(names), b.rng.randrange(1, 3))], "draft", 0.5)
    total = sum(
        i["amount_due"]
        for i in b.svc("payments").invoices.all()
        if i["customer"] == stc["id"] and i["status"] == "open"
    )
    cells: dict[str, Any] = {"A1": "Customer", "B1": "Outstanding (USD)", "C1": "Checked on"}
    old_cells: dict[str, Any] = {"A1": "Customer", "B1": "Outstanding (USD)"}
    row_of = {}
    for r, c in enumerate(b.company.customers, start=2):
        row_of[c.name] = r
        cells[f"A{r}"], cells[f"B{r}"], cells[f"C{r}"] = c.name, b.rng.randrange(0, 400) * 25, _day(b, -30)
        old_cells[f"A{r}"], old_cells[f"B{r}"] = c.name, b.rng.randrange(0, 400) * 25
    row = row_of[cust.name]
    before = cells[f"B{row}"]
    sid = new_sheet(b, "AR balances", cells, days_ago=4)
    old_sid = new_sheet(b, "Copy of AR balances", old_cells, days_ago=1)
    # last year's closed-out sheet, untouched for months: the live one is not the oldest either
    prior_cells = {
        k: (v if k[0] != "B" or k == "B1" else b.rng.randrange(0, 400) * 25) for k, v in old_cells.items()
    }
    prior_sid = new_sheet(
        b, f"AR balances {b.now.year - 1} (closed)", prior_cells, days_ago=b.rng.randrange(60, 200)
    )
    b.begin()
    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    s_id = next(x["id"] for x in rows(books) if x["title"] == "AR balances")
    assert s_id == sid
    sheet = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": s_id})
    grid = sheet["sheets"][0]["rows"]
    r_no = next(int(k) for k, r in grid.items() if r.get("A") == cust.name)
    custs = b.call("payments__list_customers", {"limit": 100})
    st_id = next(x["id"] for x in rows(custs) if x["name"] == cust.name)
    invs = rows(b.call("payments__list_invoices", {"customer": st_id, "limit": 100}))
    due = sum(i["amount_due"] for i in invs if i["status"] == "open")
    assert due == total
    b.decide()
    b.aggregate()
    amount = _money(due)
    b.composed(amount)
    with b.together():
        b.call(
            "sheets__google_sheets_write_to_cell",
            {"spreadsheet_id": s_id, "column": "B", "row": r_no, "value": amount},
        )
        b.call(
            "sheets__google_sheets_write_to_cell",
            {"spreadsheet_id": s_id, "column": "C", "row": r_no, "value": _day(b, 0)},
        )
    b.ask(
        amount,
        kind="number",
        exclude=(
            _money(due + draft["total"]),
            _money(due + void["total"]),
            _money(due + paid["total"]),
            str(before),
        ),
        what=f"{cust.name}'s outstanding balance",
    )
    b.goal(
        f"the AR sheet shows {cust.name}'s outstanding balance and today's date",
        {
            "predicate": "record_exists",
            "service": "sheets",
            "table": "spreadsheets",
            "new": True,
            "where": {
                "id": sid,
                f"sheets.cells.B{row}": {"approx": [due / 100, 0.01]},
                f"sheets.cells.C{row}": {"at": _day(b, 0)},
            },
        },
    )
    b.keep("sheets", "spreadsheets", old_sid, "the archived 2025 sheet was left alone")
    b.keep("sheets", "spreadsheets", prior_sid, "last year's closed AR sheet was left alone")
    for inv in (*opens, paid, void, draft):
        b.keep("payments", "invoices", inv["id"], "the invoices were only read")
    b.trap("stale", "the archived AR sheet, modified more recently", swap={sid: old_sid})
    b.trap("stale", "last year's closed AR sheet, modified long ago", swap={sid: prior_sid})
    b.trap("near_duplicate", "a draft invoice not yet sent", answer=_money(due + draft["total"]))
    b.trap("near_duplicate", "a voided invoice", answer=_money(due + void["total"]))
    b.fact(amount)
    ask = b.say(
        f"find out how much {cust.name} still owes us in Stripe, put the figure and today's date on their row of the AR balances sheet and tell me",
        f"work out {cust.name}'s outstanding balance in Stripe, update their row in the AR balances sheet (amount and check date) and reply with the number",
        f"get me {cust.name}'s current outstanding amount from Stripe, log it with today's date in the AR balances sheet and send me the figure",
    )
    b.write(
        # what counts as owed (sent and unpaid) is read from each invoice's status, never told
        frame(b.rng, ask),
        hint="Open the AR balances sheet, find the customer's row, list the customer's Stripe invoices, sum amount_due of the open ones, write the total (USD) and today's date on the row, and answer with the total.",
        subtasks=[
            "Open the AR balances sheet and find the customer's row",
            "Find the customer in Stripe and list their invoices",
            "Sum what is due on the open invoices",
            "Write the total and today's date on the row",
            "Reply with the total",
        ],
    )


def _dispute(b: Builder, pi: dict[str, Any], reason: str, status: str = "needs_response") -> dict[str, Any]:
    return b.svc("payments").disputes.create(
        {
            "charge": "ch_" + pi["id"][3:],
            "payment_intent": pi["id"],
            "amount": pi["amount"],
            "currency": "usd",
            "reason": reason,
            "status": status,
        }
    )


@family("finance.dispute_with_fulfillment_evidence", "finance", ("payments", "shop"))
def dispute_with_fulfillment_evidence(b: Builder) -> None:
    """Answer a customer's 'never arrived' Stripe dispute with the shipment of the Shopify order it paid for."""
    cust = b.customer()
    person, stc = _billing_contact(b, cust)
    sc = shop_customer(b, person)
    names = _products(b)
    pa, pb, pc = b.pick(names, 3)
    tracking = f"1Z{b.rng.randrange(10**9, 10**10)}"
    order = shop_order(
        b, sc, [(pa, b.rng.randrange(1, 4))], days_ago=b.rng.randrange(20, 35), tracking=tracking
    )
    other = shop_order(b, sc, [(pb, 1)], days_ago=b.rng.randrange(45, 70))
    tracking2 = f"1Z{b.rng.randrange(10**9, 10**10)}"
    newer = shop_order(b, sc, [(pc, 2)], days_ago=b.rng.randrange(3, 8), tracking=tracking2)
    memo = lambda o: f" (Shopify order {o['name']})"  # noqa: E731
    _, pi = stripe_invoice(b, stc, [(pa, 1)], "paid", 18, memo(order))
    _, pi_dup = stripe_invoice(b, stc, [(pb, 1)], "paid", 40, memo(other))
    _, pi_old = stripe_invoice(b, stc, [(pc, 1)], "paid", 90, " (earlier order)")
    _, pi_new = stripe_invoice(b, stc, [(pc, 2)], "paid", 2, memo(newer))
    assert pi and pi_dup and pi_old and pi_new
    dp = _dispute(b, pi, "product_not_received")
    dp_dup = _dispute(b, pi_dup, "duplicate")
    dp_old = _dispute(b, pi_old, "product_not_received", status="under_review")
    b.begin()
    custs = b.call("payments__list_customers", {"limit": 100})
    st_id = next(x["id"] for x in rows(custs) if x["name"] == cust.name)
    intents = rows(b.call("payments__list_payment_intents", {"customer": st_id, "limit": 100}))
    found: list[dict[str, Any]] = []
    paid = [x for x in intents if x["status"] == "succeeded"]
    with b.together():
        for x in paid:
            found += rows(b.call("payments__list_disputes", {"payment_intent": x["id"], "limit": 10}))
    d = next(x for x in found if x["status"] == "needs_response" and x["reason"] == "product_not_received")
    assert d["id"] == dp["id"]
    b.decide(2)
    inv_id = next(x["invoice"] for x in paid if x["id"] == d["payment_intent"])
    inv = b.call("payments__retrieve_invoice", {"invoice": inv_id})
    oname = "#" + inv["lines"][0]["description"].split("order #", 1)[1].split(")", 1)[0]
    o = b.call("shop__shopify_get_order", {"order_id": oname})
    f = o["fulfillments"][0]
    assert f["tracking_number"] == tracking
    b.call(
        "payments__update_dispute",
        {
            "dispute": d["id"],
            "evidence": {
                "customer_name": cust.name,
                "shipping_carrier": f["tracking_company"],
                "shipping_tracking_number": f["tracking_number"],
                "shipping_date": f["created_at"][:10],
                "uncategorized_text": f"Shopify order {o['name']} was fulfilled and shipped with "
                f"{f['tracking_company']} under tracking number {f['tracking_number']}.",
            },
            "submit": True,
        },
    )
    b.fact(tracking, order["name"], dp["id"])
    b.expect_change(
        "payments", "disputes", dp["id"], "status", "under_review", "the dispute's evidence was submitted"
    )
    b.goal(
        "the submitted evidence carries the order's tracking number",
        {
            "predicate": "record_exists",
            "service": "payments",
            "table": "disputes",
            "new": True,
            "where": {"id": dp["id"], "evidence": {"contains": tracking}},
        },
    )
    b.keep(
        "payments",
        "disputes",
        dp_dup["id"],
        "the customer's other (duplicate-charge) dispute was not answered",
    )
    b.keep("payments", "disputes", dp_old["id"], "the older dispute already under review was left alone")
    b.not_written(
        "payments", tracking2, "the newer order's shipment was not used as evidence", tables=["disputes"]
    )
    b.trap(
        "near_duplicate",
        "another open dispute of the same customer, for a duplicate charge",
        swap={dp["id"]: dp_dup["id"]},
    )
    b.trap("closed", "an older 'not received' dispute already under review", swap={dp["id"]: dp_old["id"]})
    b.trap("recent", "the customer's newest Shopify order", swap={tracking: tracking2})
    ask = b.say(
        f"{cust.name} disputed a card payment saying the goods never arrived: answer that dispute in Stripe with the shipment details of the Shopify order it paid for, and submit it",
        f"respond to the 'product not received' dispute {cust.name} opened in Stripe: add the carrier and tracking number of the order it was for and submit the evidence",
        f"submit evidence for {cust.name}'s Stripe dispute claiming non-delivery, using the shipment (carrier, tracking number) of the matching Shopify order",
    )
    if ask.startswith(cust.name):
        ask = "handle this: " + ask
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                "",
                "",
                "",
            ),
        ),
        hint="Find the customer in Stripe, check each of their payments for a dispute, take the open 'product_not_received' one, read its invoice for the Shopify order number, get that order's fulfillment, and submit the carrier and tracking number as evidence.",
        subtasks=[
            "Find the customer's payments in Stripe",
            "Find the open non-delivery dispute among them",
            "Read the invoice of the disputed payment for the Shopify order",
            "Get the order's fulfillment (carrier, tracking)",
            "Add the shipment as evidence and submit the dispute",
        ],
    )
