"""Spec ingestion, inference, manifests, adversarial quarantine, the runtime and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compoworld.compiler import (
    compile_manifest,
    compile_spec,
    load_spec,
    run_adversarial,
    service_from_manifest,
)
from compoworld.compiler.runtime import ManifestError
from compoworld.core.envelope import is_envelope
from compoworld.core.environment import Environment
from tests.compiler.fixtures import crm, tasker

SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"


def by_name(m: dict) -> dict[str, dict]:
    return {t["name"]: t for t in m["tools"]}


def test_ingest_reports_every_defect_kind_and_never_crashes(tmp_path: Path) -> None:
    spec = load_spec(tasker())
    kinds = {d.kind for d in spec.defects}
    assert {
        "missing_description",
        "invalid_name",
        "ref",
        "pattern",
        "invalid_schema",
        "all_required",
        "bad_tool",
    } <= kinds
    tools = {t.name: t for t in spec.tools}
    assert (
        "tasker_export_report" in tools
        and tools["tasker_export_report"].original_name == "tasker.export-report"
    )
    assert tools["tasker_export_report"].input_schema["properties"]["fmt"] == {
        "type": "string",
        "enum": ["csv", "pdf"],
    }
    upd = tools["tasker_update_project"].input_schema
    assert "pattern" not in upd["properties"]["code"] and upd["properties"]["budget"]["type"] == "integer"
    assert "description" not in upd["required"]  # said "Optional": no longer required
    assert tools["tasker_get_task_count"].description  # described from its name
    # other input shapes, and garbage
    assert [t.name for t in load_spec(crm()).tools][:2] == ["create_contact", "get_contact_by_email"]
    assert len(load_spec(list(crm()["result"]["tools"])).tools) == 6
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert load_spec(bad).tools == [] and load_spec(bad).defects[0].kind == "bad_spec"
    assert load_spec({"tools": 5}).defects[0].kind == "bad_spec"
    assert load_spec(
        {"tools": [{"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}}]}
    ).tools


def test_inference_of_operations_and_resources() -> None:
    m = compile_manifest(load_spec(tasker()))
    ops = {n: t["op"] for n, t in by_name(m).items()}
    assert ops["tasker_create_task"]["kind"] == "create" and ops["tasker_create_task"]["resource"] == "task"
    assert ops["tasker_create_task"]["parent"] == {
        "resource": "project",
        "param": "project_id",
        "field": "project_id",
    }
    assert ops["tasker_get_task"] == {**ops["tasker_get_task"], "kind": "get", "id_param": "task_id"}
    assert (
        ops["tasker_search_tasks"]["kind"] == "list" and ops["tasker_list_projects"]["resource"] == "project"
    )
    assert ops["tasker_update_task"]["kind"] == "update" and ops["tasker_delete_task"]["kind"] == "delete"
    assert ops["tasker_close_task"] == {
        **ops["tasker_close_task"],
        "kind": "transition",
        "field": "status",
        "value": "closed",
    }
    assert (
        ops["tasker_add_label_to_task"]["kind"] == "relate"
        and ops["tasker_add_label_to_task"]["member"] == "label"
    )
    assert (
        ops["tasker_add_comment_to_task"]["kind"] == "create"
        and ops["tasker_add_comment_to_task"]["resource"] == "comment"
    )
    assert by_name(m)["tasker_summarize_workload"]["status"] == "simulated"
    assert set(m["resources"]) >= {"project", "task", "comment"}
    assert {"title", "notes", "priority", "project_id", "status", "label_ids"} <= set(
        m["resources"]["task"]["fields"]
    )
    c = compile_manifest(load_spec(crm()), "crm_fixture")
    cops = {n: t["op"] for n, t in by_name(c).items()}
    assert cops["get_contact_by_email"]["lookup"] == "email"
    assert cops["search_contacts"]["kind"] == "list" and cops["send_message"]["kind"] == "create"
    assert cops["send_message"]["resource"] == "message" and cops["list_messages"]["kind"] == "list"
    # the manifest is data: it survives JSON and names every tool exactly as the spec does
    assert json.loads(json.dumps(m)) == m
    assert [t["name"] for t in c["tools"]] == [t["name"] for t in crm()["result"]["tools"]]


def test_adversarial_tests_pass_good_tools_and_quarantine_broken_ones() -> None:
    m = compile_spec(tasker(), "tasker")
    status = {t["name"]: t["status"] for t in m["tools"]}
    compiled = [n for n, s in status.items() if s == "compiled"]
    assert {
        "tasker_create_task",
        "tasker_get_task",
        "tasker_update_task",
        "tasker_delete_task",
        "tasker_search_tasks",
        "tasker_close_task",
        "tasker_add_label_to_task",
    } <= set(compiled)
    assert all(t["tests"] == "passed" for t in m["tools"] if t["status"] == "compiled")
    # break the manifest: tasks no longer store `title` / `notes`, so updates cannot land
    broken = compile_manifest(load_spec(tasker()), "tasker")
    for f in ("title", "notes"):
        broken["resources"]["task"]["fields"].pop(f)
    run_adversarial(broken)
    t = by_name(broken)["tasker_update_task"]
    assert t["status"] == "quarantined" and t["cause"] == "update_not_visible", t
    assert by_name(broken)["tasker_delete_task"]["status"] == "compiled"


def test_compiled_service_runs_like_a_library_service() -> None:
    cls = service_from_manifest(compile_spec(tasker(), "tasker"))
    env = Environment([cls, "chat"], seed=3, size="small")
    pid = sorted(env.services["tasker"].table("projects"))[0]
    r = env.call(
        "tasker__tasker_create_task", {"project_id": pid, "title": "Ship the Q3 report", "priority": 2}
    )
    assert r["success"] and r["simulated"] is False and is_envelope(r)
    tid = r["data"]["id"]
    assert env.call("tasker__tasker_get_task", {"task_id": tid})["data"]["title"] == "Ship the Q3 report"
    found = env.call("tasker__tasker_search_tasks", {"query": "q3 report"})["data"]["items"]
    assert [x["id"] for x in found] == [tid]
    assert env.call("tasker__tasker_close_task", {"task_id": tid})["data"]["status"] == "closed"
    before = env.state_hash()
    for args, code in (
        ({"project_id": "nope", "title": "x"}, 404),
        ({"title": "x"}, 400),
        ({"project_id": pid, "title": 5}, 400),
    ):
        bad = env.call("tasker__tasker_create_task", args)
        assert not bad["success"] and bad["error"]["code"] == code and is_envelope(bad)
    assert env.state_hash() == before
    sim = env.call("tasker__tasker_summarize_workload", {})
    assert (
        not sim["success"]
        and sim["simulated"] is True
        and sim["error"]["type"] == "world_model_unavailable"
        and sim["error"]["code"] == 503
    )
    # determinism: same seed, same state; snapshots rebuild it exactly
    again = Environment([cls, "chat"], seed=3, size="small")
    assert again.state_hash() == Environment([cls, "chat"], seed=3, size="small").state_hash()
    assert all(v is None for v in env.validate().values())
    with pytest.raises(ManifestError):
        service_from_manifest({"manifest_version": 1, "service": "Bad Name", "tools": [], "resources": {}})


def _cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compoworld.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=300,
    )


def test_cli_compile_report_and_tasks_over_compiled_and_library_services(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "tasker.json").write_text(json.dumps(tasker()))
    (specs / "crm_fixture.json").write_text(json.dumps(crm()))
    (specs / "broken.json").write_text("][")
    r = _cli("spec", "compile", str(specs / "tasker.json"), "--out", str(tmp_path / "m" / "tasker.json"))
    assert r.returncode == 0, r.stderr
    assert "compiled" in r.stdout and "simulated" in r.stdout and "tasker_summarize_workload" in r.stdout
    r = _cli("spec", "report", str(specs), "--json", "--out", str(tmp_path / "m"))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["specs"] == 3 and rep["compiled"] >= 0.7 * rep["tools"]
    assert sum(rep["causes"].values()) == rep["quarantined"] + rep["simulated"]
    m = tmp_path / "m"
    # the library lists the compiled services, with how many of their tools run as code
    r = _cli("--manifests", str(m), "services", "--json")
    lib = {x["name"]: x for x in json.loads(r.stdout)["services"]}
    man = json.loads((m / "tasker.json").read_text())
    as_code = sum(t["status"] == "compiled" for t in man["tools"])
    assert lib["tasker"]["tools"] == len(man["tools"]) and lib["tasker"]["as_code"] == as_code < len(
        man["tools"]
    )
    assert lib["email"]["as_code"] == lib["email"]["tools"]  # hand-built tools are all code
    out = tmp_path / "tasks.jsonl"
    r = _cli(
        "--manifests",
        str(m),
        "tasks",
        "generate",
        "--n",
        "4",
        "--k",
        "4",
        "--distractors",
        "1",
        "--services",
        "tasker,crm_fixture,email,chat",
        "--seed",
        "5",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(tasks) == 4 and all(
        set(t["services"]) == {"tasker", "crm_fixture", "email", "chat"} for t in tasks
    )
    r = _cli("--manifests", str(m), "tasks", "check", str(out))
    assert r.returncode == 0 and "4/4" in r.stdout, r.stdout + r.stderr
    # without the manifests the tasks cannot be built, and the error says which service is missing
    r = _cli("tasks", "check", str(out))
    assert r.returncode != 0 and "tasker" in (r.stdout + r.stderr)


@pytest.mark.skipif(not SPECS.exists(), reason="shared/mcp-specs is not next to the checkout")
def test_corpus_compiles_at_least_70_percent() -> None:
    total = compiled = 0
    for f in sorted(SPECS.glob("*.json")):
        m = compile_spec(f)
        total += len(m["tools"])
        compiled += sum(t["status"] == "compiled" for t in m["tools"])
    assert total > 600 and compiled / total >= 0.7
