"""Execute a service manifest: a generic `Service` whose tools are the manifest's operations.

Compiled tools run deterministic code for their operation kind; simulated and quarantined tools go
to the world model. Inputs are validated against the spec's own input schema (jsonschema), so the
tool names and schemas an agent sees are exactly the spec's. Every envelope says whether its tool
was simulated.
"""

from __future__ import annotations

import math
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from compoworld.compiler.compiler import LIMIT_PARAMS, MANIFEST_VERSION, OFFSET_PARAMS, QUERY_PARAMS, norm
from compoworld.compiler.compute import run_compute, run_expand, run_geo, run_info, run_now, run_service_info
from compoworld.compiler.values import flat_args, from_pattern
from compoworld.core.envelope import (
    Conflict,
    InvalidArguments,
    NotFound,
    RuleViolation,
    ToolError,
    failure,
)
from compoworld.core.schema import schema_violations
from compoworld.core.service import SeedContext, Service, decode_arguments
from compoworld.core.state import META
from compoworld.core.tool import ToolSpec

PY_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "any": Any,
}
WORDS = (
    "alpha",
    "bravo",
    "cedar",
    "delta",
    "ember",
    "falcon",
    "granite",
    "harbor",
    "iris",
    "juniper",
    "kestrel",
    "lumen",
    "maple",
    "nova",
    "orbit",
    "pioneer",
    "quartz",
    "raven",
    "summit",
    "tundra",
)


class ManifestError(ValueError):
    pass


def _record_model(cls_name: str, fields: dict[str, str], open_fields: bool = False) -> type[BaseModel]:
    spec: dict[str, Any] = {"id": (str, ...), "created_at": (str | None, None)}
    for f, t in fields.items():
        if f.isidentifier() and not f.startswith("_") and f not in spec and f not in BaseModel.__dict__:
            spec[f] = (PY_TYPES.get(t, Any) | None, None)
    # odd field names, and records a free-form `properties: {}` writes, stay loose
    extra = "forbid" if all(f in spec for f in fields) and not open_fields else "allow"
    return create_model(cls_name, __config__=ConfigDict(extra=extra), **spec)  # type: ignore[call-overload]


class CompiledService(Service):
    """Base of services built from manifests (`service_from_manifest`)."""

    manifest: dict[str, Any] = {}
    ops: dict[str, dict[str, Any]] = {}
    refs: dict[str, dict[str, str]] = {}  # resource -> {field: parent resource}
    action_specs: dict[str, ToolSpec] = {}  # a dispatch tool's actions, by `<tool>.<action>`
    record_models: dict[str, type[BaseModel]] = {}  # table -> the model of one record
    world_model: Any = None  # set by `compoworld.worldmodel.configure`; None: simulated tools fail

    # ---- seeding --------------------------------------------------------------------------
    def seed_data(self, ctx: SeedContext) -> None:
        n = ctx.scale(3, 5, 12)
        people = [p for p in ctx.company.people if p.id != ctx.company.me.id]
        res = self.manifest["resources"]
        for rname, r in res.items():
            if r.get("collection_of") or r.get("singleton"):
                continue  # seeded from the records they name, below
            for i in range(n):
                p = people[(i * 7 + len(rname)) % len(people)]
                try:
                    key = self.new_key(rname)
                except Conflict:  # an enum of keys smaller than the seed: seed what it allows
                    break
                rec = {"id": key, "created_at": ctx.clock.iso()}
                for f, t in r["fields"].items():
                    if f in self.refs.get(rname, {}):
                        continue
                    rec[f] = _seed_value(f, t, p, ctx, i, r, rname)
                self.store.put(r["table"], rec["id"], rec)
        for rname, fields in self.refs.items():  # parent links point at seeded parents
            table = res[rname]["table"]
            for k, (key, rec) in enumerate(sorted(self.table(table).items())):
                new = dict(rec)
                for f, parent in fields.items():
                    keys = sorted(self.table(res[parent]["table"]))
                    if keys:
                        new[f] = keys[k % len(keys)]
                self.store.put(table, key, new)
        for r in res.values():
            if r.get("collection_of"):  # the user has saved (or follows) about half of what exists
                kind = r["collection_of"]
                keys = sorted(self.table(res[kind]["table"])) if self._item_kind(kind) else []
                for key in keys[: len(keys) // 2]:
                    rec = {"id": key, "created_at": ctx.clock.iso()}
                    if "type" in r["fields"]:
                        rec["type"] = kind
                    self.store.put(r["table"], key, rec)
            elif r.get("singleton"):
                keys = next(
                    (sorted(self.table(res[k]["table"])) for k in r.get("items_from", []) if k in res), []
                )
                keys = keys or ["track-1", "track-2", "track-3"]
                devices = sorted(self.table(res["device"]["table"])) if "device" in res else []
                self.store.put(r["table"], PLAYER_KEY, _player_record(keys, devices, ctx.clock.iso()))

    def _item_kind(self, kind: Any) -> bool:
        """`kind` names a table of records (not a collection or the player): ids of it must exist."""
        r = self.manifest["resources"].get(kind) if isinstance(kind, str) else None
        return bool(r) and not r.get("collection_of") and not r.get("singleton")

    def new_key(self, resource: str) -> str:
        """A fresh record id that fits the parameters naming it: numeric where one is an integer (within
        its minimum and maximum), the next free value of an enum, a draw that matches a pattern, a UUID
        where the format says so; else an opaque code. No fitting key left is a 409."""
        r = self.manifest["resources"][resource]
        ks = r.get("key_schema") or {}
        taken = self.table(r["table"])
        if ks.get("enum"):
            free = [v for v in ks["enum"] if v not in taken]
            if not free:
                raise Conflict(f"every {resource.replace('_', ' ')} key the spec allows is taken")
            return free[0]
        if r.get("id_type") == "integer":
            lo, hi = ks.get("minimum"), ks.get("maximum")
            base = 1000 if (lo is None or lo <= 1000) and (hi is None or hi >= 10**6) else int(lo or 0)
            for _ in range(1000):
                key = str(base + self.next_seq(f"id:{resource}"))
                if hi is not None and int(key) > hi:
                    break
                if key not in taken:
                    return key
            raise Conflict(f"no {resource.replace('_', ' ')} key left below the maximum {hi}")
        if ks.get("format") == "uuid":
            return str(uuid.UUID(int=self.rng("key", resource).getrandbits(128), version=4))
        if isinstance(ks.get("pattern"), str):
            rng = self.rng("key", resource)
            short = None
            for _ in range(20):
                key = from_pattern(ks["pattern"], rng)
                if key is None:
                    break
                if key in taken or len(key) < 6:  # a fixed prefix (`^ecfg_`), or a key too short to
                    # tell apart (`hpf`): make it unique and distinctive where the pattern allows
                    longer = key + self.next_id("K", 8)
                    if longer not in taken and re.search(ks["pattern"], longer):
                        return longer
                if key not in taken and re.search(ks["pattern"], key):
                    if len(key) >= 6:
                        return key
                    short = short or key
            if short is not None:
                return short
        key = self.next_id(resource[:3].upper() or "REC", 8)
        if isinstance(ks.get("maxLength"), int) and len(key) > ks["maxLength"] >= 4:
            key = key[:3] + key[-(ks["maxLength"] - 3) :]
        if isinstance(ks.get("minLength"), int) and len(key) < ks["minLength"] <= 64:
            key = key + "0" * (ks["minLength"] - len(key))
        return key

    # ---- calls ----------------------------------------------------------------------------
    def invoke(self, spec: ToolSpec, arguments: Any) -> dict[str, Any]:
        op = self.ops[spec.name]
        arguments, rejected = decode_arguments(spec.name, arguments)
        if rejected is not None:
            return self._mark(rejected, op)
        bad = schema_violations(self._validator(spec), arguments, spec.name)
        if not bad:
            bad = _non_finite(arguments, spec.name)
        if not bad:
            arguments, bad = _integers(arguments, spec.input_schema, spec.name)
        if not bad and op.get("bounds"):
            bad = _out_of_bounds(op["bounds"], arguments, spec.name)
        if bad:
            return self._mark(failure(400, "invalid_arguments", bad), op)
        if op["kind"] == "dispatch":
            return self._dispatch(spec, op, arguments)
        if op["kind"] == "simulated" or op.get("quarantined"):
            if self.world_model is None:  # the environment lacks a part, not a bug: 503, never 500
                why = op.get("cause") or "quarantined"
                return self._mark(
                    failure(
                        503,
                        WORLD_MODEL_UNAVAILABLE,
                        f"{spec.name} is served by the world model ({why}), and none is configured: "
                        "pass --world-model MODEL with --base-url URL, or set COMPOWORLD_MODEL and "
                        "COMPOWORLD_BASE_URL",
                    ),
                    op,
                )
            return self._mark(self.world_model.simulate(self, spec, arguments), op)
        if op.get("wrapped"):
            arguments = flat_args(op, arguments)
        idp = op.get("id_param")
        if (
            idp
            and idp not in arguments
            and op["kind"] in ("get", "update", "delete", "transition", "relate", "unrelate")
            and not any(arguments.get(p) not in (None, "") for p in op.get("lookups", ()))
        ):
            where = op.get("wrapped", {}).get(idp)
            if op.get("lookups"):  # `get_company_details(company_id?, domain?)`: one of them names it
                names = " or ".join(f"'{p}'" for p in (idp, *op["lookups"]))
                return self._mark(failure(400, "invalid_arguments", f"{spec.name}: give {names}"), op)
            return self._mark(
                failure(
                    400,
                    "invalid_arguments",
                    f"{spec.name}: '{f'{where}.{idp}' if where else idp}' is required",
                ),
                op,
            )
        try:
            data = getattr(self, f"_op_{op['kind']}")(op, arguments)
            self._check_written(op, data)
        except ToolError as e:
            self.store.rollback()
            return self._mark(failure(e.code, e.type, e.message), op)
        except Exception as e:  # a bug in the runtime, never the agent's
            self.store.rollback()
            return self._mark(
                failure(500, "server_error", f"{spec.name} failed: {type(e).__name__}: {e}"), op
            )
        self.store.commit()
        return self._mark({"success": True, "data": data}, op)

    def _dispatch(self, spec: ToolSpec, op: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """`gitlab_issue(action="get", params={...})`: the action's own op, its params checked against
        the action's schema (a missing or mistyped field is a 400 naming it)."""
        action = arguments.get(op["action_param"])
        if not isinstance(action, str) or action not in op["actions"]:
            valid = ", ".join(sorted(op["actions"]))
            return self._mark(
                failure(
                    400,
                    "invalid_arguments",
                    f"{spec.name}: unknown {op['action_param']} {action!r}; valid: {valid}",
                ),
                {"kind": "dispatch"},
            )
        params = arguments.get(op["params_param"])
        sub = self.action_specs[f"{spec.name}.{action}"]
        return self.invoke(sub, {} if params is None else params)

    def _change(self, table: str, key: str, changes: dict[str, Any]) -> dict[str, Any]:
        """`update`, with the changes as one dict: a spec's field may be named `key` or `table`."""
        new = {**self.require(table, key), **changes}
        self.store.put(table, key, new)
        return new

    def _check_written(self, op: dict[str, Any], data: Any) -> None:
        """A write lands only if the record it leaves validates against the state model: a value of a
        type the model does not hold for that field is the caller's error (400), never invalid state.
        So is a value outside the field's enum (the spec's own vocabulary), and a value another record
        holds where the spec says it is unique (409, the spec's sentence quoted)."""
        if op["kind"] not in WRITES or not isinstance(data, dict) or "id" not in data:
            return
        r = self._res(op)
        table = r["table"]
        rec = self.table(table).get(str(data["id"]))
        model = self.record_models.get(table)
        if rec is None or model is None:
            return
        if bad := off_enum(r, rec):
            field, value, allowed = bad
            raise InvalidArguments(
                f"'{field}' must be one of {', '.join(map(str, allowed))} (the spec's values), got {value!r}"
            )
        for field, text in (r.get("unique") or {}).items():
            v = rec.get(field)
            if v in (None, ""):
                continue
            key = str(v).casefold()
            for k, other in self.table(table).items():
                if k != rec["id"] and str(other.get(field, "")).casefold() == key:
                    raise Conflict(
                        f"a {op['resource'].replace('_', ' ')} with {field} {v!r} exists already ({k}): "
                        f'the spec says "{text}"',
                        type="duplicate",
                    )
        try:
            model.model_validate(rec)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err.get("loc", ())) or "record"
            raise InvalidArguments(
                f"'{where}' cannot be stored as given: {err.get('msg', 'invalid')} "
                f"(the {op['resource'].replace('_', ' ')} field holds another type)"
            ) from None

    @staticmethod
    def _mark(envelope: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
        envelope["simulated"] = op["kind"] == "simulated" or bool(op.get("quarantined"))
        return envelope

    _validators: dict[str, Any] = {}

    def _validator(self, spec: ToolSpec) -> Any:
        # one cache per compiled class: two manifests may serve the same service and tool names
        # with different schemas (tests compile many specs as `svc`)
        v = type(self)._validators.get(spec.name)
        if v is None:
            v = type(self)._validators[spec.name] = jsonschema.Draft202012Validator(spec.input_schema)
        return v

    # ---- operations -----------------------------------------------------------------------
    def _res(self, op: dict[str, Any]) -> dict[str, Any]:
        return self.manifest["resources"][op["resource"]]

    def _find(self, op: dict[str, Any], value: Any, resource: str | None = None) -> dict[str, Any]:
        r = self.manifest["resources"][resource or op["resource"]]
        rec = self.table(r["table"]).get(str(value))
        if rec is None:
            label = resource or op["resource"]
            raise NotFound(f"{label.replace('_', ' ')} '{value}' not found", type=f"{label}_not_found")
        return rec

    def _fields(self, op: dict[str, Any], args: dict[str, Any], skip: set[str]) -> dict[str, Any]:
        fields = self._res(op)["fields"]
        parent = op.get("parent")
        skip = skip | ({parent["param"]} if parent else set())
        # a wrapper is no field even where one inside it shares its name (a comment's `body: {body}`)
        wrappers = set(op.get("nested", ()))
        out = {k: v for k, v in args.items() if k in fields and k not in skip and k not in wrappers}
        for wrapper in op.get("nested", ()):  # `body: {...}`: its fields are the record's own
            inner = args.get(wrapper)
            if not isinstance(inner, dict):
                continue
            if wrapper in op.get("open_nested", ()):  # free-form: every key is a field of the record
                for k in inner:
                    if k in ENGINE_FIELDS or k in skip or not FIELD_NAME.match(str(k)):
                        raise InvalidArguments(
                            f"'{wrapper}.{k}' cannot be set: "
                            + (
                                "it is the record's own key"
                                if k in ENGINE_FIELDS or k in skip
                                else "not a field name"
                            )
                        )
                out.update(inner)
                continue
            out.update({k: v for k, v in inner.items() if k in fields and k not in skip})
        if parent and parent["param"] in args and "field" in parent:
            out[parent["field"]] = str(args[parent["param"]])
        return out

    def _own(self, op: dict[str, Any], args: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
        """`rec`, if it belongs to the parent the arguments name (a child of another parent is a 404)."""
        parent = op.get("parent")
        if parent and "field" in parent and args.get(parent["param"]) is not None:
            self._check_parent(op, args)
            if str(rec.get(parent["field"])) != str(args[parent["param"]]):
                label = op["resource"].replace("_", " ")
                raise NotFound(
                    f"{label} '{rec['id']}' is not under {parent['resource'].replace('_', ' ')} "
                    f"'{args[parent['param']]}'",
                    type=f"{op['resource']}_not_found",
                )
        return rec

    def _check_parent(self, op: dict[str, Any], args: dict[str, Any]) -> None:
        """A record named as parent must exist (404), for every operation that names one; so must each
        id of a list that names records (`contact_ids: [...]`)."""
        for ref in op.get("ref_lists", ()):
            value = args.get(ref["param"])
            for v in value if isinstance(value, list) else []:
                self._find(op, v, ref["resource"])
        for ref in op.get("ref_ids", ()):  # `create_note(parent_record_id, author_id)`: each must exist
            value = args.get(ref["param"])
            if value not in (None, "", ref.get("default")) and not isinstance(value, dict | list):
                self._find(op, value, ref["resource"])
        parent = op.get("parent")
        if parent and parent["param"] in args:
            value = args[parent["param"]]
            for v in value if isinstance(value, list) else [value]:
                if "default" in parent and v == parent["default"]:
                    continue  # the spec's own default parent (`primary`, `me`) always exists
                self._find(op, v, parent["resource"])

    def _require_state(self, op: dict[str, Any], rec: dict[str, Any]) -> None:
        """The state precondition the spec states for this operation (422 where the record breaks it)."""
        rule = op.get("requires")
        if not rule:
            return
        holds = rec.get(rule["field"]) == rule["value"]
        if holds == rule["negate"]:
            have = rec.get(rule["field"])
            raise RuleViolation(
                f"{op['resource'].replace('_', ' ')} '{rec['id']}' has {rule['field']} {have!r}: "
                f'the spec says "{rule["text"]}"'
            )

    def _op_create(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        r = self._res(op)
        if op.get("defaults"):  # a field the call leaves out takes the spec's default
            args = {**op["defaults"], **args}
        self._check_parent(op, args)
        natural = op.get("natural_key")
        key = str(args[natural]) if natural and args.get(natural) not in (None, "") else None
        key = key or self.new_key(op["resource"])
        rec: dict[str, Any] = {"id": key, "created_at": self.clock.iso()}
        rec.update(self._fields(op, args, {natural} if natural else set()))
        for f, v in (op.get("initial") or {}).items():  # the first state, from the field's own enum
            rec.setdefault(f, v)
        self.insert(r["table"], rec)
        return rec

    def _op_get(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        if op.get("lookup"):
            want = str(args[op["lookup"]]).casefold()
            for rec in self.table(self._res(op)["table"]).values():
                if str(rec.get(op["lookup"], "")).casefold() == want:
                    return rec
            raise NotFound(
                f"no {op['resource'].replace('_', ' ')} with {op['lookup']} '{args[op['lookup']]}'",
                type=f"{op['resource']}_not_found",
            )
        if op["id_param"] not in args:  # an optional id left out: a unique field names the record
            p = next(p for p in op.get("lookups", ()) if args.get(p) not in (None, ""))
            want = str(args[p]).casefold()
            for rec in self.table(self._res(op)["table"]).values():
                if str(rec.get(p, "")).casefold() == want:
                    return self._own(op, args, rec)
            raise NotFound(
                f"no {op['resource'].replace('_', ' ')} with {p} '{args[p]}'",
                type=f"{op['resource']}_not_found",
            )
        return shaped(self._own(op, args, self._find(op, args[op["id_param"]])), op, args)

    def _op_list(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        r = self._res(op)
        limit, offset, query, page = 50, 0, None, None
        filters: dict[str, Any] = {}
        contains: dict[str, str] = {}
        any_of: dict[str, list[Any]] = {}
        structured: list[tuple[str, str, Any]] = []
        unread: list[str] = []
        for k, v in args.items():
            n = norm(k)
            if n in LIMIT_PARAMS and isinstance(v, int | float) and not isinstance(v, bool):
                limit = max(0, int(v))
            elif n in PAGE_PARAMS:
                page = int(v) if isinstance(v, int | float) or (isinstance(v, str) and v.isdigit()) else 1
            elif n in OFFSET_PARAMS:
                offset = int(v) if isinstance(v, int | float) or (isinstance(v, str) and v.isdigit()) else 0
            elif k in op.get("switches", {}):
                continue  # `response_format`, `fields`, `verbose`: the answer's shape, below
            elif k in op.get("contains", {}):
                if isinstance(v, str) and v.strip():
                    contains[op["contains"][k]] = v
            elif (
                n in QUERY_PARAMS
                and isinstance(v, dict | list)
                and k not in r["fields"]
                and k not in (op.get("wrapped") or {}).values()  # `query: {limit, ...}` is a wrapper
            ):
                conds = query_conditions(v)  # Intercom's `query: {field, operator, value}`
                if conds is None:
                    unread.append(k)
                else:
                    structured += conds
            elif n in QUERY_PARAMS and isinstance(v, str) and v.strip():
                query = v
            elif k in op.get("any_of", ()) and isinstance(v, list):
                if v:
                    any_of[op.get("aliases", {}).get(k, k)] = v
            elif k in op.get("aliases", {}) and isinstance(v, str | int | float | bool):
                filters[op["aliases"][k]] = str(v) if op["aliases"][k] == "id" else v
            elif k in r["fields"] and isinstance(v, str | int | float | bool):
                filters[k] = v
        filters.update(op.get("where", {}))  # `get_followed_artists`: only the artists followed
        parent = op.get("parent")
        if parent and "default" in parent and args.get(parent["param"]) is None:
            args = {**args, parent["param"]: parent["default"]}  # the spec's default parent
        self._check_parent(op, args)
        if parent and "field" in parent and args.get(parent["param"]) is not None:
            filters.pop(parent["param"], None)
            filters[parent["field"]] = str(args[parent["param"]])  # only the children of this parent
        ranges = [(rg["field"], rg["op"], args[p]) for p, rg in op.get("ranges", {}).items() if p in args]
        items = [
            rec
            for rec in self.table(r["table"]).values()
            if _matches(rec, filters, query)
            and all(_in_range(rec.get(f), o, v) for f, o, v in ranges)
            and all(str(w).casefold() in str(rec.get(f, "")).casefold() for f, w in contains.items())
            and all(_one_of(rec.get(f), vs) for f, vs in any_of.items())
            and all(_condition(rec, f, o, v) for f, o, v in structured)
        ]
        # newest first, as most APIs list (stable: records made at the same time keep their order), so
        # the first record shown is no hint of which one a request means
        items.sort(key=lambda rec: str(rec.get("created_at") or ""), reverse=True)
        if page is not None:  # a page number counts from 1 (0 reads as the first page too)
            offset = max(0, page - 1) * limit
        shown = items[offset : offset + limit]
        out: dict[str, Any] = {
            "items": shown,
            "total": len(items),
            "has_more": offset + len(shown) < len(items),
        }
        ignored = [p for p in op.get("unsupported_filters", ()) if args.get(p) not in (None, "", [], {})]
        ignored += [p for p in unread if p not in ignored]
        if ignored:  # said, never silently dropped: no stored field can answer these
            out["unsupported_filters"] = ignored
        return shaped(out, op, args)

    def _op_update(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        rec = self._find(op, args[op["id_param"]])
        if op.get("verb") not in MOVE_VERBS:  # a move names where the record goes, not where it is
            rec = self._own(op, args, rec)
        self._require_state(op, rec)
        self._check_parent(op, args)
        return self._change(self._res(op)["table"], rec["id"], self._fields(op, args, {op["id_param"]}))

    def _op_delete(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        value = args[op["id_param"]]
        if op.get("bulk") or isinstance(value, list):  # every record named must exist: all or none go
            keys = list(dict.fromkeys(str(v) for v in (value if isinstance(value, list) else [value])))
            if not keys:
                raise InvalidArguments(f"'{op['id_param']}' names no {op['resource'].replace('_', ' ')}")
            recs = [self._own(op, args, self._find(op, k)) for k in keys]
            for rec in recs:
                self._require_state(op, rec)
            for rec in recs:
                self.remove(self._res(op)["table"], rec["id"])
            return {"ids": [r["id"] for r in recs], "deleted": True}
        rec = self._own(op, args, self._find(op, args[op["id_param"]]))
        self._require_state(op, rec)
        self.remove(self._res(op)["table"], rec["id"])
        out: dict[str, Any] = {"id": rec["id"], "deleted": True}
        for c in op.get("cascade", ()):  # "deleting a customer also deletes its subscriptions"
            table = self.manifest["resources"][c["resource"]]["table"]
            gone = sorted(
                k for k, child in self.table(table).items() if str(child.get(c["field"])) == rec["id"]
            )
            for k in gone:
                self.remove(table, k)
            out.setdefault("also_deleted", {})[c["resource"]] = gone
        return out

    def _op_transition(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        rec = self._own(op, args, self._find(op, args[op["id_param"]]))
        self._require_state(op, rec)
        value = args.get(op["from_param"]) if "from_param" in op else op["value"]
        word = op.get("state_word", value)
        if op["field"] == "status" and word in FINAL_STATES and rec.get("status") == value:
            # cancelling what is cancelled (closing what is closed) is no change the verb allows
            label = op["resource"].replace("_", " ")
            raise Conflict(f"{label} '{rec['id']}' is already {value}", type=f"already_{word}")
        # a value rule the spec states for this move ("voiding an invoice zeroes its amount")
        sets = {f: v for f, v in (op.get("sets") or {}).items() if f in self._res(op)["fields"]}
        return self._change(self._res(op)["table"], rec["id"], {op["field"]: value, **sets})

    def _op_compute(self, op: dict[str, Any], args: dict[str, Any]) -> Any:
        if op.get("expand"):
            return run_expand(op, args)
        if op.get("info"):
            seed = self.store.tables[META].get("seed", self.seed)
            if op.get("geo"):
                return run_geo(op, args, seed)
            if op["fn"] == "now":  # the simulated clock, never the wall clock
                return run_now(op, args, self.clock.iso())
            if op["fn"] in ("health", "identity", "balance", "usage"):
                return run_service_info(op, args, seed, self.clock.iso(), self.name)
            return run_info(op, args, seed, self.clock.iso())
        return run_compute(op, args, lambda: self.rng(op["fn"]))

    def _op_relate(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        rec = self._find(op, args[op["id_param"]])
        field = f"{op['member']}_ids"
        members = list(rec.get(field) or [])
        value = args[op["member_param"]]
        if self._item_kind(op["member"]):  # a tag the service keeps must exist to be linked
            for v in value if isinstance(value, list) else [value]:
                self._find(op, v, op["member"])
        for v in value if isinstance(value, list) else [value]:
            if v not in members:
                members.append(v)
        return self._change(self._res(op)["table"], rec["id"], {field: members})

    def _op_unrelate(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        rec = self._find(op, args[op["id_param"]])
        field = f"{op['member']}_ids"
        members = list(rec.get(field) or [])
        value = args[op["member_param"]]
        gone = value if isinstance(value, list) else [value]
        if not any(v in members for v in gone):
            raise NotFound(
                f"{op['member']} '{value}' is not linked to {op['resource']} '{rec['id']}'", type="not_linked"
            )
        return self._change(self._res(op)["table"], rec["id"], {field: [m for m in members if m not in gone]})

    # ---- saved collections: one row per saved id ------------------------------------------------
    def _collection_ids(self, op: dict[str, Any], args: dict[str, Any]) -> tuple[list[str], str | None]:
        """The ids a call names (a list, or a comma-separated string; a URI's last part is its id), in
        order, and the kind of record they name. An id of a kind the service keeps must exist (404)."""
        ids: list[str] = []
        for p in op["ids_params"]:
            v = args.get(p)
            vals = v if isinstance(v, list) else str(v).split(",") if isinstance(v, str) else []
            ids += [str(x).strip().rsplit(":", 1)[-1] for x in vals if str(x).strip()]
        ids = list(dict.fromkeys(ids))
        names = " or ".join(f"'{p}'" for p in op["ids_params"])
        if not ids:
            raise InvalidArguments(f"{names} names no {str(op['item']).replace('_', ' ')}")
        kind = args.get(op["type_param"]) if op.get("type_param") else None
        kind = kind or op["item"]
        if self._item_kind(kind):
            table = self.table(self.manifest["resources"][kind]["table"])
            missing = [i for i in ids if i not in table]
            if missing:
                raise NotFound(
                    f"{kind.replace('_', ' ')} {', '.join(repr(m) for m in missing)} not found",
                    type=f"{kind}_not_found",
                )
        return ids, kind

    def _op_save(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        ids, kind = self._collection_ids(op, args)
        r = self._res(op)
        table = self.table(r["table"])
        for i in ids:
            if i not in table:  # saving what is saved already changes nothing
                rec = {"id": i, "created_at": self.clock.iso()}
                if "type" in r["fields"]:
                    rec["type"] = kind
                self.store.put(r["table"], i, rec)
        return {"saved": ids}

    def _op_unsave(self, op: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        ids, _ = self._collection_ids(op, args)
        r = self._res(op)
        gone = [i for i in ids if i in self.table(r["table"])]
        for i in gone:
            self.remove(r["table"], i)
        return {"removed": gone, "not_saved": [i for i in ids if i not in gone]}

    def _op_check(self, op: dict[str, Any], args: dict[str, Any]) -> list[bool]:
        """One boolean per id, in the order given (ids repeated answer again)."""
        self._collection_ids(op, args)
        ids: list[str] = []
        for p in op["ids_params"]:
            v = args.get(p)
            vals = v if isinstance(v, list) else str(v).split(",") if isinstance(v, str) else []
            ids += [str(x).strip().rsplit(":", 1)[-1] for x in vals if str(x).strip()]
        table = self.table(self._res(op)["table"])
        kind = args.get(op["type_param"]) if op.get("type_param") else None
        return [i in table and (kind is None or table[i].get("type") in (None, kind)) for i in ids]

    # ---- the player: one record per service -------------------------------------------------------
    def _player_item(self, op: dict[str, Any], value: Any) -> str:
        """The id of a playable item (a URI's last part), which must exist where the service keeps one."""
        key = str(value).strip().rsplit(":", 1)[-1]
        kinds = [k for k in op.get("items_from", []) if self._item_kind(k)]
        if not key:
            raise InvalidArguments("the item to play is empty")
        if kinds and not any(key in self.table(self.manifest["resources"][k]["table"]) for k in kinds):
            raise NotFound(f"no {' or '.join(kinds)} '{key}'", type=f"{kinds[0]}_not_found")
        return key

    def _op_player(self, op: dict[str, Any], args: dict[str, Any]) -> Any:
        table = self._res(op)["table"]
        rec = dict(self.table(table).get(PLAYER_KEY) or _player_record([], [], self.clock.iso()))
        p = op.get("params", {})
        action = op["action"]
        device = args.get(p["device"]) if "device" in p else None
        if isinstance(device, list):
            if len(device) != 1:
                raise InvalidArguments(f"'{p['device']}' must name exactly one device, got {len(device)}")
            device = device[0]
        if device is not None and op.get("device_resource"):
            self._find(op, device, op["device_resource"])
        if action == "state":
            return rec
        if action == "queue_get":
            return {"currently_playing": rec.get("item"), "queue": list(rec.get("queue") or [])}
        if device is not None:
            rec["device_id"] = str(device)
        if action == "play":
            items = [self._player_item(op, v) for v in (args.get(p.get("items", "")) or [])]
            if args.get(p.get("item", "")) is not None:
                items = [self._player_item(op, args[p["item"]]), *items]
            if args.get(p.get("name", "")) is not None:
                items = [self._named_item(op, str(args[p["name"]])), *items]
            if items:
                rec["history"] = [*(rec.get("history") or []), *([rec["item"]] if rec.get("item") else [])]
                rec["item"], rec["queue"] = items[0], [*items[1:], *(rec.get("queue") or [])]
                rec["progress_ms"] = 0
            if args.get(p.get("context", "")) is not None:
                rec["context_uri"] = str(args[p["context"]])
                rec["progress_ms"] = 0
            if rec.get("item") is None and rec.get("context_uri") is None:
                raise RuleViolation("nothing to play: give an item, or queue one first")
            if args.get(p.get("position", "")) is not None:
                rec["progress_ms"] = max(0, int(args[p["position"]]))
            rec["is_playing"] = True
        elif action == "pause":
            rec["is_playing"] = False
        elif action == "next":
            queue = list(rec.get("queue") or [])
            if not queue:
                raise RuleViolation("the queue is empty: there is no next track")
            rec["history"] = [*(rec.get("history") or []), *([rec["item"]] if rec.get("item") else [])]
            rec["item"], rec["queue"], rec["progress_ms"], rec["is_playing"] = queue[0], queue[1:], 0, True
        elif action == "previous":
            history = list(rec.get("history") or [])
            if history:  # with nothing before it, the track starts again
                rec["queue"] = [*([rec["item"]] if rec.get("item") else []), *(rec.get("queue") or [])]
                rec["item"], rec["history"] = history[-1], history[:-1]
            rec["progress_ms"] = 0
        elif action == "seek":
            pos = args[p["position"]]
            if pos < 0:
                raise InvalidArguments(f"'{p['position']}' must be 0 or more, got {pos!r}")
            rec["progress_ms"] = int(pos)
        elif action == "volume":
            v = args[p["volume"]]
            if not 0 <= v <= 100:
                raise InvalidArguments(f"'{p['volume']}' must be between 0 and 100, got {v!r}")
            rec["volume_percent"] = int(v)
        elif action == "shuffle":
            v = args[p["state"]]
            if not isinstance(v, bool):
                v = str(v).strip().lower() in ("true", "on", "1", "yes")
            rec["shuffle_state"] = v
        elif action == "repeat":
            v = str(args[p["state"]])
            if op.get("modes") and v not in op["modes"]:
                raise InvalidArguments(f"'{p['state']}' must be one of {', '.join(op['modes'])}, got {v!r}")
            rec["repeat_state"] = v
        elif action == "transfer":
            if args.get(p.get("play", "")) is True:
                rec["is_playing"] = True
        elif action == "enqueue":
            rec["queue"] = [*(rec.get("queue") or []), self._player_item(op, args[p["item"]])]
        self.store.put(table, PLAYER_KEY, rec)
        return rec

    def _named_item(self, op: dict[str, Any], name: str) -> str:
        """`play_song(name)`: the first item whose name or title holds `name` (404 where none does)."""
        want = name.casefold().strip()
        for k in op.get("items_from", []):
            if not self._item_kind(k):
                continue
            for key, rec in sorted(self.table(self.manifest["resources"][k]["table"]).items()):
                if any(want and want in str(rec.get(f, "")).casefold() for f in ("name", "title")):
                    return key
        raise NotFound(f"no track named {name!r}", type="track_not_found")


PLAYER_KEY = "player"


def _player_record(keys: list[str], devices: list[str], now: str) -> dict[str, Any]:
    return {
        "id": PLAYER_KEY,
        "created_at": now,
        "is_playing": False,
        "item": keys[0] if keys else None,
        "context_uri": None,
        "progress_ms": 0,
        "volume_percent": 50,
        "shuffle_state": False,
        "repeat_state": "off",
        "device_id": devices[0] if devices else None,
        "queue": list(keys[1:3]),
        "history": [],
    }


WORLD_MODEL_UNAVAILABLE = "world_model_unavailable"
MOVE_VERBS = {"move", "transfer", "relocate", "reparent"}
ENGINE_FIELDS = {"id", "created_at"}
QUERY_OPS = {
    "=": "eq",
    "==": "eq",
    "eq": "eq",
    "is": "eq",
    "equals": "eq",
    "!=": "ne",
    "ne": "ne",
    "neq": "ne",
    "is_not": "ne",
    "not_equals": "ne",
    "~": "contains",
    "contains": "contains",
    "like": "contains",
    "in_text": "contains",
    "!~": "not_contains",
    "not_contains": "not_contains",
    ">": "gt",
    "gt": "gt",
    ">=": "ge",
    "gte": "ge",
    "<": "lt",
    "lt": "lt",
    "<=": "le",
    "lte": "le",
    "in": "in",
    "nin": "nin",
    "not_in": "nin",
    "starts_with": "starts",
    "^": "starts",
}


def off_enum(r: dict[str, Any], rec: dict[str, Any]) -> tuple[str, Any, list[Any]] | None:
    """The first field of `rec` whose value is outside the enum the spec states for it, or None."""
    for field, allowed in (r.get("enums") or {}).items():
        v = rec.get(field)
        if v is None:
            continue
        vals = v if isinstance(v, list) else [v]
        if any(x not in allowed for x in vals):
            return field, v, allowed
    return None


def query_conditions(q: Any) -> list[tuple[str, str, Any]] | None:
    """The conditions of a structured query (`{field, operator, value}`, nested under an AND of
    `value: [...]`), or None where it is not one this engine can read (then it is reported)."""
    if isinstance(q, list):
        out: list[tuple[str, str, Any]] = []
        for c in q:
            got = query_conditions(c)
            if got is None:
                return None
            out += got
        return out
    if not isinstance(q, dict):
        return None
    op = str(q.get("operator", "=")).strip().lower()
    if op in ("and",) and isinstance(q.get("value"), list):
        return query_conditions(q["value"])
    field = q.get("field") or q.get("key") or q.get("attribute")
    if not isinstance(field, str) or op not in QUERY_OPS or "value" not in q:
        return None
    return [(field, QUERY_OPS[op], q["value"])]


def _condition(rec: dict[str, Any], field: str, op: str, want: Any) -> bool:
    have = rec.get(field)
    if op in ("eq", "ne"):
        same = str(have).casefold() == str(want).casefold() if have is not None else want is None
        return same if op == "eq" else not same
    if op in ("contains", "not_contains", "starts"):
        text, w = str(have or "").casefold(), str(want).casefold()
        return (
            (w in text)
            if op == "contains"
            else (w not in text)
            if op == "not_contains"
            else text.startswith(w)
        )
    if op in ("in", "nin"):
        vals = [str(x).casefold() for x in (want if isinstance(want, list) else [want])]
        return (str(have).casefold() in vals) == (op == "in")
    return _in_range(have, ">=" if op in ("ge", "gt") else "<=", want) and (
        op in ("ge", "le") or str(have) != str(want)
    )


def _one_of(have: Any, wants: list[Any]) -> bool:
    vals = have if isinstance(have, list) else [have]
    return any(str(h).casefold() == str(w).casefold() for h in vals for w in wants)


def shaped(data: Any, op: dict[str, Any], args: dict[str, Any]) -> Any:
    """The answer in the shape the call's switches ask for: `fields` keeps those fields (and the id),
    `response_format: markdown` adds the same records as a markdown table. A switch never filters."""
    switches = op.get("switches") or {}
    fields = next((args.get(p) for p, k in switches.items() if k == "fields" and args.get(p)), None)
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",") if f.strip()]
    fmt = next((args.get(p) for p, k in switches.items() if k == "format" and args.get(p)), None)

    def keep(rec: Any) -> Any:
        if not fields or not isinstance(rec, dict):
            return rec
        return {k: v for k, v in rec.items() if k == "id" or k in fields}

    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = {**data, "items": [keep(x) for x in data["items"]]}
        rows = data["items"]
    else:
        data = keep(data)
        rows = [data] if isinstance(data, dict) else []
    if isinstance(fmt, str) and fmt.lower() in ("markdown", "md", "text") and isinstance(data, dict):
        cols = list(dict.fromkeys(k for r in rows if isinstance(r, dict) for k in r))[:8]
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += [
            "| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows if isinstance(r, dict)
        ]
        data = {**data, "markdown": "\n".join(lines)}
    return data


# states a record must not be in for the verb that sets them (cancel, close, void, archive, ...)
FINAL_STATES = {"cancelled", "closed", "void", "archived", "revoked", "terminated", "rejected", "resolved"}
FINAL_STATES |= {"completed", "finalized", "merged", "dismissed", "approved", "unpublished"}
DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
WRITES = {"create", "update", "transition", "relate", "unrelate", "save", "player"}
PAGE_PARAMS = {"page", "pagenumber", "pageno", "pagenum", "currentpage"}  # numbered pages, not offsets
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def _integers(args: dict[str, Any], schema: dict[str, Any], tool: str) -> tuple[dict[str, Any], str]:
    """Integer parameters as Python ints: an integral float (`5.0`) becomes `5`; one outside the 64-bit
    range (`1e308`) is rejected, as JSON Schema alone would accept it."""
    props = schema.get("properties", {})
    out = dict(args)
    for k, v in args.items():
        s = props.get(k)
        if not isinstance(s, dict) or isinstance(v, bool):
            continue
        t = s.get("type")
        if (t == "integer" or (isinstance(t, list) and "integer" in t)) and isinstance(v, int | float):
            if not INT_MIN <= v <= INT_MAX:
                return args, f"{tool}: '{k}' must be an integer between {INT_MIN} and {INT_MAX}, got {v!r}"
            out[k] = int(v)
        elif isinstance(v, dict) and isinstance(s.get("properties"), dict):
            inner, bad = _integers(v, s, tool)
            if bad:
                return args, bad
            out[k] = inner
    return out, ""


def _out_of_bounds(bounds: dict[str, list[float | None]], args: dict[str, Any], tool: str) -> str:
    """A numeric argument outside the range its description states ("1-100", "max 50")."""
    for p, (lo, hi) in bounds.items():
        v = args.get(p)
        if not isinstance(v, int | float) or isinstance(v, bool):
            continue
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            if lo is not None and hi is not None:
                want = f"between {lo:g} and {hi:g}"
            else:
                want = f"at least {lo:g}" if lo is not None else f"at most {hi:g}"
            return f"{tool}: '{p}' must be {want} (its description says so), got {v!r}"
    return ""


def _non_finite(value: Any, tool: str, where: str = "") -> str:
    """JSON has no infinity or NaN: a call that carries one (from Python) is rejected, not half-run."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{tool}: '{where or 'arguments'}' must be a finite number, got {value!r}"
    if isinstance(value, dict):
        for k, v in value.items():
            bad = _non_finite(v, tool, f"{where}.{k}" if where else str(k))
            if bad:
                return bad
    elif isinstance(value, list):
        for i, v in enumerate(value):
            bad = _non_finite(v, tool, f"{where}[{i}]")
            if bad:
                return bad
    return ""


def epoch(text: str, ms: bool = False) -> float | None:
    """An ISO time as Unix seconds (milliseconds with `ms`), or None where it is none."""
    try:
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.timestamp() * (1000 if ms else 1)


def _in_range(have: Any, op: str, want: Any) -> bool:
    if have is None:
        return False
    try:
        if isinstance(have, str) and isinstance(want, int | float) and not isinstance(want, bool):
            stamp = epoch(have, ms=want > 10**11)  # `since: 1700000000000` against a stored ISO time
            if stamp is not None:
                return stamp >= want if op == ">=" else stamp <= want
        if isinstance(want, str) or isinstance(have, str):
            a, b = str(have), str(want)
            if DATE_ONLY.match(b) and DATE_ONLY.match(a[:10]):
                a = a[:10]  # an end date takes in the whole of that day
        else:
            a, b = float(have), float(want)
    except (TypeError, ValueError):
        return False
    return a >= b if op == ">=" else a <= b


def _matches(rec: dict[str, Any], filters: dict[str, Any], query: str | None) -> bool:
    for k, v in filters.items():
        have = rec.get(k)
        if isinstance(v, str) and isinstance(have, str):
            if have.casefold() != v.casefold():
                return False
        elif have != v:
            return False
    if query:
        text = " ".join(str(x) for x in rec.values() if isinstance(x, str | int | float)).casefold()
        q = query.casefold()
        if q not in text:
            words = [w for w in re.findall(r"[\w@.+-]{3,}", q) if w not in {"and", "the"}]
            if not words or not all(w in text for w in words):
                return False
    return True


CURRENCIES = ("USD", "EUR", "GBP", "CAD", "AUD", "JPY")
COUNTRIES = ("US", "GB", "DE", "FR", "CA", "NL")
SYMBOLS = ("AAPL", "MSFT", "GOOGL", "AMZN", "NVDA", "JPM")
COMPANY_FIELDS = {"company", "companyname", "organization", "organisation", "org", "orgname", "account"}
COMPANY_FIELDS |= {"accountname", "customername", "businessname", "vendor", "vendorname", "supplier"}
COMPANY_FIELDS |= {"client", "clientname", "employer", "merchant", "partner"}
COMPANY_RESOURCES = {"company", "account", "organization", "organisation", "org", "vendor", "supplier"}
COMPANY_RESOURCES |= {"client", "business", "merchant", "partner", "customer"}
PRODUCT_RESOURCES = {"product", "item", "variant", "sku", "listing", "offer", "line_item", "good"}
PEOPLE_RESOURCES = {"user", "contact", "employee", "member", "person", "lead", "subscriber", "candidate"}
PEOPLE_RESOURCES |= {"applicant", "attendee", "participant", "agent", "author", "owner", "student", "patient"}
PEOPLE_RESOURCES |= {"invitee", "assignee", "reviewer", "recipient", "guest", "admin"}


def _seed_value(
    field: str,
    t: str,
    person: Any,
    ctx: SeedContext,
    i: int,
    r: dict[str, Any] | None = None,
    rname: str = "",
) -> Any:
    """A seeded value that looks like the product's: the field's own enum, its format, ISO codes,
    names from the shared company in the fields that hold them (a person in a contact's name, a
    customer company in an account's, a product in a product's)."""
    r = r or {}
    n = norm(field)
    kind = rname.rsplit("_", 1)[-1]
    enum = (r.get("enums") or {}).get(field)
    if enum:
        return enum[i % len(enum)] if n in ("status", "state") else enum[(i + len(field)) % len(enum)]
    fmt = (r.get("formats") or {}).get(field)
    w = WORDS[(i * 3 + len(field)) % len(WORDS)]
    customers = ctx.company.customers
    cust = customers[(i * 5 + len(rname)) % len(customers)] if customers else None
    products = ctx.company.products
    prod = products[(i * 3 + len(rname)) % len(products)] if products else None
    if t == "boolean":
        return i % 2 == 0
    if t in ("integer", "number"):
        if prod is not None and kind in PRODUCT_RESOURCES and n in ("price", "amount", "unitprice"):
            return prod.price if t == "number" else int(prod.price)
        return (i + 1) * (10 if any(k in n for k in ("amount", "price", "total", "balance", "cost")) else 1)
    if t == "array":
        return []
    if t == "object":
        return {}
    if fmt == "date":
        return ctx.clock.iso()[:10]
    if fmt == "date-time":
        return ctx.clock.iso()
    if fmt == "uuid":
        return str(uuid.UUID(int=ctx.rng.getrandbits(128), version=4))
    if fmt in ("uri", "url") or n.endswith(("url", "uri", "website", "link")):
        return f"https://{ctx.company.domain}/{rname.replace('_', '-') or 'r'}/{i + 1}"
    if "email" in n or fmt == "email":
        return person.email
    if "currency" in n:
        return CURRENCIES[i % len(CURRENCIES)]
    if n in ("country", "countrycode"):
        return COUNTRIES[i % len(COUNTRIES)]
    if n in ("symbol", "ticker", "tickersymbol"):
        return SYMBOLS[i % len(SYMBOLS)]
    if n in ("language", "lang", "locale"):
        return ("en", "de", "fr")[i % 3] if n != "locale" else ("en-US", "de-DE", "fr-FR")[i % 3]
    if n in ("timezone", "tz", "timezoneid"):
        return ("America/New_York", "Europe/London", "Europe/Berlin")[i % 3]
    if n in ("firstname", "givenname"):
        return person.first
    if n in ("lastname", "surname", "familyname"):
        return person.last
    if cust is not None and (n in COMPANY_FIELDS or (kind in COMPANY_RESOURCES and n in NAME_FIELDS)):
        return cust.name
    if n == "domain" and cust is not None:
        return cust.domain
    if n == "city" and cust is not None:
        return cust.city
    if n == "industry" and cust is not None:
        return cust.industry
    if prod is not None and kind in PRODUCT_RESOURCES:
        if n in NAME_FIELDS:
            return prod.name
        if n == "sku":
            return prod.sku
        if n in ("category", "producttype", "type"):
            return prod.category
    if n in ("sku",) and prod is not None:
        return prod.sku
    if n in ("assignee", "owner", "author", "username", "assignedto", "createdby", "requester"):
        return person.name
    if n in NAME_FIELDS and not (kind in PEOPLE_RESOURCES and n in ("title", "label")):
        if kind in PEOPLE_RESOURCES or not rname or n in ("fullname", "displayname"):
            return person.name
        return f"{w.capitalize()} {rname.replace('_', ' ')}"
    if "phone" in n:
        return person.phone
    if "date" in n or "time" in n or n.endswith("at"):
        return ctx.clock.iso()
    if n in ("status", "state"):
        return "open"
    if "address" in n:
        return f"{100 + i * 7} Market Street, {cust.city if cust else 'Springfield'}"
    if any(k in n for k in ("description", "body", "content", "text", "message", "note", "comment")):
        return f"{w.capitalize()} notes from {person.name} ({person.team})."
    if any(k in n for k in ("title", "summary", "subject")):
        return f"{w.capitalize()} {person.team} {rname.replace('_', ' ') or 'item'} {i + 1}"
    return f"{w}-{i + 1}"


NAME_FIELDS = {"name", "fullname", "displayname", "title", "label"}


def service_from_manifest(manifest: dict[str, Any]) -> type[CompiledService]:
    """A `Service` class for `manifest` (data only: nothing in it is executed)."""
    if not isinstance(manifest, dict) or manifest.get("manifest_version") != MANIFEST_VERSION:
        raise ManifestError(f"not a version-{MANIFEST_VERSION} service manifest")
    name = manifest.get("service")
    if not isinstance(name, str) or not re.match(r"^[a-z][a-z0-9_]{0,30}$", name) or "__" in name:
        raise ManifestError(f"manifest service name {name!r} is invalid")
    resources = manifest.get("resources", {})
    ops: dict[str, dict[str, Any]] = {}
    specs: dict[str, ToolSpec] = {}
    refs: dict[str, dict[str, str]] = {}
    action_specs: dict[str, ToolSpec] = {}

    def add(t: dict[str, Any], name: str, into: dict[str, ToolSpec]) -> None:
        op = dict(t["op"])
        if t.get("status") == "quarantined":
            op["quarantined"] = True
        if op["kind"] == "dispatch":
            if not isinstance(op.get("actions"), dict) or not op["actions"]:
                raise ManifestError(f"dispatch tool {name!r} has no actions")
            for action, sub in op["actions"].items():  # each action is served as `<tool>.<action>`
                add({"description": t.get("description", ""), **sub}, f"{name}.{action}", action_specs)
        elif op["kind"] not in ("simulated", "compute") and op.get("resource") not in resources:
            raise ManifestError(f"tool {name!r} names unknown resource {op.get('resource')!r}")
        if op.get("parent"):
            field = op["parent"].get("field", op["parent"]["param"])
            refs.setdefault(op["resource"], {})[field] = op["parent"]["resource"]
        ops[name] = op
        schema = t["input_schema"]
        into[name] = ToolSpec(
            name=name,
            fn=lambda *a, **k: None,
            description=t["description"],
            mutates=not t.get("read_only", False),
            input_schema=schema,
            output_schema={},
            params=tuple(schema.get("properties", {})),
            required=frozenset(schema.get("required", [])),
        )

    for t in manifest.get("tools", []):
        add(t, t["name"], specs)
    records = {
        r["table"]: _record_model(f"{name}_{rn}", r["fields"], bool(r.get("open")))
        for rn, r in resources.items()
    }
    state = create_model(  # type: ignore[call-overload]
        f"{name}_state",
        __config__=ConfigDict(extra="forbid"),
        **{table: (dict[str, model], {}) for table, model in records.items()},
    )
    cls = type(
        f"Compiled_{name}",
        (CompiledService,),
        {
            "name": name,
            "domain": manifest.get("domain") or "compiled",
            "spec": manifest.get("source"),
            "state_model": state,
            "manifest": manifest,
            "ops": ops,
            "refs": refs,
            "record_models": records,
            "_validators": {},
            "__doc__": f"{manifest.get('server') or name} (compiled from its MCP spec)",
        },
    )
    cls.tool_specs = specs
    cls.action_specs = action_specs  # a dispatch tool's actions: called through it, never listed
    return cls
