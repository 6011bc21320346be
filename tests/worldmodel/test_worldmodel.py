"""The world model against a local scripted OpenAI-compatible server (plumbing, not a model's result)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compoworld.compiler import compile_spec, service_from_manifest
from compoworld.core.environment import Environment
from compoworld.llm.client import LLMConfig
from compoworld.worldmodel import SimulationError, WorldModel, apply_patch, configure
from compoworld.worldmodel.fidelity import measure
from tests.compiler.fixtures import tasker
from tests.scripted_server import ScriptedServer, say

TASKER = service_from_manifest(compile_spec(tasker(), "tasker"))
SIM = "tasker__tasker_summarize_workload"


def answer(obj: Any) -> dict[str, Any]:
    return say(json.dumps(obj))


@pytest.fixture
def env() -> Iterator[Environment]:
    yield Environment([TASKER], seed=1, size="small")
    configure(None)


def model(server: ScriptedServer, cache: Path | None = None) -> WorldModel:
    wm = WorldModel(LLMConfig(base_url=server.url, model="scripted", max_retries=0), cache)
    configure(wm)
    return wm


def first_task(env: Environment) -> str:
    return sorted(env.services["tasker"].table("tasks"))[0]


def test_a_valid_patch_is_applied_and_marked_simulated(env: Environment) -> None:
    tid = first_task(env)
    patch = [{"op": "replace", "path": f"/tasks/{tid}/title", "value": "Renamed by the model"}]
    with ScriptedServer(
        [answer({"success": True, "data": {"summary": "all fine"}, "patch": patch})]
    ) as server:
        wm = model(server)
        r = env.call(SIM, {"team": "ops"})
        wm.close()
    assert r == {"success": True, "data": {"summary": "all fine"}, "simulated": True}
    assert env.services["tasker"].table("tasks")[tid]["title"] == "Renamed by the model"
    sent = json.loads(server.requests[0]["messages"][1]["content"])
    assert sent["tool"]["name"] == "tasker_summarize_workload" and sent["arguments"] == {"team": "ops"}
    assert tid in sent["state"]["tasks"]


@pytest.mark.parametrize(
    "patch",
    [
        lambda tid: [{"op": "replace", "path": f"/tasks/{tid}/priority", "value": "very high"}],  # wrong type
        lambda tid: [{"op": "add", "path": f"/tasks/{tid}/mood", "value": "happy"}],  # unknown field
        lambda tid: [{"op": "remove", "path": "/tasks/no-such-task"}],  # nothing there
        lambda tid: [{"op": "add", "path": "/new_table", "value": {}}],  # a table the service lacks
        lambda tid: {"op": "replace"},  # not a list
    ],
)
def test_an_invalid_patch_is_rejected_and_the_state_is_unchanged(env: Environment, patch) -> None:
    before = env.state_hash()
    with ScriptedServer([answer({"success": True, "data": {}, "patch": patch(first_task(env))})]) as server:
        wm = model(server)
        r = env.call(SIM, {})
        wm.close()
    assert not r["success"] and r["error"]["type"] == "simulation_error" and r["simulated"] is True
    assert env.state_hash() == before


@pytest.mark.parametrize(
    "text", ["Sure! The workload looks fine.", '{"data": 1}', "", '{"success": false, "error": "x"}']
)
def test_a_malformed_response_is_rejected(env: Environment, text: str) -> None:
    before = env.state_hash()
    with ScriptedServer([say(text)]) as server:
        wm = model(server)
        r = env.call(SIM, {})
        wm.close()
    assert not r["success"] and r["error"]["type"] == "simulation_error"
    assert env.state_hash() == before


def test_the_cache_makes_replays_identical_without_model_calls(env: Environment, tmp_path: Path) -> None:
    cache = tmp_path / "wm.jsonl"
    tid = first_task(env)
    script = [
        answer(
            {
                "success": True,
                "data": {"n": 1},
                "patch": [{"op": "replace", "path": f"/tasks/{tid}/notes", "value": "x"}],
            }
        ),
        answer({"success": True, "data": {"n": 2}, "patch": []}),
    ]
    with ScriptedServer(script) as server:
        wm = model(server, cache)
        first = env.call(SIM, {"team": "a"})
        h1 = env.state_hash()
        env.reset()
        again = env.call(SIM, {"team": "a"})  # same state, tool, arguments: from the cache
        assert again == first and env.state_hash() == h1 and len(server.requests) == 1 and wm.calls == 1
        wm.close()
    # a new process with the same cache file replays without any endpoint at all
    env.reset()
    wm2 = WorldModel(LLMConfig(base_url="http://127.0.0.1:9/v1", model="gone", max_retries=0), cache)
    configure(wm2)
    assert env.call(SIM, {"team": "a"}) == first and env.state_hash() == h1 and wm2.calls == 0
    # a different state is a different key: the (dead) endpoint is asked and the failure is clear
    r = env.call(SIM, {"team": "a"})
    assert not r["success"] and r["error"]["type"] == "simulation_error"
    wm2.close()


def test_fidelity_report_on_a_known_mix_of_right_and_wrong_answers() -> None:
    env = Environment([TASKER], seed=2, size="small")
    kind_of: dict[str, int] = {}  # project id -> how the scripted model answers it

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        req = json.loads(body["messages"][1]["content"])
        pid = req["arguments"]["project_id"]
        rec = req["state"]["projects"][pid]
        kind = kind_of.setdefault(pid, len(kind_of) % 3)
        if kind == 0:
            return answer({"success": True, "data": rec, "patch": []})  # right
        if kind == 1:
            return answer({"success": True, "data": {**rec, "name": "WRONG"}, "patch": []})  # one field wrong
        return answer(
            {"success": False, "error": {"code": 404, "type": "not_found", "message": "?"}, "patch": []}
        )

    with ScriptedServer(default=respond) as server:
        wm = WorldModel(LLMConfig(base_url=server.url, model="scripted", max_retries=0))
        report = measure(env, wm, 9, seed=0, tools=["tasker__tasker_get_project"])
        wm.close()
    fields = len(next(iter(env.services["tasker"].table("projects").values())))
    assert len(kind_of) == 3, "the draw should reach all three seeded projects"
    assert (
        report["calls"] == 9 and report["model_calls"] == len(server.requests) == 3
    )  # the rest from the cache
    kinds = [kind_of[s["arguments"]["project_id"]] for s in report["samples"]]
    right, wrong = kinds.count(0), kinds.count(1)
    t = report["tools"]["tasker__tasker_get_project"]
    assert t["success_agreement"] == pytest.approx((right + wrong) / 9)
    assert t["diff_exact"] == 1.0  # read-only tool, empty patches
    assert t["field_match"] == pytest.approx((right + wrong * (fields - 1) / fields) / 9)
    assert report["success_agreement"] == t["success_agreement"]


def test_fidelity_cli_writes_its_reports(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from compoworld.cli.main import app

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return answer({"success": True, "data": {}, "patch": []})

    with ScriptedServer(default=respond) as server:
        r = CliRunner().invoke(
            app,
            [
                "worldmodel",
                "fidelity",
                "--services",
                "kv",
                "--calls",
                "5",
                "--model",
                "m",
                "--base-url",
                server.url,
                "--out",
                str(tmp_path),
            ],
        )
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "fidelity.json").read_text())
    assert rep["calls"] == 5 and set(rep["tools"]) <= {
        f"kv__{t}" for t in Environment(["kv"]).services["kv"].tool_specs
    }
    assert "| tool |" in (tmp_path / "fidelity.md").read_text()
    r = CliRunner().invoke(
        app,
        ["worldmodel", "fidelity", "--services", "kv", "--calls", "5"],
        env={"COMPOWORLD_BASE_URL": "", "COMPOWORLD_MODEL": ""},
    )
    assert r.exit_code == 2 and "no model endpoint" in r.output


def test_apply_patch_follows_rfc_6902() -> None:
    doc = {"t": {"a": {"x": 1, "l": [1, 2]}}}
    out = apply_patch(
        doc,
        [
            {"op": "add", "path": "/t/a/l/-", "value": 3},
            {"op": "copy", "from": "/t/a/x", "path": "/t/a/y"},
            {"op": "move", "from": "/t/a/y", "path": "/t/a/z"},
            {"op": "test", "path": "/t/a/z", "value": 1},
            {"op": "remove", "path": "/t/a/l/0"},
        ],
    )
    assert out == {"t": {"a": {"x": 1, "l": [2, 3], "z": 1}}} and doc == {"t": {"a": {"x": 1, "l": [1, 2]}}}
    with pytest.raises(SimulationError):
        apply_patch(doc, [{"op": "test", "path": "/t/a/x", "value": 2}])


def test_fidelity_counts_a_call_without_a_valid_proposal_as_a_disagreement() -> None:
    # the model answers prose, never a proposal: the read-only tool's empty real diff must not "match"
    env = Environment([TASKER], seed=2, size="small")
    with ScriptedServer(default=lambda body: say("I think the project exists.")) as server:
        wm = WorldModel(LLMConfig(base_url=server.url, model="scripted", max_retries=0))
        report = measure(env, wm, 6, seed=0, tools=["tasker__tasker_get_project"])
        wm.close()
    assert report["calls"] == 6 and report["valid_proposals"] == 0
    assert report["diff_exact"] == 0.0 and report["success_agreement"] == 0.0 and report["field_match"] == 0.0
    from compoworld.worldmodel.fidelity import render

    assert "0 of 6 had a valid proposal" in render(report)
