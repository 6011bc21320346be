"""`compoworld serve stdio`: one task's environment over stdio, for an agent harness's MCP config.

Every exit writes the result file: the harness closing stdin, SIGTERM, SIGHUP, SIGINT, or a crash.
The result (final state and the verifier's result) goes outside anything the tools can reach (the
agent has no tool that reads files of the host). Two rules keep a result from being lost:

- an empty run (a process that served no tool call) never overwrites an existing result;
- some clients start one server process per tool call (langchain-mcp-adapters does by default).
  Give such a harness a `run_id`: the episode then lives in a state file beside the result
  (`<result>.<run id>.state.json`), each process continues from it, and every process's result
  covers the whole episode. Without a run id, each process is a fresh episode.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from compoworld.core.environment import Environment
from compoworld.core.limits import CallLimits
from compoworld.serve.mcp_server import EnvSession, build_server
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def default_results_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "compoworld" / "results"


def state_file(result_path: Path, run_id: str) -> Path:
    return result_path.with_name(f"{result_path.name}.{run_id}.state.json")


def _atomic_write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with tmp.open("w") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(path)


def load_session(
    task: Task, mode: str, saved: Path | None, limits: CallLimits | None = CallLimits()
) -> EnvSession:
    """A fresh session, or the one a run's state file holds (refused if it is another task's)."""
    if saved is None or not saved.exists():
        return EnvSession(task.environment(), mode, limits=limits)
    try:
        data = json.loads(saved.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{saved}: unreadable run state ({e}); delete it to start the run afresh") from None
    if data.get("task_id") != task.id:
        raise ValueError(
            f"{saved}: run state of task {data.get('task_id')!r}, not {task.id!r}; use another --run-id"
        )
    env = Environment.from_snapshot(task.all_services, task.initial_state)
    env.restore(data["state"])
    session = EnvSession(env, mode, limits=limits)
    session.answer, session.calls, session.log = data.get("answer"), data.get("calls", 0), data.get("log", [])
    return session


def save_session(task: Task, session: EnvSession, saved: Path) -> None:
    _atomic_write(
        saved,
        json.dumps(
            {
                "task_id": task.id,
                "state": session.env.snapshot(),
                "answer": session.answer,
                "calls": session.calls,
                "log": session.log,
            }
        ),
    )


def write_result(task: Task, session: EnvSession, result_path: Path, served: int, how: str) -> bool:
    """Write the result unless this run served nothing and a result is already there."""
    if served == 0 and result_path.exists():
        sys.stderr.write(f"compoworld: no tool calls in this run; kept the existing result {result_path}\n")
        return False
    final = session.env.snapshot()
    result = verify(task, final, session.answer)
    record: dict[str, Any] = {
        "task_id": task.id,
        "answer": session.answer,
        "calls": session.calls,
        "V": int(result.passed),
        "score": result.score,
        "checks": [c.model_dump() for c in result.checks],
        "final_state_hash": session.env.state_hash(),
        "final_state": final,
        "exit": how,
    }
    _atomic_write(result_path, json.dumps(record))
    return True


def serve_stdio(
    task: Task,
    mode: str,
    result_path: Path,
    run_id: str | None = None,
    limits: CallLimits | None = CallLimits(),
) -> int:
    """Serve until stdin closes or a signal comes; write the result; return the exit status."""
    saved = state_file(result_path, run_id) if run_id else None
    session = load_session(task, mode, saved, limits)
    start_calls = session.calls
    server = build_server(lambda ctx: session, session.input_schema)
    if saved is not None:  # persist the episode after every call, so the next process continues it
        call = session.call

        def call_and_save(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
            out = call(name, arguments)
            save_session(task, session, saved)
            return out

        session.call = call_and_save  # type: ignore[method-assign]
    done: list[str] = []

    def finish(how: str) -> None:
        if done:
            return
        done.append(how)
        served = session.calls - start_calls
        if saved is not None and served:
            save_session(task, session, saved)
        write_result(task, session, result_path, served, how)

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(*SIGNALS) as signals:
                    async for sig in signals:
                        # On the loop, between tool calls: the state is consistent. Write now and
                        # leave at once: a worker thread may be blocked reading stdin, and waiting
                        # for it is how SIGINT used to hang until stdin closed.
                        finish(signal.Signals(sig).name)
                        sys.stdout.flush()
                        sys.stderr.flush()
                        os._exit(128 + sig)

            tg.start_soon(watch)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()

    how = "stdin closed"
    try:
        anyio.run(main)
    except BaseException as e:  # a crash still writes what the episode did
        how = f"error: {type(e).__name__}: {e}"
        raise
    finally:
        finish(how)
    return 0
