"""The CLI's sharp edges, as a new user meets them: impossible settings, truncated output, non-specs,
busy ports, missing manifests, task dicts, report plots."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.rollout.report import write_report
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task, load_tasks, save_tasks
from compoworld.verify import verify

runner = CliRunner()


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> tuple[Path, Task]:
    task = Task.model_validate(
        generate_task(31, 0, Settings(k=3, distractors=2, walk_min=4, walk_max=5, answer_rate=1.0))
    )
    path = tmp_path_factory.mktemp("cli") / "tasks.jsonl"
    save_tasks([task], path)
    return path, task


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--k", "12"], "cannot cover 12 services and revisit one (give --walk 13:15"),
        (["--k", "28", "--walk", "29:30"], "--k 28 is more than the"),
        (["--k", "6", "--walk", "4:6"], "a walk of at most 6 steps cannot cover 6"),
        (["--k", "4", "--services", "email,chat,crm"], "--k 4 is more than the 3 services of --services"),
    ],
)
def test_tasks_generate_refuses_impossible_settings_up_front(tmp_path: Path, args, says) -> None:
    r = runner.invoke(app, ["tasks", "generate", "--n", "3", *args, "--out", str(tmp_path / "t.jsonl")])
    assert r.exit_code == 2 and says in " ".join(r.output.replace("│", " ").split()), r.output
    assert not (tmp_path / "t.jsonl").exists()


def test_tasks_show_wraps_instead_of_cutting_and_prints_json(task_file, monkeypatch) -> None:
    from rich.console import Console

    from compoworld.cli import tasks as cli_tasks

    path, _ = task_file
    task = load_tasks(path)[0]
    monkeypatch.setattr(cli_tasks, "console", Console(width=80))
    r = runner.invoke(app, ["tasks", "show", str(path)])
    assert r.exit_code == 0 and "…" not in r.output  # narrow: cells wrap, nothing is cut
    monkeypatch.setattr(cli_tasks, "console", Console(width=2000))
    wide = runner.invoke(app, ["tasks", "show", str(path)]).output
    for c in task.reference_solution:  # every argument in full, and every check
        assert json.dumps(c.arguments, ensure_ascii=False) in wide
    for item in task.rubric:
        assert json.dumps(item.check, ensure_ascii=False) in wide
    r = runner.invoke(app, ["tasks", "show", str(path), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["id"] == task.id
    assert json.loads(r.output)["rubric"] == [x.model_dump(mode="json") for x in task.rubric]


def test_verify_accepts_a_task_dict_loaded_from_jsonl(task_file) -> None:
    path, task = task_file
    as_dict = json.loads(path.read_text().splitlines()[0])
    assert "initial_state" not in as_dict  # stored as a patch against the shared world
    env = task.environment()
    for c in task.reference_solution:
        env.call(c.tool, c.arguments)
    assert verify(as_dict, env.snapshot(), task.answer).passed
    assert verify(as_dict, env.snapshot(), task.answer) == verify(task, env.snapshot(), task.answer)
    with pytest.raises(ValueError, match="not a valid task dict"):
        verify({"id": "x", "rubric": []}, {})


def test_spec_compile_rejects_a_file_that_is_not_a_spec(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# Not a spec\n")
    empty = tmp_path / "empty.json"
    empty.write_text('{"tools": []}')
    for f, why in ((readme, "cannot read"), (empty, "lists no tools")):
        r = runner.invoke(app, ["spec", "compile", str(f), "--out", str(tmp_path / "m.json")])
        assert r.exit_code == 2 and "is not an MCP tool spec" in r.output and why in r.output
    assert not (tmp_path / "m.json").exists()


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compoworld.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_serve_says_one_clear_line_for_a_busy_port_and_for_missing_manifests(task_file, tmp_path) -> None:
    path, task = task_file
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = runner.invoke(app, ["serve", "http", "--port", str(port), "--control-token", "t"])
    assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.output
    assert "serving" not in r.output  # it never claims to serve before it has the port
    data = json.loads(path.read_text().splitlines()[0])
    data["distractors"] = [*data["distractors"], "acme_erp"]  # a compiled service, not loaded here
    needs = tmp_path / "needs_manifest.jsonl"
    needs.write_text(json.dumps(data) + "\n")
    for args in (
        ["serve", "stdio", "--tasks", str(needs), "--task-id", task.id, "--result", str(tmp_path / "r.json")],
        ["serve", "http", "--tasks", str(needs), "--port", "0", "--control-token", "t"],
    ):
        r = _cli(*args)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert "acme_erp" in lines[0] and "--manifests" in lines[0]


def _episodes(score: float, v: int) -> list[dict]:
    return [
        {
            "task_id": f"t{i}",
            "score": score,
            "V": v,
            "turns": 3 + i,
            "error_class": "ok" if v else "wrong_answer",
            "domains": ["sales"],
            "services": ["crm", "email"],
            "K": 2 + i % 2,
            "L": 4 + i,
        }
        for i in range(4)
    ]


def test_report_plots_label_bars_chart_error_classes_and_k_and_show_zeros(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn: list = []
    real = plt.Figure.savefig

    def keep(fig, *a, **k):  # look at what each chart says before it becomes pixels
        drawn.append([t.get_text() for ax in fig.axes for t in ax.texts] + [fig.axes[0].get_title()])
        return real(fig, *a, **k)

    plt.Figure.savefig = keep
    try:
        cfg = {"agent": "noop", "mode": "direct", "k": 1, "tasks_file": "t.jsonl"}
        _, report = write_report(tmp_path, cfg, _episodes(0.0, 0))
    finally:
        plt.Figure.savefig = real
    text = report.read_text()
    for png in ("score_by_walk_length", "score_by_k", "pass_rate_by_domain", "error_classes", "turns"):
        assert (tmp_path / f"{png}.png").stat().st_size > 0 and f"({png}.png)" in text
    by_title = {labels[-1]: labels[:-1] for labels in drawn}
    assert by_title["Score by walk length"] == ["0.00  (n=1)"] * 4  # zeros are shown, with counts
    assert by_title["Score by K (services per task)"] == ["0.00  (n=2)"] * 2
    assert by_title["Pass rate by domain"] == ["0.00  (n=4)"]
    assert by_title["Episodes by outcome class"] == ["4"]


def test_serve_http_keeps_idle_connections_open_and_allows_the_hosts_given(monkeypatch, tmp_path) -> None:
    import uvicorn

    from compoworld.serve import http as serve_http

    seen: dict = {}
    real_build = serve_http.build_app

    def build(*a, **k):
        seen.update(host=k.get("host"), allowed=k.get("allowed_hosts"))
        return real_build(*a, **k)

    def run(self, sockets=None):  # stand in for serving: look at what would be served
        seen.update(keep_alive=self.config.timeout_keep_alive, bound=sockets[0].getsockname())
        for s in sockets:
            s.close()

    monkeypatch.setattr(serve_http, "build_app", build)
    monkeypatch.setattr(uvicorn.Server, "run", run)
    r = runner.invoke(
        app,
        [
            "serve",
            "http",
            "--port",
            "0",
            "--control-token",
            "t",
            "--allow-host",
            "gpu-box",
            "--results",
            str(tmp_path / "r.jsonl"),
        ],
    )
    assert r.exit_code == 0, r.output
    # uvicorn's 5 s default dropped ~1% of sessions under load (ReadError on a reused connection)
    assert seen["keep_alive"] >= 75 and seen["bound"][0] == "127.0.0.1"
    assert seen["host"] == "127.0.0.1" and seen["allowed"] == ["gpu-box"]
