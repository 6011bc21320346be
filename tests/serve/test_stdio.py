"""Every exit of `serve stdio` writes the result; empty runs never overwrite one; one process per call."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task, save_tasks


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[Path, Task]:
    task = Task.model_validate(
        generate_task(31, 0, Settings(k=3, distractors=2, walk_min=4, walk_max=5, answer_rate=1.0))
    )
    path = tmp_path_factory.mktemp("stdio") / "tasks.jsonl"
    save_tasks([task], path)
    return path, task


class Server:
    """`serve stdio` in a subprocess, spoken to in raw JSON-RPC lines (as a harness would)."""

    def __init__(self, tasks: Path, task: Task, result: Path, *extra: str) -> None:
        cmd = [sys.executable, "-m", "compoworld.cli.main", "serve", "stdio", "--tasks", str(tasks)]
        cmd += ["--task-id", task.id, "--result", str(result), *extra]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.n = 0
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        self.request("initialize", init)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return json.loads(self.p.stdout.readline())

    def call(self, name: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"][
            "structuredContent"
        ]

    def stop(self, how: str) -> tuple[int, str]:
        if how == "close":
            self.p.stdin.close()
        else:
            self.p.send_signal(getattr(signal, how))
        try:
            code = self.p.wait(20)
        except subprocess.TimeoutExpired:  # the old SIGINT hang
            self.p.kill()
            raise
        return code, self.p.stderr.read().decode()


def test_every_exit_writes_the_result(served, tmp_path: Path) -> None:
    tasks, task = served
    ways = ["SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "close"]
    servers = {how: Server(tasks, task, tmp_path / f"{how}.json") for how in ways}  # boot together
    first = task.reference_solution[0]
    for how, s in servers.items():
        assert s.call(first.tool, first.arguments)["success"]
        code, _ = s.stop(how)
        assert code == (0 if how == "close" else 128 + getattr(signal, how)), how
        data = json.loads((tmp_path / f"{how}.json").read_text())
        assert data["task_id"] == task.id and data["calls"] == 1
        assert data["exit"] == ("stdin closed" if how == "close" else how)
    # an empty run (a client that connects, lists tools and leaves) never overwrites a result
    kept = (tmp_path / "close.json").read_text()
    s = Server(tasks, task, tmp_path / "close.json")
    s.request("tools/list", {})
    _, err = s.stop("SIGTERM")
    assert (tmp_path / "close.json").read_text() == kept and "kept the existing result" in err


def test_one_process_per_call_continues_the_episode_with_a_run_id(served, tmp_path: Path) -> None:
    tasks, task = served
    result = tmp_path / "result.json"
    steps = task.reference_solution
    half = len(steps) // 2
    # langchain-mcp-adapters' default is a fresh process per call: the episode spans processes
    s = Server(tasks, task, result, "--run-id", "ep1")
    for c in steps[:half]:
        assert s.call(c.tool, c.arguments)["success"]
    s.stop("close")
    s = Server(tasks, task, result, "--run-id", "ep1")
    for c in steps[half:]:
        assert s.call(c.tool, c.arguments)["success"], c
    s.call("finish", {"answer": task.answer or ""})
    s.stop("SIGTERM")
    data = json.loads(result.read_text())
    assert data["V"] == 1 and data["calls"] == len(steps) + 1
    assert json.loads((tmp_path / "result.json.ep1.state.json").read_text())["task_id"] == task.id


def test_parallel_processes_of_one_run_id_take_turns_and_lose_nothing(served, tmp_path: Path) -> None:
    tasks, task = served
    result = tmp_path / "result.json"
    steps = task.reference_solution
    a = Server(tasks, task, result, "--run-id", "ep2")
    b = Server(tasks, task, result, "--run-id", "ep2")  # both up at once, alternating calls
    for i, c in enumerate(steps):
        assert (a if i % 2 == 0 else b).call(c.tool, c.arguments)["success"], c
    b.call("finish", {"answer": task.answer or ""})
    a.stop("SIGTERM")
    b.stop("SIGTERM")
    data = json.loads(result.read_text())
    assert data["calls"] == len(steps) + 1  # every process's writes are in the one episode
    assert data["V"] == 1
