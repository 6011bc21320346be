"""Action-dispatch tools (issue 14): `gitlab_issue(action, params)` is one tool with one op per action,
each action's params schema read from the description ("- get: project_id*, issue_iid*"), or the
actions from an enum. An unknown action and a missing or mistyped param are 400s naming what is wrong;
actions whose verb the compiler knows run as code, the rest are simulated with their cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compoworld.compiler import compile_spec, load_spec, service_from_manifest
from compoworld.compiler.compiler import id_param
from compoworld.compiler.ingest import dispatch_of
from compoworld.core.environment import Environment

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"
GITLAB = SPECS / "corpus" / "docker_gitlab-mcp-server.json"
S = {"type": "string"}

NOTES_DESC = """Manage notes. Use {"action": "...", "params": {...}}.
Action guidance:
- create: Create a note with a title.
- get: Fetch one note.
Param conventions: * = required.
- create: title*, body, tags ([]string)
- get / delete: note_id*
- list: search, created_after/before (ISO 8601)
- frobnicate: note_id*, level
"""

NOTES: dict[str, Any] = {
    "server": "Notes (test fixture)",
    "tools": [
        {
            "name": "notes_note",
            "description": NOTES_DESC,
            "inputSchema": {
                "type": "object",
                "properties": {"action": S, "params": {"type": "object"}},
                "required": ["action", "params"],
            },
        },
        {
            "name": "notes_tag",
            "description": "Tags. operation picks what to do.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "enum": ["create", "list", "frobnicate"]},
                    "params": {"type": "object"},
                },
                "required": ["operation"],
            },
        },
    ],
}


def _call(env: Environment, tool: str, action: str, params: Any, key: str = "action") -> dict[str, Any]:
    return env.call(f"svc__{tool}", {key: action, "params": params})


def test_params_are_read_from_the_param_section_not_the_guidance() -> None:
    d = dispatch_of(load_spec(NOTES).tools[0])
    assert d is not None and (d.action_param, d.params_param) == ("action", "params")
    assert sorted(d.actions) == ["create", "delete", "frobnicate", "get", "list"]
    assert d.actions["create"]["required"] == ["title"]
    assert d.actions["create"]["properties"]["tags"]["type"] == "array"
    assert d.actions["delete"]["required"] == ["note_id"]  # `get / delete` share their params
    assert set(d.actions["list"]["properties"]) == {"search", "created_after", "created_before"}
    tag = dispatch_of(load_spec(NOTES).tools[1])
    assert tag is not None and sorted(tag.actions) == ["create", "frobnicate", "list"]  # from the enum


def test_synthetic_dispatch_runs_compiled_actions_and_simulates_the_rest() -> None:
    m = compile_spec(NOTES, "svc")
    note = next(t for t in m["tools"] if t["name"] == "notes_note")
    acts = note["op"]["actions"]
    assert note["status"] == "compiled" and note["op"]["kind"] == "dispatch"
    assert {a: acts[a]["op"]["kind"] for a in ("create", "get", "list", "delete")} == {
        "create": "create",
        "get": "get",
        "list": "list",
        "delete": "delete",
    }
    assert all(acts[a]["tests"] == "passed" for a in ("create", "get", "list", "delete"))
    assert acts["frobnicate"]["status"] == "simulated" and acts["frobnicate"]["cause"]
    assert note["actions_code"] == 4
    env = Environment([service_from_manifest(m)], seed=0, size="small")
    made = _call(env, "notes_note", "create", {"title": "Groceries", "body": "milk"})
    assert made["success"], made
    key = made["data"]["id"]
    got = _call(env, "notes_note", "get", {"note_id": key})
    assert got["success"] and got["data"]["title"] == "Groceries" and got["simulated"] is False
    listed = _call(env, "notes_note", "list", {})
    assert key in [r["id"] for r in listed["data"]["items"]]
    before = env.state_hash()
    bad = _call(env, "notes_note", "create", {"title": 5})
    assert bad["error"]["code"] == 400 and "title" in bad["error"]["message"]
    sim = _call(env, "notes_note", "frobnicate", {"note_id": key})
    assert sim["simulated"] is True and not sim["success"]  # no world model configured here
    tag = _call(env, "notes_tag", "create", {"name": "x"}, key="operation")
    assert tag["success"], tag
    after_tag = env.state_hash()
    unknown = _call(env, "notes_tag", "explode", {}, key="operation")
    assert unknown["error"]["code"] == 400
    assert all(a in unknown["error"]["message"] for a in ("'explode'", "create", "frobnicate", "list"))
    assert env.state_hash() == after_tag != before


def test_iid_names_the_record() -> None:
    props = {"project_id": S, "issue_iid": S}
    assert id_param("issue", props, ["project_id", "issue_iid"]) == "issue_iid"


@pytest.mark.skipif(not GITLAB.is_file(), reason="the corpus of real specs is not here")
def test_gitlab_issue_create_get_unknown_action_and_missing_param() -> None:
    m = compile_spec(GITLAB, "svc")
    issue = next(t for t in m["tools"] if t["name"] == "gitlab_issue")
    acts = issue["op"]["actions"]
    assert issue["status"] == "compiled" and issue["actions_code"] >= 20
    assert acts["get"]["op"]["id_param"] == "issue_iid" and acts["get"]["tests"] == "passed"
    assert acts["get"]["input_schema"]["required"] == ["project_id", "issue_iid"]
    svc_cls = service_from_manifest(m)
    env = Environment([svc_cls], seed=0, size="small")
    projects = sorted(env.services["svc"].table(m["resources"]["project"]["table"]))
    made = _call(env, "gitlab_issue", "create", {"project_id": projects[0], "title": "Login fails"})
    assert made["success"], made
    got = _call(env, "gitlab_issue", "get", {"project_id": projects[0], "issue_iid": made["data"]["id"]})
    assert got["success"] and got["data"]["title"] == "Login fails"
    before = env.state_hash()
    unknown = _call(env, "gitlab_issue", "fly", {"project_id": projects[0]})
    msg = unknown["error"]["message"]
    assert unknown["error"]["code"] == 400 and "'fly'" in msg
    assert all(a in msg for a in ("create", "get", "list", "note_create"))
    missing = _call(env, "gitlab_issue", "get", {"project_id": projects[0]})
    assert missing["error"]["code"] == 400 and "issue_iid" in missing["error"]["message"]
    orphan = _call(env, "gitlab_issue", "create", {"project_id": "nope", "title": "x"})
    assert orphan["error"]["code"] == 404  # the parent project must exist
    assert env.state_hash() == before
