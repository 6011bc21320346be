"""Deterministic CRM content: the shared company's customers as companies, their people as
contacts, deals on the products, support tickets, tasks and notes, all associated."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext

DEAL_STAGES = [
    "appointmentscheduled",
    "qualifiedtobuy",
    "presentationscheduled",
    "decisionmakerboughtin",
    "contractsent",
    "closedwon",
    "closedlost",
]
TICKET_STAGES = ["1", "2", "3", "4"]  # new, waiting on contact, waiting on us, closed
LIFECYCLE = [
    "subscriber",
    "lead",
    "marketingqualifiedlead",
    "salesqualifiedlead",
    "opportunity",
    "customer",
    "evangelist",
    "other",
]

STANDARD = {
    "contacts": [
        ("firstname", "string"),
        ("lastname", "string"),
        ("email", "string"),
        ("phone", "string"),
        ("company", "string"),
        ("jobtitle", "string"),
        ("lifecyclestage", "enumeration", LIFECYCLE),
        ("hubspot_owner_id", "string"),
        ("city", "string"),
    ],
    "companies": [
        ("name", "string"),
        ("domain", "string"),
        ("industry", "string"),
        ("city", "string"),
        ("numberofemployees", "number"),
        ("annualrevenue", "number"),
        ("hubspot_owner_id", "string"),
        ("lifecyclestage", "enumeration", LIFECYCLE),
        ("tier", "string"),
    ],
    "deals": [
        ("dealname", "string"),
        ("amount", "number"),
        ("dealstage", "enumeration", DEAL_STAGES),
        ("pipeline", "enumeration", ["default"]),
        ("closedate", "datetime"),
        ("hubspot_owner_id", "string"),
        ("dealtype", "enumeration", ["newbusiness", "existingbusiness"]),
        ("description", "string"),
    ],
    "tickets": [
        ("subject", "string"),
        ("content", "string"),
        ("hs_pipeline", "enumeration", ["0"]),
        ("hs_pipeline_stage", "enumeration", TICKET_STAGES),
        ("hs_ticket_priority", "enumeration", ["LOW", "MEDIUM", "HIGH"]),
        ("hubspot_owner_id", "string"),
        ("hs_ticket_category", "string"),
    ],
    "tasks": [
        ("hs_timestamp", "datetime"),
        ("hs_task_subject", "string"),
        ("hs_task_body", "string"),
        ("hubspot_owner_id", "string"),
        ("hs_task_type", "enumeration", ["CALL", "EMAIL", "TODO", "LINKEDIN_MESSAGE"]),
        ("hs_task_status", "enumeration", ["NOT_STARTED", "IN_PROGRESS", "WAITING", "COMPLETED", "DEFERRED"]),
        ("hs_task_priority", "enumeration", ["NONE", "LOW", "MEDIUM", "HIGH"]),
    ],
    "notes": [("hs_note_body", "string"), ("hs_timestamp", "datetime"), ("hubspot_owner_id", "string")],
}


def owner_id(person_id: str) -> str:
    return str(int(person_id[1:]) * 7 + 100000)  # HubSpot owner ids are numeric strings


def seed_crm(svc, ctx: SeedContext) -> None:
    company, rng = ctx.company, ctx.rng
    now = ctx.clock.now()
    for otype, props in STANDARD.items():
        for spec in props:
            name, ptype = spec[0], spec[1]
            svc.props.create(
                {
                    "object_type": otype,
                    "name": name,
                    "label": name.replace("_", " ").title(),
                    "description": f"Standard {otype} property",
                    "type": ptype,
                    "options": list(spec[2]) if len(spec) > 2 else [],
                },
                id=f"{otype}.{name}",
            )
    sales = [p for p in company.employees if p.team in ("Sales", "Customer Success")] or list(
        company.employees
    )

    def stamp(days_ago: int) -> str:
        return format_time(now - timedelta(days=days_ago, minutes=rng.randrange(600)))

    def obj(otype: str, props: dict, days_ago: int) -> dict:
        t = stamp(days_ago)
        return svc.objects.create({"object_type": otype, "properties": props, "createdAt": t, "updatedAt": t})

    for cust in company.customers:
        owner = rng.choice(sales)
        comp = obj(
            "companies",
            {
                "name": cust.name,
                "domain": cust.domain,
                "industry": cust.industry,
                "city": cust.city,
                "numberofemployees": str(rng.randrange(20, 5000)),
                "annualrevenue": str(rng.randrange(1, 900) * 100000),
                "hubspot_owner_id": owner_id(owner.id),
                "lifecyclestage": rng.choice(["lead", "opportunity", "customer"]),
                "tier": cust.tier,
            },
            rng.randrange(60, 400),
        )
        contacts = []
        for pid in cust.contact_ids:
            p = company.person(pid)
            c = obj(
                "contacts",
                {
                    "firstname": p.first,
                    "lastname": p.last,
                    "email": p.email,
                    "phone": p.phone,
                    "company": cust.name,
                    "jobtitle": p.title,
                    "lifecyclestage": rng.choice(LIFECYCLE[1:6]),
                    "hubspot_owner_id": owner_id(owner.id),
                    "city": p.location,
                },
                rng.randrange(30, 300),
            )
            contacts.append(c)
            svc._associate("contacts", c["id"], "companies", comp["id"])
        for _ in range(rng.choice((0, 1, 1, 2))):
            prod = rng.choice(company.products)
            qty = rng.randrange(1, 30)
            d = obj(
                "deals",
                {
                    "dealname": f"{cust.name} - {prod.name}",
                    "amount": f"{prod.price * qty:.2f}",
                    "dealstage": rng.choice(DEAL_STAGES),
                    "pipeline": "default",
                    "closedate": format_time(now + timedelta(days=rng.randrange(-60, 90))),
                    "hubspot_owner_id": owner_id(owner.id),
                    "dealtype": rng.choice(["newbusiness", "existingbusiness"]),
                    "description": f"{qty} x {prod.sku}",
                },
                rng.randrange(5, 120),
            )
            svc._associate("deals", d["id"], "companies", comp["id"])
            if contacts:
                svc._associate("deals", d["id"], "contacts", rng.choice(contacts)["id"])
        if rng.random() < 0.4 and contacts:
            t = obj(
                "tickets",
                {
                    "subject": f"{rng.choice(company.products).name} issue at {cust.name}",
                    "content": "Customer reports degraded performance.",
                    "hs_pipeline": "0",
                    "hs_pipeline_stage": rng.choice(TICKET_STAGES),
                    "hs_ticket_priority": rng.choice(["LOW", "MEDIUM", "HIGH"]),
                    "hubspot_owner_id": owner_id(owner.id),
                    "hs_ticket_category": "PRODUCT_ISSUE",
                },
                rng.randrange(1, 40),
            )
            svc._associate("tickets", t["id"], "contacts", rng.choice(contacts)["id"])
        if rng.random() < 0.5:
            obj(
                "tasks",
                {
                    "hs_timestamp": format_time(now + timedelta(days=rng.randrange(-5, 15))),
                    "hs_task_subject": f"Follow up with {cust.name}",
                    "hs_task_body": "Check renewal status",
                    "hubspot_owner_id": owner_id(owner.id),
                    "hs_task_type": rng.choice(["CALL", "EMAIL", "TODO"]),
                    "hs_task_status": rng.choice(["NOT_STARTED", "IN_PROGRESS", "COMPLETED"]),
                    "hs_task_priority": rng.choice(["LOW", "MEDIUM", "HIGH"]),
                },
                rng.randrange(1, 20),
            )
