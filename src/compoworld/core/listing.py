"""Tool names (`service__tool`) and tool entries in OpenAI function-calling or MCP `tools/list` form.

Its own module so the gateway and the environment both import it, one way (the environment opens
its gateway; the gateway never imports the environment).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import ENVELOPE_SCHEMA
from compoworld.core.schema import typed_properties
from compoworld.core.tool import ToolSpec

SEP = "__"
NAME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]{0,63}$")
Format = Literal["openai", "mcp"]
Mode = Literal["direct", "gateway", "gateway-compat"]
MODES: tuple[str, ...] = ("direct", "gateway", "gateway-compat")


def full_name(service: str, tool: str) -> str:
    return f"{service}{SEP}{tool}"


def check_name(service: str, tool: str) -> str:
    name = full_name(service, tool)
    if SEP in service or SEP in tool or not NAME_RE.match(name):
        raise ValueError(
            f"tool name {name!r} is invalid: it must match {NAME_RE.pattern} as service__tool, "
            "with no '__' inside either part"
        )
    return name


def tool_entry(name: str, spec: ToolSpec, fmt: Format) -> dict[str, Any]:
    """One tool in OpenAI function-calling or MCP `tools/list` form.

    Every parameter carries a `type` (`typed_properties`): compiled specs come with unions and
    untyped parameters that some consumers (verl's schema model) reject."""
    params = typed_properties(spec.input_schema)
    if fmt == "openai":
        return {
            "type": "function",
            "function": {"name": name, "description": spec.description, "parameters": params},
        }
    if fmt == "mcp":
        out = dict(ENVELOPE_SCHEMA)
        if spec.output_schema:
            out = {**out, "properties": {**out["properties"], "data": spec.output_schema}}
        return {
            "name": name,
            "description": spec.description,
            "inputSchema": params,
            "outputSchema": out,
            "annotations": {"readOnlyHint": not spec.mutates},
        }
    raise ValueError(f"unknown tool format {fmt!r}: expected 'openai' or 'mcp'")
