"""The world model's prompt (bounded, relevant) and `worldmodel fidelity` against real endpoint
behaviour: dead, failing, and answering (issue 17 item 5; issue 15 CLI items 3 and 10)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.compiler.values import NoValue
from compoworld.core.environment import Environment
from compoworld.llm.client import LLMConfig
from compoworld.services import registry
from compoworld.worldmodel import WorldModel
from compoworld.worldmodel.fidelity import FidelityError, measure, random_args
from tests.scripted_server import ScriptedServer, say

runner = CliRunner()
DEAD = LLMConfig(base_url="http://127.0.0.1:9/v1", model="none", max_retries=0)


def test_prompts_stay_under_8k_tokens_for_every_library_service_at_the_default_size() -> None:
    wm = WorldModel(DEAD)
    rng = random.Random(0)
    worst: dict[str, int] = {}
    for name in sorted(registry()):
        env = Environment([name], seed=0, size="default")
        svc = env.services[name]
        for spec in svc.tool_specs.values():
            try:
                args = random_args(svc, spec, rng)
            except NoValue:
                continue
            worst[name] = max(worst.get(name, 0), wm.prompt_tokens_of(svc, spec, args))
    assert len(worst) >= 20 and max(worst.values()) <= 8000, worst


def test_the_prompt_names_the_argument_records_and_only_relevant_tables() -> None:
    env = Environment(["helpdesk"], seed=0, size="default")
    svc = env.services["helpdesk"]
    wm = WorldModel(DEAD)
    spec = svc.tool_specs["freshdesk_get_ticket_by_id"]
    key = sorted(svc.table("tickets"), key=str)[
        -1
    ]  # not in the head of the table: only the argument names it
    typed = int(key) if spec.input_schema["properties"]["ticket_id"].get("type") == "integer" else key
    state, tables = wm.prompt_state(svc, spec, {"ticket_id": typed})
    assert str(key) in state["tickets"] and set(tables) >= set(state)
    assert "agents" not in state and tables["agents"]["records"] == 11  # summarised, not shown
    assert len(state["tickets"]) <= wm.max_records + wm.sample
    whole = len(json.dumps({t: dict(v) for t, v in svc.store.tables.items()}, default=str))
    assert len(json.dumps([state, tables], default=str)) * 4 < whole


def proposal(body: dict[str, Any]) -> dict[str, Any]:
    return say(json.dumps({"success": True, "data": {}, "patch": []}))


def fidelity(url: str, out: Path, *extra: str) -> Any:
    return runner.invoke(
        app,
        [
            "worldmodel",
            "fidelity",
            "--services",
            "kv",
            "--model",
            "m",
            "--base-url",
            url,
            "--out",
            str(out),
            *extra,
        ],
    )


def test_fidelity_against_a_dead_endpoint_fails_in_one_line(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    r = fidelity("http://127.0.0.1:9/v1", tmp_path, "--calls", "20")
    assert r.exit_code == 1 and "cannot reach http://127.0.0.1:9/v1" in r.output
    assert "agreement" not in r.output and not (tmp_path / "fidelity.json").exists()
    assert time.perf_counter() - t0 < 15


def test_fidelity_refuses_figures_when_no_model_call_succeeds(tmp_path: Path) -> None:
    with ScriptedServer(default={"status": 500}, profile="vllm") as server:
        r = fidelity(server.url, tmp_path, "--calls", "20", "--retries", "0")
        assert len(server.requests) == 3  # it stopped after 3 failures, not 20
    assert r.exit_code == 1 and "never answered; no figures" in r.output and "agreement" not in r.output
    assert not (tmp_path / "fidelity.json").exists()
    wm = WorldModel(DEAD)
    env = Environment(["kv"], seed=0, size="small")
    with pytest.raises(FidelityError, match="no figures"):
        measure(env, wm, 2)


def test_fidelity_shows_progress_prompt_sizes_and_sends_its_limits(tmp_path: Path) -> None:
    with ScriptedServer(default=proposal, profile="llamacpp") as server:
        r = fidelity(server.url, tmp_path, "--calls", "10", "--max-tokens", "256", "--timeout", "5")
    assert r.exit_code == 0, r.output
    assert "fidelity: 10/10 calls" in r.output  # piped output gets progress lines
    assert "Prompt sizes (estimated tokens; max_tokens 256 per proposal)" in r.output
    assert all(req["max_tokens"] == 256 for req in server.requests)
    rep = json.loads((tmp_path / "fidelity.json").read_text())
    assert rep["prompt_tokens"]["kv"]["max"] > 0 and rep["model_calls"] == len(server.requests)
    assert rep["endpoint_failures"] == 0
