"""Regex search that one agent's catastrophic pattern cannot turn against the others.

A line is searched in-process first, for at most `FAST_S` (every ordinary pattern finishes in
microseconds). A line that takes longer is searched again in a helper process at idle CPU
priority, bounded by what is left of the call's time. Why a process, not this thread at idle
priority: the `regex` engine releases the GIL while it matches but takes it back now and then to
check for signals, and a thread at idle priority holding the GIL is descheduled by any other
load on the machine: every session of the server then waits (probe beside `(a|aa)+$`, load 10:
1 ms sleeps overshot by up to 244 ms). A helper has its own GIL; at idle priority it takes only
CPU nobody else wants, and at normal priority in this process it took a core from the others
(quiet p50 doubled). The answer is the same either way; only where the work runs changes.
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Any

FAST_S = 0.005  # seconds a line may take in-process before it moves to a helper
KEEP_IDLE = 2  # helpers kept for the next slow line (one is started per slow line in flight)

_CHILD = r"""
import json, os, resource, struct, sys
try:  # the helper's memory is bounded as the call's own is (a huge line, a runaway match)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
except (ValueError, OSError):
    pass
try:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
except (AttributeError, OSError):
    try:
        os.nice(19)
    except OSError:
        pass
import regex
inp, out, cache = sys.stdin.buffer, sys.stdout.buffer, {}
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    req = json.loads(inp.read(struct.unpack(">I", head)[0]))
    try:
        key = (req["p"], req["f"])
        if key not in cache and len(cache) >= 64:
            cache.clear()
        rx = cache.get(key) or cache.setdefault(key, regex.compile(req["p"], req["f"]))
        res = {"m": rx.search(req["s"], timeout=req["t"]) is not None}
    except TimeoutError:
        res = {"timeout": True}
    except Exception as e:
        res = {"error": f"{type(e).__name__}: {e}"[:300]}
    data = json.dumps(res).encode()
    out.write(struct.pack(">I", len(data)) + data)
    out.flush()
"""


class SlowMatchError(Exception):
    """The helper could not answer (it failed to start or died)."""


class _Helpers:
    """Helper processes, one per slow line in flight (so one session's slow line never waits for
    another's), `KEEP_IDLE` kept warm. One per process, like the watchdog."""

    def __init__(self) -> None:
        self.idle: list[subprocess.Popen] = []
        self.lock = threading.Lock()

    def _after_fork(self) -> None:
        self.idle, self.lock = [], threading.Lock()

    def _take(self) -> subprocess.Popen:
        with self.lock:
            while self.idle:
                p = self.idle.pop()
                if p.poll() is None:
                    return p
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as e:
            raise SlowMatchError(f"cannot start the matcher process: {e}") from None

    def _give(self, p: subprocess.Popen) -> None:
        with self.lock:
            if len(self.idle) < KEEP_IDLE:
                self.idle.append(p)
                return
        _kill(p)

    def search(self, pattern: str, flags: int, line: str, timeout: float) -> bool | None:
        """Whether `pattern` matches in `line`, or None if it takes longer than `timeout` seconds."""
        p = self._take()
        assert p.stdin is not None and p.stdout is not None
        data = json.dumps({"p": pattern, "f": flags, "s": line, "t": timeout}).encode()
        try:
            p.stdin.write(struct.pack(">I", len(data)) + data)
            p.stdin.flush()
            # the helper's own timeout covers the match; this one, a helper starved of CPU
            ready, _, _ = select.select([p.stdout], [], [], timeout + 1.0)
            if not ready:
                _kill(p)
                return None
            head = p.stdout.read(4)
            if len(head) < 4:
                raise SlowMatchError("the matcher process died")
            res: dict[str, Any] = json.loads(p.stdout.read(struct.unpack(">I", head)[0]))
        except (OSError, ValueError) as e:
            _kill(p)
            raise SlowMatchError(f"the matcher process failed: {e}") from None
        except BaseException:  # the call's limit arrived while waiting: the helper goes too
            _kill(p)
            raise
        if "error" in res:
            self._give(p)
            raise SlowMatchError(res["error"])
        if res.get("timeout"):
            self._give(p)
            return None
        self._give(p)
        return bool(res["m"])


def _kill(p: subprocess.Popen) -> None:
    try:
        p.kill()
        p.wait(5)
    except (OSError, subprocess.TimeoutExpired):
        pass


HELPERS = _Helpers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=HELPERS._after_fork)


def search(rx: Any, pattern: str, flags: int, line: str, timeout: float) -> bool | None:
    """`rx.search(line)` as a bool, or None past `timeout` seconds (see the module's docstring)."""
    try:
        return rx.search(line, timeout=min(FAST_S, max(0.001, timeout)), concurrent=True) is not None
    except TimeoutError:
        if timeout <= FAST_S:
            return None
    from compoworld.core import limits

    began = time.monotonic()
    try:
        return HELPERS.search(pattern, flags, line, timeout - FAST_S)
    finally:
        # the helper's time is the call's: many slow lines share one limit, not one each
        limits.charge(time.monotonic() - began)
