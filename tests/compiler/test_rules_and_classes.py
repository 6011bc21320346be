"""Issue 14, second part: the classes that now compile as code, and the business rules a spec states,
each on the real corpus spec that shows it (skipped where shared/mcp-specs is not checked out)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.compiler.compiler import stated_bounds
from compoworld.compiler.compute import described_default
from compoworld.compiler.values import from_pattern
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
corpus = pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")


def _env(rel: str, name: str) -> tuple[Environment, dict, dict]:
    m = compile_spec(SPECS / rel, name)
    env = Environment([service_from_manifest(m)], seed=5, size="small")
    return env, m, {t["name"]: t for t in m["tools"]}


def _ok(r: dict) -> dict:
    assert r["success"], r
    return r["data"]


@corpus
def test_minted_keys_fit_the_pattern_of_the_parameter_that_names_them() -> None:
    env, _, tools = _env("corpus/openmcp_totoy-ai.json", "totoy")
    assert tools["createproject"]["status"] == tools["getproject"]["status"] == "compiled"
    pattern = tools["getproject"]["input_schema"]["properties"]["project_id"]["pattern"]
    new = _ok(env.call("totoy__createproject", {"name": "Atlas"}))
    assert re.search(pattern, new["id"]), new["id"]  # an agent can pass it back
    assert _ok(env.call("totoy__getproject", {"project_id": new["id"]}))["name"] == "Atlas"
    seeded = env.services["totoy"].table("projects")
    assert seeded and all(re.search(pattern, k) for k in seeded)


def test_pattern_sampler_matches_what_it_can_and_says_none_otherwise() -> None:
    import random

    rng = random.Random(0)
    for p in (r"^pj_[a-zA-Z0-9]{25}$", r"^(0[xX])?[0-9a-fA-F]{40}$", r"^([01][0-9]|2[0-3])[0-5][0-9]$"):
        assert re.search(p, from_pattern(p, rng) or "")
    assert from_pattern(r"(a)\1(?(1)b|c)", rng) is None  # a back-reference: no guess passed off as valid


@corpus
def test_a_spec_default_is_stored_on_create_and_names_the_default_parent() -> None:
    env, _, _ = _env("klavis_google_calendar.json", "gcal")
    ev = _ok(
        env.call(
            "gcal__google_calendar_create_event",
            {
                "summary": "Standup",
                "start_datetime": "2026-03-03T09:00:00Z",
                "end_datetime": "2026-03-03T09:15:00Z",
            },
        )
    )
    assert ev["calendar_id"] == "primary" and ev["visibility"] == "default"  # the schema's defaults
    window = {"min_end_datetime": "2026-03-01T00:00:00Z", "max_start_datetime": "2026-03-31T00:00:00Z"}
    listed = _ok(env.call("gcal__google_calendar_list_events", window))  # lists the primary calendar
    assert ev["id"] in {i["id"] for i in listed["items"]}
    assert all(i.get("calendar_id") == "primary" for i in listed["items"])


def test_defaults_written_in_descriptions_are_read_and_typed() -> None:
    assert described_default({"type": "integer", "description": "Source base (2-36, default: 10)"}) == 10
    assert described_default(
        {"type": "string", "description": "usually 'primary'. Defaults to 'primary'"}
    ) == ("primary")
    assert described_default({"type": "integer", "enum": [2, 3], "description": "Default is 7"}) is None
    assert described_default({"type": "string", "description": "No default."}) is None


@corpus
def test_a_range_written_in_a_description_is_enforced_with_400_and_changes_nothing() -> None:
    assert stated_bounds(
        {"type": "integer", "description": "Maximum number of meetings to return (1-100)"}
    ) == (
        1.0,
        100.0,
    )
    assert stated_bounds({"type": "integer", "description": "Limit (default 20, max 200)"}) == (None, 200.0)
    assert stated_bounds({"type": "integer", "description": "Limit (max 10)", "default": 50}) is None
    env, _, tools = _env("klavis_google_meet.json", "meet")
    assert tools["google_meet_list_meetings"]["op"]["bounds"] == {"max_results": [1.0, 100.0]}
    before = env.state_hash()
    r = env.call("meet__google_meet_list_meetings", {"max_results": 500})
    assert (
        r["error"]["code"] == 400
        and "max_results" in r["error"]["message"]
        and "100" in r["error"]["message"]
    )
    assert env.state_hash() == before
    assert env.call("meet__google_meet_list_meetings", {"max_results": 100})["success"]


@corpus
def test_a_state_precondition_in_the_description_is_a_422_until_it_holds() -> None:
    env, _, tools = _env("corpus/docker_sap-adt-mcp-server.json", "sap")
    assert tools["delete_object"]["op"]["requires"]["field"] == "locked"  # "Object must be locked first."
    svc = env.services["sap"]
    key = next(k for k, r in sorted(svc.table("objects").items()) if not r.get("locked"))
    before = env.state_hash()
    r = env.call("sap__delete_object", {"object_uri": key, "lock_handle": "h"})
    assert (
        r["error"]["code"] == 422 and "locked first" in r["error"]["message"] and env.state_hash() == before
    )
    _ok(env.call("sap__lock_object", {"object_uri": key}))
    _ok(env.call("sap__delete_object", {"object_uri": key, "lock_handle": "h"}))
    assert key not in svc.table("objects")


@corpus
def test_records_named_by_a_unique_name_and_field_updates_of_the_record_the_id_names() -> None:
    env, _, tools = _env("corpus/docker_databricks-sdk-mcp.json", "dbx")
    assert tools["databricks_delete_catalog"]["op"]["id_param"] == "name"
    assert tools["databricks_get_catalog"]["op"]["kind"] == "get"
    key = sorted(env.services["dbx"].table("catalogs"))[0]
    assert _ok(env.call("dbx__databricks_get_catalog", {"name": key}))["id"] == key
    _ok(env.call("dbx__databricks_delete_catalog", {"name": key, "force": True}))
    assert env.call("dbx__databricks_get_catalog", {"name": key})["error"]["code"] == 404
    env2, _, tools2 = _env("corpus/docker_vidmagik-mcp.json", "vid")
    op = tools2["set_start"]["op"]  # "Set clip start time.": a field of the clip, not a `start` table
    assert (op["kind"], op["resource"], op["id_param"]) == ("update", "clip", "clip_id")
    clip = sorted(env2.services["vid"].table("clips"))[0]
    _ok(env2.call("vid__set_start", {"clip_id": clip, "t": 2.5}))
    assert env2.services["vid"].table("clips")[clip]["t"] == 2.5


@corpus
def test_run_state_transitions_need_an_id_named_for_the_record() -> None:
    _, _, tools = _env("corpus/docker_databricks-sdk-mcp.json", "dbx")
    stop = tools["databricks_stop_warehouse"]["op"]
    assert (stop["kind"], stop["field"], stop["value"]) == ("transition", "status", "stopped")
    # "Start a new Genie conversation": its only id names a space, so it is not a transition of one
    assert tools["databricks_genie_start_conversation"]["op"].get("kind") != "transition"


@corpus
def test_math_and_developer_utilities_run_as_code() -> None:
    env, _, tools = _env("corpus/docker_math-mcp-server.json", "m")
    for name in ("complex_pow", "sincos", "erfinv", "mean", "frexp", "fma"):
        assert tools[name]["status"] == "compiled" and tools[name]["op"]["kind"] == "compute", name
    z = _ok(env.call("m__complex_pow", {"x_real": 0, "x_imag": 1, "y_real": 2, "y_imag": 0}))
    assert abs(z["real"] + 1) < 1e-12 and abs(z["imag"]) < 1e-12  # i^2 = -1
    assert _ok(env.call("m__mean", {"numbers": [1, 2, 6]})) == {"result": 3.0}
    assert env.call("m__mean", {"numbers": ["a"]})["error"]["code"] == 400
    x = _ok(env.call("m__erfinv", {"x": 0.5}))["result"]
    assert abs(__import__("math").erf(x) - 0.5) < 1e-12
    assert env.call("m__erfinv", {"x": 1})["error"]["code"] == 422
    dev, _, _ = _env("corpus/docker_devutils-mcp-server.json", "dev")
    assert _ok(dev.call("dev__number_base_convert", {"value": "255"}))["result"] == "ff"  # "default: 10" / 16
    assert (
        dev.call("dev__number_base_convert", {"value": "1", "to_base": 99})["error"]["code"] == 400
    )  # "2-36"
    tok = ".".join(
        base64.urlsafe_b64encode(json.dumps(p).encode()).decode().rstrip("=")
        for p in ({"alg": "HS256"}, {"sub": "7"})
    )
    assert _ok(dev.call("dev__jwt_decode", {"token": tok + ".sig"}))["payload"] == {"sub": "7"}
    assert dev.call("dev__jwt_decode", {"token": "nope"})["error"]["code"] == 422
    assert _ok(dev.call("dev__case_convert", {"input": "hello big world", "to": "camelCase"}))["result"] == (
        "helloBigWorld"
    )
