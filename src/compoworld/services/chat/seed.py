"""Deterministic Slack workspace drawn from the shared company."""

from __future__ import annotations

from compoworld.core.service import SeedContext
from compoworld.core.state import META

TEAM_ID = "T01COMPO"
BOT_ID = "B0COMPOBOT"
LINES = (
    "Quick update: the {product} rollout for {customer} is on track.",
    "Can someone review the proposal for {customer} before Friday?",
    "Heads up, {customer} reported a problem with {product}.",
    "Reminder: team sync moved to 3pm today.",
    "The {product} price sheet is updated in the shared drive.",
    "Who owns the renewal for {customer}?",
    "Great work on closing {customer}!",
    "Deploy of {product} finished, no incidents.",
    "I'll be out tomorrow, {first} is covering for me.",
    "Can we get the numbers for {customer} into the CRM?",
)
REPLIES = (
    "On it.",
    "Thanks, looks good to me.",
    "I'll take this one.",
    "+1",
    "Done, see the doc.",
    "Let's discuss in the sync.",
)


def user_id(person_id: str) -> str:
    return "U" + person_id


def seed_chat(svc, ctx: SeedContext) -> None:
    company, rng = ctx.company, ctx.rng
    me = company.me
    svc.store.put(META, "owner", user_id(me.id))
    for p in company.employees:
        svc.insert(
            "users",
            {
                "id": user_id(p.id),
                "name": p.email.split("@")[0],
                "real_name": p.name,
                "email": p.email,
                "title": p.title,
                "tz": p.timezone,
                "locale": "en-US",
                "is_bot": False,
                "team_id": TEAM_ID,
            },
        )
    svc.insert(
        "users",
        {
            "id": BOT_ID,
            "name": "compobot",
            "real_name": "CompoBot",
            "email": None,
            "title": "Bot",
            "tz": "UTC",
            "locale": "en-US",
            "is_bot": True,
            "team_id": TEAM_ID,
        },
    )
    everyone = [user_id(p.id) for p in company.employees]
    base = int(ctx.clock.epoch()) - 30 * 86400
    channels: list[tuple[str, list[str]]] = []

    def channel(
        name: str,
        members: list[str],
        private: bool = False,
        im: bool = False,
        archived: bool = False,
        topic: str = "",
    ) -> str:
        cid = svc.next_id("C" if not im else "D", 10, "upper")
        svc.insert(
            "channels",
            {
                "id": cid,
                "name": name,
                "is_private": private or im,
                "is_im": im,
                "is_archived": archived,
                "created": base - rng.randrange(86400 * 300),
                "creator": members[0],
                "topic": topic,
                "purpose": f"Discussion for {name}" if not im else "",
                "members": sorted(set(members)),
            },
        )
        channels.append((cid, members))
        return cid

    channel("general", everyone + [BOT_ID], topic="Company-wide announcements")
    channel("random", everyone, topic="Water cooler")
    for team in company.teams:
        members = [user_id(m) for m in team.member_ids]
        if user_id(me.id) in members or rng.random() < 0.5:
            members.append(user_id(me.id))
        channel(team.slug, members + [BOT_ID], topic=f"{team.name} team")
    for cust in company.customers[: ctx.scale(2, 8, 24)]:
        members = rng.sample(everyone, min(6, len(everyone))) + [user_id(me.id)]
        channel(f"proj-{cust.name.split()[0].lower()}", members, topic=f"Delivery for {cust.name}")
    channel("leadership", [user_id(t.lead_id) for t in company.teams], private=True)
    channel("incident-war-room", everyone[:8] + [user_id(me.id)], private=True)
    channel("old-announcements", everyone, archived=True)
    for p in rng.sample(list(company.employees), min(4, len(company.employees) - 1)):
        if p.id != me.id:
            channel(
                f"{me.email.split('@')[0]}--{p.email.split('@')[0]}", [user_id(me.id), user_id(p.id)], im=True
            )

    n_msgs = ctx.scale(40, 360, 1400)
    t = base
    parents: list[dict] = []
    for _ in range(n_msgs):
        t += rng.randrange(600, 7200)
        cid, members = rng.choice(channels)
        humans = [m for m in members if m != BOT_ID]
        author = rng.choice(humans)
        cust = rng.choice(company.customers)
        # whoever a line names ("X is covering for me") is someone else than its author
        mine = next((e.first for e in company.employees if user_id(e.id) == author), None)
        first = rng.choice([e.first for e in company.employees if e.first != mine] or [mine])
        text = rng.choice(LINES).format(
            product=rng.choice(company.products).name, customer=cust.name, first=first
        )
        if parents and rng.random() < 0.25:
            parent = rng.choice(parents)
            ts = f"{t}.{svc.next_seq('ts'):06d}"
            svc.insert(
                "messages",
                {
                    "ts": ts,
                    "channel": parent["channel"],
                    "user": author,
                    "text": rng.choice(REPLIES),
                    "thread_ts": parent["ts"],
                    "reply_count": 0,
                    "reactions": {},
                },
                key="ts",
            )
            cur = svc.table("messages")[parent["ts"]]
            svc.store.put("messages", parent["ts"], {**cur, "reply_count": cur["reply_count"] + 1})
            continue
        ts = f"{t}.{svc.next_seq('ts'):06d}"
        reactions = {}
        if rng.random() < 0.2:
            reactions = {
                rng.choice(("thumbsup", "eyes", "tada", "white_check_mark")): sorted(rng.sample(humans, 1))
            }
        msg = {
            "ts": ts,
            "channel": cid,
            "user": author,
            "text": text,
            "thread_ts": None,
            "reply_count": 0,
            "reactions": reactions,
        }
        svc.insert("messages", msg, key="ts")
        parents.append(msg)
