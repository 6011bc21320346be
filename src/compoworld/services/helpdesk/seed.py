"""Deterministic helpdesk: customers' people file tickets with the support team as agents."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META

ISSUES = (
    "cannot log in to {product}",
    "{product} sync is failing",
    "invoice amount looks wrong",
    "request: export data from {product}",
    "{product} is slow since the update",
    "how do I add users?",
    "refund request for {product}",
    "API returns 500 errors",
    "SSO configuration help",
    "billing address change",
)
GROUPS = {1: "Billing", 2: "Technical Support", 3: "Customer Success"}


def seed_helpdesk(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    t0 = format_time(now - timedelta(days=400))
    support = [p for p in company.employees if p.team in ("Customer Success", "Engineering")][:10] or list(
        company.employees[:5]
    )
    if company.me not in support:
        support.append(company.me)
    agent_of = {}
    for p in support:
        a = svc.agents.create(
            {
                "name": p.name,
                "email": p.email,
                "ticket_scope": 1,
                "group_ids": [rng.choice(list(GROUPS))],
                "role_ids": [1],
                "time_zone": p.timezone,
                "created_at": t0,
            }
        )
        agent_of[p.id] = a["id"]
    svc.store.put(META, "me_agent", agent_of[company.me.id])
    comp_of = {}
    for cust in company.customers:
        c = svc.companies.create(
            {
                "name": cust.name,
                "domains": [cust.domain],
                "industry": cust.industry,
                "account_tier": cust.tier.title(),
                "health_score": rng.choice(("Happy", "Doing okay", "At risk")),
                "renewal_date": (now + timedelta(days=rng.randrange(10, 300))).date().isoformat(),
                "created_at": t0,
                "updated_at": t0,
            }
        )
        comp_of[cust.id] = c["id"]
    contacts = []
    for p in company.contacts:
        c = svc.contacts.create(
            {
                "name": p.name,
                "email": p.email,
                "phone": p.phone,
                "company_id": comp_of[p.company_id],
                "job_title": p.title,
                "created_at": t0,
                "updated_at": t0,
            }
        )
        contacts.append(c)
    n = ctx.scale(15, 140, 560)
    for _ in range(n):
        req = rng.choice(contacts)
        created = now - timedelta(days=rng.randrange(0, 60), hours=rng.randrange(24))
        status = rng.choice((2, 2, 2, 3, 3, 4, 5, 5))
        prod = rng.choice(company.products).name
        issue = rng.choice(ISSUES).format(product=prod)
        t = svc.tickets.create(
            {
                "subject": issue[0].upper() + issue[1:],
                "description": f"<p>Hello, we have a problem: {issue}. Please help.</p>",
                "requester_id": req["id"],
                "company_id": req["company_id"],
                "status": status,
                "priority": rng.choice((1, 2, 2, 3, 4)),
                "source": rng.choice((1, 2, 3, 7)),
                "responder_id": rng.choice(list(agent_of.values())) if rng.random() < 0.7 else None,
                "group_id": rng.choice(list(GROUPS)),
                "type": rng.choice(("Question", "Incident", "Problem", "Feature Request")),
                "tags": rng.sample(["vip", "billing", "bug", "sso", "api", "renewal"], rng.randrange(0, 3)),
                "due_by": format_time(created + timedelta(days=3)),
                "fr_due_by": format_time(created + timedelta(days=1)),
                "archived": status == 5 and (now - created).days > 45,
                "created_at": format_time(created),
                "updated_at": format_time(min(now, created + timedelta(hours=rng.randrange(1, 48)))),
            }
        )
        for k in range(rng.choice((0, 1, 1, 2))):
            svc.conversations.create(
                {
                    "ticket_id": t["id"],
                    "kind": "reply" if k % 2 == 0 else "note",
                    "body": "Thanks, we are looking into it.",
                    "private": k % 2 == 1,
                    "incoming": False,
                    "user_id": t["responder_id"],
                    "created_at": format_time(created + timedelta(hours=2 + k)),
                }
            )
