"""`Resource`: a typed collection of records inside a service, with the CRUD every business app has.

Declared on a service class (``contacts = Resource("contacts", Contact)``), it validates records
against their pydantic model, mints deterministic ids, and offers get / create / update / delete /
filter / paginate, raising the right envelope errors (400 naming the field, 404 naming the record).
Tools stay short and keep only what is particular to them: their business rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, Protocol

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError

from compoworld.core.envelope import InvalidArguments, NotFound
from compoworld.core.query import check_limit, matches_text
from compoworld.core.state import Store


class Service(Protocol):
    """What a resource needs of the service it lives on (`core.service.Service` imports this module,
    so it is described here rather than imported back)."""

    store: Store

    def table(self, name: str) -> dict[str, Any]: ...
    def insert(self, table: str, record: dict[str, Any], key: str = "id") -> dict[str, Any]: ...
    def next_id(self, prefix: str, width: int = 12, alphabet: str = "hex") -> str: ...
    def next_seq(self, name: str) -> int: ...


IdKind = Literal["hex", "int", "numeric", "upper"]  # numeric: digits as a string (HubSpot, Shopify)


def explain(error: ValidationError, what: str) -> str:
    parts = []
    for e in error.errors(include_url=False):
        loc = ".".join(str(x) for x in e["loc"]) or what
        if e["type"] == "extra_forbidden":
            parts.append(f"'{loc}' is not a field of {what}")
        elif e["type"] == "missing":
            parts.append(f"'{loc}' is required for {what}")
        else:
            parts.append(f"'{loc}': {e['msg']}")
    return f"invalid {what}: " + "; ".join(parts)


def json_object(value: str | dict[str, Any] | None, field: str) -> dict[str, Any]:
    """Arguments that real servers take as a JSON string (HubSpot's `properties`, ...) or an object."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    try:
        parsed = orjson.loads(value) if value.strip() else {}
    except orjson.JSONDecodeError:
        raise InvalidArguments(
            f"'{field}' must be a JSON object (or a string holding one), got {value[:60]!r}"
        ) from None
    if not isinstance(parsed, dict):
        raise InvalidArguments(f"'{field}' must be a JSON object, got {type(parsed).__name__}")
    return parsed


_PLAIN_CONFIG = {"extra", "title", "populate_by_name", "protected_namespaces", "frozen", "use_enum_values"}
_FIELDS: dict[type, dict[str, TypeAdapter] | None] = {}  # derived from the class alone, like pydantic's


def field_adapters(model: type[BaseModel]) -> dict[str, TypeAdapter] | None:
    """Per field of `model`, a validator-and-serialiser that does for that field alone what the
    whole model does for it; None where the model's fields are not independent (model or field
    validators, serialisers, aliases, computed fields, special config): then only the whole model
    validates."""
    if model in _FIELDS:
        return _FIELDS[model]
    dec = model.__pydantic_decorators__
    plain = (
        not (
            dec.validators
            or dec.field_validators
            or dec.root_validators
            or dec.field_serializers
            or dec.model_serializers
            or dec.model_validators
            or dec.computed_fields
        )
        and set(model.model_config) <= _PLAIN_CONFIG
        and not model.model_config.get("use_enum_values")
    )
    out: dict[str, TypeAdapter] | None = {} if plain else None
    if out is not None:
        for name, f in model.model_fields.items():
            if f.alias or f.validation_alias or f.serialization_alias or f.exclude:
                out = None
                break
            ann = Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation
            out[name] = TypeAdapter(ann)
    _FIELDS[model] = out
    return out


class Resource:
    """Declaration of one table of typed records (see module docstring)."""

    def __init__(
        self,
        table: str,
        model: type[BaseModel],
        *,
        label: str | None = None,
        id_kind: IdKind = "hex",
        prefix: str = "",
        width: int = 12,
        start: int = 1000,
        text: tuple[str, ...] = (),
        key: str = "id",
    ) -> None:
        self.key = key
        self.table = table
        self.model = model
        self.label = label or table.rstrip("s").replace("_", " ")
        self.id_kind = id_kind
        self.prefix = prefix
        self.width = width
        self.start = start
        self.text = text

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = name

    def __get__(self, svc: Service | None, owner: type) -> Any:
        if svc is None:
            return self
        return Bound(self, svc)


class Bound:
    """A `Resource` bound to one service instance."""

    __slots__ = ("r", "svc")

    def __init__(self, r: Resource, svc: Service) -> None:
        self.r = r
        self.svc = svc

    @property
    def rows(self) -> dict[str, Any]:
        return self.svc.table(self.r.table)

    def all(self) -> list[dict[str, Any]]:
        return list(self.rows.values())

    def get(self, rid: Any) -> dict[str, Any] | None:
        return self.rows.get(str(rid)) if rid is not None and not isinstance(rid, bool) else None

    def require(self, rid: Any, field: str | None = None) -> dict[str, Any]:
        rec = self.get(rid)
        if rec is None:
            where = f" (from '{field}')" if field else ""
            raise NotFound(
                f"{self.r.label} '{rid}' not found{where}", type=f"{self.r.label.replace(' ', '_')}_not_found"
            )
        return rec

    def new_id(self) -> Any:
        r = self.r
        if r.id_kind in ("int", "numeric"):
            n = r.start + self.svc.next_seq(f"id:{r.table}")
            return n if r.id_kind == "int" else str(n)
        return self.svc.next_id(r.prefix, r.width, "upper" if r.id_kind == "upper" else "hex")

    def validate(self, record: dict[str, Any]) -> dict[str, Any]:
        try:
            out = self.r.model.model_validate(record).model_dump(mode="json", by_alias=True)
        except ValidationError as e:
            raise InvalidArguments(explain(e, self.r.label)) from None
        self._known()[id(out)] = out  # a fixed point of validation: later updates check only changes
        return out

    def _known(self) -> dict[int, Any]:
        known = self.svc.__dict__.get("_validated")
        if known is None or len(known) > 200_000:
            known = self.svc.__dict__["_validated"] = {}
        return known

    def _validate_changes(self, current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        """What `validate({**current, **changes})` gives, validating only the changed fields when
        `current` is itself the output of a validation (records are values, so it still is)."""
        adapters = field_adapters(self.r.model)
        known = self.svc.__dict__.get("_validated")
        if (
            adapters is None
            or known is None
            or known.get(id(current)) is not current
            or not all(k in adapters for k in changes)
        ):
            return self.validate({**current, **changes})
        new = dict(current)
        try:
            for k, v in changes.items():
                ta = adapters[k]
                new[k] = ta.dump_python(ta.validate_python(v), mode="json", by_alias=True)
        except ValidationError:
            return self.validate({**current, **changes})  # the whole model names the bad field
        known[id(new)] = new
        return new

    def create(self, fields: dict[str, Any], *, id: Any = None) -> dict[str, Any]:
        """Validate and insert a new record; `fields` may omit fields that have defaults."""
        rid = self.new_id() if id is None else id
        record = self.validate({**fields, self.r.key: rid})
        if str(rid) in self.rows:
            self.svc.insert(self.r.table, {"id": str(rid)})  # raises the conflict
        self.svc.store.put(self.r.table, str(rid), record)
        return record

    def update(self, rid: Any, changes: dict[str, Any]) -> dict[str, Any]:
        """Validated partial update; unknown fields are a 400 that names them."""
        current = self.require(rid)
        key = self.r.key
        if key in changes and changes[key] != current[key]:
            raise InvalidArguments(f"the id of a {self.r.label} cannot be changed")
        record = self._validate_changes(current, changes)
        self.svc.store.put(self.r.table, str(rid), record)
        return record

    def delete(self, rid: Any) -> dict[str, Any]:
        self.require(rid)
        return self.svc.store.delete(self.r.table, str(rid))

    def find(
        self, pred: Callable[[dict[str, Any]], bool] | None = None, /, **equal: Any
    ) -> list[dict[str, Any]]:
        """Records where every non-None keyword equals the field, and `pred` holds."""
        want = {k: v for k, v in equal.items() if v is not None}
        if want:  # the store's index on the first field narrows the scan to the matching records
            first = next(iter(want))
            try:
                hash(want[first])
            except TypeError:
                pass
            else:
                return [
                    rec
                    for rec in self.svc.store.lookup(self.r.table, first, want[first])
                    if all(rec.get(k) == v for k, v in want.items()) and (pred is None or pred(rec))
                ]
        return [
            rec
            for rec in self.rows.values()
            if all(rec.get(k) == v for k, v in want.items()) and (pred is None or pred(rec))
        ]

    def search(
        self, query: str | None, records: Iterable[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        recs = self.all() if records is None else list(records)
        if not query:
            return recs
        store, table, fields = self.svc.store, self.r.table, self.r.text
        key = self.r.key
        return [
            rec for rec in recs if matches_text(query, store.text_of(table, str(rec.get(key)), rec, fields))
        ]


def sort_records(records: list[dict[str, Any]], key: str, descending: bool = False) -> list[dict[str, Any]]:
    """Stable order by `key` then id; None sorts first, text compares case-insensitively."""

    def k(r: dict[str, Any]) -> tuple[Any, ...]:
        v = r.get(key)
        return (
            v is not None,
            v.casefold() if isinstance(v, str) else (v if v is not None else ""),
            str(r.get("id")),
        )

    return sorted(records, key=k, reverse=descending)


def page_number(records: list[Any], page: int, per_page: int, hi: int = 100) -> dict[str, Any]:
    """Page-numbered listing (Freshdesk, BambooHR, ...): pages start at 1."""
    check_limit(page, "page", 1, 100_000)
    check_limit(per_page, "per_page", 1, hi)
    start = (page - 1) * per_page
    return {
        "results": records[start : start + per_page],
        "page": page,
        "per_page": per_page,
        "total": len(records),
    }
