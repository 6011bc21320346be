"""One environment as an MCP server, on the official `mcp` SDK's low-level `Server`.

Tools are listed with input and output schemas; every call is validated against its input schema
before it runs (the SDK does not validate); every result carries the envelope in
`structuredContent`, with `isError` set when the call failed. A `finish` tool records the agent's
final answer. Control words never appear as tools: an agent cannot reset, read state or verify.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import jsonschema
import mcp_types as types
import orjson
from mcp.server.lowlevel import Server

from compoworld.core.envelope import ENVELOPE_SCHEMA, failure, ok
from compoworld.core.environment import Environment
from compoworld.core.limits import DEMOTED, MAX_BULK_ITEMS, Budget, CallLimits, pacing, state_bytes
from compoworld.core.schema import schema_violations
from compoworld.tasks.prompt import FINISH, FINISH_TOOL

DEFAULT_STATE_BUDGET = 32 * 1024 * 1024  # bytes of state one session may hold
PACE = 4.0  # a session that used c CPU seconds in a call waits PACE * c before its next one ...
PACE_FREE_S = 0.005  # ... unless the call used less than this
PACE_MAX_S = 10.0
# A call stopped at a limit (`resource_limit`: CPU time, memory, cells, rows) did no work for the
# agent, and a session that keeps hitting limits is a runaway loop (or an attack): its next call
# waits this many times the CPU the stopped call used, so its share of the CPU falls to
# 1 / (1 + PACE_STOPPED) while an honest session that hits one limit waits at most PACE_MAX_S.
PACE_STOPPED = 16.0
# ... and inside a call, heavy loops keep at most this share of the GIL while others want it
# (`core.limits.Pacer`): the same duty cycle as PACE, spread through the call instead of after it
FAIR_SHARE = 1 / (1 + PACE)
LOG_BUDGET = 8 * 1024 * 1024  # bytes of call log kept per session (results beyond are summarised)

RESERVED = re.compile(r"(^|__)(verify|reset|state|get_state|snapshot|restore|reward|grade|score)", re.I)


def is_reserved(name: str) -> bool:
    """Control-plane verbs are never tools (a `verify` tool callable mid-episode leaks reward)."""
    return bool(RESERVED.search(name))


# Tool lists are immutable and identical for every session of the same services and mode: build
# (and let the SDK serialize) them once, not once per session.
_TOOLS: dict[tuple[str, tuple[str, ...]], list[types.Tool]] = {}


def _stopped(envelope: dict[str, Any]) -> bool:
    """Whether the call was stopped at one of its limits (and so did no work)."""
    err = envelope.get("error")
    return isinstance(err, dict) and err.get("type") == "resource_limit"


def _args_bytes(args: Any) -> int:
    try:
        return len(orjson.dumps(args))
    except (TypeError, orjson.JSONEncodeError):
        return len(repr(args))


class EnvSession:
    """What one MCP session serves: an environment, its tool mode, and the agent's final answer.

    Three things keep one session from hurting the others (or itself):
    - `lock` serialises everything that touches the environment; tool calls (`run`) go to a worker
      thread under it, off the event loop, and each runs under the environment's `CallLimits`
      (CPU time, memory: a call past them is stopped, undone and answered with a 422
      `resource_limit`; see `core/limits.py`);
    - `state_budget` bounds the state the session may hold: the environment's `Budget` is charged,
      inside every call, what the call's journal says it changed, by one size model for small and
      large records (`core.limits.value_bytes`). Every write path ends there (tools, web forms,
      the shell's cp/mv, uploads, bulk creates); a call that would pass it gets a 422
      `state_budget_exceeded` and changes nothing. Services that amplify (the shell's `cp`, SQL's
      `INSERT ... SELECT`) also get what is left as their own quota and stop mid-call
      (`quota_exceeded`);
    - `log` keeps the calls as the server saw them (tool, arguments, result), up to `LOG_BUDGET`,
      whichever path made them.
    """

    def __init__(
        self,
        env: Environment,
        mode: str = "direct",
        state_budget: int | None = DEFAULT_STATE_BUDGET,
        limits: CallLimits | None = CallLimits(),
    ) -> None:
        self.env = env
        self.mode = mode
        self.answer: str | None = None
        self.calls = 0
        self.lock = asyncio.Lock()
        env.limits = limits
        self._base = 0
        if state_budget is not None:
            first = state_bytes(env)
            # a task whose s0 alone passes the budget still gets the budget to grow by
            env.budget = Budget(state_budget if first <= state_budget else first + state_budget, first)
            self._base = first
        else:
            env.budget = None
        self.log: list[dict[str, Any]] = []
        self._log_bytes = 0
        self._not_before = 0.0  # monotonic time before which the session's next call waits (fair share)
        entries = [t for t in env.tools("mcp", mode) if not is_reserved(t["name"])]
        finish = {
            "name": FINISH,
            "description": FINISH_TOOL["function"]["description"],
            "inputSchema": FINISH_TOOL["function"]["parameters"],
            "outputSchema": ENVELOPE_SCHEMA,
            "annotations": {"readOnlyHint": False},
        }
        self.entries = [*entries, finish]
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        self.schemas = {e["name"]: e["inputSchema"] for e in self.entries}

    @property
    def _share(self) -> float | None:
        limits = self.env.limits
        return limits.share if limits is not None else None

    @property
    def state_budget(self) -> int | None:
        return self.env.budget.limit if self.env.budget is not None else None

    @property
    def written(self) -> int:
        """Bytes the session's writes have added to its state (0 without a budget)."""
        return self.env.budget.used - self._base if self.env.budget is not None else 0

    def tools(self) -> list[types.Tool]:
        key = (self.mode, tuple(e["name"] for e in self.entries))
        tools = _TOOLS.get(key)
        if tools is None:
            if len(_TOOLS) >= 512:
                _TOOLS.clear()
            tools = _TOOLS[key] = [
                types.Tool(
                    name=e["name"],
                    description=e["description"],
                    input_schema=e["inputSchema"],
                    output_schema=e["outputSchema"],
                    annotations=types.ToolAnnotations(read_only_hint=e["annotations"]["readOnlyHint"]),
                )
                for e in self.entries
            ]
        return tools

    def input_schema(self, name: str) -> dict[str, Any] | None:
        return self.schemas.get(name)

    def state_bytes(self) -> int:
        """The session's state by the budget's size model (what it is charged for)."""
        budget = self.env.budget
        return budget.used if budget is not None else state_bytes(self.env)

    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validate against the advertised schema, then run; always an envelope."""
        self.calls += 1
        schema = self.schemas.get(name)
        if schema is None:
            return failure(404, "unknown_tool", f"Unknown tool '{name}'")
        args = arguments or {}
        if isinstance(args, dict):  # bulk bounds first: validating 8,000 items costs more than refusing them
            for pname, value in args.items():
                if type(value) is list and len(value) > MAX_BULK_ITEMS:
                    return failure(
                        422,
                        "resource_limit",
                        f"{name}: '{pname}' lists {len(value)} items; one call takes at most {MAX_BULK_ITEMS}",
                    )
        v = self._validators.get(name)
        if v is None:
            v = self._validators[name] = jsonschema.Draft202012Validator(schema)
        bad = schema_violations(v, args, name)
        if bad:
            return failure(400, "invalid_arguments", bad)
        if name == FINISH:
            self.answer = args.get("answer", "")
            return ok({"finished": True})
        return self.env.call(name, args)

    def run(self, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        """One call as every path makes it: run, serialise, log. Blocking: call it from a worker
        thread, holding `lock`."""
        self._pace()
        cpu, wall = time.thread_time(), time.perf_counter()
        with pacing(self._share):
            envelope = self.call(name, arguments)
            text = json.dumps(envelope, ensure_ascii=False)
            self.record(name, arguments, envelope, text)
        self._charge_cpu(time.thread_time() - cpu, time.perf_counter() - wall, _stopped(envelope))
        return envelope, text

    def web_call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """A web page's action (a form post): the same call, budget and log as an MCP call."""
        self._pace()
        cpu, wall = time.thread_time(), time.perf_counter()
        self.calls += 1
        with pacing(self._share):
            envelope = self.env.call(name, arguments or {})
            self.record(name, arguments, envelope, json.dumps(envelope, ensure_ascii=False))
        self._charge_cpu(time.thread_time() - cpu, time.perf_counter() - wall, _stopped(envelope))
        return envelope

    # Fair share: a session's calls may keep the CPU busy for at most 1 / (1 + PACE) of the time.
    # After a call that used c CPU seconds, the session's next call starts no sooner than PACE * c
    # later (an ordinary call uses ~0.1 ms and is never held back). The wait is in the session's
    # own worker thread, under its lock, so only the session that spent the CPU waits. Time the
    # call already spent not running (its fair-share pauses, waiting for the GIL) counts as waited.
    # A call stopped at a limit owes PACE_STOPPED times its CPU instead.
    def _charge_cpu(self, cpu: float, wall: float | None = None, stopped: bool = False) -> None:
        if cpu > PACE_FREE_S:
            pace = PACE_STOPPED if stopped else PACE
            owed = min(pace * cpu, PACE_MAX_S) - (max(0.0, wall - cpu) if wall is not None else 0.0)
            if owed > 0:
                self._not_before = max(self._not_before, time.monotonic()) + owed

    def _pace(self) -> None:
        wait = self._not_before - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def record(self, name: str, arguments: Any, envelope: dict[str, Any], text: str) -> None:
        """Append one call to the log (`text` is the envelope as already serialised for the reply)."""
        entry: dict[str, Any] = {"seq": len(self.log) + 1, "tool": name, "arguments": arguments or {}}
        size = len(text)
        if self._log_bytes + size <= LOG_BUDGET:  # past it the arguments are dropped: never measured
            size += _args_bytes(entry["arguments"])
        if self._log_bytes + size <= LOG_BUDGET:
            entry["result"] = envelope
            self._log_bytes += size
        else:  # keep the trajectory's shape; drop the bulk
            entry["arguments"] = None
            entry["result"] = {"success": envelope.get("success"), "omitted": "call log budget reached"}
            if not envelope.get("success"):
                entry["result"]["error"] = envelope.get("error")
        self.log.append(entry)


def result_of(envelope: dict[str, Any], text: str | None = None) -> types.CallToolResult:
    data = envelope.get("data") if envelope.get("success") else None
    if isinstance(data, dict) and data.get("type") == "screenshot":  # the computer interface: an image block
        meta = {k: v for k, v in data.items() if k not in ("data", "type", "media_type")}
        return types.CallToolResult(
            content=[
                types.ImageContent(type="image", data=data["data"], mime_type=data["media_type"]),
                types.TextContent(type="text", text=json.dumps(meta, ensure_ascii=False)),
            ],
            structured_content={"success": True, "data": meta},
            is_error=False,
        )
    return types.CallToolResult(
        content=[types.TextContent(text=text or json.dumps(envelope, ensure_ascii=False))],
        structured_content=envelope,
        is_error=not envelope["success"],
    )


EXPIRED = "this MCP session has expired or was closed: ask the harness for a new session"


class CallThreads:
    """The worker threads tool calls run in, off the event loop. A thread whose call dropped to
    idle CPU priority (`core.limits.gil_free`) and could not raise it again (no privilege)
    retires after that call instead of serving the next session at idle priority."""

    IDLE_S = 30.0  # an idle thread exits after this

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue] = []
        self._lock = threading.Lock()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            jobs = self._idle.pop() if self._idle else None
        if jobs is None:
            jobs = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(jobs,), name="compoworld-call", daemon=True).start()
        jobs.put((fn, args, fut, loop))
        return await fut

    def _work(self, jobs: queue.SimpleQueue) -> None:
        me = threading.get_ident()
        while True:
            try:
                fn, args, fut, loop = jobs.get(timeout=self.IDLE_S)
            except queue.Empty:
                with self._lock:
                    if jobs in self._idle:
                        self._idle.remove(jobs)
                        return
                continue  # handed a job just now: take it
            try:
                out, err = fn(*args), None
            except BaseException as e:  # handed to the awaiting coroutine
                out, err = None, e
            if me in DEMOTED:  # retire: the next call gets a thread at normal priority
                DEMOTED.discard(me)
                loop.call_soon_threadsafe(_settle, fut, out, err)
                return
            with self._lock:  # idle again before the caller hears back, so its next call reuses us
                self._idle.append(jobs)
            loop.call_soon_threadsafe(_settle, fut, out, err)


def _settle(fut: asyncio.Future, out: Any, err: BaseException | None) -> None:
    if fut.done():  # the caller went away (cancelled); the call itself has finished
        return
    if err is not None:
        fut.set_exception(err)
    else:
        fut.set_result(out)


def build_server(
    resolve: Callable[[Any], EnvSession | None],
    input_schema: Callable[[str], dict[str, Any] | None],
    name: str = "compoworld",
) -> Server:
    """A low-level MCP server whose sessions come from `resolve(request_context)`.

    `input_schema(name)` lets the SDK check `Mcp-Param-*` headers without running `tools/list` on
    every call (which it otherwise does, serializing the whole tool list each time).
    """

    threads = CallThreads()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        s = resolve(ctx)
        return types.ListToolsResult(tools=s.tools() if s else [])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        s = resolve(ctx)
        if s is None:
            return result_of(failure(404, "unknown_session", EXPIRED))
        async with s.lock:  # atomic per session; the call itself runs in a worker thread, bounded
            envelope, text = await threads.run(s.run, params.name, params.arguments)
        return result_of(envelope, text)

    return Server(
        name,
        version="0.1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
