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
import sys
import threading
import time
from collections import OrderedDict
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
LONG_STR = 4096  # strings this long are serialised once, however often and in however many dumps
# serialised long strings kept across dumps, process-wide, counted with the strings they hold: a
# fixed part of the server's base memory, whatever the sessions
MEMO_BYTES = 32 << 20


class _Serialised:
    """Long strings as JSON bytes, kept across dumps by identity (each entry holds its string, so
    an id cannot be reused while it is kept), least recently used first out past `MEMO_BYTES`.

    A file copied 20 times is one string in the state; a trainer re-reading that state, or the
    next /state of the same session, wrote it again each time: escaping 512K non-ASCII characters
    costs ~3 ms of GIL in slices, and the copies attack reads its 20 MB state about once a second.
    Thread-safe: dumps of different sessions run in their own worker threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._kept: OrderedDict[int, tuple[str, bytes, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, value: str) -> bytes | None:
        with self._lock:
            hit = self._kept.get(id(value))
            if hit is None or hit[0] is not value:
                return None
            self._kept.move_to_end(id(value))
            return hit[1]

    def keep(self, value: str, data: bytes) -> None:
        cost = len(data) + sys.getsizeof(value)  # the string is kept alive too
        if cost > self.limit // 4:  # one huge string would flush everything else
            return
        with self._lock:
            old = self._kept.pop(id(value), None)
            if old is not None:
                self.size -= old[2]
            self._kept[id(value)] = (value, data, cost)
            self.size += cost
            while self.size > self.limit:
                _, (_, _, gone) = self._kept.popitem(last=False)
                self.size -= gone

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self.size = 0


SERIALISED = _Serialised(MEMO_BYTES)


def write_json(value: Any, out: Any) -> None:
    """`out.write(orjson.dumps(value))`, in pieces: containers are walked in Python and long
    strings serialised in slices, so no single C call (which holds the GIL) handles more than one
    small value or `STR_PIECE` characters, and every value passes a fair-share checkpoint
    (`core.limits.checkpoint`: run under `pacing`, the dump keeps a bounded share of the GIL
    while other sessions want it). A long string is serialised once and then only written
    (`SERIALISED`: a file copied 20 times shares one string, and the next dump finds it too),
    and writing a file lets go of the GIL."""
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
    elif t is str and len(value) > LONG_STR:
        done = SERIALISED.get(value)
        if done is None:
            parts = [b'"']
            for i in range(0, len(value), STR_PIECE):  # escaping is per character: slices join exactly
                parts.append(orjson.dumps(value[i : i + STR_PIECE])[1:-1])
                checkpoint()
            parts.append(b'"')
            done = b"".join(parts)
            SERIALISED.keep(value, done)
        out.write(done)
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
        write_json(snapshot, f)
        f.write(b',"calls":' + orjson.dumps(calls) + b"}")
        return f.tell()
