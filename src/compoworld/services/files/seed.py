"""Deterministic Dropbox tree: team folders, customer folders with contracts, invoices as CSV."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def seed_files(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    svc.store.put(META, "owner", company.me.email)

    def when() -> str:
        return format_time(now - timedelta(days=rng.randrange(1, 200), minutes=rng.randrange(600)))

    for folder in ("/Customers", "/Finance", "/Finance/Invoices", "/Teams", "/Personal"):
        svc._put_folder(folder)
    for t in company.teams:
        svc._put_folder(f"/Teams/{t.name}")
        svc._put_file(
            f"/Teams/{t.name}/members.txt",
            "\n".join(f"{company.person(m).name} <{company.person(m).email}>" for m in t.member_ids) + "\n",
            when(),
        )
    for cust in company.customers[: ctx.scale(6, 30, 120)]:
        base = f"/Customers/{cust.name}"
        svc._put_folder(base)
        contact = company.person(cust.contact_ids[0])
        prod = rng.choice(company.products)
        seats = rng.randrange(5, 200)
        svc._put_file(
            f"{base}/contract.txt",
            f"Customer: {cust.name}\nProduct: {prod.name}\nSeats: {seats}\nAnnual value: ${seats * prod.price:.2f}\n"
            f"Renewal date: {(now + timedelta(days=rng.randrange(20, 365))).date().isoformat()}\nSigned by: {contact.name} ({contact.email})\n",
            when(),
        )
        if rng.random() < 0.5:
            svc._put_file(
                f"{base}/meeting-notes.md",
                f"# Kickoff with {cust.name}\n\n- Attendees: {contact.name}, {company.me.name}\n- Next step: send the proposal\n",
                when(),
            )
    rows = ["invoice,customer,amount,status,due_date"]
    for i in range(ctx.scale(10, 60, 240)):
        cust = rng.choice(company.customers)
        rows.append(
            f"INV-{5000 + i},{cust.name},{rng.randrange(300, 20000)}.00,{rng.choice(('paid', 'open', 'overdue'))},"
            f"{(now + timedelta(days=rng.randrange(-40, 40))).date().isoformat()}"
        )
    svc._put_file("/Finance/Invoices/invoices-2026.csv", "\n".join(rows) + "\n", when())
    svc._put_file("/Personal/todo.txt", "- renew passport\n- book dentist\n", when())
