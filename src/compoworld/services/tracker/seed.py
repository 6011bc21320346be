"""Deterministic Jira: an operations project and a support escalations project with sprints."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META

SUMMARIES = (
    "Renew SSL certificate for {c} portal",
    "Migrate {c} data to new region",
    "Escalation: {c} cannot export reports",
    "Set up SSO for {c}",
    "Audit access for {c}",
    "Investigate billing discrepancy for {c}",
    "Upgrade {p} for {c}",
)


def account_id(person_id: str) -> str:
    return f"712020:{int(person_id[1:]):08x}"


def seed_tracker(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    for p in company.employees:
        svc.users.create({"displayName": p.name, "emailAddress": p.email}, id=account_id(p.id))
    svc.store.put(META, "me", account_id(company.me.id))
    staff = [account_id(p.id) for p in company.employees]
    for key, name in (("OPS", "Operations"), ("ESC", "Support escalations")):
        svc.projects.create(
            {"name": name, "lead": rng.choice(staff), "components": ["API", "Billing", "Frontend", "Infra"]},
            id=key,
        )
        board = svc.boards.create(
            {"name": f"{key} board", "project": key}, id=str(1000 + len(svc.boards.rows))
        )
        sprints = []
        for k, state in enumerate(("closed", "active", "future")):
            start = now + timedelta(days=14 * (k - 1) - 3)
            sprints.append(
                svc.sprints.create(
                    {
                        "board_id": board["id"],
                        "name": f"{key} Sprint {k + 1}",
                        "state": state,
                        "startDate": format_time(start),
                        "endDate": format_time(start + timedelta(days=14)),
                    },
                    id=str(10000 + len(svc.sprints.rows)),
                )
            )
        epic = svc._new_issue(
            key,
            {
                "summary": f"{name} Q1 initiative",
                "issuetype": "Epic",
                "status": "In Progress",
                "reporter": rng.choice(staff),
                "created": format_time(now - timedelta(days=40)),
            },
        )
        for _ in range(ctx.scale(8, 45, 180)):
            cust = rng.choice(company.customers)
            status = rng.choice(("To Do", "To Do", "In Progress", "In Review", "Done"))
            created = now - timedelta(days=rng.randrange(1, 60))
            svc._new_issue(
                key,
                {
                    "summary": rng.choice(SUMMARIES).format(c=cust.name, p=rng.choice(company.products).name),
                    "issuetype": rng.choice(("Task", "Bug", "Story")),
                    "status": status,
                    "priority": rng.choice(("Lowest", "Low", "Medium", "Medium", "High", "Highest")),
                    "assignee": rng.choice([*staff, None]),
                    "reporter": rng.choice(staff),
                    "labels": rng.sample(["customer", "urgent", "backend", "security"], rng.randrange(0, 3)),
                    "components": rng.sample(["API", "Billing", "Frontend", "Infra"], rng.randrange(0, 2)),
                    "parent": epic["id"] if rng.random() < 0.3 else None,
                    "sprint": rng.choice(sprints)["id"] if rng.random() < 0.6 else None,
                    "duedate": (created + timedelta(days=rng.randrange(5, 30))).date().isoformat()
                    if rng.random() < 0.5
                    else None,
                    "created": format_time(created),
                },
            )
