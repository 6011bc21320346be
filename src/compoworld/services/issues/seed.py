"""Deterministic Linear workspace: the company's engineering and product teams and their work."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META

STATES = (
    ("Backlog", "backlog"),
    ("Todo", "unstarted"),
    ("In Progress", "started"),
    ("In Review", "started"),
    ("Done", "completed"),
    ("Canceled", "canceled"),
)
ISSUE_TITLES = (
    "Fix login timeout for {customer}",
    "Add CSV export to {product}",
    "Investigate slow sync in {product}",
    "Update onboarding docs for {product}",
    "Crash when uploading large files",
    "Improve error messages in API",
    "Migrate {product} to new billing",
    "SSO support for {customer}",
    "Flaky test in payments module",
    "Dashboard loads slowly for {customer}",
    "Rate limiting for public API",
    "Dark mode for settings page",
)


def uid(person_id: str) -> str:
    return f"usr-{person_id.lower()}"


def seed_issues(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    t0 = format_time(now - timedelta(days=200))
    for p in company.employees:
        svc.users.create({"name": p.name, "email": p.email}, id=uid(p.id))
    svc.store.put(META, "me", uid(company.me.id))
    team_defs = [("ENG", "Engineering"), ("PRD", "Product"), ("CS", "Customer Success")]
    teams = []
    for key, name in team_defs:
        members = [uid(p.id) for p in company.employees if p.team == name] or [uid(company.employees[0].id)]
        if uid(company.me.id) not in members:
            members.append(uid(company.me.id))
        team = svc.teams.create({"key": key, "name": name, "member_ids": members}, id=f"team-{key.lower()}")
        teams.append(team)
        for i, (sname, stype) in enumerate(STATES):
            svc.states.create(
                {"team_id": team["id"], "name": sname, "type": stype, "position": i},
                id=f"st-{key.lower()}-{sname.lower().replace(' ', '')}",
            )
    projects = []
    for prod in company.products[: ctx.scale(3, 8, 20)]:
        team = rng.choice(teams)
        projects.append(
            svc.projects.create(
                {
                    "name": f"{prod.name} {rng.choice(('revamp', 'launch', 'hardening', 'v2'))}",
                    "description": f"Work on {prod.name}",
                    "team_ids": [team["id"]],
                    "lead_id": rng.choice(team["member_ids"]),
                    "state": rng.choice(("planned", "started", "started", "completed")),
                    "target_date": (now + timedelta(days=rng.randrange(-20, 120))).date().isoformat(),
                    "created_at": t0,
                }
            )
        )
    counters = {t["id"]: 0 for t in teams}
    for _ in range(ctx.scale(25, 180, 700)):
        team = rng.choice(teams)
        counters[team["id"]] += 1
        sname = rng.choice(STATES)[0]
        created = now - timedelta(days=rng.randrange(0, 90), hours=rng.randrange(24))
        proj = rng.choice([p for p in projects if team["id"] in p["team_ids"]] or [None])
        title = rng.choice(ISSUE_TITLES).format(
            customer=rng.choice(company.customers).name, product=rng.choice(company.products).name
        )
        issue = svc.issues_.create(
            {
                "identifier": f"{team['key']}-{counters[team['id']]}",
                "team_id": team["id"],
                "title": title,
                "description": f"{title}. Reported internally.",
                "assignee_id": rng.choice(team["member_ids"] + [None]),
                "creator_id": rng.choice(team["member_ids"]),
                "priority": rng.randrange(0, 5),
                "state_id": f"st-{team['key'].lower()}-{sname.lower().replace(' ', '')}",
                "project_id": proj["id"] if proj else None,
                "due_date": (created + timedelta(days=rng.randrange(5, 40))).date().isoformat()
                if rng.random() < 0.5
                else None,
                "labels": rng.sample(
                    ["bug", "feature", "customer", "tech-debt", "security"], rng.randrange(0, 3)
                ),
                "created_at": format_time(created),
                "updated_at": format_time(created),
                "completed_at": format_time(created + timedelta(days=2)) if sname == "Done" else None,
            }
        )
        for _ in range(rng.choice((0, 0, 1, 2))):
            svc.comments.create(
                {
                    "issue_id": issue["id"],
                    "user_id": rng.choice(team["member_ids"]),
                    "body": rng.choice(
                        (
                            "Looking into it.",
                            "Can reproduce.",
                            "Fixed in the latest build?",
                            "Blocked on design.",
                        )
                    ),
                    "created_at": format_time(created + timedelta(hours=5)),
                }
            )
    svc.store.put(META, "counters", counters)
    ini = svc.initiatives.create(
        {
            "name": f"FY{now.year % 100 + 1} platform reliability",
            "description": "Cut incidents in half",
            "owner_id": uid(company.employees[0].id),
            "status": "Active",
            "created_at": t0,
        }
    )
    for p in projects[:2]:
        svc.links.create({"initiative_id": ini["id"], "project_id": p["id"]})
