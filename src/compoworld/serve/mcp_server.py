"""One environment as an MCP server, on the official `mcp` SDK's low-level `Server`.

Tools are listed with input and output schemas; every call is validated against its input schema
before it runs (the SDK does not validate); every result carries the envelope in
`structuredContent`, with `isError` set when the call failed. A `finish` tool records the agent's
final answer. Control words never appear as tools: an agent cannot reset, read state or verify.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import jsonschema
import mcp_types as types
from mcp.server.lowlevel import Server

from compoworld.agents.prompt import FINISH, FINISH_TOOL
from compoworld.core.envelope import ENVELOPE_SCHEMA, failure, ok
from compoworld.core.environment import Environment
from compoworld.core.schema import schema_violations

RESERVED = re.compile(r"(^|__)(verify|reset|state|get_state|snapshot|restore|reward|grade|score)", re.I)


def is_reserved(name: str) -> bool:
    """Control-plane verbs are never tools (a `verify` tool callable mid-episode leaks reward)."""
    return bool(RESERVED.search(name))


# Tool lists are immutable and identical for every session of the same services and mode: build
# (and let the SDK serialize) them once, not once per session.
_TOOLS: dict[tuple[str, tuple[str, ...]], list[types.Tool]] = {}


class EnvSession:
    """What one MCP session serves: an environment, its tool mode, and the agent's final answer."""

    def __init__(self, env: Environment, mode: str = "direct") -> None:
        self.env = env
        self.mode = mode
        self.answer: str | None = None
        self.calls = 0
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
        return self.env.call(name, args)


def result_of(envelope: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(envelope, ensure_ascii=False))],
        structured_content=envelope,
        is_error=not envelope["success"],
    )


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
            return result_of(failure(404, "unknown_session", "this MCP session has expired or was closed"))
        return result_of(s.call(params.name, params.arguments))

    return Server(
        name,
        version="0.1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
