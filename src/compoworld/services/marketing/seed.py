"""Deterministic Mailchimp account: customer newsletters and a product-updates audience."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext


def seed_marketing(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    t0 = format_time(now - timedelta(days=300))
    contact = {
        "company": company.name,
        "address1": "1 Market St",
        "city": "San Francisco",
        "state": "CA",
        "zip": "94105",
        "country": "US",
    }
    lists = []
    for name, subj in (
        ("Customers newsletter", "News from " + company.name),
        ("Product updates", "What's new"),
        ("Event invitations", "You're invited"),
    ):
        lists.append(
            svc.audiences.create(
                {
                    "name": name,
                    "contact": contact,
                    "permission_reminder": "You signed up on our website.",
                    "from_name": company.name,
                    "from_email": f"news@{company.domain}",
                    "subject": subj,
                    "date_created": t0,
                }
            )
        )
    for p in company.contacts:
        for lst in rng.sample(lists, rng.randrange(1, 3)):
            svc._add_member(
                lst["id"],
                p.email,
                rng.choice(("subscribed", "subscribed", "subscribed", "unsubscribed", "pending")),
                {"FNAME": p.first, "LNAME": p.last, "COMPANY": company.customer(p.company_id).name},
                rng.sample(["customer", "vip", "beta", "webinar"], rng.randrange(0, 3)),
                t0,
            )
    for i in range(ctx.scale(3, 10, 30)):
        lst = rng.choice(lists)
        sent = i % 3 != 2
        ts = format_time(now - timedelta(days=rng.randrange(2, 120)))
        camp = svc.campaigns.create(
            {
                "type": "regular",
                "list_id": lst["id"],
                "subject_line": f"{rng.choice(company.products).name}: {rng.choice(('tips', 'launch', 'case study', 'webinar'))}",
                "from_name": company.name,
                "reply_to": f"news@{company.domain}",
                "title": f"Campaign {i + 1}",
                "status": "sent" if sent else "save",
                "html": "<p>Hello *|FNAME|*</p>" if sent else None,
                "send_time": ts if sent else None,
                "create_time": ts,
            }
        )
        if sent:
            svc._deliver(camp, ts)
