"""Portable worlds: a task names its world by content digest and name, stores only its patch, and
loads wherever the world (folder or pack) lies beside it; a missing, different or tampered world is
refused in one line naming the digest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.tasks.model import unpack_line
from compoworld.worlds import open_world, pack, unpack

runner = CliRunner()


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command in a fresh process (no world opened before), run from `cwd`."""
    e = {k: v for k, v in os.environ.items() if k != "COMPOWORLD_WORLDS"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "compoworld.cli.main", *args], cwd=cwd, capture_output=True, text=True, env=e
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """A world (2 personas x 4 days) and 3 tasks drawn from its last day."""
    root = tmp_path_factory.mktemp("portable")
    world = root / "w"
    r = runner.invoke(
        app, ["worlds", "build", "--personas", "2", "--days", "4", "--seed", "6", "--out", str(world)]
    )
    assert r.exit_code == 0, r.output
    tasks = root / "out" / "tasks.jsonl"
    r = runner.invoke(
        app, ["tasks", "generate", "--world", f"{world}@4", "--n", "3", "--seed", "4", "--out", str(tasks)]
    )
    assert r.exit_code == 0, r.output
    return world, tasks


def test_a_task_names_its_world_by_digest_and_stores_only_its_patch(made: tuple[Path, Path]) -> None:
    world, tasks = made
    digest = open_world(world).digest
    text = tasks.read_text()
    assert str(world.parent) not in text  # no folder path anywhere in the file
    for line in text.splitlines():
        t = unpack_line(json.loads(line))
        assert "initial_state" not in t and "initial_state_patch" in t
        assert t["world"]["lived"] == {**t["meta"]["world"]}
        assert t["meta"]["world"]["name"] == "w" and t["meta"]["world"]["digest"] == digest
        assert t["meta"]["world"]["day"] == 4 and t["meta"]["settings"]["world"] == "w@4"


def test_task_file_and_packed_world_moved_elsewhere_load_and_verify(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    world, tasks = made
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(tasks, moved / "tasks.jsonl")
    digest, size = pack(world, moved / "w.cwworld")
    assert size > 0 and unpack(moved / "w.cwworld", tmp_path / "again") == digest == open_world(world).digest
    # every gate, in a new process run from another folder: the world comes from the pack
    r = cli("tasks", "check", str(moved / "tasks.jsonl"), "--no-regenerate", cwd=tmp_path)
    assert r.returncode == 0 and "3/3 tasks pass every gate" in r.stdout, r.stdout + r.stderr
    # and regeneration from the seed goes through the pack too (here, once this process forgets the
    # folder it built: its generator's string hashing is the one the tasks were made with)
    from compoworld.tasks.gates import run_gates
    from compoworld.tasks.model import load_tasks
    from compoworld.worlds import store

    store._OPEN.clear()
    store._LIVED.clear()
    store._PARTS.clear()
    loaded = load_tasks(moved / "tasks.jsonl")
    assert store.known(digest).where == moved / "w.cwworld"
    for t in loaded:
        failed = {g: why for g, why in run_gates(t, regenerate=True).items() if why}
        assert not failed, failed
    # or found through COMPOWORLD_WORLDS when the task file travels alone
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(tasks, alone / "tasks.jsonl")
    r = cli("tasks", "check", str(alone / "tasks.jsonl"), "--no-regenerate", cwd=tmp_path,
            env={"COMPOWORLD_WORLDS": str(moved)})  # fmt: skip
    assert r.returncode == 0 and "3/3" in r.stdout, r.stdout + r.stderr


def test_missing_different_or_tampered_worlds_are_refused_naming_the_digest(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    world, tasks = made
    digest = open_world(world).digest
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(tasks, d / "tasks.jsonl")

    def refused() -> str:
        r = cli("tasks", "show", str(d / "tasks.jsonl"), cwd=tmp_path)
        out = (r.stdout + r.stderr).strip()
        assert r.returncode != 0 and digest in out, out
        return " ".join(out.split())  # rich wraps a long line; the message is one

    assert "not found" in refused()
    shutil.copytree(world, d / "w")
    f = d / "w" / "p001" / "day003.json"
    f.write_bytes(f.read_bytes().replace(b'"events":', b'"events": ', 1))
    msg = refused()
    assert "p001/day003.json" in msg and "tampered" in msg
    shutil.rmtree(d / "w")
    r = runner.invoke(
        app, ["worlds", "build", "--personas", "2", "--days", "4", "--seed", "7", "--out", str(d / "w")]
    )
    assert r.exit_code == 0, r.output
    msg = refused()
    assert "a different world" in msg and open_world(d / "w").digest in msg
