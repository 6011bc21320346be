"""Task files and run directories for the viewer's and the curriculum's tests.

The failing run is made by `compoworld eval` against the scripted OpenAI-compatible server: it plays
each task's reference, except in one family, where it plays the reference on the trap's decoy (so a
guard trips) or, where no trap names a decoy, finishes at once (a goal is missed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compoworld.agents.policies import oracle_turns
from compoworld.cli.main import app
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task, save_tasks
from compoworld.tasks.pipeline import generate
from tests.scripted_server import ScriptedServer, say, tool_calls

FAMILIES = ("docs", "hr")


def make_tasks(path: Path, n: int = 16, seed: int = 7) -> list[Task]:
    tasks, _ = generate(n, seed=seed, settings=Settings(families=FAMILIES))
    save_tasks(tasks, path)
    return tasks


def _swap(x: Any, swap: dict[str, str]) -> Any:
    if isinstance(x, dict):
        return {k: _swap(v, swap) for k, v in x.items()}
    if isinstance(x, list):
        return [_swap(v, swap) for v in x]
    if str(x) in swap:
        new = swap[str(x)]
        return int(new) if isinstance(x, int) and new.lstrip("-").isdigit() else new
    return x


def failing_policy(tasks: list[Task], fail_family: str):
    """The scripted model: the reference everywhere, the decoy's version of it in `fail_family`."""
    by_instruction = {t.instruction: t for t in tasks}

    def act(body: dict[str, Any]) -> dict[str, Any]:
        msgs = body["messages"]
        user = next(m["content"] for m in msgs if m["role"] == "user")
        task = next(t for instr, t in by_instruction.items() if user.startswith(instr))
        turn = sum(1 for m in msgs if m["role"] == "assistant")
        plan = oracle_turns(task)
        if task.meta["family"] == fail_family:
            swap = next((t.swap for t in task.traps if t.swap), None)
            if swap is None:
                return say("Done.")
            plan = [[(name, _swap(args, swap)) for name, args in calls] for calls in plan]
        if turn < len(plan):
            return tool_calls(*plan[turn])
        return tool_calls(("finish", {"answer": task.answer or ""}))

    return act


def scripted_run(tasks_file: Path, tasks: list[Task], out: Path, fail_family: str, k: int = 1) -> Path:
    with ScriptedServer(default=failing_policy(tasks, fail_family)) as server:
        r = CliRunner().invoke(
            app,
            [
                "eval",
                "--tasks",
                str(tasks_file),
                "--model",
                "scripted",
                "--base-url",
                server.url,
                "--api-key",
                "x",
                "--k",
                str(k),
                "--concurrency",
                "4",
                "--out",
                str(out),
            ],
        )
    assert r.exit_code == 0, r.output
    return out


def oracle_run(tasks_file: Path, out: Path) -> Path:
    r = CliRunner().invoke(app, ["eval", "--tasks", str(tasks_file), "--agent", "oracle", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def episodes(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines() if line.strip()]


def synthetic_run(out: Path, n: int, tasks: list[Task]) -> Path:
    """A run of `n` small episodes over `tasks` (samples cycle), for paging at scale."""
    out.mkdir(parents=True, exist_ok=True)
    k = max(1, n // max(len(tasks), 1))
    (out / "config.json").write_text(json.dumps({"tasks_file": "none.jsonl", "agent": "synthetic", "k": k}))
    with (out / "episodes.jsonl").open("w") as f:
        for i in range(n):
            t = tasks[i % len(tasks)]
            passed = i % 3 != 0
            rec = {
                "task_id": t.id,
                "sample": i // len(tasks),
                "V": int(passed),
                "score": 1.0 if passed else 0.0,
                "error_class": "ok",
                "checks": [
                    {"id": r.id, "passed": passed, "kind": r.kind, "detail": "d"} for r in t.rubric[:2]
                ],
                "steps": [],
                "messages": [],
                "turns": 1,
                "K": t.meta["K"],
                "services": t.services,
                "domains": t.meta["domains"],
            }
            f.write(json.dumps(rec) + "\n")
    return out
