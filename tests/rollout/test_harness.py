"""Trajectories from an external harness: `examples/harness/collect.py` runs a harness process (the
bundled MCP client driving a scripted OpenAI-compatible model) against `serve http`, and writes a run
directory that `tasks judge` and the difficulty gate read as they read `compoworld eval`'s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.rollout.judging import collect
from compoworld.tasks.author import AuthorSettings, check_design, skeleton
from compoworld.tasks.model import Task, load_tasks, save_tasks
from tests.rollout.test_judging import judges
from tests.scripted_server import ScriptedServer, tool_calls
from tests.tasks.author_scripts import GOOD

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_collect_writes_a_run_the_judges_read(tmp_path):
    s = AuthorSettings(k=2, distractors=1, pool=("chat", "email"))
    data, _ = check_design(GOOD, skeleton(0, 0, s), 0, 0, s)
    task = Task.model_validate(data)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks([task], tasks)
    ref = task.reference_solution

    def agent(body):  # the model replays the reference, one call a turn, then finishes
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < len(ref):
            return tool_calls((ref[done].tool, ref[done].arguments))
        return tool_calls(("finish", {"answer": ""}))

    out = tmp_path / "run"
    with ScriptedServer(default=agent) as srv:
        cmd = [
            sys.executable,
            str(ROOT / "examples/harness/collect.py"),
            "--tasks",
            str(tasks),
            "--k",
            "2",
            "--out",
            str(out),
            "--base-url",
            srv.url,
            "--model",
            "scripted",
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
        why = [  # what a failed attempt saw, so a failure names its cause
            {k: e.get(k) for k in ("sample", "V", "error", "checks", "harness_output", "steps")}
            for e in lines
            if e["V"] != 1
        ]
        assert json.loads(r.stdout.splitlines()[-1]) == {
            "out": str(out),
            "episodes": 2,
            "V=1": 2,
            "timeouts": 0,
        }, json.dumps(why)[-6000:]
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)  # resumes: nothing to redo
        assert again.returncode == 0, again.stderr[-2000:]
        assert json.loads(again.stdout.splitlines()[-1])["episodes"] == 0
    eps = collect([out])[task.id]
    assert [e["sample"] for e in eps] == [0, 1] and all(e["V"] == 1 and not e["hinted"] for e in eps)
    assert [st["tool"] for st in eps[0]["steps"]] == [c.tool for c in ref]
    assert all(st["envelope"]["success"] for st in eps[0]["steps"])
    judged = tmp_path / "judged.jsonl"
    with ScriptedServer(default=judges()) as srv:
        j = runner.invoke(
            app,
            [
                "tasks",
                "judge",
                str(tasks),
                "--runs",
                str(out),
                "--model",
                "judge",
                "--base-url",
                srv.url,
                "--out",
                str(judged),
            ],
        )
    assert j.exit_code == 0, j.output
    [t] = load_tasks(judged)
    res = t.meta["judges"]
    assert res["consistency"] == {"episodes": 2, "agree": 2, "disagree": 0, "status": "pass"}
    assert res["difficulty"]["level"] == "insufficient" and res["difficulty"]["attempts"] == 2


def test_the_session_goes_into_each_harness_config(tmp_path):
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location("collect", ROOT / "examples/harness/collect.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.harness_configs(tmp_path, "http://127.0.0.1:1/mcp/s1", "tok")
    auth = {"Authorization": "Bearer tok"}
    assert json.loads((tmp_path / "opencode.json").read_text())["mcp"]["compoworld"]["headers"] == auth
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["compoworld"]["url"].endswith("/s1")
    codex = tomllib.loads((tmp_path / ".codex/config.toml").read_text())["mcp_servers"]["compoworld"]
    assert codex["http_headers"] == auth and codex["url"].endswith("/s1")


def test_the_default_harness_passes_a_token_that_looks_like_an_option():
    """An agent token is URL-safe base64, so one in 64 begins with '-': the default command must still
    hand it to `mcp_agent.py` as the token's value, not as an unknown option (seen as a flaky CI run)."""
    import importlib.util
    import shlex

    def load(name):
        spec = importlib.util.spec_from_file_location(name, ROOT / f"examples/harness/{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    collect_py, agent_py = load("collect"), load("mcp_agent")
    fields = {
        "mcp_url": "http://127.0.0.1:1/mcp",
        "agent_token": shlex.quote("-Xy_z-"),
        "base_url": shlex.quote("http://127.0.0.1:2/v1"),
        "model": shlex.quote("--m"),
        "instruction_file": shlex.quote("/tmp/task file.txt"),
    }
    argv = shlex.split(collect_py.DEFAULT_HARNESS.format(**fields))[2:]  # past the interpreter and script
    a = agent_py.parser().parse_args(argv)
    assert (a.token, a.model, a.instruction_file) == ("-Xy_z-", "--m", "/tmp/task file.txt")
