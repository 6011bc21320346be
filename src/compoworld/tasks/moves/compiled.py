"""Task-generation moves for compiled services, derived from their manifests.

A resource with a compiled `create` and a compiled `list` / `search` gives a relay (a planted record
whose text carries a fact, found by searching for its key) and a write (create a record that
mentions a fact, checked by `record_exists`). So compiled services join random walks like any other.
"""

from __future__ import annotations

import random
from typing import Any

from compoworld.compiler.compiler import LIMIT_PARAMS, QUERY_PARAMS, norm
from compoworld.compiler.values import NoValue, valid_args
from compoworld.tasks.moves.base import Fact, Gen, Move, PlantError, Relay, Write, WriteStep, key_text

TEXT_FIELDS = (
    "description",
    "body",
    "content",
    "text",
    "notes",
    "note",
    "message",
    "comment",
    "summary",
    "details",
    "title",
    "subject",
    "name",
)


def _text_field(fields: dict[str, str]) -> str | None:
    for want in TEXT_FIELDS:
        for f, t in fields.items():
            if norm(f) == want and t in ("string", "any"):
                return f
    return None


def _tool(manifest: dict[str, Any], resource: str, kind: str, search: bool = False) -> dict[str, Any] | None:
    for t in manifest["tools"]:
        op = t["op"]
        if t["status"] != "compiled" or op.get("resource") != resource or op["kind"] != kind:
            continue
        props = t["input_schema"].get("properties", {})
        if search and not any(norm(p) in QUERY_PARAMS for p in props):
            continue
        return t
    return None


def _list_args(
    svc: Any, tool: dict[str, Any], rec: dict[str, Any], query: str, rng: random.Random
) -> dict[str, Any]:
    args = valid_args(svc, tool, rng)
    props = tool["input_schema"].get("properties", {})
    for p in props:
        n = norm(p)
        if n in QUERY_PARAMS and props[p].get("type", "string") == "string":
            args[p] = query
        elif n in LIMIT_PARAMS and p in args:
            args[p] = min(100, props[p].get("maximum", 100))
    for p in list(args):
        if p in rec and norm(p) not in QUERY_PARAMS:
            args[p] = rec[p]
    return args


def compiled_moves(cls: Any) -> list[Move]:
    m = cls.manifest
    name = cls.name
    label = (m.get("server") or name).split("(")[0].strip()
    out: list[Move] = []
    for rname, r in sorted(m["resources"].items()):
        field = _text_field(r["fields"])
        create = _tool(m, rname, "create")
        if field is None or create is None:
            continue
        finder = _tool(m, rname, "list", search=True)
        noun = rname.replace("_", " ")
        if finder is not None:
            out.append(
                Relay(
                    name,
                    f"{rname}_note",
                    ("customer", "code", "person"),
                    ("code", "amount", "date", "person", "phone"),
                    f"the {noun}",
                    f"in {label}",
                    _planter(name, rname, r, field, finder),
                )
            )
        out.append(
            Write(name, f"create_{rname}", ("any",), None, _builder(name, rname, r, field, create, label))
        )
    return out


def _planter(service: str, rname: str, r: dict[str, Any], field: str, finder: dict[str, Any]):
    def plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
        svc = g.svc(service)
        rec: dict[str, Any] = {
            "id": svc.new_key(rname),
            "created_at": g.env.clock.iso(),
            field: f"Re {key_text(key)}: {text}",
        }
        for f, parent in svc.refs.get(rname, {}).items():  # attach to an existing parent
            keys = sorted(svc.table(svc.manifest["resources"][parent]["table"]))
            if keys:
                rec[f] = g.rng.choice(keys)
        if "status" in r["fields"]:
            rec["status"] = "open"
        svc.insert(r["table"], rec)
        try:
            args = _list_args(svc, finder, rec, key_text(key), g.rng)
        except NoValue as e:
            raise PlantError(f"{finder['name']}: {e}") from e
        return [(f"{service}__{finder['name']}", args)]

    return plant


def _builder(service: str, rname: str, r: dict[str, Any], field: str, create: dict[str, Any], label: str):
    def build(g: Gen, fact: Fact) -> WriteStep:
        svc = g.svc(service)
        try:
            args = valid_args(svc, create, g.rng)
        except NoValue as e:
            raise PlantError(f"{create['name']}: {e}") from e
        args[field] = f"Follow-up: {fact.value}"
        noun = rname.replace("_", " ")
        return WriteStep(
            calls=[(f"{service}__{create['name']}", args)],
            checks=[
                (
                    f"{'an' if noun[0] in 'aeiou' else 'a'} {noun} in {label} mentions the {fact.noun}",
                    {
                        "predicate": "record_exists",
                        "service": service,
                        "table": r["table"],
                        "new": True,
                        "where": {field: {"contains": fact.value}},
                    },
                )
            ],
            allow=[{"service": service, "table": r["table"]}],
            phrase=f"create {'an' if noun[0] in 'aeiou' else 'a'} {noun} in {label} whose {field.replace('_', ' ')} mentions {{it}}",
        )

    return build
