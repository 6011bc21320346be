"""JSON Schemas for tools, derived from type hints and docstrings.

Schemas are draft 2020-12 and self-contained (no ``$ref``), so the same dict is valid for OpenAI
function calling, MCP ``inputSchema`` and ``jsonschema`` validation.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    section = "desc"
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            section, current = "args", None
            continue
        if _SECTION.match(line):
            section, current = "other", None
            continue
        if section == "desc":
            desc.append(line)
        elif section == "args":
            indent = len(line) - len(line.lstrip())
            m = _PARAM.match(line)
            if m and indent <= 4 and not line.startswith("        "):
                current = m.group(1).lstrip("*")
                params[current] = m.group(3).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(desc).strip(), params


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**_resolve(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
            return _resolve(merged, defs)
        return {k: _resolve(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_resolve(v, defs) for v in node]
    return node


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "title" and isinstance(v, str):
                continue
            if k == "properties" and isinstance(v, dict):
                out[k] = {name: _strip_titles(sub) for name, sub in v.items()}
            else:
                out[k] = _strip_titles(v)
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _drop_null_branch(prop: dict[str, Any]) -> dict[str, Any]:
    """`X | None = None` becomes plain `X`, not required: agents omit it rather than send null."""
    any_of = prop.get("anyOf")
    if isinstance(any_of, list):
        rest = [b for b in any_of if b != {"type": "null"}]
        if len(rest) == 1 and len(rest) < len(any_of):
            merged = {**rest[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
            if merged.get("default", 0) is None:
                merged.pop("default")
            return merged
    return prop


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs``, drop pydantic's titles, simplify optionals."""
    defs = schema.get("$defs", {})
    out = _strip_titles(_resolve(schema, defs))
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _drop_null_branch(v) for k, v in out["properties"].items()}
    return out


def schema_violations(validator: Any, arguments: Any, tool: str) -> str | None:
    """The 400 message naming each bad field (the first five), or None when `arguments` fit.

    `validator` is a `jsonschema` validator of the tool's input schema (built once by the caller).
    """
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    parts = [f"'{'.'.join(map(str, e.path)) or 'arguments'}': {e.message}" for e in errors[:5]]
    return f"Invalid arguments for {tool}: " + "; ".join(parts)
