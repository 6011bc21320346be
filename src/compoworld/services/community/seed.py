"""Deterministic Discord server: the company's customer community."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def snowflake(n: int) -> str:
    return str(1100000000000000000 + n * 4194304)


def seed_community(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    me = svc.users.create(
        {"username": company.me.email.split("@")[0], "global_name": company.me.name}, id=snowflake(1)
    )
    svc.store.put(META, "me", me["id"])
    svc.users.create({"username": "compobot", "global_name": "CompoBot", "bot": True}, id=snowflake(2))
    server = svc.servers.create(
        {"name": f"{company.name} Community", "owner_id": me["id"], "description": "Customers and staff"},
        id=snowflake(10),
    )
    users = [me]
    for i, p in enumerate([*company.employees[:10], *company.contacts[: ctx.scale(8, 40, 150)]]):
        if p.id == company.me.id:
            continue
        users.append(
            svc.users.create(
                {"username": p.email.split("@")[0].replace(".", "_"), "global_name": p.name},
                id=snowflake(100 + i),
            )
        )
    for u in users:
        svc.members.create(
            {
                "server_id": server["id"],
                "user_id": u["id"],
                "roles": ["staff"] if u["id"] == me["id"] else [],
                "joined_at": format_time(now - timedelta(days=rng.randrange(10, 400))),
            },
            id=f"{server['id']}:{u['id']}",
        )
    cat = svc.channels.create(
        {"server_id": server["id"], "name": "Text Channels", "type": 4}, id=snowflake(20)
    )
    chans = [
        svc.channels.create(
            {"server_id": server["id"], "name": n, "type": 0, "parent_id": cat["id"], "topic": t},
            id=snowflake(21 + i),
        )
        for i, (n, t) in enumerate(
            (
                ("general", "Say hi"),
                ("announcements", "Product news"),
                ("support", "Ask for help"),
                ("feedback", "Ideas"),
            )
        )
    ]
    lines = (
        "Is there an ETA for the next {p} release?",
        "Loving the new {p} dashboard!",
        "How do I reset my {p} API key?",
        "We hit a bug in {p} after the update",
        "Thanks for the quick fix!",
    )
    for k in range(ctx.scale(15, 120, 480)):
        ch = rng.choice(chans)
        svc.messages.create(
            {
                "channel_id": ch["id"],
                "author_id": rng.choice(users)["id"],
                "content": rng.choice(lines).format(p=rng.choice(company.products).name),
                "timestamp": format_time(now - timedelta(minutes=(ctx.scale(15, 120, 480) - k) * 37)),
            },
            id=snowflake(1000 + k),
        )
    svc.store.put(META, "next", 1000 + ctx.scale(15, 120, 480))
