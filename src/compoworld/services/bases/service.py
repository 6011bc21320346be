"""No-code databases: Airtable, modelled on klavis_airtable.json (Klavis Airtable MCP server).

All 11 tools of the spec are modelled with their real names and parameters. Fields are typed and
values are checked against their type (typecast converts strings and adds select choices, as in
Airtable); at most 10 records are created, updated or deleted per request, as Airtable allows; a
filter formula is parsed by a small grammar, never evaluated as code.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, paginate, valid_email
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.bases.formula import compile_formula
from compoworld.services.bases.seed import seed_bases
from compoworld.services.bases.state import Base, Field, Record, Table

TYPES = {
    "singleLineText",
    "multilineText",
    "number",
    "currency",
    "percent",
    "checkbox",
    "date",
    "dateTime",
    "email",
    "url",
    "phoneNumber",
    "singleSelect",
    "multipleSelects",
}
MAX_BATCH = 10


class FieldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: str
    description: str | None = None
    options: dict[str, Any] | None = None


class NewRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fields: dict[str, Any]


class RecordUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    fields: dict[str, Any]


class SortSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    direction: Literal["asc", "desc"] = "asc"


class Upsert(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fieldsToMergeOn: list[str]


class BasesService(Service):
    """Airtable: bases of tables with typed fields, records, formulas, sorting and upserts."""

    name = "bases"
    domain = "database"
    spec = "klavis_airtable.json"

    bases = Resource("bases", Base, label="base")
    tables = Resource("tables", Table, label="table")
    fields = Resource("fields", Field, label="field")
    records = Resource("records", Record, label="record")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_bases(self, ctx)

    # ---- schema -------------------------------------------------------------------
    def _check_field(self, spec: FieldSpec, table_id: str | None, where: str) -> dict[str, Any]:
        if not spec.name.strip():
            raise InvalidArguments(f"'{where}.name' must not be empty")
        if spec.type not in TYPES:
            raise InvalidArguments(
                f"'{where}.type' {spec.type!r} is not supported; use one of {', '.join(sorted(TYPES))}",
                type="INVALID_FIELD_TYPE",
            )
        options = dict(spec.options or {})
        if spec.type in ("singleSelect", "multipleSelects"):
            choices = options.get("choices")
            if not isinstance(choices, list) or not all(
                isinstance(c, dict) and c.get("name") for c in choices
            ):
                raise InvalidArguments(
                    f"'{where}.options.choices' must list {{name}} objects for a {spec.type} field"
                )
        if table_id and self.fields.find(lambda f: norm(f["name"]) == norm(spec.name), table_id=table_id):
            raise RuleViolation(
                f"a field named {spec.name!r} already exists", type="DUPLICATE_OR_EMPTY_FIELD_NAME"
            )
        return {
            "name": spec.name,
            "type": spec.type,
            "description": spec.description or "",
            "options": options,
        }

    def _create_table(
        self, base_id: str, name: str, description: str, fields: list[dict[str, Any]]
    ) -> dict[str, Any]:
        tid = "tbl" + self.next_id("", 14)
        made = []
        for k, f in enumerate(fields):
            spec = self._check_field(FieldSpec(**f), None, f"fields[{k}]")
            if any(norm(m["name"]) == norm(spec["name"]) for m in made):
                raise RuleViolation(
                    f"duplicate field name {spec['name']!r}", type="DUPLICATE_OR_EMPTY_FIELD_NAME"
                )
            made.append(self.fields.create({**spec, "table_id": tid}, id="fld" + self.next_id("", 14)))
        return self.tables.create(
            {"base_id": base_id, "name": name, "description": description, "primary_field_id": made[0]["id"]},
            id=tid,
        )

    def _table(self, base_id: str, table_id: str) -> dict[str, Any]:
        self.bases.require(base_id, "base_id")
        t = self.tables.get(table_id) or next(
            (t for t in self.tables.find(base_id=base_id) if norm(t["name"]) == norm(table_id)), None
        )
        if t is None or t["base_id"] != base_id:
            raise NotFound(f"table '{table_id}' not found in base {base_id}", type="TABLE_NOT_FOUND")
        return t

    def _table_view(self, t: dict[str, Any]) -> dict[str, Any]:
        fields = [
            {k: f[k] for k in ("id", "name", "type", "description", "options")}
            for f in sorted(self.fields.find(table_id=t["id"]), key=lambda f: f["id"])
        ]
        return {
            "id": t["id"],
            "name": t["name"],
            "description": t["description"],
            "primaryFieldId": t["primary_field_id"],
            "fields": fields,
        }

    # ---- values -------------------------------------------------------------------
    def _coerce(
        self, f: dict[str, Any], value: Any, typecast: bool, where: str
    ) -> tuple[Any, dict[str, Any] | None]:
        """Checked value for field f, and the field's new options if typecast added a choice."""
        t, bad = (
            f["type"],
            InvalidArguments(
                f"'{where}': value {value!r} is not valid for {f['type']} field {f['name']!r}",
                type="INVALID_VALUE_FOR_COLUMN",
            ),
        )
        if value is None:
            return None, None
        if t in ("number", "currency", "percent"):
            if isinstance(value, bool):
                raise bad
            if isinstance(value, str) and typecast:
                try:
                    return float(value.replace(",", "").replace("$", "")), None
                except ValueError:
                    raise bad from None
            if not isinstance(value, int | float):
                raise bad
            return float(value), None
        if t == "checkbox":
            if isinstance(value, str) and typecast:
                return value.strip().lower() in ("true", "yes", "1", "checked"), None
            if not isinstance(value, bool):
                raise bad
            return value, None
        if t in ("singleSelect", "multipleSelects"):
            vals = value if t == "multipleSelects" else [value]
            if not isinstance(vals, list) or not all(isinstance(v, str) and v.strip() for v in vals):
                raise bad
            names = [c["name"] for c in f["options"].get("choices", [])]
            new = [v for v in vals if v not in names]
            if new and not typecast:
                raise InvalidArguments(
                    f"'{where}': {new[0]!r} is not a choice of {f['name']!r} ({', '.join(names)}); pass typecast=true to add it",
                    type="INVALID_MULTIPLE_CHOICE_OPTIONS",
                )
            opts = (
                {
                    **f["options"],
                    "choices": [*f["options"].get("choices", []), *({"name": v} for v in dict.fromkeys(new))],
                }
                if new
                else None
            )
            return (vals if t == "multipleSelects" else vals[0]), opts
        if not isinstance(value, str):
            if typecast and isinstance(value, int | float) and not isinstance(value, bool):
                value = str(value)
            else:
                raise bad
        if t == "email" and value and not valid_email(value):
            raise bad
        if t == "date" and value and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise bad
        if t == "url" and value and not re.match(r"^https?://", value):
            raise bad
        return value, None

    def _encode(self, t: dict[str, Any], given: dict[str, Any], typecast: bool, where: str) -> dict[str, Any]:
        by_name = {f["name"]: f for f in self.fields.find(table_id=t["id"])}
        by_id = {f["id"]: f for f in by_name.values()}
        out = {}
        for key, value in given.items():
            f = by_id.get(key) or by_name.get(key)
            if f is None:
                raise InvalidArguments(
                    f"'{where}': unknown field name {key!r}; fields: {', '.join(sorted(by_name))}",
                    type="UNKNOWN_FIELD_NAME",
                )
            v, opts = self._coerce(f, value, typecast, f"{where}.{key}")
            if opts is not None:
                f = self.fields.update(f["id"], {"options": opts})
                by_name[f["name"]] = by_id[f["id"]] = f
            out[f["id"]] = v
        return out

    def _view(self, rec: dict[str, Any], by_id: bool, only: list[str] | None = None) -> dict[str, Any]:
        names = {f["id"]: f["name"] for f in self.fields.find(table_id=rec["table_id"])}
        fields = {
            (fid if by_id else names.get(fid, fid)): v
            for fid, v in rec["fields"].items()
            if v not in (None, "", [], False)
        }
        if only:
            fields = {k: v for k, v in fields.items() if k in only}
        return {"id": rec["id"], "createdTime": rec["createdTime"], "fields": fields}

    def _named(self, rec: dict[str, Any]) -> dict[str, Any]:
        names = {f["id"]: f["name"] for f in self.fields.find(table_id=rec["table_id"])}
        return {names.get(k, k): v for k, v in rec["fields"].items()}

    # ---- tools --------------------------------------------------------------------
    @tool
    def airtable_list_bases_info(self) -> list[dict[str, Any]]:
        """List the bases the user can access."""
        return [
            {"id": b["id"], "name": b["name"], "permissionLevel": "create"}
            for b in sorted(self.bases.all(), key=lambda b: b["name"])
        ]

    @tool
    def airtable_list_tables_info(self, base_id: str) -> list[dict[str, Any]]:
        """List the tables of a base with their fields.

        Args:
            base_id: ID of the base.
        """
        self.bases.require(base_id, "base_id")
        return [
            self._table_view(t) for t in sorted(self.tables.find(base_id=base_id), key=lambda t: t["name"])
        ]

    @tool(mutates=True)
    def airtable_create_table(
        self, base_id: str, name: str, fields: list[FieldSpec], description: str | None = None
    ) -> dict[str, Any]:
        """Create a new table in a base; the first field is the primary field.

        Args:
            base_id: ID of the base to create the table in.
            name: Name of the new table (unique in the base).
            fields: Field objects: name, type, optional description and options.
            description: Optional description of the table.
        """
        self.bases.require(base_id, "base_id")
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if self.tables.find(lambda t: norm(t["name"]) == norm(name), base_id=base_id):
            raise RuleViolation(
                f"a table named {name!r} already exists in this base", type="DUPLICATE_TABLE_NAME"
            )
        if not fields:
            raise InvalidArguments("'fields' must hold at least one field")
        return self._table_view(
            self._create_table(base_id, name, description or "", [f.model_dump() for f in fields])
        )

    @tool(mutates=True)
    def airtable_update_table(
        self, base_id: str, table_id: str, name: str | None = None, description: str | None = None
    ) -> dict[str, Any]:
        """Rename a table or change its description.

        Args:
            base_id: ID of the base.
            table_id: ID of the table.
            name: New name.
            description: New description.
        """
        t = self._table(base_id, table_id)
        if name is not None:
            if not name.strip():
                raise InvalidArguments("'name' must not be empty")
            if self.tables.find(
                lambda x: x["id"] != t["id"] and norm(x["name"]) == norm(name), base_id=base_id
            ):
                raise RuleViolation(f"a table named {name!r} already exists", type="DUPLICATE_TABLE_NAME")
        changes = {k: v for k, v in {"name": name, "description": description}.items() if v is not None}
        if not changes:
            raise InvalidArguments("give 'name' or 'description'")
        return self._table_view(self.tables.update(t["id"], changes))

    @tool(mutates=True)
    def airtable_create_field(
        self,
        base_id: str,
        table_id: str,
        name: str,
        type: str,
        description: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a new field in a table.

        Args:
            base_id: ID of the base.
            table_id: ID of the table.
            name: Name of the new field.
            type: Field type (singleLineText, number, singleSelect, checkbox, date, email, ...).
            description: Optional description.
            options: Type-specific options (e.g. {"choices": [{"name": "A"}]} for selects).
        """
        t = self._table(base_id, table_id)
        spec = self._check_field(
            FieldSpec(name=name, type=type, description=description, options=options), t["id"], "field"
        )
        return self.fields.create({**spec, "table_id": t["id"]}, id="fld" + self.next_id("", 14))

    @tool(mutates=True)
    def airtable_update_field(
        self,
        base_id: str,
        table_id: str,
        field_id: str,
        name: str | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Rename a field or change its description.

        Args:
            base_id: ID of the base.
            table_id: ID of the table.
            field_id: ID of the field.
            name: New name.
            description: New description.
        """
        t = self._table(base_id, table_id)
        f = self.fields.require(field_id, "field_id")
        if f["table_id"] != t["id"]:
            raise NotFound(f"field {field_id} is not in table {table_id}", type="FIELD_NOT_FOUND")
        if name is not None and (
            not name.strip()
            or self.fields.find(
                lambda x: x["id"] != field_id and norm(x["name"]) == norm(name), table_id=t["id"]
            )
        ):
            raise RuleViolation(
                f"field name {name!r} is empty or already used", type="DUPLICATE_OR_EMPTY_FIELD_NAME"
            )
        changes = {k: v for k, v in {"name": name, "description": description}.items() if v is not None}
        if not changes:
            raise InvalidArguments("give 'name' or 'description'")
        return self.fields.update(field_id, changes)

    @tool
    def airtable_list_records(
        self,
        base_id: str,
        table_id: str,
        fields: list[str] | None = None,
        filter_by_formula: str | None = None,
        max_records: int | None = None,
        page_size: int = 100,
        sort: list[SortSpec] | None = None,
        return_fields_by_field_id: bool = False,
        offset: str | None = None,
    ) -> dict[str, Any]:
        """Get records of a table, with optional field selection, formula filter (e.g. "AND({Status} = 'Active', {ARR} > 50000)"), sorting and paging.

        Args:
            base_id: ID of the base.
            table_id: ID or name of the table.
            fields: Field names to include.
            filter_by_formula: Formula records must satisfy.
            max_records: Maximum records in total (max 100).
            page_size: Records per page (1-100).
            sort: Sort objects: field and direction.
            return_fields_by_field_id: Key fields by id instead of name.
            offset: Offset token of the next page.
        """
        t = self._table(base_id, table_id)
        check_limit(page_size, "page_size", 1, 100)
        if max_records is not None:
            check_limit(max_records, "max_records", 1, 100)
        names = {f["name"] for f in self.fields.find(table_id=t["id"])}
        for f in [*(fields or []), *(s.field for s in sort or [])]:
            if f not in names:
                raise InvalidArguments(f"unknown field name {f!r}", type="UNKNOWN_FIELD_NAME")
        recs = sorted(self.records.find(table_id=t["id"]), key=lambda r: (r["createdTime"], r["id"]))
        if filter_by_formula:
            try:
                pred = compile_formula(filter_by_formula)
            except (ValueError, IndexError) as e:
                raise InvalidArguments(
                    f"'filter_by_formula' is invalid: {e}", type="INVALID_FILTER_BY_FORMULA"
                ) from None
            recs = [r for r in recs if pred(self._named(r))]
        for s in reversed(sort or []):
            recs.sort(
                key=lambda r, s=s: (
                    (self._named(r).get(s.field) is None, str(self._named(r).get(s.field) or ""))
                    if not isinstance(self._named(r).get(s.field), int | float)
                    else (False, float(self._named(r)[s.field]))
                ),
                reverse=s.direction == "desc",
            )
        if max_records is not None:
            recs = recs[:max_records]
        page, nxt = paginate(recs, offset, page_size, "offset")
        return {"records": [self._view(r, return_fields_by_field_id, fields) for r in page], "offset": nxt}

    @tool
    def airtable_get_record(self, base_id: str, table_id: str, record_id: str) -> dict[str, Any]:
        """Get one record.

        Args:
            base_id: ID of the base.
            table_id: ID or name of the table.
            record_id: ID of the record.
        """
        t = self._table(base_id, table_id)
        r = self.records.get(record_id)
        if r is None or r["table_id"] != t["id"]:
            raise NotFound(f"record {record_id} not found in table {t['name']}", type="NOT_FOUND")
        return self._view(r, False)

    @tool(mutates=True)
    def airtable_create_records(
        self,
        base_id: str,
        table_id: str,
        records: list[NewRecord],
        typecast: bool = False,
        return_fields_by_field_id: bool = False,
    ) -> dict[str, Any]:
        """Create up to 10 records; each is {"fields": {field name: value}}.

        Args:
            base_id: ID of the base.
            table_id: ID or name of the table.
            records: Records to create (1-10).
            typecast: Convert strings to the field types and add new select choices.
            return_fields_by_field_id: Key fields by id in the result.
        """
        t = self._table(base_id, table_id)
        if not 1 <= len(records) <= MAX_BATCH:
            raise InvalidArguments(f"'records' must hold 1 to {MAX_BATCH} records", type="INVALID_RECORDS")
        made = [
            self.records.create(
                {
                    "table_id": t["id"],
                    "fields": self._encode(t, r.fields, typecast, f"records[{k}].fields"),
                    "createdTime": self.clock.iso(),
                },
                id="rec" + self.next_id("", 14),
            )
            for k, r in enumerate(records)
        ]
        return {"records": [self._view(r, return_fields_by_field_id) for r in made]}

    @tool(mutates=True)
    def airtable_update_records(
        self,
        base_id: str,
        table_id: str,
        records: list[RecordUpdate],
        typecast: bool = False,
        return_fields_by_field_id: bool = False,
        perform_upsert: Upsert | None = None,
    ) -> dict[str, Any]:
        """Update up to 10 records ({id, fields}); with perform_upsert, records without id are matched on fieldsToMergeOn and created if none matches.

        Args:
            base_id: ID of the base.
            table_id: ID or name of the table.
            records: Records to update (1-10).
            typecast: Convert strings to the field types.
            return_fields_by_field_id: Key fields by id in the result.
            perform_upsert: {"fieldsToMergeOn": [field names]}.
        """
        t = self._table(base_id, table_id)
        if not 1 <= len(records) <= MAX_BATCH:
            raise InvalidArguments(f"'records' must hold 1 to {MAX_BATCH} records", type="INVALID_RECORDS")
        out, created = [], []
        for k, r in enumerate(records):
            enc = self._encode(t, r.fields, typecast, f"records[{k}].fields")
            if r.id is None:
                if perform_upsert is None:
                    raise InvalidArguments(f"'records[{k}].id' is required unless perform_upsert is given")
                keys = perform_upsert.fieldsToMergeOn
                if not keys or any(key not in r.fields for key in keys):
                    raise InvalidArguments(f"'records[{k}].fields' must hold every field in fieldsToMergeOn")
                probe = {key: r.fields[key] for key in keys}
                hits = [
                    x
                    for x in self.records.find(table_id=t["id"])
                    if all(_same(self._named(x).get(kk), vv) for kk, vv in probe.items())
                ]
                if len(hits) > 1:
                    raise RuleViolation(
                        f"records[{k}] matches {len(hits)} records; fieldsToMergeOn must identify one",
                        type="INVALID_UPSERT",
                    )
                if not hits:
                    rec = self.records.create(
                        {"table_id": t["id"], "fields": enc, "createdTime": self.clock.iso()},
                        id="rec" + self.next_id("", 14),
                    )
                    created.append(rec["id"])
                    out.append(rec)
                    continue
                target = hits[0]
            else:
                target = self.records.get(r.id)
                if target is None or target["table_id"] != t["id"]:
                    raise NotFound(f"record {r.id} not found in table {t['name']}", type="NOT_FOUND")
            out.append(self.records.update(target["id"], {"fields": {**target["fields"], **enc}}))
        return {"records": [self._view(r, return_fields_by_field_id) for r in out], "createdRecords": created}

    @tool(mutates=True)
    def airtable_delete_records(self, base_id: str, table_id: str, record_ids: list[str]) -> dict[str, Any]:
        """Delete up to 10 records (all must exist, or nothing is deleted).

        Args:
            base_id: ID of the base.
            table_id: ID or name of the table.
            record_ids: IDs of the records (1-10).
        """
        t = self._table(base_id, table_id)
        if not 1 <= len(record_ids) <= MAX_BATCH:
            raise InvalidArguments(f"'record_ids' must hold 1 to {MAX_BATCH} ids")
        for rid in record_ids:
            r = self.records.get(rid)
            if r is None or r["table_id"] != t["id"]:
                raise NotFound(f"record {rid} not found in table {t['name']}", type="NOT_FOUND")
        for rid in dict.fromkeys(record_ids):
            self.records.delete(rid)
        return {"records": [{"id": rid, "deleted": True} for rid in dict.fromkeys(record_ids)]}


def _same(a: Any, b: Any) -> bool:
    return norm(a) == norm(b) if isinstance(a, str) and isinstance(b, str) else a == b
