from __future__ import annotations

import json

import pytest

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "crm__hubspot_"


@pytest.fixture
def env() -> Environment:
    return Environment(services=["crm"], seed=3)


def test_properties_and_search(env: Environment) -> None:
    props = {p["name"] for p in ok(env, S + "list_properties", {"object_type": "deals"})}
    assert {"dealname", "amount", "dealstage"} <= props
    ok(
        env,
        S + "create_property",
        {"name": "renewal_risk", "label": "Renewal risk", "description": "x", "object_type": "companies"},
    )
    err(
        env,
        S + "create_property",
        {"name": "renewal_risk", "label": "R", "description": "x", "object_type": "companies"},
        409,
    )
    err(
        env,
        S + "create_property",
        {"name": "Bad Name", "label": "R", "description": "x", "object_type": "companies"},
        400,
    )
    big = ok(
        env,
        S + "search_by_property",
        {
            "object_type": "deals",
            "property_name": "amount",
            "operator": "GTE",
            "value": "20000",
            "properties": ["amount"],
            "limit": 200,
        },
    )
    assert big and all(float(d["properties"]["amount"]) >= 20000 for d in big)
    between = ok(
        env,
        S + "search_by_property",
        {
            "object_type": "deals",
            "property_name": "amount",
            "operator": "BETWEEN",
            "value": "[1000, 5000]",
            "properties": ["amount"],
            "limit": 200,
        },
    )
    assert all(1000 <= float(d["properties"]["amount"]) <= 5000 for d in between)
    won = ok(
        env,
        S + "search_by_property",
        {
            "object_type": "deals",
            "property_name": "dealstage",
            "operator": "IN",
            "value": "closedwon,closedlost",
            "properties": ["dealstage"],
            "limit": 200,
        },
    )
    assert {d["properties"]["dealstage"] for d in won} <= {"closedwon", "closedlost"}
    err(
        env,
        S + "search_by_property",
        {"object_type": "deals", "property_name": "nope", "operator": "EQ", "value": "x", "properties": []},
        400,
    )
    err(
        env,
        S + "search_by_property",
        {
            "object_type": "deals",
            "property_name": "amount",
            "operator": "LIKE",
            "value": "x",
            "properties": [],
        },
        400,
    )
    err(
        env,
        S + "search_by_property",
        {
            "object_type": "widgets",
            "property_name": "amount",
            "operator": "EQ",
            "value": "x",
            "properties": [],
        },
        400,
    )


@pytest.mark.parametrize("kind", ["contact", "company", "deal", "ticket", "task"])
def test_crud_of_each_object(env: Environment, kind: str) -> None:
    plural = {
        "contact": "contacts",
        "company": "companies",
        "deal": "deals",
        "ticket": "tickets",
        "task": "tasks",
    }[kind]
    create = {"company": "create_companies"}.get(kind, f"create_{kind}")
    props = {
        "contact": {"email": "new.person@acme.example", "firstname": "New"},
        "company": {"name": "Acme"},
        "deal": {"dealname": "Acme deal", "amount": "1200"},
        "ticket": {"subject": "Broken"},
        "task": {"hs_timestamp": "2026-03-05T10:00:00Z"},
    }[kind]
    rec = ok(env, S + create, {"properties": json.dumps(props)})
    rid = rec["id"]
    got = ok(
        env, S + f"get_{kind}_by_id" if kind != "company" else S + "get_company_by_id", {f"{kind}_id": rid}
    )
    assert all(got["properties"][k] == v for k, v in props.items())
    listing = ok(env, S + ("get_" + plural), {"limit": 100})
    assert any(r["id"] == rid for r in listing["results"])
    key = {
        "contact": "lastname",
        "company": "city",
        "deal": "amount",
        "ticket": "content",
        "task": "hs_task_subject",
    }[kind]
    upd = ok(env, S + f"update_{kind}_by_id", {f"{kind}_id": rid, "updates": {key: "42"}})
    assert upd["properties"][key] == "42"
    err(
        env,
        S + f"update_{kind}_by_id",
        {f"{kind}_id": rid, "updates": {"no_such_prop": "x"}},
        400,
        "PROPERTY_DOESNT_EXIST",
    )
    err(env, S + f"update_{kind}_by_id", {f"{kind}_id": rid, "updates": "{not json"}, 400)
    err(env, S + create, {"properties": "[]"}, 400)
    ok(env, S + f"delete_{kind}_by_id", {f"{kind}_id": rid})
    err(env, S + f"get_{kind}_by_id", {f"{kind}_id": rid}, 404)
    err(env, S + f"delete_{kind}_by_id", {f"{kind}_id": rid}, 404)
    err(env, S + f"get_{plural}", {"limit": 0}, 400)


def test_business_rules(env: Environment) -> None:
    email = next(
        o["properties"]["email"] for o in env.services["crm"].objects.all() if o["object_type"] == "contacts"
    )
    err(env, S + "create_contact", {"properties": {"email": email.upper()}}, 409, "CONTACT_EXISTS")
    err(
        env,
        S + "create_deal",
        {"properties": {"dealstage": "nonsense", "dealname": "x"}},
        400,
        "INVALID_OPTION",
    )
    err(env, S + "create_deal", {"properties": {"amount": "lots", "dealname": "x"}}, 400)
    err(env, S + "create_task", {"properties": {"hs_task_subject": "no timestamp"}}, 400)
    d = ok(
        env,
        S + "create_deal",
        {"properties": {"dealname": "Closed one", "amount": "10", "dealstage": "closedwon"}},
    )
    err(env, S + "update_deal_by_id", {"deal_id": d["id"], "updates": {"amount": "99"}}, 422, "deal_closed")
    ok(env, S + "update_deal_by_id", {"deal_id": d["id"], "updates": {"dealstage": "contractsent"}})
    ok(env, S + "update_deal_by_id", {"deal_id": d["id"], "updates": {"amount": "99"}})


def test_associations_and_notes(env: Environment) -> None:
    objs = env.services["crm"].objects.all()
    deal = next(o for o in objs if o["object_type"] == "deals")["id"]
    contacts = [o["id"] for o in objs if o["object_type"] == "contacts"][:3]
    r = ok(
        env,
        S + "batch_create_associations",
        {
            "from_object_type": "deals",
            "from_object_id": deal,
            "to_object_type": "contacts",
            "to_object_ids": contacts,
        },
    )
    assert set(r["created"]) | set(r["already_associated"]) == set(contacts)
    got = {
        x["toObjectId"]
        for x in ok(
            env,
            S + "get_associations",
            {"from_object_type": "deals", "from_object_id": deal, "to_object_type": "contacts"},
        )["results"]
    }
    assert set(contacts) <= got
    back = {
        x["toObjectId"]
        for x in ok(
            env,
            S + "get_associations",
            {"from_object_type": "contacts", "from_object_id": contacts[0], "to_object_type": "deals"},
        )["results"]
    }
    assert deal in back
    ok(
        env,
        S + "delete_association",
        {
            "from_object_type": "contacts",
            "from_object_id": contacts[0],
            "to_object_type": "deals",
            "to_object_id": deal,
        },
    )
    err(
        env,
        S + "delete_association",
        {
            "from_object_type": "contacts",
            "from_object_id": contacts[0],
            "to_object_type": "deals",
            "to_object_id": deal,
        },
        404,
    )
    assert ok(
        env,
        S + "create_association",
        {
            "from_object_type": "deals",
            "from_object_id": deal,
            "to_object_type": "contacts",
            "to_object_id": contacts[0],
        },
    )["created"]
    err(
        env,
        S + "create_association",
        {
            "from_object_type": "deals",
            "from_object_id": deal,
            "to_object_type": "contacts",
            "to_object_id": "0",
        },
        404,
    )
    err(
        env,
        S + "batch_create_associations",
        {
            "from_object_type": "deals",
            "from_object_id": deal,
            "to_object_type": "contacts",
            "to_object_ids": [contacts[0], "0"],
        },
        404,
    )
    note = ok(
        env,
        S + "create_note",
        {"note_body": "Called about renewal", "contact_ids": [contacts[1]], "deal_ids": [deal]},
    )
    assert note["properties"]["hs_note_body"] == "Called about renewal"
    err(env, S + "create_note", {"note_body": " "}, 400)
    err(env, S + "create_note", {"note_body": "x", "deal_ids": ["0"]}, 404)
    ok(env, S + "delete_deal_by_id", {"deal_id": deal})
    assert not any(deal in (a["from_object_id"], a["to_object_id"]) for a in env.services["crm"].assocs.all())
