"""Real third-party harnesses: OpenCode (npm `opencode-ai`) and Codex CLI (npm `@openai/codex`) work a
task over `serve http`, through `examples/harness/collect.py`, driven by a streaming scripted endpoint
(chat completions for OpenCode, the Responses API for Codex) that replays the reference by the tool
names each harness offers (OpenCode prefixes MCP tools with the server's name, Codex puts them in a
namespace).

Slow, and skipped unless the harness is installed (`npm i -g opencode-ai @openai/codex`, or
COMPOWORLD_OPENCODE / COMPOWORLD_CODEX = PATH); OpenCode fetches its `@ai-sdk/openai-compatible`
provider from npm on first use."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compoworld.rollout.judging import collect
from compoworld.tasks.author import AuthorSettings, check_design, skeleton
from compoworld.tasks.model import Task, save_tasks
from tests.rollout.stream_server import StreamingServer
from tests.tasks.author_scripts import GOOD

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


HARNESSES = {
    "opencode": ("COMPOWORLD_OPENCODE", "cd {{config_dir}} && HOME={{config_dir}} {exe} run {{instruction}}"),
    "codex": (
        "COMPOWORLD_CODEX",
        "cd {{config_dir}} && CODEX_HOME={{config_dir}}/.codex {exe} exec --skip-git-repo-check {{instruction}}",
    ),
}


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_harness_trajectories_come_back_in_the_run_format(tmp_path, harness):
    var, template = HARNESSES[harness]
    exe = os.environ.get(var) or shutil.which(harness)
    if not exe:
        pytest.skip(f"{harness} is not installed (npm i -g opencode-ai @openai/codex, or {var}=PATH)")
    s = AuthorSettings(k=2, distractors=1, pool=("chat", "email"))
    data, _ = check_design(GOOD, skeleton(0, 0, s), 0, 0, s)
    task = Task.model_validate(data)
    tasks = tmp_path / "tasks.jsonl"
    save_tasks([task], tasks)
    ref = [(c.tool, c.arguments) for c in task.reference_solution]

    def policy(body):
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        done = sum(1 for m in body["messages"] if m.get("role") == "tool")
        if not offered:
            return {"content": "Done."}  # OpenCode's own side requests (a session title)
        if done < len(ref):
            name = next(t for t in offered if t.endswith(ref[done][0]))
            return {"tool": name, "args": ref[done][1]}
        if done == len(ref):
            return {"tool": next(t for t in offered if t.endswith("finish")), "args": {"answer": ""}}
        return {"content": "All done."}

    out = tmp_path / harness
    with StreamingServer(policy) as srv:
        r = subprocess.run(
            [
                sys.executable,
                str(ROOT / "examples/harness/collect.py"),
                "--tasks",
                str(tasks),
                "--k",
                "1",
                "--out",
                str(out),
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--name",
                harness,
                "--timeout",
                "300",
                "--harness",
                template.format(exe=exe),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1])["V=1"] == 1
    [ep] = collect([out])[task.id]
    assert ep["agent"] == f"harness:{harness}" and ep["V"] == 1
    assert [st["tool"] for st in ep["steps"]] == [t for t, _ in ref]
