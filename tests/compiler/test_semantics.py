"""The compiler's semantic classes (issue 14), each on a small spec written for it, and a corpus sample."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compoworld.compiler import compile_manifest, compile_spec, load_spec, service_from_manifest
from compoworld.compiler.compiler import singular, unique_service_names
from compoworld.core.environment import NAME_RE, Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
S = {"type": "string"}
INT = {"type": "integer"}


def _tool(name: str, props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict:
    schema = {"type": "object", "properties": props, "required": required or []}
    return {"name": name, "description": f"{name}.", "inputSchema": schema, **extra}


def ops(spec: dict, name: str = "svc") -> dict[str, dict]:
    return {t["name"]: t["op"] for t in compile_manifest(load_spec(spec), name)["tools"]}


def env_of(spec: dict, name: str = "svc") -> tuple[Environment, dict]:
    m = compile_spec(spec, name)
    return Environment([service_from_manifest(m)], seed=3, size="small"), m


def test_a_server_prefix_that_is_a_verb_is_not_the_operation() -> None:
    close = {
        "tools": [
            _tool("close_get_lead", {"lead_id": S}, ["lead_id"]),
            _tool("close_delete_lead", {"lead_id": S}, ["lead_id"]),
            _tool("close_create_lead", {"name": S}, ["name"]),
            _tool("close_list_leads", {"query": S}),
        ]
    }
    o = ops(close)
    assert [o[n]["kind"] for n in o] == ["get", "delete", "create", "list"]
    assert {v["resource"] for v in o.values()} == {"lead"}
    # where the verb is the operation, it stays one: a helpdesk's close_ticket / close_issue
    helpdesk = {
        "tools": [
            _tool("close_ticket", {"ticket_id": S}, ["ticket_id"]),
            _tool("close_issue", {"issue_id": S}, ["issue_id"]),
            _tool("get_ticket", {"ticket_id": S}, ["ticket_id"]),
        ]
    }
    assert ops(helpdesk)["close_ticket"]["kind"] == "transition"


def test_noun_before_verb_and_nested_argument_objects() -> None:
    woo = {
        "tools": [
            _tool("woo_products_get", {"per_page": INT}),
            _tool("woo_product_get", {"productId": INT}, ["productId"]),
            _tool(
                "woo_product_create",
                {"productData": {"type": "object", "properties": {"name": S, "price": {"type": "number"}}}},
                ["productData"],
            ),
        ]
    }
    o = ops(woo)
    assert (o["woo_products_get"]["kind"], o["woo_products_get"]["resource"]) == ("list", "product")
    assert (o["woo_product_get"]["kind"], o["woo_product_get"]["id_param"]) == ("get", "productId")
    assert o["woo_product_create"]["nested"] == ["productData"]
    env, _ = env_of(woo)
    r = env.call("svc__woo_product_create", {"productData": {"name": "Mug", "price": 9.5}})
    assert r["success"] and r["data"]["name"] == "Mug" and r["data"]["price"] == 9.5
    got = env.call("svc__woo_product_get", {"productId": int(r["data"]["id"])})
    assert got["success"] and got["data"]["name"] == "Mug"


def test_singular_and_plural_name_one_table() -> None:
    assert [singular(w) for w in ("people", "companies", "statuses", "addresses", "boxes", "status")] == [
        "person",
        "company",
        "status",
        "address",
        "box",
        "status",
    ]
    attio = {"tools": [_tool("create_person", {"name": S}, ["name"]), _tool("search_people", {"query": S})]}
    env, m = env_of(attio)
    assert {t["op"]["resource"] for t in m["tools"]} == {"person"}
    r = env.call("svc__create_person", {"name": "Ada Lovelace"})
    found = env.call("svc__search_people", {"query": "Ada Lovelace"})
    assert r["data"]["id"] in {i["id"] for i in found["data"]["items"]}


def test_http_method_and_path_give_the_operation() -> None:
    pets = {
        "tools": [
            _tool(
                "getpetbyid",
                {"petId": INT},
                ["petId"],
                **{"x-http-method": "get", "x-http-path": "/pet/{petId}"},
            ),
            _tool("addpet", {"name": S}, ["name"], **{"x-http-method": "post", "x-http-path": "/pet"}),
            _tool(
                "deletepet",
                {"petId": INT},
                ["petId"],
                **{"x-http-method": "delete", "x-http-path": "/pet/{petId}"},
            ),
            _tool(
                "getuserorders",
                {"userId": S},
                ["userId"],
                description="A user's orders, each with its status and total.",
                **{"x-http-method": "get", "x-http-path": "/v2/users/{userId}/orders"},
            ),
            _tool(
                "closeticket",
                {"id": S},
                ["id"],
                **{"x-http-method": "post", "x-http-path": "/tickets/{id}/close"},
            ),
        ]
    }
    o = ops(pets)
    assert (o["getpetbyid"]["kind"], o["getpetbyid"]["resource"], o["getpetbyid"]["id_param"]) == (
        "get",
        "pet",
        "petId",
    )
    assert o["addpet"]["kind"] == "create" and o["deletepet"]["kind"] == "delete"
    assert o["getuserorders"]["kind"] == "list" and o["getuserorders"]["parent"]["resource"] == "user"
    assert (o["closeticket"]["kind"], o["closeticket"]["value"]) == ("transition", "closed")


CONTACTS = {
    "tools": [
        _tool("create_contact", {"name": S}, ["name"]),
        _tool("get_contact", {"id": S}, ["id"]),
        _tool("create_contact_note", {"id": S, "body": S}, ["id", "body"]),
        _tool("list_contact_notes", {"id": S}, ["id"]),
        _tool("add_contact_tag", {"id": S, "tag": S}, ["id", "tag"]),
        _tool("remove_contact_tag", {"id": S, "tag": S}, ["id", "tag"]),
    ]
}


def test_a_generic_id_names_the_parent_and_a_missing_parent_is_404() -> None:
    o = ops(CONTACTS)
    assert o["create_contact_note"]["parent"] == {"resource": "contact", "param": "id", "field": "contact_id"}
    assert "natural_key" not in o["create_contact_note"]
    assert (o["remove_contact_tag"]["kind"], o["remove_contact_tag"]["resource"]) == ("unrelate", "contact")
    env, _ = env_of(CONTACTS)
    a = env.call("svc__create_contact", {"name": "A"})["data"]["id"]
    b = env.call("svc__create_contact", {"name": "B"})["data"]["id"]
    n1 = env.call("svc__create_contact_note", {"id": a, "body": "one"})
    n2 = env.call("svc__create_contact_note", {"id": a, "body": "two"})  # a second note: no 409
    assert n1["success"] and n2["success"] and n1["data"]["id"] != n2["data"]["id"]
    env.call("svc__create_contact_note", {"id": b, "body": "other"})
    listed = env.call("svc__list_contact_notes", {"id": a})["data"]["items"]
    assert sorted(i["body"] for i in listed) == ["one", "two"]
    before = env.state_hash()
    miss = env.call("svc__create_contact_note", {"id": "nobody", "body": "x"})
    assert miss["error"]["code"] == 404 and env.state_hash() == before
    assert env.call("svc__list_contact_notes", {"id": "nobody"})["error"]["code"] == 404


def test_filters_narrow_or_are_reported_unsupported() -> None:
    crm = {
        "tools": [
            _tool("create_company", {"name": S, "employees": INT, "stage": S}, ["name"]),
            _tool("list_companies", {"stage": S, "minEmployees": INT, "domain": S}),
        ]
    }
    o = ops(crm)
    assert o["list_companies"]["unsupported_filters"] == ["domain"]
    assert o["list_companies"]["ranges"] == {"minEmployees": {"field": "employees", "op": ">="}}
    env, _ = env_of(crm)
    env.call("svc__create_company", {"name": "Big", "employees": 900, "stage": "won"})
    everything = env.call("svc__list_companies", {})["data"]["total"]
    won = env.call("svc__list_companies", {"stage": "won"})["data"]
    big = env.call("svc__list_companies", {"minEmployees": 500})["data"]
    assert won["total"] < everything and [i["name"] for i in won["items"]] == ["Big"]
    assert [i["name"] for i in big["items"]] == ["Big"]
    dom = env.call("svc__list_companies", {"domain": "acme.com"})["data"]
    assert dom["unsupported_filters"] == ["domain"]
    assert "unsupported_filters" not in won


def test_integral_floats_outside_the_integer_range_are_rejected() -> None:
    spec = {
        "tools": [
            _tool("create_ticket", {"title": S, "priority": INT}, ["title"]),
            _tool("get_ticket", {"ticket_id": S}, ["ticket_id"]),
        ]
    }
    env, _ = env_of(spec)
    before = env.state_hash()
    r = env.call("svc__create_ticket", {"title": "t", "priority": 1e308})
    assert r["error"]["code"] == 400 and "priority" in r["error"]["message"] and env.state_hash() == before
    ok = env.call("svc__create_ticket", {"title": "t", "priority": 3.0})
    assert ok["success"] and ok["data"]["priority"] == 3 and type(ok["data"]["priority"]) is int
    assert all(v is None for v in env.validate().values())


def test_long_names_are_shortened_uniquely_and_none_is_dropped() -> None:
    long = "list_all_the_organization_repository_webhook_deliveries_for_"
    spec = {
        "tools": [
            _tool(long + "a", {}),
            _tool(long + "b", {}),
            _tool("odd.name-x", {}),
            _tool("odd_name_x", {}),
        ]
    }
    m = compile_manifest(load_spec(spec), "a_rather_long_service_na")
    names = [t["name"] for t in m["tools"]]
    assert len(names) == 4 and len(set(names)) == 4
    assert all(NAME_RE.match(f"{m['service']}__{n}") for n in names)
    assert [t["original_name"] for t in m["tools"]] == [long + "a", long + "b", "odd.name-x", "odd_name_x"]
    assert sum(d["kind"] == "long_name" for d in m["defects"]) == 2
    Environment([service_from_manifest(m)], seed=0, size="small")  # the engine accepts every name


def test_service_names_are_unique_and_apart_from_hand_built_ones() -> None:
    names = unique_service_names(
        ["a/klavis_slack.json", "b/docker_slack.json", "openmcp_x_com.json"], {"slack"}
    )
    assert list(names.values()) == ["slack_2", "slack_3", "x"]


def _corpus_sample(k: int) -> list[Path]:
    files = sorted(SPECS.rglob("*.json"))
    small = [f for f in files if f.stat().st_size < 60_000]
    return random.Random(14).sample(small, min(k, len(small)))


@pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")
def test_a_corpus_sample_compiles_with_valid_names_and_valid_state() -> None:
    """CI samples the corpus; benchmarks/library.py compiles all of it."""
    for f in _corpus_sample(8):
        m = compile_spec(f)
        assert len(m["tools"]) == len(json.loads(f.read_text())["tools"]), f  # no tool dropped
        assert all(NAME_RE.match(f"{m['service']}__{t['name']}") for t in m["tools"]), f
        env = Environment([service_from_manifest(m)], seed=1, size="small")
        assert all(v is None for v in env.validate().values()), f
        for t in m["tools"]:
            assert t["status"] in ("compiled", "quarantined", "simulated")
            assert t["status"] == "compiled" or t["cause"], t  # what is not code says why


def test_report_recursive_compiles_subfolders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "top.json").write_text(json.dumps(CONTACTS))
    (tmp_path / "sub" / "docker_pets.json").write_text(
        json.dumps({"tools": [_tool("create_pet", {"name": S})]})
    )
    cmd = [sys.executable, "-m", "compoworld.cli.main", "spec", "report", str(tmp_path), "--json"]
    env = {**os.environ, "COMPOWORLD_MANIFESTS": ""}
    flat = json.loads(subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout)
    deep = json.loads(
        subprocess.run([*cmd, "--recursive"], capture_output=True, text=True, env=env, check=True).stdout
    )
    assert (flat["specs"], deep["specs"], deep["crashes"], deep["invalid_names"]) == (1, 2, 0, 0)
    assert deep["tools"] == len(CONTACTS["tools"]) + 1


def test_what_code_can_do_is_code() -> None:
    N = {"type": "number"}
    spec = {
        "tools": [
            _tool("add", {"a": N, "b": N}, ["a", "b"]),
            _tool("sqrt", {"x": N}, ["x"]),
            _tool("mean", {"numbers": {"type": "array", "items": N}}, ["numbers"]),
            _tool("base64_encode", {"input": S}, ["input"]),
            _tool("base64_decode", {"input": S}, ["input"]),
            _tool("validate_email", {"email": S}, ["email"]),
            _tool("generate_uuid", {"count": INT}),
            _tool("summarize_feelings", {"text": S}, ["text"]),
        ]
    }
    env, m = env_of(spec)
    kinds = {t["name"]: (t["status"], t["op"]["kind"]) for t in m["tools"]}
    assert all(v == ("compiled", "compute") for k, v in kinds.items() if k != "summarize_feelings"), kinds
    assert kinds["summarize_feelings"][0] == "simulated"  # no code can do it: the world model, with a cause
    assert env.call("svc__add", {"a": 2, "b": 3.5})["data"] == {"result": 5.5}
    assert env.call("svc__mean", {"numbers": [1, 2, 6]})["data"] == {"result": 3.0}
    before = env.state_hash()
    bad = env.call("svc__sqrt", {"x": -1})
    assert bad["error"]["code"] == 422 and env.state_hash() == before
    enc = env.call("svc__base64_encode", {"input": "héllo"})["data"]["result"]
    assert env.call("svc__base64_decode", {"input": enc})["data"]["result"] == "héllo"
    assert env.call("svc__base64_decode", {"input": "%%%"})["error"]["code"] == 422
    assert env.call("svc__validate_email", {"email": "a@b.io"})["data"]["valid"] is True
    assert env.call("svc__validate_email", {"email": "nope"})["data"]["valid"] is False
    snap = env.snapshot()
    u1 = env.call("svc__generate_uuid", {})["data"]["uuid"]
    u2 = env.call("svc__generate_uuid", {})["data"]["uuid"]
    env.restore(snap)
    assert u1 != u2 and env.call("svc__generate_uuid", {})["data"]["uuid"] == u1  # seeded: replays


HOSTILE = [
    None,
    0,
    -1,
    2**63,
    1e308,
    1.5,
    float("inf"),
    True,
    "",
    "x" * 5000,
    "\u0000",
    [],
    {},
    [None],
    "not-a-date",
]


@pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")
def test_hostile_calls_on_a_corpus_sample_keep_every_invariant() -> None:
    """Envelopes always; a failed call changes nothing; a success leaves valid state; no 500."""
    from compoworld.core.envelope import is_envelope

    for f in _corpus_sample(6):
        m = compile_spec(f)
        cls = service_from_manifest(m)
        env = Environment([cls], seed=2, size="small")
        keys = [k for t in env.services[cls.name].store.tables.values() for k in list(t)[:2]] or ["x"]
        for t in m["tools"]:
            if t["status"] != "compiled":
                continue
            rng = random.Random(t["name"])
            for _ in range(4):
                args = {
                    p: rng.choice(HOSTILE) if rng.random() < 0.5 else rng.choice(keys)
                    for p in t["input_schema"].get("properties", {})
                    if rng.random() < 0.7
                }
                before = env.state_hash()
                r = env.call(f"{cls.name}__{t['name']}", args)
                assert is_envelope(r), (t["name"], r)
                if r["success"]:
                    assert all(v is None for v in env.validate().values()), (t["name"], args)
                else:
                    assert r["error"]["code"] != 500, (t["name"], r)
                    assert env.state_hash() == before, (t["name"], args)


def test_path_parameters_inside_a_wrapper_object_name_the_record() -> None:
    box = {"type": "object", "properties": {"id": S}, "required": ["id"]}
    body = {"type": "object", "properties": {"name": S, "created_at": INT}}
    http = {"x-http-path": "/pos/items/{id}"}
    spec = {
        "tools": [
            _tool(
                "itemsadd", {"body": body}, ["body"], **{"x-http-method": "post", "x-http-path": "/pos/items"}
            ),
            _tool("itemsone", {"path": box}, ["path"], **{"x-http-method": "get", **http}),
            _tool("itemsupdate", {"path": box, "body": body}, ["path"], **{"x-http-method": "patch", **http}),
            _tool("itemsdelete", {"path": box}, ["path"], **{"x-http-method": "delete", **http}),
            _tool("parameters_pos_items", {}, [], **{"x-http-method": "parameters", **http}),
        ]
    }
    env, m = env_of(spec)
    st = {t["name"]: (t["status"], t["op"]["kind"], t["op"].get("wrapped")) for t in m["tools"]}
    assert st["itemsone"] == ("compiled", "get", {"id": "path"}) and st["itemsdelete"][0] == "compiled"
    # an OpenAPI path field: not served as a tool, but listed as excluded with its cause and name
    assert "parameters_pos_items" not in st
    assert m["excluded"] == [
        {
            "name": "parameters_pos_items",
            "original_name": "parameters_pos_items",
            "cause": "not_an_operation",
            "reason": m["excluded"][0]["reason"],
        }
    ]
    assert "created_at" not in m["resources"]["item"]["fields"]  # the engine's own field is never overwritten
    new = env.call("svc__itemsadd", {"body": {"name": "Lamp", "created_at": 5}})["data"]
    assert new["created_at"] != 5
    assert env.call("svc__itemsone", {"path": {"id": new["id"]}})["data"]["name"] == "Lamp"
    assert env.call("svc__itemsupdate", {"path": {"id": new["id"]}, "body": {"name": "Desk"}})["success"]
    assert env.call("svc__itemsone", {"path": {"id": new["id"]}})["data"]["name"] == "Desk"
    assert env.call("svc__itemsdelete", {"path": {"id": new["id"]}})["success"]
    assert env.call("svc__itemsone", {"path": {"id": new["id"]}})["error"]["code"] == 404
    assert all(v is None for v in env.validate().values())


def test_info_tools_answer_from_a_seeded_consistent_provider() -> None:
    spec = {
        "tools": [
            _tool("get_current_weather", {"city": S}, ["city"]),
            _tool("get_weather_forecast", {"city": S}, ["city"]),
            _tool("get_stock_price", {"symbol": S}, ["symbol"]),
            _tool("get_exchange_rate", {"from": S, "to": S}, ["from", "to"]),
        ]
    }
    env, m = env_of(spec)
    assert all(t["op"]["kind"] == "compute" and t["op"]["info"] for t in m["tools"])
    assert all(t["read_only"] for t in m["tools"])
    w = env.call("svc__get_current_weather", {"city": "Lyon"})["data"]
    assert (
        w == env.call("svc__get_current_weather", {"city": " lyon "})["data"]
    )  # the same city, the same sky
    assert w["temperature_f"] == round(w["temperature_c"] * 9 / 5 + 32, 1)
    f = env.call("svc__get_weather_forecast", {"city": "Lyon"})["data"]
    assert f["current"] == w and len(f["days"]) == 5 and all(d["low_c"] < d["high_c"] for d in f["days"])
    p = env.call("svc__get_stock_price", {"symbol": "acme"})["data"]
    assert p["symbol"] == "ACME" and p["price"] > 0
    ab = env.call("svc__get_exchange_rate", {"from": "EUR", "to": "USD"})["data"]["rate"]
    ba = env.call("svc__get_exchange_rate", {"from": "USD", "to": "EUR"})["data"]["rate"]
    assert abs(ab * ba - 1) < 1e-4
    other = Environment([service_from_manifest(m)], seed=99, size="small")
    assert other.call("svc__get_stock_price", {"symbol": "ACME"})["data"]["price"] != p["price"]  # seeded
