"""Adversarial tests derived from a spec alone; a compiled tool that fails any is quarantined.

For every compiled tool: a valid call succeeds; each missing required argument, a wrongly typed
argument and an unknown id give an error; failed calls change nothing. By kind: create then get /
list shows the record; update then get shows the change; delete then get gives 404; transitions
and relations land in the record.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld.core.environment import Environment
from compoworld.spec.compiler import LIMIT_PARAMS, OFFSET_PARAMS, QUERY_PARAMS, norm
from compoworld.spec.runtime import service_from_manifest
from compoworld.spec.values import UNKNOWN_ID, NoValue, sample, valid_args, wrong_type


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
    for t in manifest["tools"]:
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
    return manifest


def _call(env: Environment, svc: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
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


def _companion(by_name: dict[str, Any], resource: str, kind: str) -> dict[str, Any] | None:
    for t in by_name.values():
        op = t["op"]
        if (
            t["status"] == "compiled"
            and op.get("resource") == resource
            and op["kind"] == kind
            and (kind != "get" or op.get("id_param"))
        ):
            return t
    return None


def _run(env: Environment, svc: Any, t: dict[str, Any], by_name: dict[str, Any], rng: random.Random) -> None:
    op = t["op"]
    schema = t["input_schema"]
    props = schema.get("properties", {})
    required = list(schema.get("required", []))
    args = valid_args(svc, t, rng)
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
        if p and p in props and props[p].get("type") in (None, "string", "integer"):
            probe = 987654321 if props[p].get("type") == "integer" else UNKNOWN_ID
            _expect_error(env, svc, t["name"], {**args, p: probe}, f"unknown id in '{p}'", 404)
    table = svc.manifest["resources"][op["resource"]]["table"]
    r = _call(env, svc, t["name"], args)
    if not r["success"]:
        raise Failed("valid_call_failed", f"a valid call failed: {r['error']['message']}")
    kind = op["kind"]
    get = _companion(by_name, op["resource"], "get")
    if kind == "create":
        rec = r["data"]
        if rec.get("id") not in svc.table(table):
            raise Failed("create_not_stored", "create returned an id that is not stored")
        if get is not None:
            g = _call(
                env,
                svc,
                get["name"],
                {**valid_args(svc, get, rng), get["op"]["id_param"]: _as(get, rec["id"])},
            )
            if not g["success"] or g["data"] != rec:
                raise Failed(
                    "create_then_get_differs", f"create then {get['name']} did not return the record"
                )
        lst = _companion(by_name, op["resource"], "list")
        if lst is not None:
            largs = {**valid_args(svc, lst, rng)}
            for k in list(largs):
                if k in rec:
                    largs[k] = rec[k]
                elif k in (lst["op"].get("parent") or {}).values():
                    pass
                elif isinstance(largs[k], str):
                    largs[k] = rec["id"]  # a query: the id is part of the record's text
            got = _call(env, svc, lst["name"], largs)
            if not got["success"] or rec["id"] not in {i["id"] for i in got["data"]["items"]}:
                raise Failed(
                    "create_then_list_misses_it", f"create then {lst['name']} did not list the record"
                )
    elif kind == "update":
        key = str(args[op["id_param"]])
        skip = {op["id_param"], (op.get("parent") or {}).get("param")}
        extra = {}
        for k in props:  # change one optional field too, so an update always changes something
            if k not in args and k not in skip and not _control(k):
                extra[k] = sample(props[k], k, rng)
                break
        if extra:
            r = _call(env, svc, t["name"], {**args, **extra})
            if not r["success"]:
                raise Failed(
                    "update_failed", f"update with '{next(iter(extra))}' failed: {r['error']['message']}"
                )
        changed = {k: v for k, v in {**args, **extra}.items() if k not in skip and not _control(k)}
        rec = svc.table(table).get(key)
        if rec is None or any(rec.get(k) != v for k, v in changed.items()):
            raise Failed("update_not_visible", "update then read did not show the change")
        if get is not None:
            g = _call(
                env, svc, get["name"], {**valid_args(svc, get, rng), get["op"]["id_param"]: _as(get, key)}
            )
            if not g["success"] or any(g["data"].get(k) != v for k, v in changed.items()):
                raise Failed("update_not_visible", f"update then {get['name']} did not show the change")
    elif kind == "delete":
        key = str(args[op["id_param"]])
        if key in svc.table(table):
            raise Failed("delete_not_applied", "delete left the record in place")
        if get is not None:
            g = _call(
                env, svc, get["name"], {**valid_args(svc, get, rng), get["op"]["id_param"]: _as(get, key)}
            )
            if g["success"] or g["error"]["code"] != 404:
                raise Failed("delete_then_get_not_404", f"delete then {get['name']} did not give 404")
    elif kind == "transition":
        rec = svc.table(table)[str(args[op["id_param"]])]
        want = args.get(op["from_param"]) if "from_param" in op else op["value"]
        if rec.get(op["field"]) != want:
            raise Failed("transition_not_applied", f"transition did not set {op['field']}")
    elif kind in ("relate", "unrelate"):
        rec = svc.table(table)[str(args[op["id_param"]])]
        v = args[op["member_param"]]
        linked = all(x in (rec.get(f"{op['member']}_ids") or []) for x in (v if isinstance(v, list) else [v]))
        if linked != (kind == "relate"):
            raise Failed("relation_not_applied", f"{kind} did not change the link")


def _control(param: str) -> bool:
    """Pagination and query parameters steer a call; they are not fields to store."""
    n = norm(param)
    return n in LIMIT_PARAMS or n in OFFSET_PARAMS or n in QUERY_PARAMS


def _as(tool: dict[str, Any], key: str) -> Any:
    t = tool["input_schema"]["properties"].get(tool["op"]["id_param"], {}).get("type")
    return int(key) if t == "integer" and key.isdigit() else [key] if t == "array" else key
