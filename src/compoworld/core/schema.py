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
    """Inline ``$defs``, drop pydantic's titles, simplify optionals, give every parameter a type."""
    defs = schema.get("$defs", {})
    out = _strip_titles(_resolve(schema, defs))
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _drop_null_branch(v) for k, v in out["properties"].items()}
    return typed_properties(out)


# every JSON value has one of these types ("integer" is a kind of "number")
ANY_TYPE = ["string", "number", "boolean", "object", "array", "null"]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def schema_types(node: Any) -> list[str] | None:
    """The JSON types a subschema admits, read from `type`, `const`, `enum` or the branches of
    `anyOf`/`oneOf`; None when its keywords do not bound them (any type validates)."""
    if not isinstance(node, dict):
        return None
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list) and t and all(isinstance(x, str) for x in t):
        return list(t)
    if "const" in node:
        return [_json_type(node["const"])]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return list(dict.fromkeys(_json_type(v) for v in node["enum"]))
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            out: list[str] = []
            for b in branches:
                bt = schema_types(b)
                if bt is None:  # one unbounded branch: the union admits every type
                    return None
                out.extend(x for x in bt if x not in out)
            return out
    return None


def typed_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with a `type` on every top-level parameter (the same dict when all have one).

    A union (`str | dict` gives `anyOf` without `type`) gets the union of its branches' types next
    to its `anyOf`, and an unconstrained parameter gets every type: what validates is unchanged
    (the added `type` admits exactly what the rest already admits), and the schema is accepted by
    every consumer, verl's `OpenAIFunctionToolSchema` included, which requires a `type` per
    parameter."""
    props = schema.get("properties")
    if not isinstance(props, dict) or all(isinstance(p, dict) and "type" in p for p in props.values()):
        return schema
    fixed = {}
    for name, p in props.items():
        if isinstance(p, dict) and "type" in p:
            fixed[name] = p
            continue
        if p is False:  # admits nothing: no type to give it, and no call can fill it
            fixed[name] = p
            continue
        p = p if isinstance(p, dict) else {}
        types = schema_types(p) or ANY_TYPE
        fixed[name] = {"type": types[0] if len(types) == 1 else types, **p}
    return {**schema, "properties": fixed}


def schema_violations(validator: Any, arguments: Any, tool: str) -> str | None:
    """The 400 message naming each bad field (the first five), or None when `arguments` fit.

    `validator` is a `jsonschema` validator of the tool's input schema (built once by the caller).
    """
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    parts = [f"'{'.'.join(map(str, e.path)) or 'arguments'}': {e.message}" for e in errors[:5]]
    return f"Invalid arguments for {tool}: " + "; ".join(parts)
