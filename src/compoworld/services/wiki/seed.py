"""Deterministic Confluence: a space per team with runbooks, meeting notes and customer pages."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.core.state import META


def seed_wiki(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    svc.store.put(META, "me", company.me.email)
    for t in company.teams:
        created = format_time(now - timedelta(days=rng.randrange(200, 600)))
        lead = company.person(t.lead_id)
        space = svc.spaces.create(
            {
                "key": t.slug.upper()[:10],
                "name": t.name,
                "description": f"Home of the {t.name} team",
                "created_at": created,
            }
        )
        home = svc.pages.create(
            {
                "space_id": space["id"],
                "title": f"{t.name} home",
                "content": f"<h1>{t.name}</h1><p>Lead: {lead.name}</p>",
                "author_id": lead.email,
                "created_at": created,
                "updated_at": created,
            }
        )
        svc.spaces.update(space["id"], {"homepage_id": home["id"]})
        docs = [
            ("Onboarding guide", f"<p>Welcome to {t.name}. Ask {lead.first} for access.</p>"),
            ("Runbook", "<p>Escalation: page the on-call, then the team lead.</p>"),
            (
                "Team contacts",
                "<ul>"
                + "".join(
                    f"<li>{company.person(m).name} - {company.person(m).email}</li>" for m in t.member_ids[:6]
                )
                + "</ul>",
            ),
        ]
        held: dict[str, str] = {}  # meeting notes are written the day of the meeting
        for k in range(ctx.scale(1, 4, 10)):
            day = now - timedelta(days=7 * (k + 1))
            held[f"Meeting notes {day.date().isoformat()}"] = format_time(day)
            docs.append(
                (
                    f"Meeting notes {day.date().isoformat()}",
                    f"<p>Attendees: {', '.join(company.person(m).first for m in rng.sample(list(t.member_ids), min(3, len(t.member_ids))))}</p>"
                    f"<p>Decision: prioritise {rng.choice(company.products).name} for {rng.choice(company.customers).name}.</p>",
                )
            )
        for title, content in docs:
            ts = format_time(now - timedelta(days=rng.randrange(1, 150)))  # drawn for every page
            ts = held.get(title, ts)  # (from play: "Meeting notes 2026-02-23" created in November)
            page = svc.pages.create(
                {
                    "space_id": space["id"],
                    "title": title,
                    "content": content,
                    "parent_id": home["id"],
                    "author_id": rng.choice([company.person(m).email for m in t.member_ids]),
                    "version": rng.randrange(1, 6),
                    "created_at": ts,
                    "updated_at": ts,
                }
            )
            if rng.random() < 0.3:
                svc.attachments.create(
                    {
                        "page_id": page["id"],
                        "title": f"{title.lower().replace(' ', '-')}.pdf",
                        "media_type": "application/pdf",
                        "file_size": rng.randrange(10_000, 900_000),
                        "created_at": ts,
                    }
                )
    cs = svc.spaces.create(
        {
            "key": "CUST",
            "name": "Customers",
            "description": "One page per customer account",
            "created_at": format_time(now - timedelta(days=500)),
        }
    )
    for cust in company.customers:
        ts = format_time(now - timedelta(days=rng.randrange(1, 300)))
        contacts = ", ".join(company.person(c).name for c in cust.contact_ids)
        svc.pages.create(
            {
                "space_id": cs["id"],
                "title": f"Account: {cust.name}",
                "content": f"<p>Industry: {cust.industry}. Tier: {cust.tier}. City: {cust.city}.</p><p>Contacts: {contacts}</p>",
                "author_id": company.me.email,
                "created_at": ts,
                "updated_at": ts,
            }
        )
