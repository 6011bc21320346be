"""Deterministic Airtable: a partner CRM base and an events base."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext


def seed_bases(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    ts = format_time(now - timedelta(days=30))
    crm = svc.bases.create({"name": "Partner CRM"}, id="app" + svc.next_id("", 14))
    t = svc._create_table(
        crm["id"],
        "Accounts",
        "One row per customer account",
        [
            {"name": "Name", "type": "singleLineText"},
            {"name": "Industry", "type": "singleLineText"},
            {
                "name": "Tier",
                "type": "singleSelect",
                "options": {"choices": [{"name": "enterprise"}, {"name": "mid-market"}, {"name": "smb"}]},
            },
            {"name": "ARR", "type": "currency"},
            {"name": "Champion email", "type": "email"},
            {"name": "Active", "type": "checkbox"},
        ],
    )
    fid = {f["name"]: f["id"] for f in svc.fields.find(table_id=t["id"])}
    for cust in company.customers:
        svc.records.create(
            {
                "table_id": t["id"],
                "createdTime": ts,
                "fields": {
                    fid["Name"]: cust.name,
                    fid["Industry"]: cust.industry,
                    fid["Tier"]: cust.tier,
                    fid["ARR"]: float(rng.randrange(5, 400) * 1000),
                    fid["Champion email"]: company.person(cust.contact_ids[0]).email,
                    fid["Active"]: rng.random() < 0.85,
                },
            },
            id="rec" + svc.next_id("", 14),
        )
    ev = svc.bases.create({"name": "Events"}, id="app" + svc.next_id("", 14))
    t2 = svc._create_table(
        ev["id"],
        "Attendees",
        "Registrations for the customer summit",
        [
            {"name": "Name", "type": "singleLineText"},
            {"name": "Email", "type": "email"},
            {"name": "Company", "type": "singleLineText"},
            {
                "name": "Status",
                "type": "singleSelect",
                "options": {"choices": [{"name": "Registered"}, {"name": "Attended"}, {"name": "Cancelled"}]},
            },
            {"name": "Session", "type": "date"},
        ],
    )
    fid2 = {f["name"]: f["id"] for f in svc.fields.find(table_id=t2["id"])}
    for p in company.contacts[: ctx.scale(8, 40, 150)]:
        svc.records.create(
            {
                "table_id": t2["id"],
                "createdTime": ts,
                "fields": {
                    fid2["Name"]: p.name,
                    fid2["Email"]: p.email,
                    fid2["Company"]: company.customer(p.company_id).name,
                    fid2["Status"]: rng.choice(("Registered", "Registered", "Attended", "Cancelled")),
                    fid2["Session"]: (now + timedelta(days=rng.randrange(5, 40))).date().isoformat(),
                },
            },
            id="rec" + svc.next_id("", 14),
        )
