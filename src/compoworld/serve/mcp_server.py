"""One environment as an MCP server, on the official `mcp` SDK's low-level `Server`.

Tools are listed with input and output schemas; every call is validated against its input schema
before it runs (the SDK does not validate); every result carries the envelope in
`structuredContent`, with `isError` set when the call failed. A `finish` tool records the agent's
final answer. Control words never appear as tools: an agent cannot reset, read state or verify.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

import jsonschema
import mcp_types as types
import orjson
from mcp.server.lowlevel import Server

from compoworld.agents.prompt import FINISH, FINISH_TOOL
from compoworld.core.envelope import ENVELOPE_SCHEMA, failure, ok
from compoworld.core.environment import Environment
from compoworld.core.schema import schema_violations
from compoworld.core.state import canonical_json

DEFAULT_STATE_BUDGET = 32 * 1024 * 1024  # bytes of state one session may hold
LOG_BUDGET = 8 * 1024 * 1024  # bytes of call log kept per session (results beyond are summarised)

RESERVED = re.compile(r"(^|__)(verify|reset|state|get_state|snapshot|restore|reward|grade|score)", re.I)


def is_reserved(name: str) -> bool:
    """Control-plane verbs are never tools (a `verify` tool callable mid-episode leaks reward)."""
    return bool(RESERVED.search(name))


# Tool lists are immutable and identical for every session of the same services and mode: build
# (and let the SDK serialize) them once, not once per session.
_TOOLS: dict[tuple[str, tuple[str, ...]], list[types.Tool]] = {}


def _args_bytes(args: Any) -> int:
    try:
        return len(orjson.dumps(args))
    except (TypeError, orjson.JSONEncodeError):
        return len(repr(args))


class EnvSession:
    """What one MCP session serves: an environment, its tool mode, and the agent's final answer.

    Three things keep one session from hurting the others (or itself):
    - `lock` serialises everything that touches the environment (tool calls on the event loop,
      snapshots, hashes and state reads in a worker thread), so heavy work can leave the loop;
    - `state_budget` bounds the bytes of state the session may hold. Writing tools store what they
      are given, so the bytes of each successful writing call's arguments are added to the last
      measured size; only when that estimate passes the budget is the state measured exactly
      (record by record, each size cached by identity, so it costs what changed). A call that would pass the budget
      gets a 422 and changes nothing. Services whose tools can grow state far beyond their
      arguments (the workspace shell's `cp` and `>>`, SQL's `INSERT ... SELECT`) have `quota_bytes`
      and `size_bytes()`: each call to them gets what is left of the budget as its quota, and they
      enforce it themselves, exactly.
    - `log` keeps the calls as the server saw them (tool, arguments, result), up to `LOG_BUDGET`.
    """

    def __init__(
        self, env: Environment, mode: str = "direct", state_budget: int | None = DEFAULT_STATE_BUDGET
    ) -> None:
        self.env = env
        self.mode = mode
        self.answer: str | None = None
        self.calls = 0
        self.lock = asyncio.Lock()
        self.state_budget = state_budget
        self._sizes: dict[tuple[str, str, Any], tuple[Any, int]] = {}
        self._estimate: int | None = None
        self.written = 0  # bytes the session's writes may have added (arguments, shell growth)
        self.log: list[dict[str, Any]] = []
        self._log_bytes = 0
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
        """Exact bytes of the session's state (canonical JSON, record by record).

        Records are values (a write replaces one, never edits it), so each record's size is cached
        by identity: a measure costs one pass over the records plus what changed since the last."""
        old, new = self._sizes, {}
        total = 0
        for service, tables in self.env.snapshot()["services"].items():
            part = 0
            for tname, table in tables.items():
                for key, rec in table.items():
                    k = (service, tname, key)
                    hit = old.get(k)
                    if hit is None or hit[0] is not rec:
                        hit = (rec, len(canonical_json(key)) + len(canonical_json(rec)) + 2)
                    new[k] = hit
                    part += hit[1]
            sized = getattr(self.env.services[service], "size_bytes", None)
            # an engine's own size counts when it is more than its snapshot (SQLite's image is compressed)
            total += max(part, sized()) if sized is not None else part
        self._sizes = new
        return total

    def _over_budget(self, name: str, n: int) -> dict[str, Any] | None:
        """A 422 envelope if a writing call with `n` bytes of arguments could pass the budget."""
        budget = self.state_budget
        if budget is None:
            return None
        if self._estimate is None and (first := self.state_bytes()) > budget:
            # a task whose s0 alone passes the budget still gets the budget to grow by
            budget = self.state_budget = first + budget
        if self._estimate is None or self._estimate + n > budget:
            self._estimate = self.state_bytes()
            if self._estimate + n > budget:
                return failure(
                    422,
                    "state_budget_exceeded",
                    f"{name}: this session's state is {self._estimate} bytes; a write of up to {n} "
                    f"more would pass its budget of {budget} bytes. Delete something first.",
                )
        return None

    def call(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validate against the advertised schema, then run; always an envelope."""
        self.calls += 1
        schema = self.schemas.get(name)
        if schema is None:
            return failure(404, "unknown_tool", f"Unknown tool '{name}'")
        args = arguments or {}
        v = self._validators.get(name)
        if v is None:
            v = self._validators[name] = jsonschema.Draft202012Validator(schema)
        bad = schema_violations(v, args, name)
        if bad:
            return failure(400, "invalid_arguments", bad)
        if name == FINISH:
            self.answer = args.get("answer", "")
            return ok({"finished": True})
        target = args.get("tool") if name == "call_tool" and self.mode == "gateway" else name
        spec = self.env.tool_spec(target) if isinstance(target, str) else None
        if (spec is not None and not spec.mutates) or (spec is None and name != "call_tool"):
            return self.env.call(name, args)
        n = _args_bytes(args)  # a writing tool, or the gateway's call_tool
        refused = self._over_budget(name, n)
        if refused is not None:
            return refused
        svc = self.env.services.get(str(target).split("__", 1)[0])
        if self.state_budget is not None and hasattr(svc, "quota_bytes") and hasattr(svc, "size_bytes"):
            # a service that grows state beyond its arguments (the shell's cp, SQL's INSERT ...
            # SELECT) enforces its own quota: it gets exactly what is left of the session's budget
            before = svc.size_bytes()
            svc.quota_bytes = before + max(0, self.state_budget - self._estimate - n)
            result = self.env.call(name, args)
            if result["success"]:
                grown = max(0, svc.size_bytes() - before)
                self._estimate += grown
                self.written += grown
        else:
            result = self.env.call(name, args)
        if result["success"]:
            self.written += n
            if self._estimate is not None:
                self._estimate += n
        return result

    def record(self, name: str, arguments: Any, envelope: dict[str, Any], text: str) -> None:
        """Append one call to the log (`text` is the envelope as already serialised for the reply)."""
        entry: dict[str, Any] = {"seq": len(self.log) + 1, "tool": name, "arguments": arguments or {}}
        size = len(text) + _args_bytes(entry["arguments"])
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
    return types.CallToolResult(
        content=[types.TextContent(text=text or json.dumps(envelope, ensure_ascii=False))],
        structured_content=envelope,
        is_error=not envelope["success"],
    )


EXPIRED = "this MCP session has expired or was closed: ask the harness for a new session"


def build_server(
    resolve: Callable[[Any], EnvSession | None],
    input_schema: Callable[[str], dict[str, Any] | None],
    name: str = "compoworld",
) -> Server:
    """A low-level MCP server whose sessions come from `resolve(request_context)`.

    `input_schema(name)` lets the SDK check `Mcp-Param-*` headers without running `tools/list` on
    every call (which it otherwise does, serializing the whole tool list each time).
    """

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        s = resolve(ctx)
        return types.ListToolsResult(tools=s.tools() if s else [])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        s = resolve(ctx)
        if s is None:
            return result_of(failure(404, "unknown_session", EXPIRED))
        async with s.lock:  # atomic per session; heavy control work holds it from a worker thread
            envelope = s.call(params.name, params.arguments)
            text = json.dumps(envelope, ensure_ascii=False)
            s.record(params.name, params.arguments, envelope, text)
        return result_of(envelope, text)

    return Server(
        name,
        version="0.1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
