"""Round-2 classes of the compiler, on real corpus specs: service info and geo tools from the seeded
provider, expandSchema, spec entries that are no operation, bulk deletes, field updates named by the
record's id, bare resource ids, and writes whose type the state model does not hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.compiler.compute import haversine_km
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="the corpus of real specs is not here")


def _env(path: str, name: str = "svc", seed: int = 3) -> tuple[Environment, dict]:
    m = compile_spec(SPECS / path, name)
    return Environment([service_from_manifest(m)], seed=seed, size="small"), m


def _ops(m: dict) -> dict[str, dict]:
    return {t["original_name"]: t for t in m["tools"]}


def test_geo_tools_are_mutually_consistent() -> None:
    env, m = _env("corpus/klavis_google_maps.json")
    ops = _ops(m)
    for name in ("maps_geocode", "maps_reverse_geocode", "maps_distance_matrix", "maps_directions"):
        assert ops[name]["status"] == "compiled", (name, ops[name]["reason"])
    g = env.call("svc__maps_geocode", {"address": "Paris, France"})["data"]["results"][0]
    back = env.call("svc__maps_reverse_geocode", {"latitude": g["lat"], "longitude": g["lng"]})["data"]
    assert back["formatted_address"] == "Paris, France" and back["distance_from_city_km"] == 0.0
    street = env.call("svc__maps_geocode", {"address": "12 Rue de Rivoli, Paris"})["data"]["results"][0]
    assert street["city"] == "Paris" and (street["lat"], street["lng"]) != (g["lat"], g["lng"])
    again = env.call("svc__maps_geocode", {"address": "12 Rue de Rivoli, Paris"})["data"]["results"][0]
    assert again == street  # the same address, the same point
    b = env.call("svc__maps_geocode", {"address": "Berlin"})["data"]["results"][0]
    km = haversine_km(g["lat"], g["lng"], b["lat"], b["lng"])
    assert 870 < km < 890  # Paris-Berlin, great circle
    args = {"origins": ["Paris"], "destinations": ["Berlin", "Paris"]}
    walk = env.call("svc__maps_distance_matrix", {**args, "mode": "walking"})["data"]["rows"][0]["elements"]
    drive = env.call("svc__maps_distance_matrix", {**args, "mode": "driving"})["data"]["rows"][0]["elements"]
    assert walk[0]["distance_km"] == drive[0]["distance_km"] == pytest.approx(km * 1.25, rel=1e-3)
    assert walk[0]["duration_minutes"] > drive[0]["duration_minutes"] > 0 and walk[1]["distance_km"] == 0
    d = env.call("svc__maps_directions", {"origin": "Paris", "destination": "Berlin"})["data"]
    assert d["legs"][0]["distance_km"] == drive[0]["distance_km"]
    bad = env.call("svc__maps_directions", {"origin": "Paris", "destination": "Berlin", "mode": "teleport"})
    assert bad["error"]["code"] in (400, 422)


def test_health_identity_and_balance_answer_from_the_seeded_provider() -> None:
    env, m = _env("corpus/docker_strale.json")
    ops = _ops(m)
    assert ops["strale_ping"]["op"]["fn"] == "health" and ops["strale_balance"]["op"]["fn"] == "balance"
    assert env.call("svc__strale_ping", {})["data"]["healthy"] is True
    one = env.call("svc__strale_balance", {})["data"]
    assert one == env.call("svc__strale_balance", {})["data"] and one["currency"] == "EUR"
    other, _ = _env("corpus/docker_strale.json", seed=4)
    assert other.call("svc__strale_balance", {})["data"]["balance"] != one["balance"]  # drawn from the seed
    env2, m2 = _env("github-official.json", "gh")
    assert _ops(m2)["get_me"]["op"]["fn"] == "identity"
    me = env2.call("gh__get_me", {})["data"]
    assert me == env2.call("gh__get_me", {})["data"] and me["email"].endswith("@example.com")


def test_expand_schema_answers_from_x_expand_schema() -> None:
    env, m = _env("corpus/openmcp_keycloak.json")
    t = _ops(m)["expandSchema"]
    assert t["status"] == "compiled", t["reason"]
    tool = sorted(t["op"]["schemas"])[0]
    ptr = sorted(t["op"]["schemas"][tool])[0]
    got = env.call("svc__expandSchema", {"toolName": tool, "jsonPointers": [ptr]})["data"]
    assert got["schemas"][ptr] == t["op"]["schemas"][tool][ptr] and "type" in got["schemas"][ptr]
    assert env.call("svc__expandSchema", {"toolName": "nope", "jsonPointers": [ptr]})["error"]["code"] == 404
    assert env.call("svc__expandSchema", {"toolName": tool, "jsonPointers": ["/x"]})["error"]["code"] == 404


def test_openapi_path_fields_are_excluded_and_reported_not_served() -> None:
    _, m = _env("corpus/openmcp_keycloak.json")
    served = {t["original_name"] for t in m["tools"]}
    assert m["excluded"] and all(e["cause"] == "not_an_operation" for e in m["excluded"])
    assert not served & {e["original_name"] for e in m["excluded"]}
    assert sum(d["kind"] == "not_an_operation" for d in m["defects"]) == len(m["excluded"])


def test_bulk_delete_removes_every_record_named_or_none() -> None:
    env, m = _env("corpus/klavis_snowflake_toolathlon.json")
    op = _ops(m)["drop_databases"]["op"]
    assert (op["kind"], op["id_param"], op.get("bulk")) == ("delete", "databases", True)
    svc = env.services["svc"]
    keys = sorted(svc.table("databases"))
    before = env.state_hash()
    r = env.call("svc__drop_databases", {"databases": [keys[0], "no-such-db"]})
    assert r["error"]["code"] == 404 and env.state_hash() == before  # one unknown: nothing is dropped
    assert env.call("svc__drop_databases", {"databases": keys[:2]})["success"]
    assert not set(keys[:2]) & set(svc.table("databases")) and keys[2] in svc.table("databases")


def test_field_updates_and_bare_ids_name_the_right_record() -> None:
    _, gh = _env("github-official.json", "gh")
    ops = _ops(gh)
    for name in ("update_issue_title", "update_issue_body", "update_issue_labels"):
        assert (ops[name]["op"]["resource"], ops[name]["op"]["id_param"]) == ("issue", "issue_number")
    env, st = _env("stripe-official.json", "st")
    sops = _ops(st)
    assert sops["cancel_subscription"]["op"]["id_param"] == "subscription"
    assert sops["finalize_invoice"]["op"] == {**sops["finalize_invoice"]["op"], "value": "finalized"}
    svc = env.services["st"]
    key = sorted(svc.table("subscriptions"))[0]
    assert (
        env.call("st__cancel_subscription", {"subscription": key})["data"]["status"] == "canceled"
    )  # the enum's word
    assert env.call("st__cancel_subscription", {"subscription": "sub_nope"})["error"]["code"] == 404


def test_a_write_of_a_type_the_model_does_not_hold_is_a_400_that_changes_nothing() -> None:
    # freshdesk: one tool writes `status` as a string, another as an integer; the field takes either
    env, m = _env("klavis_freshdesk.json")
    assert m["resources"]["ticket"]["fields"]["status"] == "any"
    spec = {
        "tools": [
            {
                "name": "create_note",
                "description": "Create a note.",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
            }
        ]
    }
    m2 = compile_spec(spec, "nt")
    m2["resources"]["note"]["fields"]["title"] = "integer"  # a model that disagrees with the tool
    env2 = Environment([service_from_manifest(m2)], seed=1, size="small")
    before = env2.state_hash()
    r = env2.call("nt__create_note", {"title": "Lamp"})
    assert r["error"]["code"] == 400 and "title" in r["error"]["message"] and env2.state_hash() == before
    assert all(v is None for v in env2.validate().values())
