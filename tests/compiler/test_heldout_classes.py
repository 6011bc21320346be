"""Bug classes found on held-out specs (issue 14), each on a small synthetic spec written like the real
one, plus a corpus spec of the same shape where one exists: a shared noun prefix before a verb is the
resource; free-form `properties` objects are the record's fields; date-range filters narrow; fetch by
id is a get; calculators, unit conversions and echo are code; the current time is the simulated
clock's; parent ids in arrays must exist; multi-word nouns; a transition to the state a record is in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
corpus = pytest.mark.skipif(not SPECS.is_dir(), reason="the corpus of real specs is not here")
S, N, INT = {"type": "string"}, {"type": "number"}, {"type": "integer"}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, **({"required": required} if required else {})}


def _spec(server: str, tools: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "server": server,
        "tools": [{"name": n, "description": f"{n.replace('_', ' ')}.", "inputSchema": s} for n, s in tools],
    }


def _env(spec: Any, seed: int = 0) -> tuple[Environment, dict[str, Any]]:
    m = compile_spec(spec, "svc")
    return Environment([service_from_manifest(m)], seed=seed, size="small"), m


def _ops(m: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["original_name"]: t for t in m["tools"]}


def _ok(r: dict[str, Any]) -> Any:
    assert r["success"], r
    return r["data"]


def _err(r: dict[str, Any]) -> int:
    assert not r["success"], r
    return r["error"]["code"]


# ---- 1. a shared prefix that is the resource (`ticket_create`, `ticket_list`) -------------------------
TICKETER = _spec(
    "acme_helpdesk",
    [
        ("ticket_create", _obj({"title": S, "priority": S}, ["title"])),
        ("ticket_list", _obj({"limit": INT, "priority": S})),
        ("ticket_update", _obj({"ticket_id": S, "title": S, "priority": S}, ["ticket_id"])),
        ("ticket_search", _obj({"query": S, "limit": INT}, ["query"])),
        ("ticket_create_pr", _obj({"ticket_id": S, "title": S}, ["ticket_id", "title"])),
    ],
)


def test_a_shared_noun_prefix_before_a_verb_is_the_resource() -> None:
    env, m = _env(TICKETER)
    ops = _ops(m)
    for name in ("ticket_create", "ticket_list", "ticket_update", "ticket_search"):
        assert ops[name]["status"] == "compiled", (name, ops[name]["reason"])
        assert ops[name]["op"]["resource"] == "ticket"
    assert ops["ticket_create_pr"]["op"]["resource"] == "pr"  # a noun after the verb: the prefix goes
    rec = _ok(env.call("svc__ticket_create", {"title": "Printer on fire", "priority": "high"}))
    _ok(env.call("svc__ticket_update", {"ticket_id": rec["id"], "priority": "low"}))
    found = _ok(env.call("svc__ticket_search", {"query": "Printer on fire"}))["items"]
    assert [r["id"] for r in found] == [rec["id"]] and found[0]["priority"] == "low"


def test_a_prefix_that_is_the_servers_name_stays_a_prefix() -> None:
    spec = _spec("ticket", [(n, s) for n, s in ((t["name"], t["inputSchema"]) for t in TICKETER["tools"])])
    ops = _ops(compile_spec(spec, "svc"))
    assert ops["ticket_create"]["status"] == "simulated"  # `ticket_` is the server's name: no resource


# ---- 2. free-form argument objects hold the record's fields ---------------------------------------
CRM = _spec(
    "crm",
    [
        ("create_contact", _obj({"email": S, "firstname": S, "additional_properties": {"type": "object"}})),
        ("update_contact", _obj({"contact_id": S, "properties": {"type": "object"}}, ["contact_id"])),
        ("get_contact", _obj({"contact_id": S}, ["contact_id"])),
        ("create_ticket", _obj({"subject": S, "custom_fields": {"type": "object"}}, ["subject"])),
    ],
)


def test_fields_inside_a_free_form_properties_object_are_the_records_fields() -> None:
    env, m = _env(CRM)
    assert "properties" not in m["resources"]["contact"]["fields"]
    rec = _ok(
        env.call("svc__create_contact", {"email": "a@x.io", "additional_properties": {"stage": "lead"}})
    )
    assert rec["stage"] == "lead" and "additional_properties" not in rec
    _ok(env.call("svc__update_contact", {"contact_id": rec["id"], "properties": {"firstname": "Nested"}}))
    got = _ok(env.call("svc__get_contact", {"contact_id": rec["id"]}))
    assert got["firstname"] == "Nested" and "properties" not in got
    assert _err(env.call("svc__update_contact", {"contact_id": rec["id"], "properties": {"id": "X"}})) == 400
    assert not any(v for v in env.validate().values())
    # a field the record keeps as an object (`custom_fields`) stays one
    t = _ok(env.call("svc__create_ticket", {"subject": "s", "custom_fields": {"tier": "gold"}}))
    assert t["custom_fields"] == {"tier": "gold"}


@corpus
def test_salesforce_contact_data_is_the_contacts_fields() -> None:
    env, m = _env(SPECS / "klavis_salesforce.json")
    ops = _ops(m)
    assert ops["salesforce_update_contact"]["status"] == "compiled"
    rec = _ok(env.call("svc__salesforce_create_contact", {"contact_data": {"LastName": "Okafor"}}))
    _ok(
        env.call("svc__salesforce_update_contact", {"contact_id": rec["id"], "contact_data": {"Phone": "+1"}})
    )
    stored = env.services["svc"].table(m["resources"]["contact"]["table"])[rec["id"]]
    assert stored["LastName"] == "Okafor" and stored["Phone"] == "+1" and "contact_data" not in stored


# ---- 4. fetch / retrieve / details with an id is a get ---------------------------------------------
PAYMENTS = _spec(
    "payments",
    [
        ("invoices_create", _obj({"amount": INT, "customer": S}, ["amount"])),
        ("invoices_fetch_by_id", _obj({"invoice_id": S}, ["invoice_id"])),
        ("invoices_fetch_all", _obj({"count": INT})),
        ("qr_codes_create", _obj({"name": S}, ["name"])),
        ("qr_codes_fetch_by_id", _obj({"qr_id": S}, ["qr_id"])),
        ("create_company", _obj({"name": S, "domain": S}, ["name"])),
        ("get_company_details", _obj({"company_id": S, "domain": S})),
    ],
)


def test_fetch_by_id_is_a_get_of_that_record() -> None:
    env, m = _env(PAYMENTS)
    ops = _ops(m)
    for name in ("invoices_fetch_by_id", "qr_codes_fetch_by_id", "get_company_details"):
        assert ops[name]["status"] == "compiled" and ops[name]["op"]["kind"] == "get", name
    assert ops["invoices_fetch_all"]["op"]["kind"] == "list"
    inv = _ok(env.call("svc__invoices_create", {"amount": 5}))
    assert _ok(env.call("svc__invoices_fetch_by_id", {"invoice_id": inv["id"]})) == inv
    assert _err(env.call("svc__invoices_fetch_by_id", {"invoice_id": "inv_does_not_exist"})) == 404
    co = _ok(env.call("svc__create_company", {"name": "Acme", "domain": "acme.example"}))
    assert _ok(env.call("svc__get_company_details", {"domain": "acme.example"}))["id"] == co["id"]
    assert _ok(env.call("svc__get_company_details", {"company_id": co["id"]}))["id"] == co["id"]
    assert _err(env.call("svc__get_company_details", {"domain": "no-such.example"})) == 404
    assert _err(env.call("svc__get_company_details", {})) == 400


# ---- 3. date-range filters narrow on a stored or engine time, or are reported ------------------------
DEALS = _spec(
    "deals",
    [
        ("create_deal", _obj({"title": S, "expected_close_date": S}, ["title"])),
        (
            "get_deals",
            _obj(
                {
                    "created_date_start": S,
                    "created_date_end": S,
                    "expected_close_date_end": S,
                    "since": INT,
                    "region_from": S,
                }
            ),
        ),
    ],
)


def test_date_range_filters_narrow_on_the_stored_or_engine_time() -> None:
    env, m = _env(DEALS)
    op = _ops(m)["get_deals"]["op"]
    assert op["ranges"]["created_date_start"] == {"field": "created_at", "op": ">="}
    assert op["ranges"]["expected_close_date_end"] == {"field": "expected_close_date", "op": "<="}
    assert op["unsupported_filters"] == ["region_from"]  # no stored field: reported, not ignored
    total = _ok(env.call("svc__get_deals", {}))["total"]
    assert total > 0
    assert _ok(env.call("svc__get_deals", {"created_date_start": "2999-01-01"}))["total"] == 0
    assert _ok(env.call("svc__get_deals", {"created_date_start": "2000-01-01"}))["total"] == total
    today = env.services["svc"].clock.iso()[:10]
    assert _ok(env.call("svc__get_deals", {"created_date_end": today}))["total"] == total  # the whole day
    assert _ok(env.call("svc__get_deals", {"since": 32503680000}))["total"] == 0  # Unix seconds, year 3000
    early = _ok(env.call("svc__create_deal", {"title": "early", "expected_close_date": "2001-05-01"}))
    got = _ok(env.call("svc__get_deals", {"expected_close_date_end": "2001-12-31"}))["items"]
    assert [r["id"] for r in got] == [early["id"]]
    r = _ok(env.call("svc__get_deals", {"region_from": "emea"}))
    assert r["unsupported_filters"] == ["region_from"]


@corpus
def test_salesforce_created_date_from_narrows() -> None:
    env, m = _env(SPECS / "klavis_salesforce.json")
    t = _ops(m)["salesforce_get_contacts"]
    assert t["op"]["ranges"]["created_date_from"]["field"] == "created_at"
    assert t["status"] == "compiled", t["reason"]
    assert _ok(env.call("svc__salesforce_get_contacts", {"created_date_from": "2999-01-01"}))["total"] == 0
    assert _ok(env.call("svc__salesforce_get_contacts", {"created_date_from": "2000-01-01"}))["total"] > 0


# ---- 5. calculators by schema shape, unit conversion and echo are code ----------------------------------
UTILS = _spec(
    "utils",
    [
        (
            "calculate",
            _obj(
                {
                    "operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]},
                    "a": N,
                    "b": N,
                },
                ["operation", "a", "b"],
            ),
        ),
        ("do_math", _obj({"op": {"type": "string", "enum": ["+", "-", "*", "/"]}, "x": N, "y": N})),
        (
            "convert_temperature",
            _obj(
                {"value": N, "from_unit": {"type": "string", "enum": ["C", "F", "K"]}}, ["value", "from_unit"]
            ),
        ),
        ("convert_units", _obj({"value": N, "from": S, "to": S}, ["value", "from", "to"])),
        ("echo", _obj({"message": S}, ["message"])),
        ("get_current_time", _obj({"timezone": S})),
    ],
)


def test_calculators_conversions_and_echo_run_as_code() -> None:
    env, m = _env(UTILS)
    ops = _ops(m)
    for name in ("calculate", "do_math", "convert_temperature", "convert_units", "echo"):
        assert ops[name]["status"] == "compiled" and ops[name]["op"]["kind"] == "compute", name
    assert _ok(env.call("svc__calculate", {"operation": "add", "a": 2, "b": 3}))["result"] == 5
    assert _ok(env.call("svc__do_math", {"op": "*", "x": 4, "y": 2.5}))["result"] == 10
    assert _err(env.call("svc__calculate", {"operation": "divide", "a": 1, "b": 0})) == 422
    assert _ok(env.call("svc__convert_temperature", {"value": 100, "from_unit": "C"}))["results"] == {
        "F": 212.0,
        "K": 373.15,
    }
    assert _err(env.call("svc__convert_temperature", {"value": -300, "from_unit": "C"})) == 422
    km = _ok(env.call("svc__convert_units", {"value": 5, "from": "km", "to": "mi"}))["result"]
    assert km == pytest.approx(3.10686, rel=1e-5)
    assert _ok(env.call("svc__convert_units", {"value": 2, "from": "lb", "to": "oz"}))[
        "result"
    ] == pytest.approx(32)
    assert (
        _err(env.call("svc__convert_units", {"value": 1, "from": "kg", "to": "km"})) == 400
    )  # two dimensions
    assert _ok(env.call("svc__echo", {"message": "hi there"}))["result"] == "hi there"


@corpus
def test_a_real_echo_is_code() -> None:
    env, m = _env(SPECS / "corpus" / "docker_taiga-mcp.json")
    assert _ops(m)["echo"]["op"]["fn"] == "echo"
    assert _ok(env.call("svc__echo", {"message": "ping"}))["result"] == "ping"


# ---- 6. the current time is the simulated clock's, in the zone asked ------------------------------------
def test_current_time_is_the_simulated_clock_in_the_zone_asked() -> None:
    env, m = _env(UTILS)
    assert _ops(m)["get_current_time"]["op"]["fn"] == "now"
    svc = env.services["svc"]
    now = _ok(env.call("svc__get_current_time", {}))
    assert now["datetime"] == svc.clock.iso() and now["timezone"] == "UTC"
    ny = _ok(env.call("svc__get_current_time", {"timezone": "America/New_York"}))
    assert ny["unix"] == now["unix"] and ny["datetime"][:19] != now["datetime"][:19]
    assert _ok(env.call("svc__get_current_time", {"timezone": "+05:30"}))["datetime"].endswith("+05:30")
    assert _err(env.call("svc__get_current_time", {"timezone": "Mars/Olympus"})) == 400
    svc.clock.advance(minutes=90)
    assert _ok(env.call("svc__get_current_time", {}))["unix"] == now["unix"] + 5400


@corpus
def test_a_real_current_time_tool_reads_the_clock() -> None:
    env, m = _env(SPECS / "klavis_google_calendar.json")
    assert _ops(m)["google_calendar_get_current_time"]["op"]["fn"] == "now"
    got = _ok(env.call("svc__google_calendar_get_current_time", {}))
    assert got["datetime"] == env.services["svc"].clock.iso()


# ---- 7. ids of parents in a list must exist; multi-word nouns; no transition to the state one is in ---
SALES = _spec(
    "sales",
    [
        ("create_contact", _obj({"name": S}, ["name"])),
        ("create_deal", _obj({"dealname": S, "contact_ids": {"type": "array", "items": S}}, ["dealname"])),
        ("qr_codes_create", _obj({"name": S}, ["name"])),
        ("qr_codes_close", _obj({"qr_id": S}, ["qr_id"])),
        ("invoices_create", _obj({"amount": INT}, ["amount"])),
        ("invoices_cancel", _obj({"invoice_id": S}, ["invoice_id"])),
    ],
)


def test_parent_ids_in_a_list_must_exist() -> None:
    env, m = _env(SALES)
    assert _ops(m)["create_deal"]["status"] == "compiled"
    before = env.state_hash()
    assert _err(env.call("svc__create_deal", {"dealname": "d", "contact_ids": ["no-such-contact"]})) == 404
    assert env.state_hash() == before
    c = _ok(env.call("svc__create_contact", {"name": "Ada"}))["id"]
    assert _ok(env.call("svc__create_deal", {"dealname": "d", "contact_ids": [c]}))["contact_ids"] == [c]


def test_an_abbreviation_stays_part_of_the_noun() -> None:
    ops = _ops(compile_spec(SALES, "svc"))
    assert ops["qr_codes_create"]["op"]["resource"] == "qr_code"
    assert ops["qr_codes_close"]["op"]["resource"] == "qr_code"


def test_cancelling_what_is_cancelled_is_a_conflict() -> None:
    env, m = _env(SALES)
    inv = _ok(env.call("svc__invoices_create", {"amount": 5}))["id"]
    assert _ok(env.call("svc__invoices_cancel", {"invoice_id": inv}))["status"] == "cancelled"
    before = env.state_hash()
    r = env.call("svc__invoices_cancel", {"invoice_id": inv})
    assert _err(r) == 409 and r["error"]["type"] == "already_cancelled" and env.state_hash() == before
    qr = _ok(env.call("svc__qr_codes_create", {"name": "till"}))["id"]
    _ok(env.call("svc__qr_codes_close", {"qr_id": qr}))
    assert _err(env.call("svc__qr_codes_close", {"qr_id": qr})) == 409


@corpus
def test_a_real_cancel_twice_is_a_conflict() -> None:
    env, m = _env(SPECS / "stripe-official.json")
    t = _ops(m)["cancel_subscription"]
    assert t["status"] == "compiled" and t["op"]["kind"] == "transition", t["reason"]
    op = t["op"]
    key = sorted(env.services["svc"].table(m["resources"][op["resource"]]["table"]))[0]
    _ok(env.call(f"svc__{t['name']}", {op["id_param"]: key}))
    r = env.call(f"svc__{t['name']}", {op["id_param"]: key})
    assert _err(r) == 409 and r["error"]["type"] == "already_cancelled"
