"""Heavy control work of big sessions, in a worker process: verification, state hashes, state dumps.

In a thread this work would hold the GIL against the event loop (a predicate scanning 30 MB of
written text, or one `orjson.dumps` of the whole state, runs for tens of milliseconds to seconds in C
without letting go), and so stall every other session's calls. A snapshot crosses to the worker
cheaply: records are shared values, and pickling copies each distinct string once.

The functions here take and return plain data; the worker rebuilds an environment from the
snapshot only to hash it exactly as `Environment.state_hash` does.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any

import orjson

from compoworld.verify.verifier import VerifyResult, verify


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:  # the server is gone (even by SIGKILL): so is this worker
            os._exit(0)


def init_worker(parent: int) -> None:
    """Watch the server, and yield the CPU to it: tool calls are interactive, this work is not."""
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    with contextlib.suppress(OSError):  # a platform without nice
        os.nice(10)


def state_hash_of(services: list[str], snapshot: dict[str, Any]) -> str:
    from compoworld.core.environment import Environment

    return Environment.from_snapshot(services, snapshot).state_hash()


def verify_snapshot(task: Any, snapshot: dict[str, Any], answer: str | None) -> tuple[VerifyResult, str]:
    return verify(task, snapshot, answer), state_hash_of(task.all_services, snapshot)


def render_state(sid: str, services: list[str], snapshot: dict[str, Any], calls: int) -> bytes:
    return orjson.dumps(
        {
            "session_id": sid,
            "state_hash": state_hash_of(services, snapshot),
            "state": snapshot,
            "calls": calls,
        }
    )


def render_state_to(path: str, sid: str, services: list[str], snapshot: dict[str, Any], calls: int) -> int:
    """`render_state` written to `path` (bytes written): the server streams the file in small reads
    instead of taking tens of MB back through a pipe and copying them in one go under the GIL."""
    data = render_state(sid, services, snapshot, calls)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)
