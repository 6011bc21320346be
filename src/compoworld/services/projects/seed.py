"""Deterministic Asana workspace for the shared company."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META

TASKS = (
    "Draft launch plan for {product}",
    "Review contract with {customer}",
    "Prepare QBR deck for {customer}",
    "Update pricing page for {product}",
    "Collect feedback from {customer}",
    "Plan offsite agenda",
    "Write release notes for {product}",
    "Hire for open {team} role",
    "Clean up CRM data for {customer}",
    "Schedule training for {customer}",
)


def gid(n: int) -> str:
    return str(1200000000000000 + n)  # Asana gids are long numeric strings


def seed_projects(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    ws = svc.workspaces.create({"name": company.name, "is_organization": True}, id=gid(1))
    svc.workspaces.create({"name": "Personal Projects", "is_organization": False}, id=gid(2))
    users = {}
    for i, p in enumerate(company.employees):
        users[p.id] = svc.users.create(
            {"name": p.name, "email": p.email, "workspace_gids": [ws["gid"]]}, id=gid(1000 + i)
        )["gid"]
    svc.store.put(META, "me", users[company.me.id])
    teams = []
    for i, t in enumerate(company.teams):
        teams.append(
            svc.teams.create(
                {"name": t.name, "workspace_gid": ws["gid"], "member_gids": [users[m] for m in t.member_ids]},
                id=gid(100 + i),
            )
        )
    tags = [
        svc.tags.create({"name": n, "color": c, "workspace_gid": ws["gid"]}, id=gid(200 + i))
        for i, (n, c) in enumerate(
            (("urgent", "red"), ("blocked", "orange"), ("customer", "blue"), ("q2", "green"))
        )
    ]
    projects = []
    for i in range(ctx.scale(3, 12, 30)):
        team = teams[i % len(teams)]
        cust = company.customers[i % len(company.customers)]
        projects.append(
            svc.projects.create(
                {
                    "name": rng.choice(
                        (
                            f"{cust.name} onboarding",
                            f"{team['name']} roadmap",
                            f"{cust.name} renewal",
                            f"{team['name']} hiring",
                        )
                    )
                    + f" {i + 1}",
                    "notes": "",
                    "workspace_gid": ws["gid"],
                    "team_gid": team["gid"],
                    "owner_gid": rng.choice(team["member_gids"]),
                    "archived": i % 9 == 8,
                    "due_on": (now + timedelta(days=rng.randrange(10, 120))).date().isoformat(),
                    "created_at": format_time(now - timedelta(days=rng.randrange(30, 200))),
                },
                id=gid(300 + i),
            )
        )
    n = 0
    for _ in range(ctx.scale(20, 200, 800)):
        proj = rng.choice(projects)
        team = next(t for t in teams if t["gid"] == proj["team_gid"])
        created = now - timedelta(days=rng.randrange(1, 60))
        due = created + timedelta(days=rng.randrange(3, 40))
        done = due < now and rng.random() < 0.6
        n += 1
        task = svc.tasks.create(
            {
                "name": rng.choice(TASKS).format(
                    product=rng.choice(company.products).name,
                    customer=rng.choice(company.customers).name,
                    team=team["name"],
                ),
                "workspace_gid": ws["gid"],
                "project_gids": [proj["gid"]],
                "assignee_gid": rng.choice(team["member_gids"] + [None]),
                "tag_gids": [t["gid"] for t in rng.sample(tags, rng.randrange(0, 2))],
                "start_on": created.date().isoformat() if rng.random() < 0.3 else None,
                "due_on": due.date().isoformat(),
                "completed": done,
                "completed_at": format_time(due) if done else None,
                "created_at": format_time(created),
                "modified_at": format_time(created),
            },
            id=gid(10000 + n),
        )
        if rng.random() < 0.15:
            for k in range(rng.randrange(1, 4)):
                n += 1
                svc.tasks.create(
                    {
                        "name": f"Step {k + 1}: {task['name'].lower()}",
                        "workspace_gid": ws["gid"],
                        "parent_gid": task["gid"],
                        "assignee_gid": task["assignee_gid"],
                        "due_on": task["due_on"],
                        "completed": done,
                        "completed_at": task["completed_at"],
                        "created_at": task["created_at"],
                        "modified_at": task["created_at"],
                    },
                    id=gid(10000 + n),
                )
    svc.store.put(META, "next_gid", 10000 + n + 1)
