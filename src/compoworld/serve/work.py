"""Heavy control work of big sessions: verification in a worker process, state dumps in pieces.

In a thread this work would hold the GIL against the event loop (a predicate scanning 30 MB of
written text, or one `orjson.dumps` of the whole state, runs for tens of milliseconds to seconds in C
without letting go), and so stall every other session's calls. A snapshot crosses to the worker
cheaply: records are shared values, and pickling copies each distinct string once.

The worker's functions take and return plain data; it rebuilds an environment from the snapshot
only to hash it exactly as `Environment.state_hash` does. A state dump needs no worker: the
session's hash is kept incrementally, and `write_json` serialises in pieces small enough to let
the event loop in between, under a fair share of the GIL (`core.limits.pacing`), with each long
string serialised once (pickling the snapshot for a worker would itself hold the GIL for as long
as a whole `orjson.dumps`, and forking a child stalls the whole server while it copies).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any

import orjson

from compoworld.core.limits import checkpoint, pacing
from compoworld.verify.verifier import VerifyResult, verify

DUMP_SHARE = 0.2  # of the GIL a big state dump keeps while other sessions want it
STREAM_BUFFER = 1 << 20  # bytes buffered between writes (a write lets go of the GIL; few, big ones)


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
LONG_STR = 4096  # strings this long are serialised once per dump, however often the state holds them


def write_json(value: Any, out: Any, memo: dict[int, bytes | None] | None = None) -> None:
    """`out.write(orjson.dumps(value))`, in pieces: containers are walked in Python and long
    strings serialised in slices, so no single C call (which holds the GIL) handles more than one
    small value or `STR_PIECE` characters, and every value passes a fair-share checkpoint
    (`core.limits.checkpoint`: run under `pacing`, the dump keeps a bounded share of the GIL
    while other sessions want it). A long string the state holds many times (a file copied 20
    times shares one string) is serialised once (`memo`, by identity: the state holds it alive for
    the whole dump) and then only written, and writing a file lets go of the GIL."""
    checkpoint()
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
            write_json(k, out, memo)
            out.write(b":")
            write_json(v, out, memo)
        out.write(b"}")
    elif t is list or t is tuple:
        out.write(b"[")
        for i, v in enumerate(value):
            if i:
                out.write(b",")
            write_json(v, out, memo)
        out.write(b"]")
    elif t is str and len(value) > LONG_STR:
        memo = {} if memo is None else memo
        key = id(value)
        done = memo.get(key)
        if done is not None:
            out.write(done)
            return
        # the first time it is written as it is serialised; seen again, it is kept (only strings the
        # state holds more than once are, so the memo is never bigger than what the state charges)
        parts: list[bytes] | None = [] if key in memo else None
        out.write(b'"')
        for i in range(0, len(value), STR_PIECE):  # escaping is per character: slices join exactly
            piece = orjson.dumps(value[i : i + STR_PIECE])[1:-1]
            out.write(piece)
            if parts is not None:
                parts.append(piece)
            checkpoint()
        out.write(b'"')
        memo[key] = b'"' + b"".join(parts) + b'"' if parts is not None else None
    else:
        out.write(orjson.dumps(value))


def write_state(
    path: str,
    sid: str,
    state_hash: str,
    snapshot: dict[str, Any],
    calls: int,
    share: float | None = DUMP_SHARE,
) -> int:
    """A session's `/state` answer written to `path` in pieces (`write_json`) under a fair share
    of the GIL (`share`; None: as fast as it can); bytes written. Blocking: call it from a worker
    thread. In the server's own process on purpose: a forked child (its own GIL) costs the whole
    server a stall as long as copying its page tables (about 10 ms for 400 MB) and every page
    either side writes afterwards, and pickling the snapshot to a worker holds the GIL for as long
    as the state is big."""
    with pacing(share), open(path, "wb", buffering=STREAM_BUFFER) as f:
        f.write(b'{"session_id":' + orjson.dumps(sid) + b',"state_hash":' + orjson.dumps(state_hash))
        f.write(b',"state":')
        write_json(snapshot, f, {})
        f.write(b',"calls":' + orjson.dumps(calls) + b"}")
        return f.tell()
