from __future__ import annotations

import pytest

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "helpdesk__freshdesk_"


@pytest.fixture
def env() -> Environment:
    return Environment(services=["helpdesk"], seed=2)


def _ticket(env: Environment, status: int) -> dict:
    return next(
        t
        for t in env.services["helpdesk"].tickets.all()
        if t["status"] == status and not t["archived"] and not t["deleted"]
    )


def test_ticket_life_cycle(env: Environment) -> None:
    t = ok(
        env,
        S + "create_ticket",
        {
            "subject": "VPN down",
            "description": "<p>help</p>",
            "email": "new.user@client.example",
            "priority": 3,
            "tags": ["vpn"],
        },
    )
    tid = t["id"]
    assert t["status_name"] == "Open" and env.services["helpdesk"].contacts.find(
        email="new.user@client.example"
    )
    got = ok(env, S + "get_ticket_by_id", {"ticket_id": tid, "include": "requester"})
    assert got["requester"]["email"] == "new.user@client.example"
    err(env, S + "get_ticket_by_id", {"ticket_id": tid, "include": "bogus"}, 400)
    ok(env, S + "update_ticket", {"ticket_id": tid, "priority": 4, "custom_fields": {"region": "EU"}})
    err(env, S + "update_ticket", {"ticket_id": tid}, 400)
    note = ok(env, S + "add_note_to_ticket", {"ticket_id": tid, "body": "checked logs"})
    ok(env, S + "update_note", {"note_id": note["id"], "body": "checked all logs"})
    reply = ok(
        env,
        S + "reply_to_a_ticket",
        {"ticket_id": tid, "body": "We are on it", "cc_emails": ["boss@client.example"]},
    )
    assert reply["to_emails"] == ["new.user@client.example"]
    err(env, S + "update_note", {"note_id": reply["id"], "body": "x"}, 422, "not_a_note")
    err(env, S + "delete_note", {"note_id": reply["id"]}, 422)
    ok(env, S + "delete_note", {"note_id": note["id"]})
    err(env, S + "delete_note", {"note_id": note["id"]}, 404)
    ok(env, S + "forward_ticket", {"ticket_id": tid, "to_emails": ["vendor@isp.example"]})
    err(env, S + "forward_ticket", {"ticket_id": tid, "to_emails": []}, 400)
    ok(env, S + "watch_ticket", {"ticket_id": tid})
    err(env, S + "watch_ticket", {"ticket_id": tid}, 409)
    ok(env, S + "unwatch_ticket", {"ticket_id": tid})
    err(env, S + "unwatch_ticket", {"ticket_id": tid}, 422)
    ok(env, S + "update_ticket", {"ticket_id": tid, "status": 5})
    msg = err(env, S + "reply_to_a_ticket", {"ticket_id": tid, "body": "again"}, 422, "ticket_closed")
    assert "reopen" in msg
    ok(env, S + "update_ticket", {"ticket_id": tid, "status": 2})
    ok(env, S + "reply_to_a_ticket", {"ticket_id": tid, "body": "again"})
    ok(env, S + "delete_ticket", {"ticket_id": tid})
    err(env, S + "get_ticket_by_id", {"ticket_id": tid}, 404)
    ok(env, S + "restore_ticket", {"ticket_id": tid})
    err(env, S + "restore_ticket", {"ticket_id": tid}, 422)


def test_ticket_queries_and_bulk(env: Environment) -> None:
    urgent_open = ok(env, S + "filter_tickets", {"query": "priority:4 AND status:2"})
    assert all(t["priority"] == 4 and t["status"] == 2 for t in urgent_open["results"])
    either = ok(env, S + "filter_tickets", {"query": "tag:'vip' OR tag:'sso'"})
    assert all({"vip", "sso"} & set(t["tags"]) for t in either["results"])
    err(env, S + "filter_tickets", {"query": "colour:blue"}, 400)
    err(env, S + "filter_tickets", {"query": "status:2", "page": 11}, 400)
    page = ok(
        env, S + "list_tickets", {"status": 2, "order_by": "priority", "order_type": "desc", "per_page": 5}
    )
    assert len(page["results"]) == 5 and [t["priority"] for t in page["results"]] == sorted(
        (t["priority"] for t in page["results"]), reverse=True
    )
    err(env, S + "list_tickets", {"per_page": 101}, 400)
    err(env, S + "list_tickets", {"updated_since": "last week"}, 400)
    a, b = (t["id"] for t in ok(env, S + "list_tickets", {"status": 2, "per_page": 2})["results"])
    merged = ok(
        env, S + "merge_tickets", {"primary_ticket_id": a, "ticket_ids": b, "convert_recepients_to_cc": True}
    )
    assert merged["cc_emails"] and env.services["helpdesk"].tickets.get(b)["status"] == 5
    err(env, S + "merge_tickets", {"primary_ticket_id": a, "ticket_ids": a}, 422)
    ok(env, S + "delete_multiple_tickets", {"ticket_ids": [a, b]})
    err(env, S + "delete_multiple_tickets", {"ticket_ids": [a]}, 404)
    archived = next(t for t in env.services["helpdesk"].tickets.all() if t["archived"])
    ok(env, S + "get_archived_ticket", {"ticket_id": archived["id"]})
    err(env, S + "get_archived_ticket", {"ticket_id": _ticket(env, 3)["id"]}, 404)
    ok(env, S + "delete_archived_ticket", {"ticket_id": archived["id"]})
    err(env, S + "delete_archived_ticket", {"ticket_id": archived["id"]}, 404)
    t = ok(
        env,
        S + "create_ticket_with_attachments",
        {
            "subject": "Logs",
            "description": "see file",
            "email": "x@y.example",
            "attachments": [{"name": "log.txt", "content": "boom"}],
        },
    )
    att = t["attachments"][0]["id"]
    ok(env, S + "delete_attachment", {"attachment_id": att})
    err(env, S + "delete_attachment", {"attachment_id": att}, 404)
    err(
        env,
        S + "create_ticket_with_attachments",
        {"subject": "Logs", "description": "d", "email": "x@y.example", "attachments": []},
        400,
    )
    err(env, S + "create_ticket", {"subject": "s", "description": "d", "email": "not-an-email"}, 400)
    err(
        env,
        S + "create_ticket",
        {"subject": "s", "description": "d", "email": "a@b.example", "responder_id": 1},
        404,
    )


def test_contacts_companies_agents(env: Environment) -> None:
    hd = env.services["helpdesk"]
    comp = ok(
        env,
        S + "create_company",
        {"name": "Zeta Corp", "domains": ["zeta.example"], "renewal_date": "2026-09-01"},
    )
    err(env, S + "create_company", {"name": "zeta corp"}, 409)
    ok(env, S + "update_company", {"company_id": comp["id"], "health_score": "At risk"})
    err(env, S + "update_company", {"company_id": comp["id"]}, 400)
    assert ok(env, S + "get_company_by_id", {"company_id": comp["id"]})["health_score"] == "At risk"
    assert any(c["id"] == comp["id"] for c in ok(env, S + "search_companies_by_name", {"name": "zeta"}))
    assert any(
        c["id"] == comp["id"]
        for c in ok(env, S + "filter_companies", {"query": "health_score:'At risk'"})["results"]
    )
    assert ok(env, S + "list_companies", {"per_page": 100})["total"] == len(hd.companies.rows)
    c = ok(
        env, S + "create_contact", {"name": "Ina Zed", "email": "ina@zeta.example", "company_id": comp["id"]}
    )
    err(env, S + "create_contact", {"name": "Dup", "email": "INA@zeta.example"}, 409)
    err(env, S + "create_contact", {"name": "No way to reach"}, 400)
    ok(env, S + "update_contact", {"contact_id": c["id"], "job_title": "CTO"})
    assert ok(env, S + "get_contact_by_id", {"contact_id": c["id"]})["job_title"] == "CTO"
    assert ok(env, S + "search_contacts_by_name", {"name": "ina zed"})[0]["id"] == c["id"]
    assert (
        ok(env, S + "filter_contacts", {"query": f"company_id:{comp['id']}"})["results"][0]["id"] == c["id"]
    )
    assert ok(env, S + "list_contacts", {"company_id": comp["id"]})["total"] == 1
    ok(env, S + "send_contact_invite", {"contact_id": c["id"]})
    other = ok(env, S + "create_contact", {"name": "Ina Z.", "phone": "+1 555 0100"})
    merged = ok(
        env,
        S + "merge_contacts",
        {
            "primary_contact_id": c["id"],
            "secondary_contact_ids": [other["id"]],
            "contact_data": {"phone": "+1 555 0100"},
        },
    )
    assert merged["phone"] == "+1 555 0100" and not hd.contacts.get(other["id"])
    err(env, S + "merge_contacts", {"primary_contact_id": c["id"], "secondary_contact_ids": [c["id"]]}, 422)
    err(env, S + "delete_contact", {"contact_id": c["id"], "hard_delete": True}, 422, "soft_delete_first")
    ok(env, S + "delete_contact", {"contact_id": c["id"]})
    err(env, S + "update_contact", {"contact_id": c["id"], "name": "x"}, 422)
    assert ok(env, S + "list_contacts", {"state": "deleted"})["total"] == 1
    ok(env, S + "restore_contact", {"contact_id": c["id"]})
    err(env, S + "restore_contact", {"contact_id": c["id"]}, 422)
    agent = ok(env, S + "make_contact_agent", {"contact_id": c["id"], "ticket_scope": 2})
    err(env, S + "make_contact_agent", {"contact_id": c["id"]}, 409)
    ok(env, S + "delete_company", {"company_id": comp["id"]})
    assert hd.contacts.get(c["id"])["company_id"] is None
    me = ok(env, S + "get_current_agent")
    assert ok(env, S + "get_agent_by_id", {"agent_id": me["id"]})["email"] == env.company.me.email
    assert ok(env, S + "search_agents", {"term": me["name"].split()[0]})
    assert ok(env, S + "list_agents", {"email": me["email"]})["total"] == 1
    ok(env, S + "update_agent", {"agent_id": agent["id"], "signature": "Thanks!"})
    err(env, S + "update_agent", {"agent_id": agent["id"], "email": me["email"]}, 409)
    new = ok(
        env,
        S + "create_agent",
        {"email": "helper@support.example", "name": "Helper", "ticket_scope": 1, "role_ids": [1]},
    )
    err(
        env,
        S + "create_agent",
        {"email": "helper@support.example", "name": "Again", "ticket_scope": 1, "role_ids": [1]},
        409,
    )
    bulk = ok(
        env,
        S + "bulk_create_agents",
        {"agents_data": [{"email": "a1@support.example", "name": "A1", "ticket_scope": 1}]},
    )
    assert len(bulk["created"]) == 1
    err(
        env,
        S + "bulk_create_agents",
        {"agents_data": [{"email": "a2@support.example", "name": "A2", "ticket_scope": 1}, {"email": "bad"}]},
        400,
    )
    assert not hd.agents.find(lambda a: a["email"] == "a2@support.example")
    ok(env, S + "delete_agent", {"agent_id": new["id"]})
    err(env, S + "delete_agent", {"agent_id": me["id"]}, 422)
    assert ok(env, S + "get_current_account")["agents"] == len(hd.agents.rows)
