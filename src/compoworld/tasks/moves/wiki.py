"""Confluence moves: a page that carries a fact; writing a page."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("wiki")
    space = g.rng.choice(svc.spaces.all())
    now = g.env.clock.iso()
    title = f"Notes on {key_text(key)}" + (" (archived draft)" if decoy else "")
    svc.pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": f"<p>{'Outdated. ' if decoy else ''}{text}</p>",
            "parent_id": space["homepage_id"],
            "status": "draft" if decoy else "current",
            "author_id": g.company.me.email,
            "created_at": now,
            "updated_at": now,
        }
    )
    return [("wiki__confluence_search_content", {"must_contain_all": [key_text(key)]})]


def _page(g: Gen, fact: Fact) -> WriteStep:
    space = g.rng.choice(g.svc("wiki").spaces.all())
    title = g.rng.choice(("Handover notes", "Open items", "Decision log")) + f" {g.rng.randrange(100, 999)}"
    g.named["page"] = title
    return WriteStep(
        calls=[
            (
                "wiki__confluence_create_page",
                {"space_identifier": space["key"], "title": title, "content": f"<p>{fact.value}</p>"},
            )
        ],
        checks=[
            (
                f"a page '{title}' records it",
                {
                    "predicate": "record_exists",
                    "service": "wiki",
                    "table": "pages",
                    "new": True,
                    "where": {"title": title, "content": {"contains": fact.value}, "space_id": space["id"]},
                },
            )
        ],
        allow=[{"service": "wiki", "table": "pages"}],
        phrase=f"write that {{it}} on a new Confluence page titled '{title}' in the {space['name']} space",
    )


MOVES = [
    Relay(
        "wiki",
        "page_text",
        ("customer", "code", "person"),
        ("code", "amount", "date", "person", "phone"),
        "the Confluence page",
        "in Confluence",
        _plant,
    ),
    Write("wiki", "write_page", ("any",), None, _page),
]
