"""Deterministic Trello: a team board and a customer-launch board with cards and checklists."""

from __future__ import annotations

from compoworld.core.service import SeedContext


def seed_boards(svc, ctx: SeedContext) -> None:
    company, rng = ctx.company, ctx.rng
    for bname in (f"{company.me.team} team", "Customer launches", "Office ops"):
        board = svc._board(bname, f"Board for {bname.lower()}")
        lists = svc.lists.find(idBoard=board["id"])
        for _ in range(ctx.scale(4, 14, 40)):
            cust = rng.choice(company.customers)
            lst = rng.choice(lists)
            card = svc._card(
                lst,
                rng.choice(
                    (
                        f"Kickoff with {cust.name}",
                        f"Send contract to {cust.name}",
                        "Order new laptops",
                        f"Renewal call: {cust.name}",
                        f"Fix {rng.choice(company.products).name} onboarding",
                    )
                ),
                f"Owner: {rng.choice(company.employees).name}",
            )
            if rng.random() < 0.3:
                cl = svc.checklists.create({"idCard": card["id"], "name": "Steps"})
                items = [
                    {"id": svc.next_id("", 24), "name": n, "state": rng.choice(("complete", "incomplete"))}
                    for n in ("Draft", "Review", "Send")
                ]
                svc.checklists.update(cl["id"], {"checkItems": items})
