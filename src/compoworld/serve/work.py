"""Heavy control work of big sessions: verification in a worker process, state dumps in pieces.

In a thread this work would hold the GIL against the event loop (a predicate scanning 30 MB of
written text, or one `orjson.dumps` of the whole state, runs for tens of milliseconds to seconds in C
without letting go), and so stall every other session's calls. A snapshot crosses to the worker
cheaply: records are shared values, and pickling copies each distinct string once.

The worker's functions take and return plain data; it rebuilds an environment from the snapshot
only to hash it exactly as `Environment.state_hash` does. A state dump needs no worker: the
session's hash is kept incrementally, and `write_json` serialises in pieces small enough to let
the event loop in between (pickling the snapshot for a worker would itself hold the GIL for as
long as a whole `orjson.dumps`).
"""

from __future__ import annotations

import contextlib
import os
import signal
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


def init_worker(parent: int, library: Any = None) -> None:
    """Watch the server, and yield the CPU to it: tool calls are interactive, this work is not.
    `library` is the server's (a spawned worker rebuilds it from its manifests)."""
    from compoworld.core import library as libraries

    libraries.use(library)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    with contextlib.suppress(OSError):  # a platform without nice
        os.nice(10)


def state_hash_of(services: list[str], snapshot: dict[str, Any]) -> str:
    from compoworld.core.environment import Environment

    return Environment.from_snapshot(services, snapshot).state_hash()


def verify_snapshot(task: Any, snapshot: dict[str, Any], answer: str | None) -> tuple[VerifyResult, str]:
    return verify(task, snapshot, answer), state_hash_of(task.all_services, snapshot)


STR_PIECE = 1 << 16  # characters of a long string serialised per C call


def write_json(value: Any, out: Any) -> None:
    """`out.write(orjson.dumps(value))`, in pieces: containers are walked in Python and long
    strings serialised in slices, so no single C call (which holds the GIL) handles more than one
    small value or `STR_PIECE` characters. Run in a thread, a 30 MB state then never stalls the
    event loop for longer than one piece; one `orjson.dumps` (or pickling it for a worker
    process) of the whole state holds the GIL for tens of milliseconds."""
    t = type(value)
    if t is dict:
        out.write(b"{")
        first = True
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError(f"state keys must be strings, got {type(k).__name__}")
            if not first:
                out.write(b",")
            first = False
            write_json(k, out)
            out.write(b":")
            write_json(v, out)
        out.write(b"}")
    elif t is list or t is tuple:
        out.write(b"[")
        for i, v in enumerate(value):
            if i:
                out.write(b",")
            write_json(v, out)
        out.write(b"]")
    elif t is str and len(value) > STR_PIECE:
        out.write(b'"')
        for i in range(0, len(value), STR_PIECE):  # escaping is per character: slices join exactly
            out.write(orjson.dumps(value[i : i + STR_PIECE])[1:-1])
        out.write(b'"')
    else:
        out.write(orjson.dumps(value))


class _Polite:
    """A file that sleeps briefly after every `EVERY` bytes written: the sleep lets go of the GIL,
    so a big dump takes at most about half of it while the event loop wants it."""

    EVERY = 256 * 1024
    PAUSE_S = 0.0005

    def __init__(self, f: Any) -> None:
        self.f = f
        self.n = 0

    def write(self, data: bytes) -> None:
        self.f.write(data)
        self.n += len(data)
        if self.n >= self.EVERY:
            self.n = 0
            time.sleep(self.PAUSE_S)

    def tell(self) -> int:
        return self.f.tell()


def write_state(
    path: str, sid: str, state_hash: str, snapshot: dict[str, Any], calls: int, polite: bool = True
) -> int:
    """A session's `/state` answer written to `path` in pieces (`write_json`); bytes written."""
    with open(path, "wb") as raw:
        f: Any = _Polite(raw) if polite else raw
        f.write(b'{"session_id":' + orjson.dumps(sid) + b',"state_hash":' + orjson.dumps(state_hash))
        f.write(b',"state":')
        write_json(snapshot, f)
        f.write(b',"calls":' + orjson.dumps(calls) + b"}")
        return f.tell()


def write_state_apart(
    path: str, sid: str, state_hash: str, snapshot: dict[str, Any], calls: int, timeout_s: float = 600.0
) -> int:
    """`write_state` in a forked child, at a lower CPU priority: the child is a copy-on-write image
    of the server, so the snapshot is already in its memory (nothing is pickled, unlike a worker
    pool), and its serialising holds its own GIL, not the one the other sessions' calls need
    (a dump in a thread, even in pieces, takes about half the GIL for as long as it runs). The
    child runs only this function (no lock another thread could hold is taken: no import, no
    logging) and leaves with `os._exit`. Blocking: call it from a worker thread."""
    if not hasattr(os, "fork"):
        return write_state(path, sid, state_hash, snapshot, calls)
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            with contextlib.suppress(OSError):
                os.nice(10)
            write_state(path, sid, state_hash, snapshot, calls, polite=False)
            code = 0
        finally:
            os._exit(code)
    # a child that hangs (a lock some other thread held at the fork) is killed, not waited on forever
    deadline, pause = time.monotonic() + timeout_s, 0.005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise RuntimeError(f"the state dump's child process ran past {timeout_s:.0f} s and was killed")
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the state dump's child process failed (exit status {status})")
    return os.path.getsize(path)
