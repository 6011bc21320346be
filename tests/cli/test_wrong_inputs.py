"""Inputs a user gets wrong (issue 27): each gets its own one-line message and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task, save_tasks

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    task = Task.model_validate(generate_task(31, 0, Settings(k=3, distractors=1, walk_min=4, walk_max=5)))
    save_tasks([task], root / "tasks.jsonl")
    line = (root / "tasks.jsonl").read_text().strip()
    (root / "empty.jsonl").write_text("")
    (root / "blank.jsonl").write_text("\n\n")
    (root / "array.json").write_text("[" + line + "]\n")
    (root / "rows.parquet").write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    (root / "dir").mkdir()
    (root / "object.jsonl").write_text(json.dumps({"foo": 1}) + "\n")
    (root / "sft.jsonl").write_text(json.dumps({"messages": [], "tools": []}) + "\n")
    (root / "number.jsonl").write_text("42\n")
    return {p.name: p for p in root.iterdir()}


def _one_line(r) -> str:
    text = r.output.strip()
    assert r.exit_code != 0, text
    assert len(text.splitlines()) == 1, text
    return text


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("empty.jsonl", "holds no tasks"),
        ("blank.jsonl", "holds no tasks"),
        ("array.json", "a JSON array; a task file holds one task object per line"),
        ("rows.parquet", "is a Parquet file; task files are JSONL"),
        ("dir", "is a directory, not a task file"),
        ("object.jsonl", ":1: a JSON object, not a task (fields: foo)"),
        ("sft.jsonl", ":1: an SFT row (`export sft`), not a task"),
        ("number.jsonl", ":1: a JSON int, not a task object"),
    ],
)
@pytest.mark.parametrize("command", ["check", "eval", "export"])
def test_a_wrong_task_file_gets_its_own_line(files, tmp_path, name, says, command) -> None:
    path = str(files[name])
    argv = {
        "check": ["tasks", "check", path],
        "eval": ["eval", "--tasks", path, "--agent", "oracle", "--out", str(tmp_path / "run")],
        "export": ["export", "rl", "--tasks", path, "--out", str(tmp_path / "rl.parquet")],
    }[command]
    line = _one_line(runner.invoke(app, argv))
    assert says in line and path in line, line
    assert "[" not in line or "'.[]'" in line or "[" in path  # markup never eats brackets
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


def test_a_base_url_without_a_scheme_says_add_http(files, tmp_path) -> None:
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(files["tasks.jsonl"]),
            "--base-url",
            "localhost:8000",
            "--model",
            "m",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    line = _one_line(r)
    assert "add http://" in line and "http://localhost:8000" in line, line
    from compoworld.llm.client import LLMConfig

    with pytest.raises(ValueError, match="add http://"):
        LLMConfig.from_env(base_url="127.0.0.1:8080/v1", model="m")
    assert (
        LLMConfig.from_env(base_url="http://127.0.0.1:8080/v1/", model="m").base_url
        == "http://127.0.0.1:8080/v1"
    )


def test_families_json_and_names_never_cut() -> None:
    r = runner.invoke(app, ["tasks", "families", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    names = [row["family"] for row in rows]
    assert names and all({"family", "domain", "services"} <= set(row) for row in rows)
    table = runner.invoke(app, ["tasks", "families"], terminal_width=80).output
    cells = {line.split("│")[1].strip() for line in table.splitlines() if line.startswith("│")}
    assert set(names) <= cells  # each name whole in its cell, ready to copy


def test_help_shows_brackets_and_no_bool_metavar() -> None:
    for argv in (["eval", "--help"], ["tasks", "generate", "--help"], ["tasks", "families", "--help"]):
        text = runner.invoke(app, argv, terminal_width=200).output
        assert "<bool>" not in text, argv
        if argv[0] == "eval" or argv[1] == "generate":
            assert "compoworld[ray]" in text, argv
