"""Adversarial tests derived from a spec alone; a compiled tool that fails any is quarantined.

For every compiled tool: a valid call succeeds; each missing required argument, a wrongly typed
argument and an unknown id give an error; failed calls change nothing. By kind: create then get /
list shows the record; update then get shows the change; delete then get gives 404; transitions
and relations land in the record.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld.compiler.compiler import (
    FIELDS_SWITCHES,
    LIMIT_PARAMS,
    OFFSET_PARAMS,
    QUERY_PARAMS,
    TRANSPORT_WRAPPERS,
    norm,
    switch_param,
)
from compoworld.compiler.runtime import epoch, service_from_manifest
from compoworld.compiler.values import (
    UNKNOWN_ID,
    NoValue,
    flat_args,
    from_pattern,
    param_schema,
    put_arg,
    sample,
    valid_args,
    wrong_type,
)
from compoworld.core.environment import Environment


class Failed(Exception):
    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


def run_adversarial(manifest: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Run the tests of every compiled tool; mark failures `quarantined` with their cause. Returns it."""
    cls = service_from_manifest(manifest)
    env = Environment([cls], seed=seed, size="small")
    svc = env.services[cls.name]
    by_name = {t["name"]: t for t in manifest["tools"]}
    subs = []  # a dispatch tool's actions, each tested on its own as `<tool>.<action>`
    for t in manifest["tools"]:
        if t["op"]["kind"] == "dispatch" and t["status"] == "compiled":
            for action, a in t["op"]["actions"].items():
                sub = {**a, "name": f"{t['name']}.{action}", "description": ""}
                by_name[sub["name"]] = sub
                subs.append((t, a, sub))
    for t in [x for x in manifest["tools"] if x["op"]["kind"] != "dispatch"] + [s for _, _, s in subs]:
        if t["status"] != "compiled":
            continue
        env.restore(env.initial)
        try:
            _run(env, svc, t, by_name, random.Random(f"{seed}:{t['name']}"))
            t["tests"] = "passed"
        except Failed as e:
            t["status"], t["cause"], t["reason"], t["tests"] = "quarantined", e.cause, str(e), "failed"
        except NoValue as e:
            t["status"], t["cause"], t["reason"], t["tests"] = (
                "quarantined",
                "cannot_make_arguments",
                str(e),
                "failed",
            )
    for t in manifest["tools"]:
        if t["op"]["kind"] != "dispatch" or t["status"] != "compiled":
            continue
        for a in t["op"]["actions"].values():
            a.pop("tests", None)
        for tool, a, sub in subs:
            if tool is t:
                a.update({k: sub[k] for k in ("status", "cause", "reason", "tests") if k in sub})
        code = [a for a in t["op"]["actions"].values() if a["status"] == "compiled"]
        t["actions_code"] = len(code)
        if code:  # code: its compiled actions passed; those that failed are quarantined on their own
            t["tests"] = "passed"
        else:
            first = next(a for a in t["op"]["actions"].values() if a["status"] == "quarantined")
            t["status"], t["cause"], t["tests"] = "quarantined", first["cause"], "failed"
            t["reason"] = f"every compiled action failed its tests; first: {first['reason']}"
    return manifest


def _call(env: Environment, svc: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    if "." in tool:  # a dispatch tool's action: called through the tool, its arguments as `params`
        outer, action = tool.split(".", 1)
        op = svc.ops[outer]
        return env.call(f"{svc.name}__{outer}", {op["action_param"]: action, op["params_param"]: args})
    return env.call(f"{svc.name}__{tool}", args)


def _expect_error(
    env: Environment, svc: Any, tool: str, args: dict[str, Any], what: str, code: int | None = None
) -> None:
    before = env.state_hash()
    r = _call(env, svc, tool, args)
    if r["success"]:
        raise Failed("accepted_bad_input", f"{what}: the call succeeded")
    if code is not None and r["error"]["code"] != code:
        raise Failed(
            "wrong_error_code", f"{what}: expected {code}, got {r['error']['code']} ({r['error']['message']})"
        )
    if env.state_hash() != before:
        raise Failed("failed_call_changed_state", f"{what}: a failed call changed the state")


def _companion(
    by_name: dict[str, Any], resource: str, kind: str, parent: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The read that shows what a write of `resource` under `parent` wrote: a list / get of the same
    resource under the same parent resource, else one that needs no parent. A read that requires a
    parent the write never sets (`list_group_users` after `create_user`) reads another collection:
    none to check against."""
    want = (parent or {}).get("resource")
    fallback = None
    for t in by_name.values():
        op = t["op"]
        if not (
            t["status"] == "compiled"
            and op.get("resource") == resource
            and op["kind"] == kind
            and (kind != "get" or op.get("id_param"))
        ):
            continue
        theirs = op.get("parent") or {}
        if theirs.get("resource") == want:
            return t
        if fallback is None and (
            not theirs or theirs.get("param") not in flat_required(t) and not theirs.get("default")
        ):
            fallback = t
    return fallback


def flat_required(tool: dict[str, Any]) -> set[str]:
    """The parameters a call must give, those inside a required wrapper object (`path.id`) too."""
    schema = tool["input_schema"]
    req = set(schema.get("required", []))
    for inner, wrapper in (tool["op"].get("wrapped") or {}).items():
        box = schema.get("properties", {}).get(wrapper, {})
        if inner in box.get("required", []):
            req.add(inner)
    return req


def _read_args(svc: Any, get: dict[str, Any], key: str, rng: random.Random) -> dict[str, Any]:
    """Arguments of `get` that name record `key`, under the parent that record is stored under."""
    args = put_arg(get, valid_args(svc, get, rng), get["op"]["id_param"], _as(get, key))
    parent = get["op"].get("parent") or {}
    table = svc.manifest["resources"][get["op"]["resource"]]["table"]
    stored = (svc.table(table).get(key) or {}).get(parent.get("field", ""))
    if parent and stored is not None:
        args = put_arg(get, args, parent["param"], _typed_like(get, parent["param"], stored))
    return args


def _run(env: Environment, svc: Any, t: dict[str, Any], by_name: dict[str, Any], rng: random.Random) -> None:
    op = t["op"]
    schema = t["input_schema"]
    props = schema.get("properties", {})
    required = list(schema.get("required", []))
    _every_field(env, svc, t, random.Random(rng.random()))
    args = valid_args(svc, t, rng)
    rule = op.get("requires")
    if rule:  # a stated precondition: the named record breaks it (422, nothing changes), then meets it
        key = str(flat_args(op, args)[op["id_param"]])
        table = svc.manifest["resources"][op["resource"]]["table"]
        _set_state(svc, table, key, rule, holds=False)
        _expect_error(env, svc, t["name"], args, f"the rule {rule['text']!r} broken", 422)
        _set_state(svc, table, key, rule, holds=True)
    for p, (lo, hi) in (op.get("bounds") or {}).items():
        if p in props:
            out = hi + 1 if hi is not None else lo - 1
            out = int(out) if props[p].get("type") == "integer" and out == int(out) else out
            _expect_error(env, svc, t["name"], {**args, p: out}, f"'{p}' outside its stated range", 400)
    # bad input first, each from the same starting state
    for p in required:
        _expect_error(env, svc, t["name"], {k: v for k, v in args.items() if k != p}, f"missing '{p}'", 400)
    for p in props:
        try:
            bad = wrong_type(props[p])
        except NoValue:
            continue
        _expect_error(env, svc, t["name"], {**args, p: bad}, f"wrong type for '{p}'", 400)
        break
    for p in (op.get("id_param"), (op.get("parent") or {}).get("param"), op.get("lookup")):
        if p and p in props and props[p].get("type") in (None, "string", "integer", "number"):
            probe = _unknown(props[p], rng)
            if probe is not None:
                _expect_error(env, svc, t["name"], {**args, p: probe}, f"unknown id in '{p}'", 404)
    if op["kind"] == "compute":
        if op.get(
            "expand"
        ):  # a tool that has a truncated part, and one of its pointers; an unknown tool is a 404
            name_p, ptr_p = op["params"]
            name = sorted(op["schemas"])[0]
            _expect_error(env, svc, t["name"], {**args, name_p: UNKNOWN_ID}, "an unknown tool", 404)
            args = {name_p: name, ptr_p: sorted(op["schemas"][name])[:1]}
        _run_compute(env, svc, t, args)
        return
    table = svc.manifest["resources"][op["resource"]]["table"]
    if op["kind"] == "transition" and "value" in op:  # the record is not yet where the move takes it
        key = str(flat_args(op, args).get(op["id_param"]))
        rec = svc.table(table).get(key)
        if rec is not None and rec.get(op["field"]) == op["value"]:
            enum = (svc.manifest["resources"][op["resource"]].get("enums") or {}).get(op["field"]) or []
            other = next((v for v in enum if v != op["value"]), None if enum else "open")
            if isinstance(op["value"], bool):
                other = not op["value"]
            svc.store.put(table, key, {**rec, op["field"]: other})
            svc.store.commit()
    if op["kind"] == "unrelate":  # what is unlinked was linked first
        key = str(flat_args(op, args).get(op["id_param"]))
        rec = svc.table(table).get(key)
        v = flat_args(op, args).get(op["member_param"])
        if rec is not None and v is not None:
            field = f"{op['member']}_ids"
            have = list(rec.get(field) or [])
            have += [x for x in (v if isinstance(v, list) else [v]) if x not in have]
            svc.store.put(table, key, {**rec, field: have})
            svc.store.commit()
    r = _call(env, svc, t["name"], args)
    if not r["success"]:
        raise Failed("valid_call_failed", f"a valid call failed: {r['error']['message']}")
    _valid_state(env, t["name"])
    kind = op["kind"]
    get = _companion(by_name, op["resource"], "get", op.get("parent"))
    if kind == "create":
        rec = r["data"]
        if rec.get("id") not in svc.table(table):
            raise Failed("create_not_stored", "create returned an id that is not stored")
        if get is not None:
            g = _call(env, svc, get["name"], _read_args(svc, get, str(rec["id"]), rng))
            if not g["success"] or g["data"] != rec:
                raise Failed(
                    "create_then_get_differs", f"create then {get['name']} did not return the record"
                )
        lst = _companion(by_name, op["resource"], "list", op.get("parent"))
        if lst is not None:
            largs = {**valid_args(svc, lst, rng)}
            lparent = lst["op"].get("parent") or {}
            fields = svc.manifest["resources"][op["resource"]]["fields"]
            wanted = {  # filters the list requires: create a record that has them
                k: v
                for k, v in largs.items()
                if k in fields
                and k not in rec
                and k in props
                and k != lparent.get("param")
                and not _control(k)
            }
            if wanted:
                again = _call(env, svc, t["name"], {**args, **wanted})
                if again["success"]:
                    rec = again["data"]
            if (
                lparent
                and rec.get(lparent.get("field")) is None
                and (op.get("parent") or {}).get("resource") == lparent.get("resource")
            ):  # the create's parent is optional: make one under a parent
                pkeys = sorted(svc.table(svc.manifest["resources"][lparent["resource"]]["table"]))
                if pkeys:
                    pp = op["parent"]["param"]
                    again = _call(env, svc, t["name"], put_arg(t, args, pp, _typed_like(t, pp, pkeys[0])))
                    if again["success"]:
                        rec = again["data"]
            largs = _list_args_for(lst, largs, rec)
            got = _call(env, svc, lst["name"], largs)
            if not got["success"] or rec["id"] not in {i["id"] for i in got["data"]["items"]}:
                raise Failed(
                    "create_then_list_misses_it", f"create then {lst['name']} did not list the record"
                )
            _semantic_list_checks(env, svc, t, lst, rec, largs)
    elif kind == "update":
        key = str(flat_args(op, args)[op["id_param"]])
        skip = {op["id_param"], (op.get("parent") or {}).get("param")}
        extra = {}
        refs = {r["param"] for r in op.get("ref_ids", ())} | {r["param"] for r in op.get("ref_lists", ())}
        for k in props:  # change one optional field too, so an update always changes something
            if k not in args and k not in skip and k not in refs and not _control(k):
                enum = (svc.manifest["resources"][op["resource"]].get("enums") or {}).get(k)
                extra[k] = enum[-1] if enum and not props[k].get("enum") else sample(props[k], k, rng)
                break
        if extra:
            r = _call(env, svc, t["name"], {**args, **extra})
            if not r["success"]:
                raise Failed(
                    "update_failed", f"update with '{next(iter(extra))}' failed: {r['error']['message']}"
                )
        skip |= set((op.get("wrapped") or {}).values())
        changed: dict[str, Any] = {}
        for k, v in {**args, **extra}.items():
            if k in skip or _control(k):
                continue
            if k in op.get("nested", ()) and isinstance(v, dict):  # `body: {...}`: its fields are stored
                changed.update(
                    {q: w for q, w in v.items() if q in svc.manifest["resources"][op["resource"]]["fields"]}
                )
            else:
                changed[k] = v
        rec = svc.table(table).get(key)
        if rec is None or any(rec.get(k) != v for k, v in changed.items()):
            raise Failed("update_not_visible", "update then read did not show the change")
        if get is not None:
            g = _call(env, svc, get["name"], _read_args(svc, get, str(key), rng))
            if not g["success"] or any(g["data"].get(k) != v for k, v in changed.items()):
                raise Failed("update_not_visible", f"update then {get['name']} did not show the change")
    elif kind == "delete":
        named = flat_args(op, args)[op["id_param"]]
        keys = [str(k) for k in named] if isinstance(named, list) else [str(named)]
        key = keys[0]
        if any(k in svc.table(table) for k in keys):
            raise Failed("delete_not_applied", "delete left the record in place")
        if get is not None:
            g = _call(env, svc, get["name"], _read_args(svc, get, str(key), rng))
            if g["success"] or g["error"]["code"] != 404:
                raise Failed("delete_then_get_not_404", f"delete then {get['name']} did not give 404")
    elif kind == "transition":
        rec = svc.table(table)[str(flat_args(op, args)[op["id_param"]])]
        want = args.get(op["from_param"]) if "from_param" in op else op["value"]
        if rec.get(op["field"]) != want:
            raise Failed("transition_not_applied", f"transition did not set {op['field']}")
    elif kind in ("save", "unsave", "check"):
        _check_collection(env, svc, t, by_name, args, r["data"], rng)
    elif kind == "player":
        _check_player(env, svc, t, args, r["data"])
    elif kind in ("relate", "unrelate"):
        rec = svc.table(table)[str(flat_args(op, args)[op["id_param"]])]
        v = args[op["member_param"]]
        linked = all(x in (rec.get(f"{op['member']}_ids") or []) for x in (v if isinstance(v, list) else [v]))
        if linked != (kind == "relate"):
            raise Failed("relation_not_applied", f"{kind} did not change the link")


def _list_args_for(lst: dict[str, Any], largs: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    """The list's arguments set to find `rec`: the whole list from its start, under `rec`'s parent, its
    own values as filters (an element of a stored list), a bound it sits on, its id as the query."""
    lparent = lst["op"].get("parent") or {}
    ranges = lst["op"].get("ranges", {})
    wrappers = set((lst["op"].get("wrapped") or {}).values())
    flat = flat_args(lst["op"], largs)
    for k in [k for k in flat if k not in wrappers]:
        s = param_schema(lst, k)
        n = norm(k)
        v = flat[k]
        if n in LIMIT_PARAMS or n in OFFSET_PARAMS:  # the whole list, from its start
            v = _widest(s, n in LIMIT_PARAMS, v)
        elif k == lparent.get("param"):
            if rec.get(lparent.get("field")) is not None:
                v = _typed_like(lst, k, rec[lparent["field"]])
        elif k in rec:
            v = rec[k]
            if isinstance(v, list) and s.get("type") in ("string", "integer", "number") and v:
                v = v[0]  # a scalar filter on a stored list: one of its elements
        elif k in ranges and rec.get(ranges[k]["field"]) is not None:
            v = rec[ranges[k]["field"]]  # a bound the record sits on
            if s.get("type") in ("integer", "number") and isinstance(v, str):
                stamp = epoch(v, ms="ms" in str(s.get("description", "")).lower() or "milli" in str(s))
                v = v if stamp is None else int(stamp) if s.get("type") == "integer" else stamp
        elif isinstance(v, str) and n in QUERY_PARAMS:
            v = rec["id"]  # a query: the id is part of the record's text
        if v is not flat[k]:
            largs = put_arg(lst, largs, k, v)
    return largs


def _every_field(env: Environment, svc: Any, t: dict[str, Any], rng: random.Random) -> None:
    """A call that gives every optional parameter too either succeeds and leaves valid state (each stored
    field holds what every tool writes into it), or fails changing nothing. The state is put back."""
    try:
        args = valid_args(svc, t, rng, optional=True)
    except NoValue:
        return
    snap = env.snapshot()
    before = env.state_hash()
    r = _call(env, svc, t["name"], args)
    if r["success"]:
        _valid_state(env, t["name"])
    elif env.state_hash() != before:
        raise Failed("failed_call_changed_state", "a call with every parameter failed and changed the state")
    env.restore(snap)


def _run_compute(env: Environment, svc: Any, t: dict[str, Any], args: dict[str, Any]) -> None:
    """A computed tool answers (or names a domain error, 422); a pure one answers the same twice and
    changes nothing; a seeded draw replays from the same state."""
    before = env.state_hash()
    snap = env.snapshot()
    r = _call(env, svc, t["name"], args)
    if not r["success"] and r["error"]["code"] != 422:
        raise Failed("valid_call_failed", f"a valid call failed: {r['error']['message']}")
    if t["op"].get("random"):
        env.restore(snap)
        if _call(env, svc, t["name"], args) != r:
            raise Failed("not_deterministic", "the same seeded draw gave another value")
    else:
        if env.state_hash() != before:
            raise Failed("pure_call_changed_state", "a computation changed the state")
        if _call(env, svc, t["name"], args) != r:
            raise Failed("not_deterministic", "the same computation gave another answer")
    _valid_state(env, t["name"])


def _valid_state(env: Environment, tool: str) -> None:
    """A successful call leaves state that validates against the service's own model."""
    bad = [v for v in env.validate().values() if v is not None]
    if bad:
        raise Failed("invalid_state", f"{tool} succeeded but left invalid state: {str(bad[0])[:200]}")


def _semantic_list_checks(
    env: Environment, svc: Any, create: dict[str, Any], lst: dict[str, Any], rec: dict[str, Any], largs: dict
) -> None:
    """Derived from the spec: a child is listed under its parent and not under another; a record
    created with a name is found by that name."""
    parent = lst["op"].get("parent") or {}
    field, param = parent.get("field"), parent.get("param")
    if field and param in flat_args(lst["op"], largs) and rec.get(field) is not None:
        ptable = svc.manifest["resources"][parent["resource"]]["table"]
        others = [k for k in sorted(svc.table(ptable)) if k != str(rec[field])]
        if others:
            got = _call(env, svc, lst["name"], put_arg(lst, largs, param, _typed_like(lst, param, others[0])))
            if got["success"] and rec["id"] in {i["id"] for i in got["data"]["items"]}:
                raise Failed(
                    "child_listed_under_other_parent",
                    f"{lst['name']} lists the new {create['op']['resource']} under another {parent['resource']}",
                )
    lprops = lst["input_schema"].get("properties", {})
    names = [p for p in lprops if not isinstance(lprops[p].get("properties"), dict)]
    names += list(lst["op"].get("wrapped") or {})  # a query inside `query: {...}` too
    qparam = next((p for p in names if norm(p) in QUERY_PARAMS), None)
    label = next(
        (rec[f] for f in ("name", "title", "subject") if isinstance(rec.get(f), str) and rec[f]), None
    )
    if qparam and label and param_schema(lst, qparam).get("type") in (None, "string"):
        got = _call(env, svc, lst["name"], put_arg(lst, largs, qparam, label))
        if not got["success"] or rec["id"] not in {i["id"] for i in got["data"]["items"]}:
            raise Failed(
                "not_found_by_name", f"{lst['name']} does not find the new record by its name {label!r}"
            )


def _set_state(svc: Any, table: str, key: str, rule: dict[str, Any], holds: bool) -> None:
    """Arrange: put record `key` into a state that meets (or breaks) the rule."""
    value = rule["value"]
    if holds == rule["negate"]:
        value = (not value) if isinstance(value, bool) else ("open" if value != "open" else "active")
    svc.update(table, key, **{rule["field"]: value})
    svc.store.commit()


def _widest(schema: dict[str, Any], limit: bool, sampled: Any) -> Any:
    """A page size as large as the schema allows, or the first page."""
    if schema.get("type") not in ("integer", "number"):
        return sampled
    if limit:
        return min(schema.get("maximum", 100), 100)
    return max(schema.get("minimum", 0), 0) if "enum" not in schema else sampled


def _unknown(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value the schema accepts that names no record (None where the schema allows only records)."""
    if schema.get("type") in ("integer", "number"):
        hi = schema.get("maximum")
        return 987654321 if hi is None or hi >= 987654321 else None
    if schema.get("enum"):
        return None  # every value is a key the spec itself lists
    if isinstance(schema.get("pattern"), str):
        for _ in range(5):
            v = from_pattern(schema["pattern"], rng)
            if v is not None and v != UNKNOWN_ID:
                return v
        return None
    return UNKNOWN_ID


def _control(param: str) -> bool:
    """Pagination, query parameters and API switches steer a call; they are not fields to store."""
    n = norm(param)
    return (
        n in LIMIT_PARAMS
        or n in OFFSET_PARAMS
        or n in QUERY_PARAMS
        or n in FIELDS_SWITCHES
        or n in TRANSPORT_WRAPPERS  # `header: {...}`: how the call travels
        or switch_param(param, {"type": "string"}) is not None
    )


def _typed_like(tool: dict[str, Any], param: str, key: Any) -> Any:
    t = param_schema(tool, param).get("type")
    key = str(key)
    return int(key) if t in ("integer", "number") and key.isdigit() else [key] if t == "array" else key


def _as(tool: dict[str, Any], key: str) -> Any:
    t = param_schema(tool, tool["op"]["id_param"]).get("type")
    return int(key) if t in ("integer", "number") and key.isdigit() else [key] if t == "array" else key


def _ids(op: dict[str, Any], args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for p in op.get("ids_params", ()):
        v = args.get(p)
        vals = v if isinstance(v, list) else str(v).split(",") if isinstance(v, str) else []
        out += [str(x).strip().rsplit(":", 1)[-1] for x in vals if str(x).strip()]
    return list(dict.fromkeys(out))


def _check_collection(
    env: Environment,
    svc: Any,
    t: dict[str, Any],
    by_name: dict[str, Any],
    args: dict[str, Any],
    data: Any,
    rng: random.Random,
) -> None:
    """Save then check is true for each id, remove then check false, a check answers one boolean per id
    in order; an id of a record that does not exist is a 404 that changes nothing."""
    op = t["op"]
    table = svc.table(svc.manifest["resources"][op["resource"]]["table"])
    ids = _ids(op, args)
    held = [i in table for i in ids]
    if op["kind"] == "save" and not all(held):
        raise Failed("save_not_stored", "save left an id out of the collection")
    if op["kind"] == "unsave" and any(held):
        raise Failed("remove_not_applied", "remove left an id in the collection")
    if op["kind"] == "check" and data != held:
        raise Failed("check_differs", f"check answered {data!r} for ids saved as {held!r}")
    check = next(
        (
            x
            for x in by_name.values()
            if x["status"] == "compiled"
            and x["op"]["kind"] == "check"
            and x["op"].get("resource") == op["resource"]
        ),
        None,
    )
    if check is not None and op["kind"] != "check":
        cargs = valid_args(svc, check, rng)
        for p in check["op"]["ids_params"]:
            if p in cargs:
                cargs[p] = ids if param_schema(check, p).get("type") == "array" else ",".join(ids)
        tp = check["op"].get("type_param")
        if tp and op.get("type_param") and args.get(op["type_param"]) is not None:
            cargs[tp] = args[op["type_param"]]
        got = _call(env, svc, check["name"], cargs)
        want = [op["kind"] == "save"] * len(ids)
        if not got["success"] or got["data"][: len(ids)] != want:
            raise Failed("check_differs", f"{op['kind']} then {check['name']} did not answer {want}")
    kind = args.get(op["type_param"]) if op.get("type_param") else None
    r = svc.manifest["resources"].get(kind or op["item"])
    if r and not r.get("collection_of") and not r.get("singleton"):
        bad = {
            p: [UNKNOWN_ID] if param_schema(t, p).get("type") == "array" else UNKNOWN_ID
            for p in op["ids_params"]
        }
        _expect_error(
            env, svc, t["name"], {**args, **{p: v for p, v in bad.items() if p in args}}, "an unknown id", 404
        )


def _check_player(env: Environment, svc: Any, t: dict[str, Any], args: dict[str, Any], data: Any) -> None:
    """Each transition lands in the player record, and a read shows the record as stored."""
    op = t["op"]
    p = op.get("params", {})
    rec = svc.table(svc.manifest["resources"][op["resource"]]["table"]).get("player") or {}
    a = op["action"]
    want: dict[str, Any] = {}
    if a == "play":
        want["is_playing"] = True
    elif a == "pause":
        want["is_playing"] = False
    elif a == "seek":
        want["progress_ms"] = int(args[p["position"]])
    elif a == "volume":
        want["volume_percent"] = int(args[p["volume"]])
    elif a == "repeat":
        want["repeat_state"] = str(args[p["state"]])
    elif a == "transfer":
        d = args[p["device"]]
        want["device_id"] = str(d[0] if isinstance(d, list) else d)
    elif a == "state" and data != rec:
        raise Failed("read_differs", "the player read differs from the stored player")
    elif a == "queue_get" and data.get("queue") != rec.get("queue"):
        raise Failed("read_differs", "the queue read differs from the stored queue")
    elif a == "enqueue" and (rec.get("queue") or [None])[-1] != str(args[p["item"]]).rsplit(":", 1)[-1]:
        raise Failed("player_not_changed", "the queued item is not last in the queue")
    elif a == "next" and not rec.get("history"):
        raise Failed("player_not_changed", "next kept no history")
    bad = {k: rec.get(k) for k, v in want.items() if rec.get(k) != v}
    if bad:
        raise Failed("player_not_changed", f"{a} left the player with {bad}")


def compile_spec(source, name: str | None = None, seed: int = 0) -> dict:
    """Read, normalise, compile and adversarially test one spec: its manifest, statuses included."""
    from compoworld.compiler.compiler import compile_manifest
    from compoworld.compiler.ingest import load_spec

    return run_adversarial(compile_manifest(load_spec(source), name), seed)
