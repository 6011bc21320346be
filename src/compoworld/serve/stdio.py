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

import fcntl
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from compoworld.core.environment import Environment
from compoworld.core.limits import WATCHDOG, CallLimits, CpuLimitExceeded, state_bytes
from compoworld.serve.mcp_server import EnvSession, build_server
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1)


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


class RunLock:
    """The file lock processes of one `--run-id` take turns under, and what this process last saw
    of the run's state file (its inode, size and time: `_atomic_write` replaces the file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._fd: int | None = None
        self._seen: tuple[int, int, int] | None = None

    def __enter__(self) -> RunLock:
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def seen(self) -> None:
        self._seen = self._stat()

    def sync(self, task: Task, session: EnvSession) -> None:
        """Load the run's state into `session` if another process wrote it since we last did."""
        now = self._stat()
        if now is None or now == self._seen:
            return
        data = json.loads(self.path.read_text())
        session.env.restore(data["state"])
        session.answer, session.calls, session.log = (
            data.get("answer"),
            data.get("calls", 0),
            data.get("log", []),
        )
        if session.env.budget is not None:
            session.env.budget.used = state_bytes(session.env)
        self._seen = now


def stop_running_calls(wait_s: float = 2.0) -> None:
    """Stop the tool calls running in worker threads (each is undone, as if past its limit) and
    wait a moment for them to unwind, so the state written next is the last committed one."""
    for reg in list(WATCHDOG.regs.values()):
        WATCHDOG.fire(reg, CpuLimitExceeded)
    deadline = time.monotonic() + wait_s
    while WATCHDOG.regs and time.monotonic() < deadline:
        time.sleep(0.005)


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
    run_lock = RunLock(saved) if saved is not None else None
    if run_lock is not None:  # persist the episode after every call, so the next process continues it
        call = session.call
        run_lock.seen()

        def call_and_save(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
            # Processes of one run take turns: each call reloads what another process wrote since,
            # runs, and saves, all under the run's file lock, so no write is lost.
            with run_lock:
                run_lock.sync(task, session)
                out = call(name, arguments)
                save_session(task, session, run_lock.path)
                run_lock.seen()
            return out

        session.call = call_and_save  # type: ignore[method-assign]
    done: list[str] = []

    def finish(how: str) -> None:
        if done:
            return
        done.append(how)
        served = session.calls - start_calls
        if run_lock is not None:
            with run_lock:  # the result covers the whole run, other processes' calls included
                run_lock.sync(task, session)
                write_result(task, session, result_path, served, how)
            return
        write_result(task, session, result_path, served, how)

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                with anyio.open_signal_receiver(*SIGNALS) as signals:
                    async for sig in signals:
                        # Tool calls run in a worker thread: stop the one running (it is undone,
                        # as past its limit), then write and leave at once: a worker thread may
                        # be blocked reading stdin, and waiting for it is how SIGINT used to hang.
                        stop_running_calls()
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
