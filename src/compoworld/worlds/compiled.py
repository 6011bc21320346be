"""Compiled services in persona worlds: one skill that fits any compiled tool set with a record to
create from plain values and update later.

A compiled service (`compoworld spec compile`, loaded through `COMPOWORLD_MANIFESTS`) fits when it
has a mutating `create`/`add` tool whose required parameters are all plain text (no reference to
another record) and an `update` tool that takes the created record's id and a text field. A story
line then keeps one record there: created the first time (its title names the customer and the
code), its description revised on later days. Nothing is guessed at run time: the fit is read from
the tool schemas, and a call that fails rejects the day like any other skill.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from compoworld.worlds.prose import prose

Day = Any  # a `worlds.skills.Day` (skills runs the compiled skill: it is not imported back)

TITLE = ("name", "title", "subject", "summary")
TEXT = ("description", "body", "body_html", "notes", "content", "desc")


def _plain(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and "enum" not in schema and "format" not in schema


@lru_cache(maxsize=256)
def fit(service: str) -> tuple[str, str, str, str, str] | None:
    """(create tool, its title parameter, update tool, its id parameter, its text parameter), or
    None where this compiled service has no record a story line can keep."""
    from compoworld.services import registry

    cls = registry().get(service)
    if cls is None or not getattr(cls, "manifest", None):
        return None
    ops = getattr(cls, "ops", None) or {}

    def code(t: str) -> bool:  # simulated and quarantined tools are the world model's: never in a replay
        return not (ops.get(t, {}).get("kind") == "simulated" or ops.get(t, {}).get("quarantined"))

    specs = {t: sp for t, sp in cls.tool_specs.items() if code(t)}
    for name, sp in sorted(specs.items()):
        if not sp.mutates or not any(w in name for w in ("create", "add")):
            continue
        props = sp.input_schema.get("properties", {})
        required = sp.input_schema.get("required", [])
        if not required or not all(
            r in props and _plain(props[r]) and not r.endswith("id") for r in required
        ):
            continue
        title = next((r for r in required if r in TITLE), None)
        if title is None or len(required) > 2:
            continue
        noun = name.split("create_" if "create_" in name else "add_", 1)[-1]
        for uname, usp in sorted(specs.items()):
            uprops = usp.input_schema.get("properties", {})
            idp = f"{noun}_id"
            text = next((t for t in TEXT if t in uprops and _plain(uprops[t])), None)
            ok = usp.mutates and "update" in uname and idp in uprops and text is not None
            if ok and set(usp.input_schema.get("required", [])) <= {idp, text}:
                return name, title, uname, idp, text  # type: ignore[return-value]
    return None


def fitting_library() -> list[str]:
    """The compiled services of the library (COMPOWORLD_MANIFESTS) that fit, by name."""
    from compoworld.services import registry

    return sorted(n for n, c in registry().items() if getattr(c, "manifest", None) and fit(n) is not None)


def compiled_services(services: list[str]) -> list[str]:
    return [s for s in services if fit(s) is not None]


def compiled_work(d: Day, s: dict[str, Any] | None) -> str:
    """Every open story line keeps one record in each fitting compiled service of the persona."""
    done = []
    for svc in compiled_services(list(d.env.services)):
        create, title, update, idp, text = fit(svc)  # type: ignore[misc]
        for x in d.ledger["stories"]:
            if x.get("closed"):
                continue
            refs = x.setdefault("compiled", {})
            if svc not in refs:
                args = {title: f"{x['customer']} {x['kind'].replace('_', ' ')} {x['code']}"}
                props = d.env.tool_spec(f"{svc}__{create}").input_schema.get("properties", {})
                for t in TEXT:
                    if t in props and _plain(props[t]):
                        args[t] = prose(d.rng, d.n(60))
                        break
                out = d.call(f"{svc}__{create}", args)
                rid = _id_of(out)
                if rid is None:
                    continue
                refs[svc] = rid
            else:
                d.call(
                    f"{svc}__{update}", {idp: refs[svc], text: f"{d.date:%Y-%m-%d}: " + prose(d.rng, d.n(80))}
                )
            done.append(svc)
    return f"kept {len(done)} records in {', '.join(sorted(set(done))) or 'no compiled service'}"


def _id_of(out: Any) -> str | None:
    """The created record's id in a compiled tool's answer (the record, or the record under one key)."""
    if isinstance(out, dict):
        if isinstance(out.get("id"), str | int):
            return str(out["id"])
        for v in out.values():
            if isinstance(v, dict) and isinstance(v.get("id"), str | int):
                return str(v["id"])
    return None
