"""Per-call resource limits (CPU time, memory) and the state budget every write is charged to.

Why a watchdog thread and an asynchronous exception, not a process per call or a trace function:
- a tool runs on the caller's state (an `Environment` in this process); a process per call would
  pickle that state both ways, and a pool of processes holding sessions would stall every session
  of a worker behind one slow call;
- `sys.settrace` / `sys.monitoring` hooks cost every line of every call and still never see a loop
  inside C;
- a watchdog reads each running call's own thread CPU clock every `PERIOD` and, past the limit,
  raises `CallLimitExceeded` in that thread (`PyThreadState_SetAsyncExc`) at its next bytecode:
  any pure-Python loop stops, the call's journal is rolled back, and the caller gets a 422
  `resource_limit` naming the limit. Arming a call costs one dict entry and one clock read.

What an asynchronous exception cannot stop is C code that never returns to bytecode while holding
the GIL. SQLite runs without the GIL and is stopped from outside: the watchdog calls the call's
`on_stop` (`Connection.interrupt`) when it fires (and `gil_free` demotes the query's thread while it
runs). The other engines bound themselves from inside, reading the same deadline (`remaining()`):
regexes through a matcher with a timeout that releases the GIL, spreadsheet formulas by depth and
cell count, bulk writes by count (and SQLite by row limits).

Memory: the watchdog samples the process's resident size; a call that has grown it by more than
`memory_bytes` since the watchdog first saw it running is stopped the same way. The state a
session keeps is bounded separately and exactly by its `Budget`.

The watchdog is one daemon thread per process (it is infrastructure, like the GIL: one per
interpreter), started on the first limited call. It never reads or writes environment state.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from compoworld.core.envelope import RuleViolation

DEMOTE_AFTER_S = 0.02  # CPU seconds after which a call's GIL-free engine work runs at idle priority
DEMOTED: set[int] = set()  # threads left at idle priority (an unprivileged thread cannot raise it back)
PERIOD = 0.01  # seconds between the watchdog's checks while calls run
IDLE_PERIOD = 0.05  # ... and while none does (a call is first seen within this)
DEFAULT_CPU_S = 2.0
DEFAULT_MEMORY = 512 * 1024 * 1024
MAX_BULK_ITEMS = 1000  # items in one list argument of a writing tool (bulk creates, batch updates)


@dataclass(frozen=True)
class CallLimits:
    """What one tool call may use: CPU seconds (its own thread's clock) and resident memory growth."""

    cpu_s: float = DEFAULT_CPU_S
    memory_bytes: int = DEFAULT_MEMORY
    # the share of the time a CPU-heavy call may hold the CPU (and so the GIL) while other work in
    # the process wants it (see `Pacer`); None: never yield. Servers of many sessions set it.
    share: float | None = None

    def __post_init__(self) -> None:
        if not self.cpu_s > 0:
            raise ValueError(f"call CPU limit must be a positive number of seconds, got {self.cpu_s!r}")
        if self.share is not None and not 0 < self.share <= 1:
            raise ValueError(f"call CPU share must be in (0, 1], got {self.share!r}")
        if not self.memory_bytes > 0:
            raise ValueError(
                f"call memory limit must be a positive number of bytes, got {self.memory_bytes!r}"
            )


class CallLimitExceeded(BaseException):
    """Raised inside a call that passed its limit. A BaseException, so a tool's own
    `except Exception` cannot swallow it; `Service.invoke` rolls back and re-raises it."""

    limit = "cpu_time"


class CpuLimitExceeded(CallLimitExceeded):
    limit = "cpu_time"


class MemoryLimitExceeded(CallLimitExceeded):
    limit = "memory"


class ResourceLimit(RuleViolation):
    """An engine refusing work past its own bound (rows, formula depth, bulk size, a regex's time)."""

    type = "resource_limit"


class _Reg:
    __slots__ = (
        "tid",
        "limits",
        "budget",
        "cpu0",
        "rss0",
        "depth",
        "active",
        "fired",
        "used0",
        "demoted",
        "stops",
        "native",
        "gil_free",
        "extra",
    )

    def __init__(self, tid: int, limits: CallLimits | None, budget: Budget | None) -> None:
        self.tid = tid
        self.limits = limits
        self.budget = budget
        # the thread's CPU clock when the call began; read lazily (by the watchdog when it first sees
        # the call, or by an engine asking what is left): a call shorter than that costs no clock read
        self.cpu0: float | None = None
        self.rss0: int | None = None
        self.depth = 0  # nested calls (the browser acting through other tools) share the outer deadline
        self.active = False
        self.fired: type[CallLimitExceeded] | None = None
        self.used0 = budget.used if budget is not None else 0
        self.demoted = False
        # what stops the call's C engine from outside (SQLite's interrupt), called by the watchdog
        # when it fires: the engine then needs no Python callback (and no GIL) while it runs
        self.stops: list[Any] = []
        self.native = threading.get_native_id()  # the kernel's id, to set the thread's priority from outside
        self.gil_free = False  # inside an engine's C call that runs without the GIL (see `gil_free`)
        self.extra = 0.0  # seconds the call's work took elsewhere (a helper process): see `charge`

    def cpu(self) -> float:
        """CPU seconds the call has used (read from the calling thread itself), with what it had
        done elsewhere."""
        now = time.thread_time()
        if self.cpu0 is None:
            self.cpu0 = now
        return now - self.cpu0 + self.extra


_set_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
_set_exc.restype = ctypes.c_int
_clear_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class _Watchdog:
    """Polls the running limited calls; it holds a lock only to fire or to disarm, so that a limit
    exception is never raised in a thread that has already left its call."""

    def __init__(self) -> None:
        self.regs: dict[int, _Reg] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def _after_fork(self) -> None:
        self.regs, self.lock, self.thread = {}, threading.Lock(), None

    def arm(self, reg: _Reg) -> None:
        if self.thread is None:  # first use (a forked child starts its own: see _after_fork)
            with self.lock:
                if self.thread is None:
                    self.thread = threading.Thread(target=self._loop, name="compoworld-watchdog", daemon=True)
                    self.thread.start()
        reg.active = True
        self.regs[reg.tid] = reg  # one dict store: atomic under the GIL

    def disarm(self, reg: _Reg) -> None:
        """End the call's watch. Idempotent; once it returns no limit exception can arrive."""
        with self.lock:
            if reg.active:
                reg.active = False
                if self.regs.get(reg.tid) is reg:
                    del self.regs[reg.tid]
            if reg.fired is not None:  # fired but maybe not delivered yet: take it back
                _clear_exc(reg.tid, None)

    def fire(self, reg: _Reg, exc: type[CallLimitExceeded]) -> None:
        """Stop the call now (from any thread), as if it had passed its limit."""
        with self.lock:
            if reg.active and reg.fired is None:
                if reg.demoted and _set_policy(reg.native, False):
                    # back to normal priority before the engine is stopped: what runs next holds the
                    # GIL, and a thread at idle priority holding it would stall every other thread
                    reg.demoted = False
                    DEMOTED.discard(reg.tid)
                reg.fired = exc
                _set_exc(reg.tid, exc)
                for stop in reg.stops:
                    stop()

    def _loop(self) -> None:
        while True:
            time.sleep(PERIOD if self.regs else IDLE_PERIOD)
            regs = [r for r in list(self.regs.values()) if r.fired is None and r.limits is not None]
            if not regs:
                continue
            rss = _rss()
            for reg in regs:
                limits = reg.limits
                assert limits is not None
                try:
                    now = time.clock_gettime(time.pthread_getcpuclockid(reg.tid))
                except (OSError, AttributeError):
                    continue
                if reg.cpu0 is None:  # first sight: CPU used before it (< IDLE_PERIOD) goes uncounted
                    reg.cpu0 = now
                if now - reg.cpu0 + reg.extra > limits.cpu_s:
                    self.fire(reg, CpuLimitExceeded)
                    continue
                if reg.gil_free and not reg.demoted and now - reg.cpu0 > DEMOTE_AFTER_S:
                    self.demote(reg)
                elif rss is not None:
                    if reg.rss0 is None:
                        reg.rss0 = rss
                    elif rss - reg.rss0 > limits.memory_bytes:
                        self.fire(reg, MemoryLimitExceeded)

    def demote(self, reg: _Reg) -> None:
        """Drop a call's thread to idle CPU priority while it runs an engine's GIL-free C code (it
        then takes only CPU no one else wants); `gil_free` restores it before Python runs again."""
        with self.lock:
            if reg.active and reg.gil_free and not reg.demoted and _set_policy(reg.native, True):
                reg.demoted = True
                DEMOTED.add(reg.tid)


def _set_policy(native: int, idle: bool) -> bool:
    if not hasattr(os, "sched_setscheduler"):
        return False
    try:
        os.sched_setscheduler(native, os.SCHED_IDLE if idle else os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError):
        return False  # unprivileged threads cannot leave SCHED_IDLE; others cannot enter it
    return True


WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WATCHDOG._after_fork)


# ---- cooperative fair share ---------------------------------------------------------------------
SLICE_S = 0.0005  # seconds heavy work runs between two looks at whether it must yield
CONTENDED = 0.9  # ... and it yields when it got less than this share of the CPU meanwhile
BUSY_SLICE_S = 0.0001  # ... or, while an interactive event loop has work, after this much
PACERS: dict[int, Pacer] = {}  # by thread: the work that thread runs under a fair share
BUSY_LOOPS: set[int] = set()  # watched event loops (`watch_loop`) that are running callbacks now


class Pacer:
    """A bounded duty cycle for CPU-heavy Python work that shares the GIL with interactive work.

    CPython hands the GIL round-robin between the threads that want it: a formula evaluation, a
    bulk write or a state dump in one thread takes half of it from the event loop serving every
    other session, for as long as it runs (the quiet sessions' calls then take twice as long),
    and a switch interval cannot change that half. So heavy loops call `checkpoint()`: every
    `SLICE_S` of wall time the work looks at the CPU it got meanwhile, and if that was less than
    `CONTENDED` of it (something else in the process, or on the machine, wanted the CPU or the
    GIL) it sleeps `used * (1 - share) / share`, letting go of both; while a watched event loop
    has callbacks to run (`watch_loop`), it does so after `BUSY_SLICE_S`. Work alone runs at full speed;
    work beside others keeps about `share` of the time. Only timing changes, never a result, and a
    sleeping call uses no CPU time, so its CPU limit is unchanged."""

    __slots__ = ("share", "cpu0", "wall0", "paused", "pauses")

    def __init__(self, share: float) -> None:
        self.share = share
        self.cpu0 = time.thread_time()
        self.wall0 = time.perf_counter()
        self.paused = 0.0  # seconds slept so far
        self.pauses = 0

    def check(self, wall: float, busy: bool = False) -> None:
        cpu = time.thread_time()
        used = cpu - self.cpu0
        if busy or used < CONTENDED * (wall - self.wall0):
            pause = max(used, BUSY_SLICE_S) * (1 - self.share) / self.share
            time.sleep(pause)
            self.paused += pause
            self.pauses += 1
            cpu, wall = time.thread_time(), time.perf_counter()
        self.cpu0, self.wall0 = cpu, wall


def checkpoint() -> None:
    """Called by CPU-heavy loops (formula cells, bulk items, budget sizing, state dumps): yields
    if the thread's work is under a fair share and has had its slice (see `Pacer`). Costs a dict
    lookup where no fair share applies, and a clock read (no system call) where one does."""
    p = PACERS.get(threading.get_ident())
    if p is not None:
        wall = time.perf_counter()
        if BUSY_LOOPS:  # an event loop serving others is waiting for the GIL this thread holds
            if wall - p.wall0 >= BUSY_SLICE_S:
                p.check(wall, busy=True)
        elif wall - p.wall0 >= SLICE_S:
            p.check(wall)


class _WatchedSelector:
    """An event loop's selector that marks the loop busy (`BUSY_LOOPS`) from the moment its wait
    returns until it waits again: the loop then has callbacks to run (requests of other sessions),
    and heavy work under a fair share yields to it at once instead of splitting the GIL with it."""

    def __init__(self, inner: Any, key: int) -> None:
        self._inner = inner
        self._key = key

    def select(self, timeout: float | None = None) -> Any:
        BUSY_LOOPS.discard(self._key)
        try:
            return self._inner.select(timeout)
        finally:
            BUSY_LOOPS.add(self._key)

    def close(self) -> None:
        BUSY_LOOPS.discard(self._key)
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def watch_loop(loop: Any) -> bool:
    """Give heavy work under a fair share priority-yield to `loop` (an asyncio selector loop that
    serves interactive requests); idempotent. False where the loop has no selector to watch (uvloop)."""
    selector = getattr(loop, "_selector", None)
    if selector is None or isinstance(selector, _WatchedSelector):
        return isinstance(selector, _WatchedSelector)
    loop._selector = _WatchedSelector(selector, id(loop))
    BUSY_LOOPS.add(id(loop))  # it is running now (this is called from it)
    weakref.finalize(loop, BUSY_LOOPS.discard, id(loop))  # a loop dropped unclosed marks nothing
    return True


@contextlib.contextmanager
def pacing(share: float | None) -> Iterator[Pacer | None]:
    """Run the block's heavy loops under a fair share (nothing if `share` is None, if the thread
    already has one, or on a thread running an event loop, where a sleep would stall the loop)."""
    tid = threading.get_ident()
    if share is None or tid in PACERS or _on_loop():
        yield PACERS.get(tid)
        return
    p = PACERS[tid] = Pacer(share)
    try:
        yield p
    finally:
        PACERS.pop(tid, None)


def _on_loop() -> bool:
    import asyncio

    return asyncio._get_running_loop() is not None


def current() -> _Reg | None:
    """The limited call this thread is running, if any."""
    return WATCHDOG.regs.get(threading.get_ident())


def on_stop(stop: Any) -> None:
    """Have the watchdog call `stop()` (from its own thread) if the running call passes a limit:
    for C code that runs without the GIL and can be stopped from another thread (SQLite's
    `Connection.interrupt`). No-op outside a limited call."""
    reg = current()
    if reg is not None and reg.limits is not None and stop not in reg.stops:
        reg.stops.append(stop)


def remaining(default: float = DEFAULT_CPU_S) -> float:
    """CPU seconds the running call has left (`default` outside a limited call): engines that run
    C code which cannot be interrupted give it this as their own timeout."""
    reg = current()
    if reg is None or reg.limits is None:
        return default
    return max(0.0, reg.limits.cpu_s - reg.cpu())


def charge(seconds: float) -> None:
    """Count `seconds` of the running call's work done outside its thread (a helper process it
    waited on, using no CPU of its own) against its CPU limit: what it waits for is its work."""
    reg = current()
    if reg is not None and seconds > 0:
        reg.extra += seconds


@contextlib.contextmanager
def gil_free() -> Iterator[None]:
    """Around an engine's C call that runs without the GIL and that the watchdog can stop from
    outside (`on_stop`): past `DEMOTE_AFTER_S` of the call's CPU the watchdog drops the thread to
    idle priority, and it is raised again here, before Python runs. Nothing in between takes the
    GIL at idle priority (no progress callback), so a runaway query costs the quiet sessions
    neither the GIL nor the CPU they want."""
    reg = current()
    if reg is None or reg.limits is None:
        yield
        return
    reg.gil_free = True
    try:
        yield
    finally:
        with WATCHDOG.lock:
            reg.gil_free = False
            _restore_priority(reg)


def _restore_priority(reg: _Reg) -> None:
    if not reg.demoted:
        return
    reg.demoted = False
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        DEMOTED.discard(reg.tid)
    except OSError:
        pass  # unprivileged: the thread stays in DEMOTED


def cpu_limit() -> float:
    """The running call's CPU limit in seconds (the default outside one)."""
    reg = current()
    return reg.limits.cpu_s if reg is not None and reg.limits is not None else DEFAULT_CPU_S


def expired() -> bool:
    """Whether the running call is past its CPU limit (False outside a limited call). Engines whose
    C loops cannot be interrupted poll it (SQLite's progress handler returns it)."""
    reg = current()
    return reg is not None and reg.limits is not None and reg.cpu() > reg.limits.cpu_s


def limit_message(name: str, reg: _Reg, exc: type[CallLimitExceeded] | CallLimitExceeded) -> str:
    limits = reg.limits or CallLimits()
    if exc.limit == "memory":
        return (
            f"{name}: the call grew memory past its limit of {limits.memory_bytes} bytes and was stopped; "
            "nothing it did was kept (ask for less at once)"
        )
    return (
        f"{name}: the call ran past its CPU time limit of {limits.cpu_s:g} s and was stopped; "
        "nothing it did was kept (ask for less at once)"
    )


# ---- the state budget --------------------------------------------------------------------------
_STR, _BYTES, _DICT, _LIST, _ENTRY, _PTR, _NUM = 49, 33, 64, 56, 40, 8, 32
RECORD_OVERHEAD = 240  # a record's own slot in the store: its table entry, digest and index entries
BIG_RECORD = 4096  # records at least this big keep their measured size (see Budget._sizes)


def value_bytes(value: Any) -> int:
    """Bytes a JSON value costs to hold and to serve, one model for small and large records.

    Every object is charged what CPython spends on it (header and slots), every reference again
    (a copied string shares memory but is written out again on every state read), and text by its
    characters (non-ASCII at 4 bytes each, what its wider storage and escaping cost). So a record
    of a hundred short fields costs what its hundred objects do, not its 2 KB of JSON."""
    t = type(value)
    if t is str:
        return _STR + (len(value) if value.isascii() else 4 * len(value))
    if t is dict:
        n = _DICT
        for k, v in value.items():
            n += _ENTRY + value_bytes(k) + value_bytes(v)
        return n
    if t is list or t is tuple:
        n = _LIST
        for v in value:
            n += _PTR + value_bytes(v)
        return n
    if t is int:
        return _NUM + (value.bit_length() >> 3)
    if t is bytes or t is bytearray:
        return _BYTES + len(value)
    return _NUM


class Budget:
    """Bytes of state one session may hold, charged where state grows: every write of every path
    (tools, web forms, the shell's copies, uploads, bulk creates) ends in `Service.invoke`, which
    charges what the call's journal says it changed (`value_bytes` of each record after, less
    before) before it commits; a call that would pass the budget is refused with a 422
    `state_budget_exceeded` and changes nothing. Services that hold state in an engine of their
    own (SQLite) are charged by the engine's size (`engine_bytes`)."""

    def __init__(self, limit: int, used: int = 0) -> None:
        if limit <= 0:
            raise ValueError(f"state budget must be a positive number of bytes, got {limit!r}")
        self.limit = limit
        self.used = used
        # sizes of big records as charged, by identity: a record replaced later (a spreadsheet
        # that grows by a row) is measured once, not again as the "before" of the next write
        self._sizes: dict[tuple[str, Any], tuple[Any, int]] = {}

    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    def _size(self, table: str, key: Any, rec: Any, missing: Any) -> int:
        hit = self._sizes.get((table, key))
        if hit is not None and hit[0] is rec:
            return hit[1]
        n = _rec(key, rec, missing)
        if n > BIG_RECORD:
            self._sizes[(table, key)] = (rec, n)
        return n

    def growth(self, svc: Any) -> int:
        """What the call in progress on `svc` adds (negative when it frees), from its journal."""
        store = svc.store
        seen: set[tuple[str, Any]] = set()
        n = 0
        missing = _missing()
        for table, key, old, _added in store._journal:
            if (table, key) in seen or key is _new_table():
                continue
            seen.add((table, key))
            new = store.tables.get(table, {}).get(key, missing)
            if new is not old:
                n += self._size(table, key, new, missing) - self._size(table, key, old, missing)
                checkpoint()
        return n

    def charge(self, svc: Any, name: str, engine_before: int | None = None) -> None:
        grown = self.growth(svc)
        if engine_before is not None:
            grown += svc.engine_bytes() - engine_before
        if grown > 0 and self.used + grown > self.limit:
            raise RuleViolation(
                f"{name}: this session's state is {self.used} bytes; this write adds {grown} more, past "
                f"its budget of {self.limit} bytes. Delete something first.",
                type="state_budget_exceeded",
            )
        self.used += grown


def _rec(key: Any, rec: Any, missing: Any) -> int:
    return 0 if rec is missing else RECORD_OVERHEAD + value_bytes(key) + value_bytes(rec)


def _missing() -> Any:
    from compoworld.core.state import _MISSING

    return _MISSING


def _new_table() -> Any:
    from compoworld.core.state import _NEW_TABLE

    return _NEW_TABLE


def state_bytes(env: Any) -> int:
    """The whole state of `env` by the budget's model (a session's starting charge)."""
    total = 0
    missing = _missing()
    for svc in env.services.values():
        for table in svc.store.tables.values():
            for key, rec in table.items():
                total += _rec(key, rec, missing)
        engine = getattr(svc, "engine_bytes", None)
        if engine is not None:
            total += engine()
    return total


# ---- the call path -----------------------------------------------------------------------------
def limited_call(env: Any, svc: Any, spec: Any, arguments: Any) -> dict[str, Any]:
    """Run one tool call under `env.limits` and charge `env.budget` (see `Service.invoke`)."""
    tid = threading.get_ident()
    reg = WATCHDOG.regs.get(tid)
    if reg is not None:  # nested: the outer call's deadline and budget hold
        reg.depth += 1
        try:
            return svc.invoke(spec, arguments)
        finally:
            reg.depth -= 1
    reg = _Reg(tid, env.limits, env.budget)
    budget = reg.budget
    if budget is not None and getattr(svc, "quota_bytes", None) is not None and hasattr(svc, "size_bytes"):
        # services that amplify (a shell's cp, SQL's INSERT ... SELECT) stop themselves mid-call at
        # what is left of the budget, before their growth is even built
        svc.quota_bytes = svc.size_bytes() + budget.remaining()
    WATCHDOG.arm(reg)
    snap = env.snapshot() if svc.acts_on_others else None
    share = reg.limits.share if reg.limits is not None else None
    try:
        try:
            with pacing(share):
                return svc.invoke(spec, arguments)
        finally:
            WATCHDOG.disarm(reg)
            _restore_priority(reg)
    except CallLimitExceeded as e:
        WATCHDOG.disarm(reg)
        if snap is not None:  # other services' nested writes were committed: put them back
            env.restore(snap)
        if budget is not None:
            budget.used = reg.used0
        return {
            "success": False,
            "error": {"code": 422, "type": "resource_limit", "message": limit_message(spec.name, reg, e)},
        }


def settle(svc: Any, name: str, engine_before: int | None) -> None:
    """Called by `Service.invoke` after the tool ran, before it commits: charge the budget (a 422
    if it would pass it) and, for the outermost call, end the watch, so that no limit exception
    can arrive after the commit."""
    reg = WATCHDOG.regs.get(threading.get_ident())
    if reg is None:
        return
    if reg.budget is not None:
        reg.budget.charge(svc, name, engine_before)
    if reg.depth == 0:
        WATCHDOG.disarm(reg)


def engine_size(svc: Any) -> int | None:
    """The engine's size before a call, when the call is charged and the service has an engine."""
    engine = getattr(svc, "engine_bytes", None)
    if engine is None:
        return None
    reg = WATCHDOG.regs.get(threading.get_ident())
    return engine() if reg is not None and reg.budget is not None else None
