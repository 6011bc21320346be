"""`compoworld eval`, `report` and `export` end to end: baselines, resume after kill -9, formats."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.export.rl import score_completion
from compoworld.export.sft import sft_record
from compoworld.rollout.metrics import pass_at_k, pass_hat_k
from compoworld.rollout.runner import load_run
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import load_tasks, save_tasks
from compoworld.tasks.pipeline import generate
from tests.rollout.formats import validate_openai, validate_trl
from tests.scripted_server import ScriptedServer, tool_calls

runner = CliRunner()


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory) -> Path:
    tasks, _ = generate(200, seed=13, settings=Settings())
    path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    save_tasks(tasks, path)
    return path


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6) and pass_hat_k(4, 4, 3) == 1.0


def test_oracle_and_noop_on_200_tasks_and_sft_export(tasks_file: Path, tmp_path: Path) -> None:
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tasks_file),
            "--agent",
            "oracle",
            "--concurrency",
            "16",
            "--out",
            str(tmp_path / "oracle"),
        ],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["report", str(tmp_path / "oracle"), "--json"])
    report = json.loads(r.output)
    assert report["pass@1"] == 1.0 and report["episodes"] == 200 and report["error_classes"] == {"ok": 200}
    assert (tmp_path / "oracle" / "report.md").exists() and (
        tmp_path / "oracle" / "pass_rate_by_domain.png"
    ).stat().st_size > 1000
    assert set(report["by"]["domains"]) and all(v["pass_rate"] == 1.0 for v in report["by"]["L"].values())
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tasks_file),
            "--agent",
            "noop",
            "--concurrency",
            "16",
            "--out",
            str(tmp_path / "noop"),
        ],
    )
    assert r.exit_code == 0
    noop = json.loads(runner.invoke(app, ["report", str(tmp_path / "noop"), "--json"]).output)
    assert noop["pass@1"] == 0.0 and noop["mean_score"] == 0.0  # doing nothing earns no credit
    for fmt, validate in (("openai", validate_openai), ("trl", validate_trl)):
        out = tmp_path / f"sft_{fmt}.jsonl"
        r = runner.invoke(
            app, ["export", "sft", "--runs", str(tmp_path / "oracle"), "--format", fmt, "--out", str(out)]
        )
        assert r.exit_code == 0, r.output
        lines = out.read_text().splitlines()
        assert len(lines) == 200
        for line in lines:
            validate(json.loads(line))
    empty = tmp_path / "none.jsonl"
    runner.invoke(
        app, ["export", "sft", "--runs", str(tmp_path / "noop"), "--format", "openai", "--out", str(empty)]
    )
    assert empty.read_text() == ""
    _, episodes, groups = load_run(tmp_path / "oracle")
    assert len(groups) == 200 and all(g["reward_compoworld"] == [1.0] for g in groups)
    assert all(e["reward_wildawm"] == 1.0 for e in episodes)


def test_gateway_mode_and_k_samples(tasks_file: Path, tmp_path: Path) -> None:
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tasks_file),
            "--agent",
            "oracle",
            "--mode",
            "gateway",
            "--k",
            "3",
            "--limit",
            "5",
            "--out",
            str(tmp_path / "gw"),
        ],
    )
    assert r.exit_code == 0, r.output
    _, episodes, groups = load_run(tmp_path / "gw")
    assert (
        len(episodes) == 15
        and all(e["V"] == 1 for e in episodes)
        and all(
            s["tool"] in ("call_tool", "list_services", "list_tools", "describe_tool")
            for e in episodes
            for s in e["steps"]
        )
        and all(e["steps"][0]["tool"] == "list_services" for e in episodes)  # discovery comes first
    )
    assert len(groups) == 5 and all(len(g["reward_compoworld"]) == 3 for g in groups)
    rec = sft_record(episodes[0], "openai")
    validate_openai(rec)
    assert {t["function"]["name"] for t in rec["tools"]} == {
        "list_services",
        "list_tools",
        "describe_tool",
        "call_tool",
        "finish",
    }
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tasks_file),
            "--agent",
            "noop",
            "--k",
            "3",
            "--limit",
            "5",
            "--out",
            str(tmp_path / "gw"),
        ],
    )
    assert r.exit_code == 2 and "use another --out" in r.output


def test_kill_and_resume_loses_and_repeats_nothing(tasks_file: Path, tmp_path: Path) -> None:
    small = tmp_path / "six.jsonl"
    save_tasks(load_tasks(tasks_file)[:6], small)
    out = tmp_path / "run"
    finish = tool_calls(("finish", {"answer": ""}))
    with ScriptedServer(default={"sleep": 0.15, **finish}) as server:
        cmd = [
            sys.executable,
            "-m",
            "compoworld.cli.main",
            "eval",
            "--tasks",
            str(small),
            "--model",
            "m",
            "--base-url",
            server.url,
            "--k",
            "2",
            "--concurrency",
            "2",
            "--out",
            str(out),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        episodes = out / "episodes.jsonl"
        deadline = time.time() + 30
        while time.time() < deadline and (
            not episodes.exists() or len(episodes.read_bytes().splitlines()) < 3
        ):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = len(load_run(out)[1])
        assert 3 <= before < 12
        with episodes.open("ab") as f:  # a torn line, as a kill in the middle of a write would leave
            f.write(b'{"task_id": "cw-13-0000')
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"{12 - before} episode(s), {before} already done" in done.stdout
    _, eps, groups = load_run(out)
    keys = [(e["task_id"], e["sample"]) for e in eps]
    assert len(keys) == len(set(keys)) == 12
    assert len(groups) == 6 and len({g["task_id"] for g in groups}) == 6


def test_rl_export_and_reward_from_state(tasks_file: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    tasks = load_tasks(tasks_file)[:10]
    small = tmp_path / "ten.jsonl"
    save_tasks(tasks, small)
    for fmt in ("verl", "trl"):
        out = tmp_path / f"rl_{fmt}.parquet"
        r = runner.invoke(app, ["export", "rl", "--tasks", str(small), "--format", fmt, "--out", str(out)])
        assert r.exit_code == 0, r.output
        rows = pq.read_table(out).to_pylist()
        assert len(rows) == 10
        first = rows[0]
        task_json = first["extra_info"]["task"] if fmt == "verl" else first["task"]
        assert json.loads(task_json)["id"] == tasks[0].id  # the reward's inputs travel with the prompt
        prompt = first["prompt"]
        assert prompt[0]["role"] == "system" and tasks[0].instruction in prompt[1]["content"]
        if fmt == "verl":
            assert first["data_source"] == "compoworld" and first["reward_model"]["style"] == "rule"
    # the reward of a completion comes from replaying its tool calls on the task's state
    t = tasks[0]
    good = [
        {
            "role": "assistant",
            "tool_calls": [
                {"function": {"name": c.tool, "arguments": json.dumps(c.arguments)}}
                for c in t.reference_solution
            ],
        },
        {
            "role": "assistant",
            "tool_calls": [
                {"function": {"name": "finish", "arguments": json.dumps({"answer": t.answer or ""})}}
            ],
        },
    ]
    assert score_completion(t.to_json().decode(), good)["V"] == 1
    assert score_completion(t.to_json().decode(), [{"role": "assistant", "content": "done"}])["V"] == 0


def test_eval_errors_are_clear(tasks_file: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("COMPOWORLD_BASE_URL", raising=False)
    monkeypatch.delenv("COMPOWORLD_MODEL", raising=False)
    r = runner.invoke(app, ["eval", "--tasks", str(tasks_file), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "COMPOWORLD_BASE_URL" in r.output
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tmp_path / "missing.jsonl"),
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert r.exit_code == 2 and "no such task file" in r.output
    assert runner.invoke(app, ["report", str(tmp_path / "nope")]).exit_code == 2
