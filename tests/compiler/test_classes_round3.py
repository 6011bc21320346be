"""Round-3 classes of the compiler and its tests, on real corpus specs: a write is checked against the
read of the same resource under the same parent, read back under the record's own parent; list
parameters inside `query` / `path` objects; updates whose id names the parent; an optional own id
over a parent's required one; transition verbs over REST sub-collections; field words after a noun;
path segments that start with a preposition."""

from __future__ import annotations

from pathlib import Path

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.compiler.adversarial import _companion
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="the corpus of real specs is not here")


def _env(path: str, name: str = "svc", seed: int = 3) -> tuple[Environment, dict]:
    m = compile_spec(SPECS / path, name)
    return Environment([service_from_manifest(m)], seed=seed, size="small"), m


def _ops(m: dict) -> dict[str, dict]:
    return {t["original_name"]: t for t in m["tools"]}


def _keys(env: Environment, m: dict, resource: str) -> list[str]:
    return sorted(env.services["svc"].table(m["resources"][resource]["table"]))


def test_a_create_is_checked_against_the_list_of_its_own_collection() -> None:
    env, m = _env("corpus/docker_okta-mcp-server.json")
    by_name = {t["name"]: t for t in m["tools"]}
    ops = _ops(m)
    assert ops["create_user"]["status"] == "compiled", ops["create_user"]["reason"]
    # `list_group_users` reads the users of a group, which `create_user` never sets: not its check
    assert _companion(by_name, "user", "list", None)["name"] == "list_users"
    rec = env.call("svc__create_user", {"profile": {"login": "ana@example.com"}})["data"]
    listed = env.call("svc__list_users", {"limit": 100})["data"]["items"]
    assert rec["id"] in {r["id"] for r in listed}
    group = _keys(env, m, "group")[0]
    in_group = env.call("svc__list_group_users", {"group_id": group, "limit": 100})["data"]["items"]
    assert rec["id"] not in {r["id"] for r in in_group}


def test_a_child_is_read_back_under_its_own_parent_inside_a_path_object() -> None:
    env, m = _env("corpus/openmcp_apideck_com_issue_tracking.json")
    ops = _ops(m)
    for name in ("collectionticketsadd", "collectionticketsone", "collectionticketsupdate"):
        assert ops[name]["status"] == "compiled", (name, ops[name]["reason"])
    a, b = _keys(env, m, "collection")[:2]
    rec = env.call("svc__collectionticketsadd", {"path": {"collection_id": a}})["data"]
    got = env.call("svc__collectionticketsone", {"path": {"ticket_id": rec["id"], "collection_id": a}})
    assert got["success"] and got["data"] == rec
    other = env.call("svc__collectionticketsone", {"path": {"ticket_id": rec["id"], "collection_id": b}})
    assert other["error"]["code"] == 404


def test_list_parameters_inside_a_query_object_are_read_there() -> None:
    env, m = _env("corpus/openmcp_ably_io_platform.json")
    lst = _ops(m)["getmessagesbychannel"]
    assert lst["status"] == "compiled" and lst["op"]["wrapped"]["limit"] == "query"
    assert "path" not in lst["op"].get("unsupported_filters", [])  # a wrapper is no filter
    channel = _keys(env, m, "channel")[0]
    for _ in range(3):
        assert env.call("svc__publishmessagestochannel", {"path": {"channel_id": channel}})["success"]
    query = {"limit": 2, "end": "2026-12-31", "direction": "forwards"}
    page = env.call("svc__getmessagesbychannel", {"path": {"channel_id": channel}, "query": query})["data"]
    assert len(page["items"]) == 2 and page["total"] >= 3 and page["has_more"]
    assert page["unsupported_filters"] == ["end", "direction"]  # said, not silently dropped


def test_an_update_whose_id_names_the_parent_changes_the_parent() -> None:
    env, m = _env("corpus/openmcp_agenta-ai.json")
    ops = _ops(m)
    op = ops["update_variant_parameters"]["op"]
    assert ops["update_variant_parameters"]["status"] == "compiled"
    assert op["resource"] == "variant" and op["id_param"] == "variant_id" and "parent" not in op
    key = _keys(env, m, "variant")[0]
    r = env.call("svc__update_variant_parameters", {"variant_id": key, "parameters": {"temperature": 0.2}})
    assert r["success"] and r["data"]["parameters"] == {"temperature": 0.2}
    table = m["resources"]["variant"]["table"]
    assert env.services["svc"].table(table)[key]["parameters"] == {"temperature": 0.2}
    # `POST /variants/from-base`: a variant made from a base, not a base
    assert ops["add_variant_from_base_and_config"]["op"]["resource"] == "variant"


def test_an_optional_own_id_names_the_record_not_the_parents_required_id() -> None:
    env, m = _env("corpus/klavis_resend.json")
    t = _ops(m)["resend_update_contact"]
    assert t["status"] == "compiled" and t["op"]["id_param"] == "id"
    audience = _keys(env, m, "audience")[0]
    made = env.call("svc__resend_create_contact", {"audienceId": audience, "email": "a@example.com"})["data"]
    r = env.call("svc__resend_update_contact", {"audienceId": audience, "id": made["id"], "firstName": "Ana"})
    assert r["success"] and r["data"]["firstName"] == "Ana" and r["data"]["id"] == made["id"]
    other = [k for k in _keys(env, m, "audience") if k != audience][0]
    moved = env.call("svc__resend_update_contact", {"audienceId": other, "id": made["id"], "firstName": "X"})
    assert moved["error"]["code"] == 404  # not a contact of that audience
    missing = env.call("svc__resend_update_contact", {"audienceId": audience, "firstName": "X"})
    assert missing["error"]["code"] == 400 and "'id'" in missing["error"]["message"]


def test_a_transition_verb_over_a_rest_sub_collection_is_that_transition() -> None:
    env, m = _env("corpus/openmcp_spotify.json")
    t = _ops(m)["follow_playlist"]
    assert t["status"] == "compiled"
    assert (t["op"]["kind"], t["op"]["field"], t["op"]["value"]) == ("transition", "following", True)
    key = _keys(env, m, "playlist")[0]
    assert env.call("svc__follow_playlist", {"playlist_id": key})["data"]["following"] is True


def test_a_field_word_after_a_noun_is_a_field_of_that_record() -> None:
    _, m = _env("github-official.json")
    ops = _ops(m)
    state = ops["update_issue_state"]
    assert state["status"] == "compiled" and state["op"]["resource"] == "issue"
    # `pull_request` is a record, not a `request` field of a pull
    assert ops["update_pull_request"]["op"].get("resource") != "pull"
    _, c = _env("klavis_confluence.json")
    page = _ops(c)["confluence_update_page_content"]
    assert page["op"]["resource"] == "page" and page["op"]["id_param"] == "page_identifier"
