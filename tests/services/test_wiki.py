from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "wiki__confluence_"


def test_confluence_flow() -> None:
    env = Environment(services=["wiki"], seed=4)
    space = ok(env, S + "create_space", {"name": "Launch Room", "description": "Q2 launch"})
    assert space["key"] == "LAUNCHROOM" and space["homepage_id"]
    err(env, S + "create_space", {"name": "Other", "key": "LAUNCHROOM"}, 409)
    err(env, S + "create_space", {"name": "Bad", "key": "no-dashes!"}, 400)
    assert ok(env, S + "get_space", {"space_identifier": "LAUNCHROOM"})["page_count"] == 1
    err(env, S + "get_space", {"space_identifier": "NOPE"}, 404)
    assert any(s["key"] == "LAUNCHROOM" for s in ok(env, S + "list_spaces", {"limit": 250})["spaces"])
    page = ok(
        env,
        S + "create_page",
        {"space_identifier": space["key"], "title": "Launch checklist", "content": "<p>1. Ship</p>"},
    )
    err(
        env,
        S + "create_page",
        {"space_identifier": space["key"], "title": "launch checklist", "content": "dup"},
        409,
    )
    other = next(s for s in env.services["wiki"].spaces.all() if s["id"] != space["id"])
    err(
        env,
        S + "create_page",
        {"space_identifier": other["id"], "title": "X", "content": "y", "parent_id": page["id"]},
        422,
    )
    ok(env, S + "update_page_content", {"page_identifier": page["id"], "content": "<p>2. Celebrate</p>"})
    got = ok(env, S + "get_page", {"page_identifier": "Launch checklist"})
    assert got["version"] == 2 and got["content"].endswith("Celebrate</p>")
    ok(
        env,
        S + "update_page_content",
        {"page_identifier": page["id"], "content": "fresh", "update_mode": "replace"},
    )
    ok(env, S + "rename_page", {"page_identifier": page["id"], "title": "Launch plan"})
    err(env, S + "rename_page", {"page_identifier": page["id"], "title": "Launch Room home"}, 409)
    err(env, S + "get_page", {"page_identifier": "Runbook"}, 409, "ambiguous_title")
    err(env, S + "get_page", {"page_identifier": "No such page"}, 404)
    many = ok(env, S + "get_pages_by_id", {"page_ids": [page["id"], "1"]})
    assert many["not_found"] == ["1"] and many["pages"][0]["title"] == "Launch plan"
    err(env, S + "get_pages_by_id", {"page_ids": []}, 400)
    listing = ok(env, S + "list_pages", {"space_ids": ["LAUNCHROOM"], "sort_by": "-title"})
    assert [p["title"] for p in listing["pages"]] == ["Launch Room home", "Launch plan"]
    tree = ok(env, S + "get_space_hierarchy", {"space_identifier": space["id"]})["tree"]
    assert tree[0]["children"][0]["title"] == "Launch plan"
    hits = ok(
        env,
        S + "search_content",
        {"must_contain_all": ["escalation"], "can_contain_any": ["on-call", "pager"]},
    )
    assert hits and all(h["title"] == "Runbook" for h in hits)
    assert ok(env, S + "search_content", {"must_contain_all": ["escalaton"]})  # one typo away, fuzzy
    assert not ok(env, S + "search_content", {"must_contain_all": ["escalaton"], "enable_fuzzy": False})
    err(env, S + "search_content", {}, 400)
    atts = ok(env, S + "list_attachments", {"sort_order": "-file-size", "limit": 250})["attachments"]
    assert [a["file_size"] for a in atts] == sorted((a["file_size"] for a in atts), reverse=True)
    a = atts[0]
    assert ok(env, S + "get_attachment", {"attachment_id": a["id"]})["page_id"] == a["page_id"]
    assert ok(env, S + "get_attachments_for_page", {"page_identifier": a["page_id"]})["attachments"]
    err(env, S + "get_attachment", {"attachment_id": "0"}, 404)


def test_meeting_notes_are_written_the_day_of_the_meeting() -> None:
    """A seeded "Meeting notes DAY" page was created on DAY (from play: one created in November)."""
    from compoworld.core.environment import Environment

    env = Environment(services=["wiki"], seed=3)
    notes = [p for p in env.services["wiki"].table("pages").values() if p["title"].startswith("Meeting notes ")]
    assert notes
    for p in notes:
        assert p["created_at"][:10] == p["title"].removeprefix("Meeting notes "), p
