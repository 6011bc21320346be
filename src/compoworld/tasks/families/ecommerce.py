"""E-commerce workflows: the Shopify store worked against helpdesk tickets, Stripe payments and SMS."""

from __future__ import annotations

from typing import Any

from compoworld.core.company import Person
from compoworld.tasks.families._common import ago, hd_contact, hd_ticket, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family


def _shop_customer(b: Builder, p: Person) -> dict[str, Any]:
    svc = b.svc("shop")
    hits = svc.customers.find(lambda c: c["email"].lower() == p.email.lower())
    if hits:
        return hits[0]
    return svc.customers.create(
        {"email": p.email, "first_name": p.first, "last_name": p.last, "created_at": ago(b, days=200)}
    )


def _set_stock(b: Builder, prod: dict[str, Any], levels: list[int]) -> None:
    svc = b.svc("shop")
    for v in prod["variants"]:
        inv = svc.inventory.get(v["inventory_item_id"])
        locs = sorted(inv["levels"])
        svc.inventory.update(
            inv["id"], {"levels": {loc: levels[i % len(levels)] for i, loc in enumerate(locs)}}
        )


@family("ecommerce.unpublish_sold_out", "ecommerce", ("helpdesk", "shop"))
def unpublish_sold_out(b: Builder) -> None:
    """A buyer reports a listed product cannot be ordered: unpublish it if it is sold out everywhere, then reply."""
    svc = b.svc("shop")
    active = [p for p in svc.products.all() if p["status"] == "active"]
    if len(active) < 3:
        raise PlantError("too few active products")
    target, low = b.pick(active, 2)
    _set_stock(b, target, [0])
    _set_stock(b, low, [0, 0, 3])  # out at two locations, a few left at the third
    svc.products.update(target["id"], {"updated_at": ago(b, days=60)})
    svc.products.update(
        low["id"],
        {"updated_at": ago(b, days=1), "tags": f"{low['tags']}, sold out at every location but one"},
    )
    cust = b.customer()
    person = b.pick([b.company.person(x) for x in cust.contact_ids])
    contact = hd_contact(b, person)
    old = hd_ticket(
        b,
        contact,
        f"Question about {low['title']}",
        f"Is {low['title']} compatible with our setup?",
        status=5,
        days_ago=30,
    )
    t = hd_ticket(
        b,
        contact,
        b.say("Cannot order listed item", "Checkout refuses a product", "Item shows in store but fails"),
        f"The {target['title']} is listed in your store but checkout says there is not enough stock. Is it still sold?",
        status=2,
        days_ago=0.3,
    )
    b.begin()
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    cid = next(c["id"] for c in rows(found) if c["email"] == person.email)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid})
    tk = next(x for x in rows(tickets) if x["status"] == 2)
    assert tk["id"] == t["id"]
    prods = b.call("shop__shopify_list_products", {"status": "active", "limit": 250})
    pid = next(p["id"] for p in rows(prods) if f"The {p['title']} is listed" in tk["description"])
    full = b.call("shop__shopify_get_product", {"product_id": pid})
    assert all(v["inventory_quantity"] == 0 for v in full["variants"])
    b.decide()
    b.aggregate()
    b.call("shop__shopify_update_product", {"product_id": pid, "status": "draft"})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tk["id"],
            "body": f"Hi {person.first}, thanks for flagging this. {full['title']} is sold out at every location, so we have "
            "taken it off the store until it is restocked. Sorry for the trouble.",
        },
    )
    b.fact(target["title"])
    b.expect_change(
        "shop", "products", target["id"], "status", "draft", "the sold-out product is unpublished (draft)"
    )
    b.expect_record(
        "helpdesk", "conversations", {"ticket_id": t["id"], "kind": "reply"}, "the buyer's ticket got a reply"
    )
    b.keep("shop", "products", low["id"], "the product with stock left at one location stays published")
    b.keep("helpdesk", "tickets", old["id"], "the buyer's old closed ticket was left alone")
    b.trap("near_duplicate", "a product sold out at two of three locations", swap={target["id"]: low["id"]})
    b.trap("closed", "the buyer's old closed ticket")
    b.write(
        frame(
            b.rng,
            b.say(
                f"deal with {person.name}'s ticket about a product they cannot order: if it really is sold out at every location, unpublish it (back to draft) and reply to them",
                f"check the item {person.name} says fails at checkout; unpublish it only if no location has stock, and answer the ticket",
            ),
            context=b.say(
                f"{person.first} buys for {cust.name}",
                "We keep a product live while any location still holds stock",
                "",
            ),
        ),
        hint="Find the open ticket, look up the product it names in Shopify, check every variant's stock, set the product to draft if all are zero, reply on the ticket.",
        subtasks=[
            f"Find {person.name}'s open ticket",
            "Look up the product it names and its stock",
            "Unpublish it if every location is at zero",
            "Reply on the ticket",
        ],
    )
