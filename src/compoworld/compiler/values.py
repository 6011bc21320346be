"""Valid (and deliberately invalid) arguments for a tool, from its input schema and the live state."""

from __future__ import annotations

import random
import uuid
from typing import Any

import jsonschema

from compoworld.compiler.compiler import norm

UNKNOWN_ID = "zz-unknown-000"


class NoValue(Exception):
    """No value satisfying the schema could be made (an unenforceable constraint, say)."""


def sample(schema: dict[str, Any], name: str, rng: random.Random, depth: int = 0) -> Any:
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            opts = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return sample(opts[0], name, rng, depth)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    n = norm(name)
    if t == "integer":
        lo = schema.get("minimum", 1)
        return int(
            max(lo, min(schema.get("maximum", 5), 5))
            if "maximum" in schema
            else max(lo, 1 + rng.randrange(3))
        )
    if t == "number":
        return float(max(schema.get("minimum", 1), 1.5))
    if t == "boolean":
        return True
    if t == "array":
        item = sample(schema.get("items", {"type": "string"}), name, rng, depth + 1) if depth < 4 else "x"
        return [item] * max(1, schema.get("minItems", 1))
    if t == "object" or "properties" in schema:
        if depth >= 4:
            return {}
        props = schema.get("properties", {})
        return {k: sample(props[k], k, rng, depth + 1) for k in schema.get("required", []) if k in props}
    fmt = schema.get("format", "")
    if isinstance(schema.get("pattern"), str):
        drawn = from_pattern(schema["pattern"], rng)
        if drawn is not None:
            return drawn
    if fmt == "uuid" or n.endswith("uuid"):
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    text = _sample_text(schema, name, n, fmt, rng)
    lo, hi = schema.get("minLength"), schema.get("maxLength")
    if isinstance(hi, int) and len(text) > hi:
        text = text[: max(hi, 0)]
    if isinstance(lo, int) and len(text) < lo:
        text = text + "x" * min(lo - len(text), 10_000)
    return text


def _sample_text(schema: dict[str, Any], name: str, n: str, fmt: str, rng: random.Random) -> str:
    if fmt in ("date-time",) or n.endswith(("time", "datetime")) or n in ("start", "end"):
        return f"2026-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}T10:00:00Z"
    if fmt == "date" or n.endswith("date"):
        return f"2026-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}"
    if fmt == "email" or "email" in n:
        return f"probe{rng.randrange(100)}@example.com"
    if fmt in ("uri", "url") or n.endswith("url"):
        return f"https://example.com/{rng.randrange(1000)}"
    if n in ("path", "filepath", "folderpath") or n.endswith("path"):
        return f"/probe/item-{rng.randrange(10000)}.txt"
    return f"probe {name} {rng.randrange(10000)}"


def valid_args(svc: Any, tool: dict[str, Any], rng: random.Random, optional: bool = False) -> dict[str, Any]:
    """Arguments that satisfy the schema, with ids drawn from the service's state where they name records."""
    op = tool["op"]
    if op["kind"] == "dispatch":  # one of the actions that run as code, with its own valid params
        code = sorted(a for a, e in op["actions"].items() if e["status"] == "compiled")
        if not code:
            raise NoValue(f"{tool['name']} has no action that runs as code")
        action = code[rng.randrange(len(code))]
        sub = {**op["actions"][action], "name": f"{tool['name']}.{action}"}
        return {op["action_param"]: action, op["params_param"]: valid_args(svc, sub, rng, optional)}
    schema = tool["input_schema"]
    props = schema.get("properties", {})
    names = list(props) if optional else list(schema.get("required", []))
    if op.get("id_param") in props and op["id_param"] not in names:
        names.append(op["id_param"])  # optional in the schema, but the call names no record without it
    names += [p for p in op.get("samples", {}) if p in props and p not in names]  # the code needs them
    res = svc.manifest["resources"]
    args: dict[str, Any] = {}
    for p in names:
        ref = None
        if p == op.get("id_param"):
            ref = op["resource"]
        elif op.get("parent") and p == op["parent"]["param"]:
            ref = op["parent"]["resource"]
        if ref is not None and ref in res:
            keys = sorted(svc.table(res[ref]["table"]))
            if not keys:
                raise NoValue(f"no {ref} record to name in '{p}'")
            args[p] = _typed(keys[rng.randrange(len(keys))], props[p])
        elif p == op.get("natural_key"):
            args[p] = _typed(f"new-{op['resource']}-{rng.randrange(10**6)}", props[p])
        elif op.get("list") and p in op.get("params", ()):  # a computation over a list of numbers
            args[p] = [2, 3.5, 7]
        elif (ref_list := next((r for r in op.get("ref_lists", ()) if r["param"] == p), None)) and (
            keys := sorted(svc.table(res[ref_list["resource"]]["table"]))
        ):  # `contact_ids: [...]`: ids of records that exist
            item = (props[p].get("items") or {}) if isinstance(props[p], dict) else {}
            args[p] = [_typed(keys[rng.randrange(len(keys))], item)]
        elif (
            (ref_id := next((r for r in op.get("ref_ids", ()) if r["param"] == p), None))
            or (op.get("kind") == "relate" and p == op.get("member_param") and {"resource": op["member"]})
        ) and (keys := _keys_of(svc, (ref_id or {"resource": op.get("member")})["resource"])):
            # a record the write names (`author_id`, a tag to link) is one that exists
            args[p] = _typed(keys[rng.randrange(len(keys))], props[p])
        elif p in op.get("samples", {}):  # a value the code accepts (an operation, a unit)
            args[p] = op["samples"][p]
        elif op.get("lookup") == p:
            recs = list(svc.table(res[op["resource"]]["table"]).values())
            vals = [r[p] for r in recs if r.get(p) is not None]
            if not vals:
                raise NoValue(f"no {op['resource']} has a '{p}' to look up")
            args[p] = vals[0]
        elif (
            (enum := ((res.get(op.get("resource") or "") or {}).get("enums") or {}).get(p))
            and isinstance(props[p], dict)
            and not props[p].get("enum")
            and _fits(props[p], enum[0])
        ):  # a free-form parameter of a field the spec gives values for: one of those values
            args[p] = enum[0]
        else:
            args[p] = sample(props[p], p, rng)
    for inner, wrapper in (op.get("wrapped") or {}).items():  # ids inside `path: {...}` name records too
        ref = op["resource"] if inner == op.get("id_param") else None
        if inner == (op.get("parent") or {}).get("param"):
            ref = op["parent"]["resource"]
        if wrapper not in args and wrapper in props and ref is not None:
            args[wrapper] = sample(props[wrapper], wrapper, rng)
        if ref in res:
            keys = sorted(svc.table(res[ref]["table"]))
            if not keys:
                raise NoValue(f"no {ref} record to name in '{wrapper}.{inner}'")
            args = put_arg(
                tool, args, inner, _typed(keys[rng.randrange(len(keys))], param_schema(tool, inner))
            )
    args = _library_args(svc, op, props, args, rng)
    for p, (lo, hi) in (op.get("bounds") or {}).items():  # the range a description states
        v = args.get(p)
        if isinstance(v, int | float) and not isinstance(v, bool):
            v = max(lo, v) if lo is not None else v
            v = min(hi, v) if hi is not None else v
            args[p] = int(v) if props.get(p, {}).get("type") == "integer" and v == int(v) else v
    parent = op.get("parent") or {}
    idp, pp = op.get("id_param"), parent.get("param")
    flat = flat_args(op, args)
    if idp in flat and pp in flat and parent.get("field") and op.get("resource") in res:
        # the record named must be a child of the parent named: take the parent from the record
        keys = sorted(k for k, r in svc.table(res[op["resource"]]["table"]).items() if r.get(parent["field"]))
        if not keys:
            raise NoValue(f"no {op['resource']} record under a {parent['resource']}")
        key = keys[rng.randrange(len(keys))]
        args = put_arg(tool, args, idp, _typed(key, param_schema(tool, idp)))
        pkey = svc.table(res[op["resource"]]["table"])[key][parent["field"]]
        args = put_arg(tool, args, pp, _typed(pkey, param_schema(tool, pp)))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(args))
    if errors:
        raise NoValue(f"generated arguments do not fit the schema: {errors[0].message}")
    return args


def _fits(schema: dict[str, Any], value: Any) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema).is_valid(value)
    except Exception:  # a schema the validator cannot read
        return False


def param_schema(tool: dict[str, Any], param: str) -> dict[str, Any]:
    """The schema of `param`, top-level or inside its wrapper object (`path: {id}`)."""
    props = tool["input_schema"].get("properties", {})
    wrapper = (tool["op"].get("wrapped") or {}).get(param)
    if wrapper:
        return (props.get(wrapper, {}).get("properties") or {}).get(param, {})
    return props.get(param, {})


def flat_args(op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the parameters an op reads out of wrapper objects (`path.id`) lifted up."""
    wrapped = op.get("wrapped")
    if not wrapped:
        return args
    flat = dict(args)
    for inner, wrapper in wrapped.items():
        box = args.get(wrapper)
        if isinstance(box, dict) and inner in box and inner not in args:
            flat[inner] = box[inner]
    return flat


def put_arg(tool: dict[str, Any], args: dict[str, Any], param: str, value: Any) -> dict[str, Any]:
    """`args` with `param` set where the schema has it: top level, or inside its wrapper."""
    wrapper = (tool["op"].get("wrapped") or {}).get(param)
    if wrapper:
        box = args.get(wrapper)
        return {**args, wrapper: {**(box if isinstance(box, dict) else {}), param: value}}
    return {**args, param: value}


def _typed(key: str, schema: dict[str, Any]) -> Any:
    t = schema.get("type")
    if t in ("integer", "number") and str(key).isdigit():
        return int(key)
    if t == "array":
        return [_typed(key, schema.get("items") or {})]
    return key


def wrong_type(schema: dict[str, Any]) -> Any:
    """A value of the wrong JSON type for `schema`, or `NoValue` when every type is accepted."""
    t = schema.get("type")
    if t in ("string",):
        return 12345
    if t in ("integer", "number"):
        return "not-a-number"
    if t == "boolean":
        return "yes"
    if t == "array":
        return "not-a-list"
    if t == "object":
        return 7
    raise NoValue("parameter accepts any type")


# ---- strings that match a pattern ---------------------------------------------------------------
_CATEGORY = {
    "CATEGORY_DIGIT": "0123456789",
    "CATEGORY_WORD": "abcdefghijklmnopqrstuvwxyz0123456789",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_DIGIT": "abcdefghij",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_NOT_SPACE": "abcdefghij",
}
_ANY = "abcdefghijklmnopqrstuvwxyz0123456789"


def from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string that `re.search(pattern, s)` accepts, drawn with `rng`; None when the pattern uses
    what this small generator cannot honour (back-references, conditionals) or the draw misses."""
    import re
    import re._parser as sre  # the stdlib's own regex parser: the same reading as `re`

    try:
        tree = sre.parse(pattern)
    except (re.error, TypeError, RecursionError):
        return None

    def chars(items: Any) -> str:
        out: list[str] = []
        negate = False
        for op, av in items:
            name = str(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                out.append(chr(av))
            elif name == "RANGE":
                lo, hi = av
                out.extend(chr(c) for c in range(lo, min(hi, lo + 40) + 1))
            elif name == "CATEGORY":
                out.extend(_CATEGORY.get(str(av), "a"))
        if negate:
            return "".join(c for c in _ANY if c not in out) or "_"
        return "".join(out) or "a"

    def gen(seq: Any, depth: int) -> str:
        if depth > 20:
            raise ValueError("too deep")
        s = []
        for op, av in seq:
            name = str(op)
            if name == "LITERAL":
                s.append(chr(av))
            elif name == "NOT_LITERAL":
                s.append("a" if chr(av) != "a" else "b")
            elif name == "ANY":
                s.append(rng.choice(_ANY))
            elif name == "IN":
                s.append(rng.choice(chars(av)))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                lo, hi, sub = av
                hi = lo + 8 if hi > lo + 8 else hi  # MAXREPEAT is unbounded
                n = max(lo, min(hi, lo + rng.randrange(0, 6) if lo < 4 else lo))
                s.extend(gen(sub, depth + 1) for _ in range(n))
            elif name == "SUBPATTERN":
                s.append(gen(av[-1], depth + 1))
            elif name == "BRANCH":
                s.append(gen(rng.choice(av[1]), depth + 1))
            elif name in ("AT", "ASSERT", "ASSERT_NOT"):
                continue  # anchors and lookarounds: the result is checked below
            else:
                raise ValueError(name)
        return "".join(s)

    for _ in range(8):
        try:
            out = gen(tree, 0)
        except (ValueError, IndexError, TypeError):
            return None
        if re.search(pattern, out):
            return out
    return None


def _keys_of(svc: Any, kind: Any) -> list[str]:
    r = svc.manifest["resources"].get(kind) if isinstance(kind, str) else None
    if not r or r.get("collection_of") or r.get("singleton"):
        return []
    return sorted(svc.table(r["table"]))


def _library_args(
    svc: Any, op: dict[str, Any], props: dict[str, Any], args: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    """Ids that name existing records in the calls of saved collections (two of the kind saved) and of
    the player (an item to play or queue, a device), where the service keeps those records."""
    args = dict(args)
    if op.get("collection") and op.get("ids_params"):
        tp = op.get("type_param")
        if tp and tp in props and isinstance(props[tp].get("enum"), list) and op["item"] in props[tp]["enum"]:
            args[tp] = op["item"]
        kind = args.get(tp) if tp else None
        keys = _keys_of(svc, kind or op["item"])
        if keys:
            pick = [keys[rng.randrange(len(keys))] for _ in range(2)]
            pick = list(dict.fromkeys(pick))
            for p in op["ids_params"]:
                if p in args:
                    args[p] = pick if _type(props[p]) == "array" else ",".join(pick)
    if op.get("kind") == "player":
        params = op.get("params", {})
        keys = next((ks for k in op.get("items_from", []) if (ks := _keys_of(svc, k))), [])
        for role in ("item", "items"):
            p = params.get(role)
            if p in args and keys:
                key = keys[rng.randrange(len(keys))]
                args[p] = [key] if _type(props[p]) == "array" else key
        p = params.get("name")
        if p in args:  # `play_song(name)`: the name of an item the service keeps
            names = [
                str(rec[f])
                for k in op.get("items_from", [])
                if _keys_of(svc, k)
                for rec in svc.table(svc.manifest["resources"][k]["table"]).values()
                for f in ("name", "title")
                if rec.get(f)
            ]
            if not names:
                raise NoValue(f"no item has a name to play in '{p}'")
            args[p] = sorted(names)[0]
        p = params.get("device")
        devices = _keys_of(svc, op.get("device_resource"))
        if p in args and devices:
            args[p] = [devices[0]] if _type(props[p]) == "array" else devices[0]
        p = params.get("volume")
        if p in args and isinstance(args[p], int | float) and not isinstance(args[p], bool):
            args[p] = 40
        p = params.get("position")
        if p in args and isinstance(args[p], int | float) and not isinstance(args[p], bool):
            args[p] = 1500
        p = params.get("state")
        if p in args and op.get("modes"):
            args[p] = op["modes"][0]
    return args


def _type(schema: Any) -> Any:
    return schema.get("type") if isinstance(schema, dict) else None
