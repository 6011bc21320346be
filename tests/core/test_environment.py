"""Environment contracts: names, schemas, snapshots, diffs, determinism, gateway."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from compoworld.core.envelope import is_envelope
from compoworld.core.environment import NAME_RE, Environment
from compoworld.services import registry

ALL = list(registry())

SCRIPT = [
    ("email__gmail_send_email", {"to": ["someone@example.com"], "subject": "Hi", "body": "Hello"}),
    ("email__gmail_create_label", {"name": "Urgent"}),
    (
        "calendar__google_calendar_create_event",
        {"summary": "Sync", "start_datetime": "2026-03-04T10:00:00Z", "end_datetime": "2026-03-04T11:00:00Z"},
    ),
    (
        "calendar__google_calendar_create_event",
        {"summary": "Bad", "start_datetime": "2026-03-04T10:00:00Z", "end_datetime": "2026-03-04T09:00:00Z"},
    ),
    ("chat__slack_user_search_messages", {"query": "renewal"}),
]


def run_script(seed: int) -> list[str]:
    env = Environment(services=["email", "chat", "calendar"], seed=seed)
    hashes = [env.state_hash()]
    for name, args in SCRIPT:
        env.call(name, args)
        hashes.append(env.state_hash())
    return hashes


def test_tool_names_match_the_contract() -> None:
    env = Environment(services=ALL, seed=0, size="small")
    for name in env.tool_names:
        assert NAME_RE.match(name), name
        service, tool = name.split("__")
        assert service in env.services and "__" not in tool
    assert len(env.tool_names) == sum(len(c.tool_specs) for c in registry().values())


def test_schemas_are_draft_2020_12_and_openai_shaped() -> None:
    env = Environment(services=ALL, seed=0, size="small")
    for entry in env.tools("openai"):
        fn = entry["function"]
        assert entry["type"] == "function" and fn["description"]
        assert len(fn["description"]) <= 1024, fn["name"]
        params = fn["parameters"]
        jsonschema.Draft202012Validator.check_schema(params)
        assert params["type"] == "object" and "$ref" not in json.dumps(params)
        assert set(params.get("required", [])) <= set(params["properties"])
    for entry in env.tools("mcp"):
        jsonschema.Draft202012Validator.check_schema(entry["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(entry["outputSchema"])
        assert entry["outputSchema"]["type"] == "object"
        assert isinstance(entry["annotations"]["readOnlyHint"], bool)


def test_snapshot_restore_round_trip_and_diff_reports_exact_changes() -> None:
    env = Environment(services=["email", "chat", "calendar"], seed=3)
    h0 = env.state_hash()
    s0 = env.snapshot()
    env.restore(s0)
    assert env.state_hash() == h0
    assert env.diff() == []

    r = env.call("email__gmail_create_label", {"name": "Escalations"})
    assert r["success"]
    lid = r["data"]["id"]
    changes = env.diff(s0)
    assert [(c.service, c.path, c.op) for c in changes] == [("email", f"labels/{lid}", "add")]
    assert changes[0].after == {"id": lid, "name": "Escalations", "type": "user"}

    mid = next(iter(env.services["email"].table("messages")))
    before_labels = env.services["email"].table("messages")[mid]["labelIds"]
    env.call("email__gmail_modify_email", {"messageId": mid, "addLabelIds": [lid]})
    changes = env.diff(s0)
    assert ("email", f"messages/{mid}/labelIds", "change", before_labels, [*before_labels, lid]) in [
        tuple(c) for c in changes
    ]

    s1 = env.snapshot()
    h1 = env.state_hash()
    env.restore(s0)
    assert env.state_hash() == h0 and env.diff() == []
    env.restore(s1)
    assert env.state_hash() == h1
    # A snapshot survives JSON round trips (it is plain data) and restores the same hash.
    env.restore(json.loads(json.dumps(s0)))
    assert env.state_hash() == h0


def test_snapshot_is_not_aliased_to_live_state() -> None:
    env = Environment(services=["email"], seed=1)
    s0 = env.snapshot()
    frozen = json.dumps(s0, sort_keys=True)
    env.call("email__gmail_create_label", {"name": "Later"})
    mid = next(iter(env.services["email"].table("messages")))
    env.call("email__gmail_delete_email", {"messageId": mid})
    assert json.dumps(s0, sort_keys=True) == frozen


def test_hash_changes_with_any_write_and_cache_is_correct() -> None:
    env = Environment(services=["chat"], seed=2)
    h0 = env.state_hash()
    ch = env.call("chat__slack_user_list_channels", {"channel_name": "general"})["data"]["channels"][0]["id"]
    env.call("chat__slack_user_post_message", {"channel_id": ch, "text": "hi"})
    h1 = env.state_hash()
    assert h1 != h0
    # the cached hash equals a from-scratch hash of the same state in a fresh environment
    fresh = Environment(services=["chat"], seed=2)
    fresh.restore(json.loads(json.dumps(env.snapshot())))
    assert fresh.state_hash() == h1


def test_same_seed_same_hashes_in_two_processes() -> None:
    code = (
        "import json; from tests.core.test_environment import run_script; print(json.dumps(run_script(11)))"
    )
    outs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert outs[0] == outs[1]
    hashes = json.loads(outs[0])
    assert hashes == run_script(11)
    assert len(set(hashes)) == 4  # two writes + one event; the failed call and the search change nothing
    assert run_script(12)[0] != hashes[0]


def test_composition_does_not_change_a_service_data() -> None:
    alone = Environment(services=["email"], seed=5)
    together = Environment(services=["chat", "email", "calendar"], seed=5)
    assert alone.services["email"].state_hash() == together.services["email"].state_hash()


def test_unknown_tool_and_bad_json_are_envelopes() -> None:
    env = Environment(services=["email"], seed=0, size="small")
    r = env.call("email__nope", {})
    assert r["error"]["code"] == 404 and "gmail_send_email" in r["error"]["message"]
    assert env.call("other__x", {})["error"]["code"] == 404
    r = env.call("email__gmail_read_email", "{not json")
    assert r["error"]["code"] == 400 and "not valid JSON" in r["error"]["message"]
    r = env.call("email__gmail_read_email", '{"messageId": 5}')
    assert r["error"]["code"] == 400 and "'messageId'" in r["error"]["message"]
    r = env.call("email__gmail_send_email", {"subject": "x", "body": "y", "cc": "not-a-list"})
    msg = r["error"]["message"]
    assert "'to' is required" in msg and "'cc'" in msg
    r = env.call("email__gmail_read_email", {"messageId": "a", "bogus": 1})
    assert "'bogus' is not a parameter" in r["error"]["message"]


def test_gateway_meta_tools() -> None:
    env = Environment(services=["email", "chat"], seed=0, size="small")
    names = [t["function"]["name"] for t in env.tools(mode="gateway")]
    assert names == ["list_services", "list_tools", "describe_tool", "call_tool"]
    services = env.call("list_services", {})["data"]
    assert {s["service"] for s in services} == {"email", "chat"}
    tools = env.call("list_tools", {"service": "chat"})["data"]
    assert any(t["tool"] == "chat__slack_user_post_message" for t in tools)
    desc = env.call("describe_tool", {"tool": "email__gmail_search_emails"})["data"]
    assert desc["input_schema"]["required"] == ["query"]
    r = env.call("call_tool", {"tool": "email__gmail_search_emails", "arguments": {"query": "invoice"}})
    assert r["success"] and r["data"]["messages"]
    assert env.call("call_tool", {"tool": "call_tool", "arguments": {}})["error"]["code"] == 404
    assert env.call("list_tools", {"service": "nope"})["error"]["code"] == 404
    assert all(is_envelope(env.call(n, None)) for n in names)


def test_bad_environment_arguments() -> None:
    with pytest.raises(KeyError, match="unknown service 'nope'"):
        Environment(services=["nope"])
    with pytest.raises(ValueError, match="unknown size"):
        Environment(services=["email"], size="huge")
    with pytest.raises(ValueError, match="listed twice"):
        Environment(services=["email", "email"])
    env = Environment(services=["email"], seed=0, size="small")
    with pytest.raises(ValueError, match="does not match"):
        env.restore({"clock": "2026-01-01T00:00:00Z", "services": {}})


def test_arguments_nested_past_the_recursion_limit_are_a_400_and_change_nothing() -> None:
    env = Environment(services=["kv", "email"], seed=0)
    deep: list = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]
    before = env.state_hash()
    for name, args in (("kv__delete", {"key": deep}), ("email__gmail_send_email", {"to": deep})):
        r = env.call(name, args)
        assert r["success"] is False and r["error"]["code"] == 400, r
    assert env.state_hash() == before


def test_isolated_tools_change_their_own_service_alone() -> None:
    """`Environment.isolated`: every service but the browser (bound to the others: it renders their
    pages and submits its forms to their tools) runs in its own state alone; the clock never moves."""
    env = Environment(services=["email", "chat", "calendar", "browser"], seed=3)
    assert env.isolated("email__gmail_send_email") and env.isolated("chat__slack_user_search_messages")
    assert not env.isolated("browser__open") and not env.isolated("nope__tool")
    for name, args in SCRIPT:
        before = env.snapshot()
        env.call(name, args)
        after = env.snapshot()
        assert after["clock"] == before["clock"]
        own = name.split("__", 1)[0]
        assert all(after["services"][s] is before["services"][s] for s in env.services if s != own), name
