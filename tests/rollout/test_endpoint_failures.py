"""`compoworld eval` when the endpoint fails (issue 15, CLI item 2; issue 17, item 6).

Endpoint failures are never finished episodes: they go to failures.jsonl, are reported apart, the
command exits non-zero, and the same command run again retries them (and only them).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.agents.policies import oracle_turns
from compoworld.cli.main import app
from compoworld.rollout.runner import load_run, pending_failures, read_jsonl
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task, save_tasks
from compoworld.tasks.pipeline import generate
from tests.scripted_server import ScriptedServer, tool_calls

runner = CliRunner()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> tuple[list[Task], Path]:
    tasks, _ = generate(6, seed=5, settings=Settings())
    path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    save_tasks(tasks, path)
    return tasks, path


def oracle_server(tasks: list[Task], profile: str = "vllm") -> ScriptedServer:
    """A scripted model that plays each task's reference, whichever task a request is for."""
    by_instruction = {t.instruction: t for t in tasks}

    def answer(body: dict) -> dict:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        task = next(t for i, t in by_instruction.items() if user.startswith(i))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        plan = oracle_turns(task)
        return (
            tool_calls(*plan[turn])
            if turn < len(plan)
            else tool_calls(("finish", {"answer": task.answer or ""}))
        )

    return ScriptedServer(default=answer, profile=profile, context=1_000_000)


def eval_args(path: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["eval", "--tasks", str(path), "--out", str(out), "--base-url", url, "--model", "m", *extra]


def test_a_dead_endpoint_fails_at_once_and_runs_nothing(tasks, tmp_path: Path) -> None:
    _, path = tasks
    t0 = time.perf_counter()
    r = runner.invoke(app, eval_args(path, tmp_path / "run", "http://127.0.0.1:9/v1"))
    assert r.exit_code == 1 and "cannot reach http://127.0.0.1:9/v1" in r.output
    assert time.perf_counter() - t0 < 15
    assert not read_jsonl(tmp_path / "run" / "episodes.jsonl")


def test_endpoint_failures_are_not_finished_and_a_rerun_retries_them(tasks, tmp_path: Path) -> None:
    task_list, path = tasks
    out = tmp_path / "run"
    with ScriptedServer(default={"status": 401, "error": "bad key"}, profile="vllm") as server:
        r = runner.invoke(app, eval_args(path, out, server.url, "--concurrency", "1"))
    assert r.exit_code == 1, r.output
    assert "failed at the endpoint (endpoint_error" in r.output and "run the same command again" in r.output
    assert "endpoint_failures (not finished)" in r.output and '{"endpoint_error": 4}' in r.output
    _, episodes, groups = load_run(out)
    assert episodes == [] and groups == []  # nothing counted as finished, nothing scored
    assert len(read_jsonl(out / "failures.jsonl")) == 4  # stopped after 4 in a row, not all 6
    assert "stopped early" in r.output and "2 not started" in r.output
    assert len(pending_failures(out)) == 4
    with oracle_server(task_list) as server:
        r = runner.invoke(app, eval_args(path, out, server.url))
    assert r.exit_code == 0, r.output
    assert "ran 6 episode(s), 0 already done" in r.output
    _, episodes, groups = load_run(out)
    assert len(episodes) == 6 and all(e["V"] == 1 and e["error_class"] == "ok" for e in episodes)
    assert len(groups) == 6 and pending_failures(out) == []
    server_runs = json.loads((out / "server.json").read_text())
    assert [s["profile"] for s in server_runs] == ["vllm", "vllm"] and server_runs[-1]["max_tokens"] == 4096
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["compact_history"] is False and cfg["request_max_tokens"] == 4096
    with oracle_server(task_list) as server:  # a third run has nothing left to do
        r = runner.invoke(app, eval_args(path, out, server.url))
        assert r.exit_code == 0 and "ran 0 episode(s), 6 already done" in r.output
        assert server.requests == []


def test_failures_in_an_old_run_directory_are_retried(tasks, tmp_path: Path) -> None:
    """Runs written before this change stored endpoint failures as finished episodes."""
    task_list, path = tasks
    out = tmp_path / "old"
    with oracle_server(task_list) as server:
        assert runner.invoke(app, eval_args(path, out, server.url)).exit_code == 0
    lines = (out / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first.update(error_class="endpoint_error", V=0, score=0.5)
    (out / "episodes.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert len(load_run(out)[1]) == 5
    with oracle_server(task_list) as server:
        r = runner.invoke(app, eval_args(path, out, server.url))
    assert r.exit_code == 0 and "ran 1 episode(s), 5 already done" in r.output
    assert len(load_run(out)[1]) == 6


def test_direct_tool_lists_that_cannot_fit_are_warned_about_before_any_request(tasks, tmp_path: Path) -> None:
    task_list, path = tasks
    with oracle_server(task_list, profile="vllm") as server:
        server.context = 3000  # /models says 3000 tokens: the direct tool lists need more
        r = runner.invoke(app, eval_args(path, tmp_path / "w", server.url, "--limit", "1"))
    assert "warning:" in r.output and "context window of 3000" in r.output and "--mode gateway" in r.output
    assert "server profile vllm (detected), context window 3000" in r.output
    _, episodes, _ = load_run(tmp_path / "w")
    assert episodes[0]["error_class"] == "context_overflow"  # classified, and finished: not retried


def test_bad_flags_fail_in_one_line(tasks, tmp_path: Path) -> None:
    _, path = tasks
    r = runner.invoke(
        app, eval_args(path, tmp_path / "x", "http://127.0.0.1:9/v1", "--server-profile", "tgi")
    )
    assert r.exit_code == 2 and "--server-profile must be one of auto, generic, openai, vllm" in r.output
    r = runner.invoke(app, eval_args(path, tmp_path / "x", "http://127.0.0.1:9/v1", "--mode", "compat"))
    assert r.exit_code == 2 and "--mode must be one of direct, gateway, gateway-compat" in r.output
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(path),
            "--agent",
            "oracle",
            "--mode",
            "gateway-compat",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 0 and all(e["V"] == 1 for e in load_run(tmp_path / "o")[1])
