"""Read MCP tool lists and normalise their real-world defects, reporting each one.

Accepted inputs: a `tools/list` result (`{"tools": [...]}`), a JSON-RPC response wrapping one
(`{"result": {"tools": [...]}}`), a bare list of tools, or the corpus format of `shared/mcp-specs/`
(`{"server", "domain", "tools": [...]}`). A bad spec or a bad tool is reported, never fatal.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ENGINE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")  # the length is fitted by the compiler
# one metaschema validator for every schema: `check_schema` builds a new one per call, 20x slower
_META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
_META7 = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)
DRAFT_2020_ONLY = (
    "prefixItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
    "dependentRequired",
    "minContains",
    "maxContains",
    "$vocabulary",
)
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
TYPE_ALIASES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "double": "number",
    "long": "integer",
}


@dataclass
class Defect:
    tool: str | None
    kind: str  # missing_description | invalid_schema | invalid_name | all_required | ref | pattern | bad_tool | bad_spec
    detail: str


@dataclass
class SpecTool:
    name: str  # the name served (the spec's own name unless it was invalid)
    original_name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool | None = None
    http_method: str | None = None  # open-mcp tools: the REST operation behind the tool
    http_path: str | None = None
    http_kind: str | None = None  # the spec's own x-http-method, also when it is no HTTP method
    expand: dict[str, Any] | None = None  # open-mcp's `x-expandSchema`: truncated parts of the schema


@dataclass
class Excluded:
    """A spec entry that is not an operation of the API, kept out of the served tools (and reported)."""

    name: str
    original_name: str
    cause: str
    reason: str


@dataclass
class Spec:
    server: str
    domain: str
    source: str
    tools: list[SpecTool] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)


def load_spec(source: str | Path | dict | list) -> Spec:
    """Parse and normalise a spec from a path or an already-loaded JSON value."""
    where = str(source) if isinstance(source, str | Path) else "<memory>"
    stem = Path(where).stem if isinstance(source, str | Path) else "server"
    if isinstance(source, str | Path):
        try:
            data: Any = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            spec = Spec(stem, "", where)
            spec.defects.append(Defect(None, "bad_spec", f"cannot read {where}: {e}"))
            return spec
    else:
        data = source
    meta = data if isinstance(data, dict) else {}
    spec = Spec(str(meta.get("server") or stem), str(meta.get("domain") or ""), where)
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        spec.defects.append(
            Defect(None, "bad_spec", "no list of tools found (expected 'tools' or a JSON list)")
        )
        return spec
    seen: set[str] = set()
    originals: set[str] = set()
    for i, raw in enumerate(tools):
        tool = _normalise_tool(raw, i, spec.defects)
        if tool is None:
            continue
        if tool.original_name in originals:  # the same name twice: a server serves only the first
            spec.defects.append(Defect(tool.name, "bad_tool", "duplicate tool name: later entry dropped"))
            continue
        originals.add(tool.original_name)
        if tool.http_kind and tool.http_method is None:
            # open-mcp exports an OpenAPI path item's `parameters` / `servers` / `x-...` keys as if
            # they were methods: the real server has no such operation, so it is no tool
            reason = f"x-http-method {tool.http_kind!r} is an OpenAPI path field, not an HTTP operation"
            spec.excluded.append(Excluded(tool.name, tool.original_name, "not_an_operation", reason))
            spec.defects.append(Defect(tool.original_name, "not_an_operation", f"not served: {reason}"))
            continue
        if tool.name in seen:  # two names that sanitise alike (`a.b`, `a-b`): both kept, told apart
            base, k = tool.name, 2
            while f"{base}_{k}" in seen:
                k += 1
            tool.name = f"{base}_{k}"
            spec.defects.append(
                Defect(
                    tool.original_name,
                    "invalid_name",
                    f"renamed to {tool.name!r} (another tool sanitises to {base!r})",
                )
            )
        seen.add(tool.name)
        spec.tools.append(tool)
    return spec


def _normalise_tool(raw: Any, index: int, defects: list[Defect]) -> SpecTool | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"].strip():
        defects.append(Defect(None, "bad_tool", f"tool #{index} has no name: dropped"))
        return None
    original = raw["name"]
    name = original
    if not OPENAI_NAME.match(name) or not ENGINE_NAME.match(name) or "__" in name:
        name = re.sub(r"[^a-zA-Z0-9_]+", "_", name).strip("_")
        name = re.sub(r"_{2,}", "_", name)
        if not name or not name[0].isalpha():
            name = "t_" + name
        defects.append(Defect(original, "invalid_name", f"renamed to {name!r} (OpenAI and MCP-safe)"))
    desc = raw.get("description")
    if not isinstance(desc, str) or not desc.strip():
        desc = original.replace("_", " ").replace("-", " ").strip().capitalize() + "."
        defects.append(Defect(original, "missing_description", f"described from its name: {desc!r}"))
    schema = raw.get("inputSchema", raw.get("input_schema", raw.get("parameters")))
    schema = normalise_schema(schema, original, defects)
    ann = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
    ro = ann.get("readOnlyHint")
    method, path = raw.get("x-http-method"), raw.get("x-http-path")
    expand = raw.get("x-expandSchema")
    return SpecTool(
        name,
        original,
        desc.strip(),
        schema,
        ro if isinstance(ro, bool) else None,
        method.lower() if isinstance(method, str) and method.lower() in HTTP_METHODS else None,
        path if isinstance(path, str) and path.startswith("/") else None,
        method.lower() if isinstance(method, str) else None,
        {k: v for k, v in expand.items() if isinstance(k, str) and isinstance(v, dict)}
        if isinstance(expand, dict)
        else None,
    )


def normalise_schema(schema: Any, tool: str, defects: list[Defect]) -> dict[str, Any]:
    """An object schema valid under draft 2020-12, with `$ref`s inlined and unusable parts removed."""
    if not isinstance(schema, dict):
        defects.append(Defect(tool, "invalid_schema", "input schema missing or not an object: no parameters"))
        return {"type": "object", "properties": {}}
    schema = copy.deepcopy(schema)
    defs = {**schema.pop("definitions", {}), **schema.pop("$defs", {})} if isinstance(schema, dict) else {}
    schema = _inline(schema, defs, tool, defects, depth=0)
    schema.pop("$schema", None)
    if schema.get("type") != "object":
        if "properties" in schema:
            defects.append(
                Defect(tool, "invalid_schema", f"top-level type {schema.get('type')!r} set to 'object'")
            )
            schema["type"] = "object"
        else:
            defects.append(Defect(tool, "invalid_schema", "top level is not an object schema: no parameters"))
            return {"type": "object", "properties": {}}
    props = schema.get("properties")
    if not isinstance(props, dict):
        if props is not None:
            defects.append(Defect(tool, "invalid_schema", "'properties' is not an object: dropped"))
        props = {}
    clean: dict[str, Any] = {}
    for pname, p in props.items():
        clean[pname] = _fix_property(p, f"{tool}.{pname}", defects)
    schema["properties"] = clean
    req = schema.get("required", [])
    if not isinstance(req, list):
        defects.append(Defect(tool, "invalid_schema", "'required' is not a list: dropped"))
        req = []
    missing = [r for r in req if r not in clean]
    if missing:
        defects.append(Defect(tool, "invalid_schema", f"required names no property: {missing}"))
    req = [r for r in dict.fromkeys(req) if r in clean]
    # "everything required": authors often mark every field required, including ones that carry a
    # default or say they are optional; an agent could never omit them.
    if len(clean) > 1 and set(req) == set(clean):
        optional = [
            r
            for r in req
            if "default" in clean[r] or re.search(r"\boptional\b", str(clean[r].get("description", "")), re.I)
        ]
        if optional:
            defects.append(
                Defect(tool, "all_required", f"every property required; made optional: {optional}")
            )
            req = [r for r in req if r not in optional]
    if req:
        schema["required"] = req
    else:
        schema.pop("required", None)
    problem = _schema_problem(json.dumps(schema, sort_keys=True, default=str))
    if problem is not None:
        defects.append(Defect(tool, "invalid_schema", f"{problem}: parameters accepted unchecked"))
        return {"type": "object", "properties": {k: {} for k in clean}, **({"required": req} if req else {})}
    return schema


@functools.lru_cache(maxsize=4096)
def _schema_problem(canonical: str) -> str | None:
    """Why a schema is not valid under draft 2020-12, or None. Generated specs repeat their schemas
    (open-mcp's keycloak: 453 tools, 109 distinct), so each distinct one is checked once."""
    schema = json.loads(canonical)
    # draft 7's metaschema checks the same structure 5x faster; 2020-12 only where its keywords appear
    meta = _META if any(f'"{k}"' in canonical for k in DRAFT_2020_ONLY) else _META7
    e = jsonschema.exceptions.best_match(meta.iter_errors(schema))
    return None if e is None else e.message


def _inline(node: Any, defs: dict[str, Any], tool: str, defects: list[Defect], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(x, defs, tool, defects, depth) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        target = None
        if isinstance(ref, str) and ref.startswith("#/"):
            name = ref.rsplit("/", 1)[-1]
            target = defs.get(name)
        if target is None or depth > 8:
            defects.append(Defect(tool, "ref", f"unresolvable or recursive $ref {ref!r}: accepts any value"))
            return {k: v for k, v in node.items() if k != "$ref"}
        defects.append(Defect(tool, "ref", f"$ref {ref!r} inlined"))
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs, tool, defects, depth + 1)
    return {k: _inline(v, defs, tool, defects, depth) for k, v in node.items()}


def _fix_property(p: Any, where: str, defects: list[Defect]) -> dict[str, Any]:
    if not isinstance(p, dict):
        defects.append(
            Defect(where.split(".")[0], "invalid_schema", f"{where}: not a schema, accepts any value")
        )
        return {}
    p = dict(p)
    t = p.get("type")
    if isinstance(t, str) and t not in JSON_TYPES:
        fixed = TYPE_ALIASES.get(t.lower())
        defects.append(
            Defect(where.split(".")[0], "invalid_schema", f"{where}: unknown type {t!r} -> {fixed}")
        )
        if fixed:
            p["type"] = fixed
        else:
            p.pop("type")
    if isinstance(p.get("required"), bool):  # draft-3 style, a common mistake
        defects.append(Defect(where.split(".")[0], "invalid_schema", f"{where}: boolean 'required' dropped"))
        p.pop("required")
    pat = p.get("pattern")
    if pat is not None:
        try:
            re.compile(pat)
        except (re.error, TypeError):
            defects.append(
                Defect(
                    where.split(".")[0], "pattern", f"{where}: pattern {pat!r} cannot be enforced: dropped"
                )
            )
            p.pop("pattern")
    if p.get("type") == "array" and isinstance(p.get("items"), dict):
        p["items"] = _fix_property(p["items"], where + "[]", defects)
    if isinstance(p.get("properties"), dict):
        p["properties"] = {k: _fix_property(v, f"{where}.{k}", defects) for k, v in p["properties"].items()}
    return p


# ---- action-dispatch tools -------------------------------------------------------------------
# `gitlab_issue(action, params)`: one tool, many operations chosen by a string; each action's own
# parameters are listed in the description ("- get: project_id*, issue_iid*", `*` = required) or
# only named by an enum.
ACTION_PARAMS = ("action", "operation", "method", "op")
PARAMS_PARAMS = ("params", "parameters", "args", "arguments", "payload")
_ACTION_LINE = re.compile(r"^[-*] `?([a-z][a-z0-9_]*(?:`?\s*/\s*`?[a-z][a-z0-9_]*)*)`?:\s*(.*)$")
_GROUP_LINE = re.compile(r"^.*\(([a-z][a-z0-9_]*)_\*\):\s*(.*?)\s+for all\.?\s*$")
_PARAM = re.compile(r"^(?:\(\+\s*)?([a-z][a-z0-9_]*(?:/[a-z][a-z0-9_]*)*)(\*)?\s*(?:\((.*)\)|\{.*\})?$", re.S)
_SECTION = re.compile(r"(?:Param(?:eter)?s? conventions|Action params|Per-action params)\b", re.I)
_SAME_AS = re.compile(r"\bsame (?:filters|params|parameters) as ([a-z][a-z0-9_]*)", re.I)


@dataclass
class Dispatch:
    action_param: str
    params_param: str
    actions: dict[str, dict[str, Any]]  # action -> the JSON schema of its `params`


def _split_top(text: str) -> list[str]:
    """`a*, b ([]int), c (x, y)`: split on the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out if x.strip()]


def _param_list(text: str) -> tuple[dict[str, Any], list[str]] | None:
    """The params a line lists, or None when it is prose, not a parameter list."""
    props: dict[str, Any] = {}
    req: list[str] = []
    for part in _split_top(text.rstrip(".")):
        m = _PARAM.match(part)
        if not m:
            return None
        name, star, hint = m.group(1), m.group(2), (m.group(3) or "").strip()
        if hint.startswith("[]int"):
            s: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}
        elif hint.startswith("[]"):
            s = {"type": "array", "items": {"type": "string"}}
        else:
            s = {"type": "string"}
        if hint:
            s["description"] = hint
        head, *alts = name.split("/")  # `created_after/before`: created_after and created_before
        for n in [head] + [head.rsplit("_", 1)[0] + "_" + a if "_" in head else a for a in alts]:
            props[n] = dict(s)
            if star:
                req.append(n)
    return (props, req) if props else None


def dispatch_of(tool: SpecTool) -> Dispatch | None:
    """The actions of an action-dispatch tool with their params' schemas, or None if it is none."""
    props = tool.input_schema.get("properties", {})
    act = next((p for p in ACTION_PARAMS if isinstance(props.get(p), dict)), None)
    if act is None or props[act].get("type") not in (None, "string"):
        return None
    pp = next(
        (p for p in PARAMS_PARAMS if isinstance(props.get(p), dict) and props[p].get("type") == "object"),
        None,
    )
    if pp is None or set(props) - {act, pp, "confirm"}:
        return None  # other top-level arguments: an ordinary tool with a mode switch
    desc = tool.description or ""
    sec = _SECTION.search(desc)
    lines = desc[sec.start() :].splitlines()[1:] if sec else desc.splitlines()
    actions: dict[str, tuple[dict[str, Any], list[str]]] = {}
    common: dict[str, tuple[dict[str, Any], list[str]]] = {}
    for raw in lines:
        line = raw.strip()
        if g := _GROUP_LINE.match(line):  # "Notes (note_*): project_id*, issue_iid* for all."
            common[g.group(1)] = _param_list(g.group(2)) or ({}, [])
            continue
        m = _ACTION_LINE.match(line)
        if not m:
            continue
        text = m.group(2).strip()
        parsed = _param_list(text) if text else ({}, [])
        if parsed is None:
            if not sec:
                continue  # outside a parameter section a prose line is guidance, not a parameter list
            same = _SAME_AS.search(text)  # "global issue list (no project_id). Same filters as list."
            parsed = actions.get(same.group(1), ({}, [])) if same else ({}, [])
            parsed = ({k: v for k, v in parsed[0].items() if k not in text}, [])
        for n in (x.strip(" `") for x in m.group(1).split("/")):
            cp, cr = next((v for k, v in common.items() if n.startswith(k + "_")), ({}, []))
            actions[n] = ({**cp, **parsed[0]}, list(dict.fromkeys(cr + parsed[1])))
    enum = props[act].get("enum")
    if isinstance(enum, list) and enum and all(isinstance(e, str) for e in enum):
        actions = {e: actions.get(e, ({}, [])) for e in enum}  # the enum is the list; lines add params
    if not actions:
        return None
    return Dispatch(
        act,
        pp,
        {
            a: {"type": "object", "properties": p, **({"required": r} if r else {})}
            for a, (p, r) in actions.items()
        },
    )
