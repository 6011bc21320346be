"""Workflow families over compiled services, derived from each manifest's resources.

A compiled service (`spec.compiler`) has resources: typed tables with the spec's own tools to create,
list, get, update and move them through states. Where a resource can be created and found (a compiled
`create` and a compiled `list`, probed for real on a seeded copy of the service) it gets the work a
person asks a colleague for, through the same `Builder` as the hand-built families (so its tasks get
grounded references, traps, guards, collateral checks and the adversarial gate). Their traps are
planted so that a solver that skips what it must read fails: the namesake (the colleague's copy of
the record, or a person with the colleague's first name) carries the instruction's words; the
newest and the oldest records are traps (the record asked about is neither); only the colleague's
email names the target. Values fit their fields
(`_fieldvalues`):

- `lookup_reply`: a colleague emails for one field of a record ("what's the due date on the Harbor
  Health renewal?"); find the open record among a closed copy, a near-duplicate and a namesake,
  and reply with it;
- `update_from_email`: a colleague asks to change a field (or the status, where the spec has a
  transition or an enum) of a record; change that one, not its closed copy, and confirm;
- `record_request`: a colleague asks for a record with a value "unless one exists"; an open one does
  (beside a duplicate closed months ago and look-alikes), so update it rather than duplicate it, and
  reply with its id (a task where none existed would pass an agent that creates without looking);
- `total_reply`: a colleague asks for the total of a numeric field over one customer's open records,
  found with the list's own search; closed records and other customers' are left out.

Each is registered per compiled service as `compiled.<service>.<kind>` with the service's work
domain from the corpus (`spec.domains`), so `--families compiled` or a `--services` pool of compiled
services draws them (`tasks.generator.eligible_families`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from typing import Any

import jsonschema

from compoworld.compiler.compiler import LIMIT_PARAMS, QUERY_PARAMS, norm
from compoworld.compiler.values import NoValue, valid_args
from compoworld.core.clock import format_time
from compoworld.core.company import Customer, Person
from compoworld.core.envelope import ToolError
from compoworld.tasks.families._common import rows
from compoworld.tasks.families._compiled_mail import (  # noqa: F401 (ACRONYMS, TLDS: kept importable here)
    ACRONYMS,
    TLDS,
    _colleague,
    _probe_world,
    _read_request,
    _reply,
    display,
)
from compoworld.tasks.families._compiled_mail import _mail as _send_in
from compoworld.tasks.families._fieldvalues import draw, kind_of
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import DOMAINS, Builder, Family, PlantError


def _mail(b: Builder, sender: Person, subject: str, body: str, hours_ago: float) -> dict[str, Any]:
    """The colleague's request, naming the scope the list needs where it has one (`_setup`)."""
    note = getattr(b, "_compiled_note", "")
    if note and "\n\nThanks," in body:
        head, _, tail = body.partition("\n\nThanks,")
        body = f"{head} {note}\n\nThanks,{tail}"
    return _send_in(b, sender, subject, body, hours_ago)


LABELS = ("name", "title", "subject", "displayname", "fullname", "label", "summary", "heading")
KEYS = ("alias", "slug", "handle", "code", "key", "identifier")
PERSONS = {
    "contact",
    "person",
    "employee",
    "user",
    "member",
    "candidate",
    "applicant",
    "attendee",
    "participant",
    "subscriber",
    "lead",
    "worker",
    "staff",
    "recipient",
}
# person records of our own people (an HR or admin directory), not of customers' contacts
STAFF = {"employee", "staff", "worker", "user", "member", "teammate"}
# the ages of the plants, in days: the namesake is newer than the record asked about (2-3 days), the
# near-duplicate and a closed duplicate older, so neither the latest nor the long-standing record wins
TARGET_DAYS = (9, 12, 16, 21, 30)
OLDER_DAYS = (45, 80, 140)
CLOSED_DAYS = (150, 240, 400)
ORGS = {
    "company",
    "customer",
    "account",
    "organization",
    "organisation",
    "client",
    "vendor",
    "supplier",
    "partner",
}
PURPOSES = (
    "renewal",
    "onboarding",
    "migration",
    "pilot",
    "expansion",
    "integration",
    "rollout",
    "audit",
    "launch",
    "quarterly review",
)
OPEN = ("open", "active", "new", "pending", "in_progress", "todo", "draft", "enabled", "published")
CLOSED = (
    "closed",
    "archived",
    "cancelled",
    "canceled",
    "inactive",
    "completed",
    "done",
    "deleted",
    "resolved",
)
# boolean fields that mark a record as stale when true (or, for the second set, when false)
STALE_TRUE = ("archived", "isarchived", "closed", "isclosed", "deleted", "isdeleted", "inactive")
STALE_FALSE = ("active", "isactive", "enabled", "isenabled")
NOT_VALUES = ("createdat", "updatedat", "modifiedat", "deletedat", "lastmodified", "created", "updated")


# ---- what a manifest offers --------------------------------------------------------------------
@dataclass(frozen=True)
class Res:
    """One resource of a compiled service, with the tools and fields its families use."""

    service: str
    resource: str
    table: str
    noun: str
    label: str
    label_kind: str  # "label" (a name) or "key" (a slug)
    lister: dict[str, Any]
    search: str | None  # the lister's free-text search parameter, if it has one
    create: dict[str, Any] | None
    updater: dict[str, Any] | None
    transitions: tuple[dict[str, Any], ...]
    status: str | None  # the field that says a record is open or closed
    status_values: tuple[Any, Any] | None  # (open value, closed value)
    values: tuple[tuple[str, str, str], ...]  # (field, kind, json type) a request can carry
    create_fields: frozenset[str]
    update_fields: frozenset[str]
    parents: tuple[tuple[str, str], ...]  # (field, parent resource)
    enums: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # field -> allowed values (update)
    value_enums: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # value field -> its enum
    # a person known by two fields (first_name + last_name): `label` holds the first, `label2` the rest
    label2: str | None = None
    person: bool = False  # its records are people (by its noun, or a name in two fields, or an address)
    staff: bool = False  # the people are our own (an HR or admin directory, a workspace's members)
    # the tools that take one record's id (get, update, delete, a transition): where there are some, a
    # record's id is something people use, and ask a colleague for
    id_tools: tuple[str, ...] = ()
    # the list's required filters on a record field (a WordPress `site`, a memory's `project_name`):
    # the request names the scope, every planted record is in it, and the list is called with it
    scopes: tuple[tuple[str, str], ...] = ()  # (param, json type)
    # the list's required parent (a workspace, a base, a wallet): the colleague names its id, which
    # every planted record carries (param, record field, parent resource)
    parent_scope: tuple[str, str, str] | None = None


def words(name: str) -> str:
    """`deal_note`, `dealNote`, `deal-note` -> `deal note`."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-.]+", " ", s).strip().lower()


# resource names a compiler draws from a read's verb or qualifier (`get_full_address` -> "full",
# `find_similar` -> "similar", `get_status`), not from a thing a person keeps records of: a request
# calls such a record "record" ("the location on the record ..."), never "the location of a full"
NOT_NOUNS = {"full", "similar", "free", "local", "semantic", "hybrid", "remote", "smart", "partial"}
NOT_NOUNS |= {"fini", "sent", "validate", "reverse", "lookup", "download", "authorize", "blocking"}
NOT_NOUNS |= {"confidence", "count", "status", "metadata", "overview", "trend", "latency", "rate"}
NOT_NOUNS |= {"health", "usage", "summary", "stat", "info", "data", "detail", "result", "response"}
NOT_NOUNS |= {"output", "evm", "exa", "error", "bypass"}
# a path's verb glued to its object (`/getcitystandard`, `/numberinsightbasic`)
GLUED = re.compile(r"(?:get|list|fetch|search|find|lookup|create|update|delete|numberinsight)[a-z]{4,}")


def noun_of(rname: str) -> str:
    """What a person calls a resource's records: its words, or "record" where they name no thing."""
    w = words(rname)
    return "record" if w in NOT_NOUNS or GLUED.fullmatch(w.replace(" ", "")) else w


def _props(tool: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record fields a write tool can set: its own parameters and those of its nested body."""
    props = dict(tool["input_schema"].get("properties", {}))
    for wrapper in tool["op"].get("nested", ()):
        inner = (props.get(wrapper) or {}).get("properties") or {}
        props.update({k: v for k, v in inner.items() if k not in props})
    return props


PERSON_LABELS = ("name", "fullname", "displayname", "contactname", "employeename", "membername")
NOT_NAMES = ("firstname", "lastname", "middlename", "username", "filename", "hostname", "nickname")
FIRSTS = ("firstname", "givenname", "forename")
LASTS = ("lastname", "familyname", "surname")
# the handle or address a person's record is known by where it stores no name
PERSON_KEYS = ("username", "login", "handle")
EMAILS = ("email", "emailaddress")


def _two_names(texty: list[str]) -> tuple[str, str] | None:
    """(first-name field, last-name field) where a record stores a person's name in two fields."""
    first = next((f for f in texty if norm(f) in FIRSTS), None)
    last = next((f for f in texty if norm(f) in LASTS), None)
    return (first, last) if first and last else None


def _label(
    fields: dict[str, str],
    person: bool = False,
    enums: frozenset[str] | set[str] = frozenset(),
    formats_not_text: frozenset[str] | set[str] = frozenset(),
) -> tuple[str, str, str | None] | None:
    """(the field a record is known by, how: "label" a name, "key" a slug, "email" an address; the
    second field of a name kept in two). A person is known by a name (never a `title`: a person's
    title is their job title), in one field or two (first + last), else by a username or address."""
    texty = [f for f, t in fields.items() if t in ("string", "any")]
    if person:
        for want in PERSON_LABELS:
            for f in texty:
                if norm(f) == want:
                    return f, "label", None
        for f in texty:
            n = norm(f)
            if n.endswith("name") and n not in NOT_NAMES and not n.endswith(("companyname", "orgname")):
                return f, "label", None
        two = _two_names(texty)
        if two:
            return two[0], "label", two[1]
        for want in PERSON_KEYS:
            for f in texty:
                if norm(f) == want:
                    return f, "key", None
        for f in texty:
            if norm(f) in EMAILS:
                return f, "email", None
        return None
    for want in LABELS:
        for f in texty:
            if norm(f) == want:
                return f, "label", None
    for f, t in fields.items():
        n = norm(f)
        if t == "string" and n.endswith(("name", "title")) and n not in (*NOT_NAMES, "jobtitle"):
            return f, "label", None
    for want in KEYS:
        for f in texty:
            if norm(f) == want:
                return f, "key", None
    free = [f for f in texty if f not in enums and f not in formats_not_text]
    for f in free:  # an invoice number, an order reference, a product code
        n = norm(f)
        if n.endswith("number") and n not in ("phonenumber", "faxnumber") or n in CODE_LABELS:
            return f, "key", None
    for f in free:  # a page or a file known by its address
        if norm(f) in URL_LABELS:
            return f, "url", None
    for want in TEXT_LABELS:  # a record no name names: what people call it by (a team, a model)
        for f in free:
            if norm(f) == want:
                return f, "label", None
    return None


CODE_LABELS = ("code", "reference", "ref", "sku", "ordernumber", "invoicenumber", "externalid")
URL_LABELS = ("url", "uri", "link", "website", "homepage", "permalink", "path", "filepath")
TEXT_LABELS = ("model", "team", "location", "topic", "domain", "hostname", "symbol", "channel", "keyword")
TEXT_LABELS += ("term", "address", "project", "repository", "repo", "site", "brand", "program", "course")


def _person_label(fields: dict[str, str]) -> tuple[str, str, str | None] | None:
    """A record no noun says is a person, but that stores one: a name in two fields (a dependent),
    or a membership or invitation known only by a person's username or address."""
    texty = [f for f, t in fields.items() if t in ("string", "any")]
    if _two_names(texty) or any(norm(f) in (*PERSON_KEYS, *EMAILS) for f in texty):
        return _label(fields, person=True)
    return None


def _is_person(noun: str) -> bool:
    head = noun.split()[-1] if noun else ""
    return head in PERSONS or (head.endswith("s") and head[:-1] in PERSONS)


def _is_staff(noun: str) -> bool:
    head = noun.split()[-1] if noun else ""
    return head in STAFF or (head.endswith("s") and head[:-1] in STAFF)


def _status(
    r: dict[str, Any],
    tools: list[dict[str, Any]],
    moved: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[str, tuple[Any, Any]] | None:
    """The field that says a record is open or closed, with its (open, closed) values, only where the
    spec has one: a `status` (its enum's own words), a `state` or `stage` that an enum or a transition
    says is one (never a postal `state` of an address), or a stale flag (`archived`, `active`)."""
    fields = r["fields"]
    for f, t in fields.items():
        n = norm(f)
        if n in ("status", "state", "stage") and t in ("string", "any"):
            allowed: list[Any] = [v for v in (r.get("enums") or {}).get(f) or [] if isinstance(v, str)]
            for tool in tools:
                s = _props(tool).get(f) or {}
                allowed += [v for v in s.get("enum") or [] if isinstance(v, str)]
            if not allowed:
                if n != "status" and f not in moved:
                    continue  # a free-text `state` (an address's) is no open/closed state
                return f, ("open", "closed")
            lo = {str(v).lower(): v for v in allowed}
            o = next((lo[v] for v in OPEN if v in lo), None)
            c = next((lo[v] for v in CLOSED if v in lo), None)
            return (f, (o, c)) if o is not None and c is not None else None
    for f, t in fields.items():
        if t == "boolean" and norm(f) in STALE_TRUE:
            return f, (False, True)
        if t == "boolean" and norm(f) in STALE_FALSE:
            return f, (True, False)
    return None


# API switches a spec stores beside the record: no person asks what they are
NOT_ASKED = ("responseformat", "sendupdates", "sendnotifications", "notify", "format", "output", "verbose")
# nor a person's gender: no colleague emails to ask about or change it
NOT_ASKED += ("gender", "sex")


def resources_of(cls: Any) -> list[Res]:
    """The resources of a compiled service class that can be listed (from its manifest); the families
    that make records check for a create themselves."""
    return [
        r
        for r in (resource_of(cls, rname, need_create=False) for rname in sorted(cls.manifest["resources"]))
        if isinstance(r, Res)
    ]


def resource_of(cls: Any, rname: str, need_create: bool = True) -> Res | str:
    """One resource as the families see it, or why it has none (`no_create`, `no_list`, `no_label_field`)."""
    m = cls.manifest
    r = m["resources"][rname]
    tools = [t for t in m["tools"] if t["status"] == "compiled" and t["op"].get("resource") == rname]
    listers = [t for t in tools if t["op"]["kind"] == "list"]
    creates = [t for t in tools if t["op"]["kind"] == "create"]
    if need_create and not creates:
        return "no_create"
    if not listers:
        return "no_list"
    if not creates and all(_info_read(t) for t in listers):
        # `get_company_info()`: one record about the account, not a collection to plant records in
        return "info_record"
    person = _is_person(words(rname))
    # a field with an enum or a date/uuid format holds no label a request could name
    enums = set(r.get("enums") or {})
    formats = {f for f, fmt in (r.get("formats") or {}).items() if fmt in ("date", "date-time", "uuid")}
    lab = _label(r["fields"], person=person, enums=enums, formats_not_text=formats)
    if lab is None and not person:
        lab = _person_label(r["fields"])
        person = lab is not None
        # a membership or invitation of a workspace is of our own people
        staff = person and lab is not None and lab[2] is None
    else:
        staff = _is_staff(words(rname))
    if lab is None:
        return "no_label_field"

    def searchable(t: dict[str, Any]) -> str | None:
        props = t["input_schema"].get("properties", {})
        return next(
            (p for p in props if norm(p) in QUERY_PARAMS and props[p].get("type", "string") == "string"),
            None,
        )

    listers.sort(key=lambda t: (searchable(t) is None, len(t["input_schema"].get("required", []))))
    lister = listers[0]
    create = next((t for t in creates if {lab[0], lab[2] or lab[0]} <= set(_props(t))), None)
    writes = [t for t in tools if t["op"]["kind"] in ("create", "update")]
    moved = {t["op"].get("field") for t in tools if t["op"]["kind"] == "transition"}
    status = _status(r, writes, moved)
    updaters = [t for t in tools if t["op"]["kind"] == "update" and t["op"].get("id_param")]
    updater = max(updaters, key=lambda t: len(_props(t)), default=None)
    trans = tuple(
        t
        for t in tools
        if t["op"]["kind"] == "transition"
        and status is not None
        and t["op"].get("field") == status[0]
        and "value" in t["op"]
        and t["op"]["value"] != status[1][0]
    )
    parents = tuple(sorted((cls.refs.get(rname) or {}).items()))
    skip = {lab[0], *([lab[2]] if lab[2] else []), *(f for f, _ in parents), *([status[0]] if status else [])}
    # the spec's own vocabulary of each field (every writer's enum, or a read's filter enum)
    value_enums: dict[str, tuple[Any, ...]] = {f: tuple(e) for f, e in (r.get("enums") or {}).items()}
    for t in writes:
        for f, sch in _props(t).items():
            if f in r["fields"] and isinstance(sch, dict) and sch.get("enum"):
                value_enums.setdefault(f, tuple(sch["enum"]))
    values = tuple(
        (f, k, t)
        for f, t in sorted(r["fields"].items())
        if f not in skip and norm(f) not in NOT_ASKED and (k := kind_of(f, t, value_enums.get(f)))
    )
    enums: dict[str, tuple[Any, ...]] = {}
    if updater is not None:
        for f, s in _props(updater).items():
            if f in r["fields"] and isinstance(s, dict) and s.get("enum"):
                enums[f] = tuple(s["enum"])
    return Res(
        service=cls.name,
        resource=rname,
        table=r["table"],
        noun=noun_of(rname),
        label=lab[0],
        label_kind=lab[1],
        lister=lister,
        search=searchable(lister),
        create=create,
        updater=updater,
        transitions=trans,
        status=status[0] if status else None,
        status_values=status[1] if status else None,
        values=values,
        create_fields=frozenset(_props(create)) if create else frozenset(),
        update_fields=frozenset(_props(updater)) if updater else frozenset(),
        parents=parents,
        enums=enums,
        value_enums={f: e for f, e in value_enums.items() if any(f == x[0] for x in values)},
        label2=lab[2],
        person=person,
        staff=staff,
        id_tools=tuple(
            t["name"]
            for t in tools
            if t["op"]["kind"] in ("get", "update", "delete", "transition") and t["op"].get("id_param")
        ),
        scopes=_scopes(lister, r["fields"], searchable(lister), {lab[0], lab[2]}),
        parent_scope=_parent_scope(lister, m["resources"]),
    )


def _parent_scope(lister: dict[str, Any], resources: dict[str, Any]) -> tuple[str, str, str] | None:
    par = lister["op"].get("parent") or {}
    p, f, r = par.get("param"), par.get("field"), par.get("resource")
    if p and f and r in resources and p in lister["input_schema"].get("required", []):
        return p, f, r
    return None


def _scopes(
    lister: dict[str, Any], fields: dict[str, str], search: str | None, label: set[str | None]
) -> tuple[tuple[str, str], ...]:
    """The lister's required parameters that filter a record field of text (not its search, label,
    page size or an id): the scope a request names."""
    from compoworld.compiler.compiler import switch_param

    props = lister["input_schema"].get("properties", {})
    out = []
    for p in lister["input_schema"].get("required", []):
        sch = props.get(p) or {}
        t = sch.get("type", "string")
        n = norm(p)
        if p == search or p in label or p not in fields or n in LIMIT_PARAMS or switch_param(p, sch):
            continue
        if n.endswith("id") or n.endswith("ids") or t not in ("string", "array"):
            continue
        if "enum" in sch and not any(isinstance(v, str) for v in sch["enum"]):
            continue
        if t == "array" and (sch.get("items") or {}).get("type", "string") != "string":
            continue
        out.append((p, t))
    return tuple(out)


def _scope_values(b: Builder, res: Res, cust: Customer) -> dict[str, Any]:
    """A value per scope parameter, the same for every record the request is about."""
    out: dict[str, Any] = {}
    for p, t in res.scopes:
        kind = kind_of(p, "string")
        n, last = norm(p), words(p).split()[-1]
        slug = _slug(cust.name)
        sch = res.lister["input_schema"]["properties"][p]
        enum = [x for x in (sch.get("enum") or []) if isinstance(x, str)]
        raw = str(sch.get("description") or "")
        desc = raw.lower()
        if enum:  # a kind of record the list is asked for (a HubSpot property's object type)
            v: Any = b.pick(enum)
        elif kind and kind != "enum":
            v = draw(
                kind, "string", b.rng, b.now.date(), b.company.people, [c.domain for c in b.company.customers]
            )
        elif "url" in n or last in ("uri", "link", "scrape", "site", "website", "domain"):
            v = f"https://www.{cust.domain}/" if last != "site" else cust.domain
        elif "connection" in n or "dsn" in n:
            v = f"Server=sql.{cust.domain};Database={slug.replace('-', '_')}"
        elif last in ("path", "paths", "dir", "directory", "folder"):
            v = f"/data/{slug}"
        elif last in ("tag", "tags", "label", "labels"):  # a tag the team puts on work, not a customer slug
            v = b.pick(TAGS)
        elif last in ("cell", "range") or ("cell" in desc or "a1" in desc.split()) and last == "address":
            v = "A1:F20" if last == "range" else "B3"  # a spreadsheet's cell, in A1 notation
        elif last in ("status", "state"):
            v = "open"
        elif last in ORGISH:  # the customer's own workspace, organisation or owner
            v = slug
        elif (ex := _example(raw)) is not None:  # the spec's own example (a table, a dataset, a key)
            v = ex
        elif last == "name" and words(p).split()[0] in TECH_NAMES:  # an identifier, not a display name
            v = "sales" if words(p).split()[0] == "schema" else slug.replace("-", "_")
        elif last == "name":
            v = cust.name
        else:  # a project or a job no description gives an example of: the customer's
            v = slug
        out[p] = [v] if t == "array" else v
    return out


# objects whose names are identifiers (`pied_retail`), never a display name with spaces
TECH_NAMES = {"catalog", "schema", "table", "database", "db", "dataset", "index", "bucket", "namespace"}
TECH_NAMES |= {"cluster", "instance", "endpoint", "collection", "queue", "topic", "session", "model"}
# tags a team puts on the work it has in hand
TAGS = ("key-accounts", "renewals", "follow-up", "priority", "customer-success", "q3-planning")
# scopes that are the customer's own space (a workspace, an organisation, an owner)
ORGISH = ("org", "organization", "organisation", "workspace", "owner", "company", "team", "tenant")
ORGISH += ("account", "federation")


def _example(desc: str) -> str | None:
    """The value a parameter's description gives as its example or first choice ("e.g. 'PROJ'",
    "for example B3", "(hdris, textures, models, all)", "increase | decrease"), else None."""
    m = re.search(
        r"(?:e\.g\.|for example|such as|one of)[,:]?\s*[(\[]?\s*[\"'`]+([^\"'`]{1,40})[\"'`]", desc, re.I
    )
    m = m or re.search(r"(?:e\.g\.|for example)[,:]?\s*([A-Za-z0-9][\w./:-]{0,39})", desc, re.I)
    m = m or re.search(r"\b([a-z][\w-]{0,30}) \| [a-z]", desc)
    m = m or re.search(r"\(([a-z][\w-]{0,30}), [a-z][\w-]*(?:, [a-z][\w-]*)+\)", desc)
    v = m.group(1).strip().rstrip(".") if m else ""
    return v if v and not v.lower().startswith(("http", "/", "yyyy")) and "<" not in v else None


def _scope_note(res: Res, scope: dict[str, Any]) -> str:
    """The request's sentence naming the scope: `It's under site "oscorp-retail-site".`"""
    parts = []
    for p, v in scope.items():
        w = words(p)
        v = v[0] if isinstance(v, list) else v
        if w in ("tags", "tag", "labels", "label"):
            parts.append(f'tagged "{v}"')
        elif w in ("sheet", "sheet name", "worksheet", "tab"):
            parts.append(f'on sheet "{v}"')
        elif w.split()[-1] in ("cell", "range", "address") and re.fullmatch(
            r"[A-Z]+\d+(:[A-Z]+\d+)?", str(v)
        ):
            parts.append(f"at {v}")  # a spreadsheet cell is where a value is, not a scope it is under
        else:
            parts.append(f'under {w} "{v}"')
    return f"It's {' and '.join(parts)}." if parts else ""


def _info_read(tool: dict[str, Any]) -> bool:
    """A read compiled as a list that takes nothing that picks among records (no filter, search,
    page or limit): an info call (`get_company_info`), not a collection."""
    from compoworld.compiler.compiler import switch_param

    props = tool["input_schema"].get("properties", {})
    return tool["op"].get("verb") not in ("list", "search", "find", "query", "browse") and not any(
        not switch_param(p, s) for p, s in props.items()
    )


def _lab(res: Res, rec: dict[str, Any]) -> str:
    """A record's label as a person says it (a name kept in two fields reads as one)."""
    first = str(rec.get(res.label) or "")
    return f"{first} {rec.get(res.label2) or ''}".strip() if res.label2 else first


def _lab_fields(res: Res, label: str) -> dict[str, Any]:
    """The record fields that hold `label` ("Ana Lopez" -> first_name Ana, last_name Lopez)."""
    if res.label2:
        first, _, last = label.partition(" ")
        return {res.label: first, res.label2: last}
    return {res.label: label}


def _lab_words(res: Res) -> str:
    return "name" if res.label2 else _human(res.label)


# ---- arguments an honest agent could write --------------------------------------------------------
def _typed(value: Any, schema: dict[str, Any]) -> Any:
    t = schema.get("type")
    if t == "integer" and str(value).isdigit():
        return int(value)
    if t == "array" and not isinstance(value, list):
        return [value]
    return value


def _set(tool: dict[str, Any], args: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """`args` with `name` set where the tool takes it: top level, its id wrapper, or its nested body."""
    props = tool["input_schema"].get("properties", {})
    if name in props:
        return {**args, name: _typed(value, props[name])}
    wrapper = (tool["op"].get("wrapped") or {}).get(name)
    if wrapper is None:
        wrapper = next(
            (
                w
                for w in tool["op"].get("nested", ())
                if name in ((props.get(w) or {}).get("properties") or {})
            ),
            None,
        )
    if wrapper is None:
        raise NoValue(f"{tool['name']} takes no '{name}'")
    box = args.get(wrapper)
    inner = (props.get(wrapper) or {}).get("properties") or {}
    if not isinstance(box, dict):  # a body the call did not need yet: with its own required values
        from compoworld.compiler.values import sample

        drawn = sample(props.get(wrapper) or {}, wrapper, random.Random(0))
        box = {
            k: _plain(None, v, k, inner.get(k, {}))
            for k, v in (drawn if isinstance(drawn, dict) else {}).items()
        }
    return {**args, wrapper: {**box, name: _typed(value, inner.get(name, {}))}}


_DIGITS = re.compile(r"[\d/@]+")
_ID_LIKE = re.compile(r"(^|_)(id|ids|key|gid|sku|number|no|ref|path|to|cc|bcc)$|Id$|ID$")


def _plain(
    b: Builder | None, value: Any, key: str, schema: dict[str, Any], fixed: dict[str, Any] | None = None
) -> Any:
    """A required value the agent could write without looking anything up (no ids, no invented codes);
    `fixed` gives the values of record fields the work itself decides (a label, the record's own)."""
    from compoworld.tasks.grounding import FREE_TEXT, LOOKUP, SIZING

    fixed = fixed or {}
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return {
            k: _typed(fixed[k], props.get(k, {})) if k in fixed else _plain(b, v, k, props.get(k, {}), fixed)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_plain(b, v, key, schema.get("items") or {}, fixed) for v in value]
    if isinstance(value, bool) or value is None or "enum" in schema or "const" in schema:
        return value
    k = key.lower()
    if isinstance(value, int | float):
        if _ID_LIKE.search(key) and k not in SIZING:
            raise NoValue(f"'{key}' names a record")
        return value if abs(value) < 1000 and value == int(value) else int(schema.get("minimum", 1))
    s = str(value)
    if "email" in k:
        if b is None:
            raise NoValue(f"'{key}' needs an address")
        return b.me.email
    if "phone" in k or k in ("mobile", "fax"):
        raise NoValue(f"'{key}' needs a number")
    if k in FREE_TEXT:
        return _DIGITS.sub("", s).strip() or "n/a"
    if (
        k in LOOKUP
        or _ID_LIKE.search(key)
        or schema.get("format") in ("uri", "url")
        or k.endswith(("url", "path"))
    ):
        raise NoValue(f"'{key}' names a record")
    return _DIGITS.sub("", s).strip() or "standard"


def _args(
    b: Builder, tool: dict[str, Any], keep: frozenset[str] = frozenset(), fixed: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The tool's required arguments, each one an honest agent could write (ids are set by the caller)."""
    svc = b.svc(tool["service"]) if "service" in tool else None
    base = valid_args(svc, tool, b.rng)
    props = tool["input_schema"].get("properties", {})
    op = tool["op"]
    fixed = {k: v for k, v in (fixed or {}).items() if k not in ("id", "created_at")}
    mine = {op.get("id_param"), *(op.get("wrapped") or {}).values(), *keep}
    out = {}
    for k, v in base.items():
        if k in fixed:
            out[k] = _typed(fixed[k], props.get(k, {}))
        else:
            out[k] = v if k in mine else _plain(b, v, k, props.get(k, {}), fixed)
    return out


def _valid(tool: dict[str, Any], args: dict[str, Any]) -> None:
    errors = list(jsonschema.Draft202012Validator(tool["input_schema"]).iter_errors(args))
    if errors:
        raise NoValue(f"{tool['name']}: {errors[0].message}")


def list_args(b: Builder, res: Res, query: str | None) -> dict[str, Any]:
    tool = {**res.lister, "service": res.service}
    scope = getattr(b, "_compiled_scope", {}).get(res.resource, {})
    fixed = {**({res.search: query} if res.search and query else {}), **scope}
    args = _args(b, tool, fixed=fixed or None)
    props = res.lister["input_schema"].get("properties", {})
    if res.search and query:
        args[res.search] = query
    for p, v in scope.items():
        args = _set(res.lister, args, p, v)
    bounds = res.lister["op"].get("bounds") or {}
    for p, s in props.items():
        if norm(p) in LIMIT_PARAMS and s.get("type") in ("integer", "number"):
            # the page size the spec allows: its schema's maximum, or the bound its description states
            caps = (100, s.get("maximum"), (bounds.get(p) or [None, None])[1])
            args[p] = int(min(x for x in caps if x is not None))
    _valid(res.lister, args)
    return args


# ---- planting ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subject:
    """Who a person record is about (its own address and phone are theirs)."""

    first: str
    last: str
    email: str
    phone: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


def _value(
    b: Builder,
    f: str,
    kind: str,
    jtype: str,
    res: Res,
    avoid: set[str],
    own: Subject | None = None,
) -> Any:
    """A value that fits the field (`_fieldvalues`), not yet used in this task; a person record's own
    email and phone are the person's."""
    if own is not None and kind in ("email", "phone") and res.person:
        v: Any = own.email if kind == "email" else own.phone
        if str(v) not in avoid:
            avoid.add(str(v))
            return v
    people = [p for p in b.company.people if p.id != b.me.id]
    domains = [c.domain for c in b.company.customers]
    first = getattr(avoid, "first", None)
    # the target's value is its own: no record the list shows beside it holds it (a seeded record of
    # a three-value enum would let a solver that picks any record answer right), and it is nobody's
    # address in the conversation (the colleague's own email is no value read from the service)
    held = (
        {str(r.get(f)) for r in b.svc(res.service).table(res.table).values() if r.get(f) is not None}
        if first is None
        else set()
    )
    held |= {str(x) for p in b.company.employees for x in (p.email, p.phone, p.name)}
    for i in range(80):
        v = draw(kind, jtype, b.rng, b.now.date(), people, domains, res.value_enums.get(f))
        if str(v) in held:
            continue
        # a small vocabulary (an enum of three) runs out: the decoys may share a value, never the target's
        if str(v) not in avoid or (i >= 50 and first is not None and str(v) != first):
            avoid.add(str(v))
            if first is None and isinstance(avoid, _Used):
                avoid.first = str(v)
            return str(v) if jtype in ("string", "any") and not isinstance(v, str) else v
    raise PlantError(f"no fresh value for {res.noun} {f} ({kind})")


class _Used(set):
    """The values a task has used; `first` is the target's (the one no decoy may repeat)."""

    first: str | None = None


def _label_value(res: Res, who: Customer | Person, purpose: str) -> str:
    if res.label_kind == "email" and isinstance(who, Person):
        return who.email
    base = who.name if isinstance(who, Person) else f"{who.name} {purpose}"
    if res.noun.split()[-1] in ORGS and not isinstance(who, Person):
        base = f"{who.name} ({purpose})"
    if res.label_kind == "key":
        return re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")
    if res.label_kind == "url":
        domain = who.domain if isinstance(who, Customer) else who.email.rsplit("@", 1)[-1]
        slug = re.sub(r"[^a-z0-9]+", "-", (purpose if isinstance(who, Customer) else base).lower()).strip("-")
        return f"https://{domain}/{slug}"
    return base


def _plant(
    b: Builder, res: Res, label: str, extra: dict[str, Any], closed: bool = False, days_ago: float = 10
) -> dict[str, Any]:
    """Insert one record as the service would have stored it (with a parent where it has one)."""
    svc = b.svc(res.service)
    rec: dict[str, Any] = {
        "id": svc.new_key(res.resource),
        "created_at": format_time(b.now - timedelta(days=days_ago)),
        **_lab_fields(res, label),
        **getattr(b, "_compiled_fields", {}).get(res.resource, {}),
        **extra,
    }
    if res.status:
        rec[res.status] = res.status_values[1 if closed else 0]  # type: ignore[index]
    for f, parent in res.parents:
        keys = sorted(svc.table(svc.manifest["resources"][parent]["table"]))
        if keys and f not in getattr(b, "_compiled_fields", {}).get(res.resource, {}):
            rec[f] = b.rng.choice(keys)
    fields = svc.manifest["resources"][res.resource]["fields"]
    for f in fields:  # a description, where the record has one, holds a working note (never its verdict)
        free = (
            norm(f) in ("description", "notes", "details") and f not in rec and fields[f] in ("string", "any")
        )
        if free and (kind := kind_of(f, "string")) is not None:
            people, domains = b.company.people, [c.domain for c in b.company.customers]
            rec[f] = draw(kind, "string", b.rng, b.now.date(), people, domains)
    svc.insert(res.table, rec)
    return rec


def _find(b: Builder, res: Res, query: str, label: str, want_open: bool = True) -> list[dict[str, Any]]:
    """The reference lists the resource (searching where the list can) and keeps the exact label's
    open records."""
    data = b.call(f"{res.service}__{res.lister['name']}", list_args(b, res, query))
    hits = [r for r in rows(data) if _lab(res, r).casefold() == label.casefold()]
    if res.status and want_open:
        hits = [r for r in hits if r.get(res.status) == res.status_values[0]]  # type: ignore[index]
    return hits


def _human(f: str) -> str:
    return words(f)


# why the record matters now: the work in hand this week. Where a closed copy shares the label, this
# is what a careful reader weighs against each copy's status and age; the request never says which
# copy to use, nor that one is closed (the world shows it)
NOW_WORK = (
    "We're working on it this week.",
    "It's on this week's agenda.",
    "It came up in this morning's stand-up.",
    "It's for what we have going right now.",
)


def _now_work(b: Builder) -> str:
    return b.say(*NOW_WORK)


def _on(field: str, noun: str) -> str:
    """How a field is asked of a record: "on the deal", "of the file" for what it holds, and "of" alone
    where the field repeats the noun (a Figma version's `version`): never "the version on the version"."""
    if set(field.split()) & set(noun.split()):
        return "of"
    return f"of the {noun}" if field.split()[-1] in HELD else f"on the {noun}"


# fields that are what a record holds (a file's content), asked "of" it rather than "on" it
HELD = ("content", "contents", "text", "body", "value", "data", "size", "length", "version", "code")


def _needs(field: str, noun: str) -> str:
    """`needs the due date of a deal`; `needs a version looked up` where the field repeats the noun."""
    if set(field.split()) & set(noun.split()):
        return f"needs {_an(field)} looked up"
    return f"needs the {field} of {_an(noun)}"


def _poss(name: str) -> str:
    """A company's possessive: Sterling Robotics' (not Robotics's), Helix Motors', Polar Energy's."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _still(res: Res) -> str:
    """The open state in the spec's own word, for a total over the records still in play."""
    v = res.status_values[0] if res.status_values else "open"
    w = words(str(v)) if isinstance(v, str) else "open"
    return w if w in ("open", "active", "pending", "in progress", "enabled", "published") else "open"


def _pl(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if last.endswith(("series", "data", "info", "news", "media", "species", "metadata")):
        return noun  # the same word in the plural
    if last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}".strip()


def _an(noun: str) -> str:
    # a "you" sound takes "a" (a user, a unit, a euro account)
    vowel = noun[:1] in "aeiou" and not noun.startswith(("us", "uni", "eu"))
    return f"{'an' if vowel else 'a'} {noun}"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _subject(p: Person) -> Subject:
    return Subject(p.first, p.last, p.email, p.phone)


def _setup(b: Builder, res: Res) -> dict[str, Any]:
    """The shared world of a request: the colleague, the customer, the record's label, and the
    candidates a careless agent takes for it:
    - a near-duplicate: another purpose for the same customer, or another person;
    - a namesake: a record carrying the colleague's own name (a person with the colleague's first
      name and the target's surname, or the colleague's copy of the record), so that matching the
      instruction's words picks it and not the target. Only the colleague's email names the target.

    A person resource holds our own people (employees, users) or customers' contacts, by its noun;
    its records' own address and phone are the person's (`subjects`)."""
    who = _colleague(b)
    taken = {_lab(res, r).casefold() for r in b.svc(res.service).table(res.table).values()}
    purpose, other = b.pick(PURPOSES, 2)
    subjects: dict[str, Subject | None] = dict.fromkeys(("target", "near", "closed", "namesake"))
    if res.person:  # a person's record is labelled with their name
        if res.staff:
            pool = [
                p
                for p in b.company.employees
                if p.id not in (b.me.id, who.id) and p.first != who.first and p.name.casefold() not in taken
            ]
            target, near_p = b.fresh(pool, 2, key=lambda p: p.id)
            cust = b.customer()
        else:
            free = [
                c
                for c in b.company.customers
                if all(b.company.person(p).name.casefold() not in taken for p in c.contact_ids)
                and len(c.contact_ids) > 1
            ]
            cust = b.fresh(free, 1, key=lambda c: c.id)[0]
            target, near_p = b.company.person(cust.contact_ids[0]), b.company.person(cust.contact_ids[-1])
        if target.first == who.first:
            raise PlantError("the colleague's first name is the target's")
        domain = target.email.rsplit("@", 1)[-1]
        old = b.pick([c.domain for c in b.company.customers if c.domain != domain])
        phones = [p.phone for p in b.company.people if p.id not in (target.id, near_p.id, who.id)]
        # the near-duplicate shares the target's surname, so the list's search by it shows the older
        # look-alike too (else the target would be the oldest record a search shows)
        firsts = [p.first for p in b.company.people if p.first not in (target.first, who.first, near_p.first)]
        nf = b.pick(sorted(set(firsts))) if firsts else near_p.first
        phone = b.pick([p.phone for p in b.company.people if p.id not in (target.id, near_p.id, who.id)])
        near_sub = Subject(nf, target.last, f"{nf}.{target.last}@{domain}".lower(), phone)
        subjects["target"], subjects["near"] = _subject(target), near_sub
        subjects["closed"] = Subject(
            target.first, target.last, f"{target.first}.{target.last}@{old}".lower(), b.pick(phones)
        )
        subjects["namesake"] = Subject(
            who.first, target.last, f"{who.first}.{target.last}@{domain}".lower(), b.pick(phones)
        )
        label = _label_value(res, target, purpose)
        near = {"key": _slug(near_sub.name), "email": near_sub.email}.get(res.label_kind, near_sub.name)
        twin = {"key": _slug(subjects["namesake"].name), "email": subjects["namesake"].email}.get(
            res.label_kind, subjects["namesake"].name
        )
        query = target.last
    else:
        cust = b.customer()
        label, near = _label_value(res, cust, purpose), _label_value(res, cust, other)
        if res.label_kind in ("key", "url"):
            twin = f"{label}-{_slug(who.first)}-copy"
        elif label.endswith(")"):
            twin = f"{label[:-1]}, {who.name}'s copy)"
        else:
            twin = f"{label} ({who.name}'s copy)"
        query = {"key": label.split("-")[0], "url": cust.domain}.get(res.label_kind, cust.name)
    names = [label.casefold(), near.casefold(), twin.casefold()]
    if len(set(names)) < 3 or any(n in taken for n in names):
        raise PlantError(f"no fresh label for a {res.noun}")
    if res.scopes or res.parent_scope:  # the request's records are in one scope it names (`_mail`)
        scope = _scope_values(b, res, cust)
        fields = dict(scope)
        note = _scope_note(res, scope)
        if res.parent_scope:
            p, f, parent = res.parent_scope
            svc = b.svc(res.service)
            table = svc.manifest["resources"][parent]["table"]
            keys = sorted(svc.table(table))
            key = b.rng.choice(keys) if keys else None
            if key is None:  # a parent the world has none of: the colleague's own (a workspace)
                key = svc.new_key(parent)
                svc.insert(table, {"id": key, "created_at": format_time(b.now - timedelta(days=400))})
            scope[p], fields[f] = key, key
            note = f"{note} It's in {words(parent)} {key}.".strip()
        b._compiled_scope = {**getattr(b, "_compiled_scope", {}), res.resource: scope}  # type: ignore[attr-defined]
        b._compiled_fields = {**getattr(b, "_compiled_fields", {}), res.resource: fields}  # type: ignore[attr-defined]
        b._compiled_note = note  # type: ignore[attr-defined]
    return {
        "who": who,
        "cust": cust,
        "label": label,
        "near": near,
        "namesake": twin,
        "subjects": subjects,
        "query": query,
    }


# ---- families ------------------------------------------------------------------------------------
def lookup_reply(b: Builder, res: Res) -> None:
    name = display(b.svc(res.service).manifest)
    # a date is not traced through the transcript, nor an enum's word (the audit reads neither as a
    # value the reply learnt, and a vocabulary of five is a guess away)
    traced = [x for x in res.values if "date" not in x[1] and x[1] != "enum"]
    if not traced:
        raise PlantError(f"{res.resource} has no field a request can ask for")
    f, kind, jtype = b.pick(traced)
    w = _setup(b, res)
    who, label, near, twin, sub = w["who"], w["label"], w["near"], w["namesake"], w["subjects"]
    used = _Used()
    v = _value(b, f, kind, jtype, res, used, sub["target"])
    v_near = _value(b, f, kind, jtype, res, used, sub["near"])
    v_twin = _value(b, f, kind, jtype, res, used, sub["namesake"])
    # the target is neither the newest record, nor the oldest, nor the one with the instruction's words
    t = _plant(b, res, label, {f: v}, days_ago=b.rng.choice(TARGET_DAYS))
    n = _plant(b, res, near, {f: v_near}, days_ago=b.rng.choice(OLDER_DAYS))
    tw = _plant(b, res, twin, {f: v_twin}, days_ago=2)
    closed = None
    if res.status:
        v_old = _value(b, f, kind, jtype, res, used, sub["closed"])
        closed = _plant(b, res, label, {f: v_old}, closed=True, days_ago=b.rng.choice(CLOSED_DAYS))
    fh = _human(f)
    subject = b.say(f"{fh.capitalize()} for {label}?", f"Quick question: {label}", f"{label} - {fh}")
    now = f" {_now_work(b)}" if closed else ""
    _mail(
        b,
        who,
        subject,
        f'Hi {b.me.first},\n\nCould you look up the {fh} {_on(fh, res.noun)} "{label}" in {name}? '
        f"I need it for {b.say('a call this afternoon', 'the weekly report', 'a customer email')}.{now}\n\n"
        f"Thanks,\n{who.first}",
        hours_ago=b.rng.choice((2, 5, 20)),
    )
    b.fact(v)
    b.begin()
    msg, _ = _read_request(b, who, subject)
    hits = _find(b, res, w["query"], label)
    assert [h["id"] for h in hits] == [t["id"]], (hits, t)
    b.decide()
    value = str(hits[0][f])
    _reply(b, who, msg, f"Hi {who.first}, the {fh} on {label} is {value}.")
    rivals = [str(v_near), str(v_twin), *([str(closed[f])] if closed is not None else [])]
    b.expect_message(
        "email",
        who,
        contains=[value],
        description=f"{who.first} got the {fh} ({value}) and no rival's",
        exclude=[r for r in rivals if r != value],
    )
    # nor in a second post: a reply split in parts reads as one, so each rival is guarded on its own
    for r in dict.fromkeys(r for r in rivals if r != value):
        b.not_written("email", r, f"no email gives a rival record's {fh} ({r})")
    b.keep(res.service, res.table, n["id"], "the near-duplicate record was left alone")
    b.trap("near_duplicate", f"the {res.noun} {near}", swap={value: str(v_near)}, answer=str(v_near))
    b.keep(res.service, res.table, tw["id"], "the namesake record was left alone")
    b.trap("namesake", f"the {res.noun} {twin}", swap={value: str(v_twin)}, answer=str(v_twin))
    if closed is not None:
        b.keep(res.service, res.table, closed["id"], "the closed copy was left alone")
        b.trap("closed", f"the closed copy of {label}", swap={value: str(closed[f])}, answer=str(closed[f]))
    ask_answer = b.rng.random() < 0.3
    if ask_answer:
        b.ask(
            value,
            kind={"money": "number", "count": "number"}.get(kind, "text"),
            exclude=(str(v_near), str(v_twin), *([str(closed[f])] if closed is not None else [])),
            what=f"the {fh}",
        )
    b.write(
        frame(
            b.rng,
            b.say(
                f"answer {who.name}'s email about {_an(res.noun)} in {name}",
                f"look up the {fh} {who.first} emailed to ask about in {name} and reply to them",
                f"reply to {who.first}'s question about one of our {name} {_pl(res.noun)}",
            )
            + (", then tell me what it is too" if ask_answer else ""),
            context=b.say(
                f"{who.first} {_needs(fh, res.noun)}",
                f"{who.first}'s email says which {res.noun} they mean",
                "",
            ),
        ),
        hint=f"Read {who.first}'s email, find the {res.noun} it names in {name} (the open one with that exact "
        f"{_lab_words(res)}), and reply on the thread with its {fh}.",
        subtasks=[
            f"Read {who.first}'s email",
            f"Find the {res.noun} in {name}",
            f"Reply with its {fh}",
        ],
    )


# why a colleague needs a record's id: to use it where the service's API or links want one
ID_NEEDS = (
    "the API script I'm setting up",
    "the integration config",
    "a support ticket with the vendor",
    "the automation I'm wiring up",
    "the migration mapping",
)


def id_reply(b: Builder, res: Res) -> None:
    """A colleague needs the id of a record they name (for a script, an integration, a ticket): find
    the open one among its closed copy, a near-duplicate and a namesake, and reply with its id."""
    name = display(b.svc(res.service).manifest)
    w = _setup(b, res)
    who, label, near, twin = w["who"], w["label"], w["near"], w["namesake"]
    # the target is neither the newest record, nor the oldest, nor the one with the instruction's words
    t = _plant(b, res, label, {}, days_ago=b.rng.choice(TARGET_DAYS))
    n = _plant(b, res, near, {}, days_ago=b.rng.choice(OLDER_DAYS))
    tw = _plant(b, res, twin, {}, days_ago=2)
    closed = (
        _plant(b, res, label, {}, closed=True, days_ago=b.rng.choice(CLOSED_DAYS)) if res.status else None
    )
    subject = b.say(f"ID of {label}?", f"{name} id for {label}", f"Need an id: {label}")
    now = f" {_now_work(b)}" if closed else ""
    _mail(
        b,
        who,
        subject,
        f'Hi {b.me.first},\n\nCould you send me the id of the {res.noun} "{label}" in {name}? '
        f"I need it for {b.say(*ID_NEEDS)}.{now}\n\nThanks,\n{who.first}",
        hours_ago=b.rng.choice((2, 5, 20)),
    )
    b.fact(t["id"])
    b.begin()
    msg, _ = _read_request(b, who, subject)
    hits = _find(b, res, w["query"], label)
    assert [h["id"] for h in hits] == [t["id"]], (hits, t)
    b.decide()
    key = str(hits[0]["id"])
    _reply(b, who, msg, f"Hi {who.first}, the id of the {res.noun} {label} in {name} is {key}.")
    rivals = [str(n["id"]), str(tw["id"]), *([str(closed["id"])] if closed is not None else [])]
    b.expect_message(
        "email",
        who,
        contains=[key],
        description=f"{who.first} got the id ({key}) and no rival's",
        exclude=rivals,
    )
    for r in rivals:  # nor in a second post (a reply split in parts reads as one)
        b.not_written("email", r, f"no email gives a rival record's id ({r})")
    b.keep(res.service, res.table, n["id"], "the near-duplicate record was left alone")
    b.trap("near_duplicate", f"the {res.noun} {near}", swap={key: str(n["id"])}, answer=str(n["id"]))
    b.keep(res.service, res.table, tw["id"], "the namesake record was left alone")
    b.trap("namesake", f"the {res.noun} {twin}", swap={key: str(tw["id"])}, answer=str(tw["id"]))
    if closed is not None:
        b.keep(res.service, res.table, closed["id"], "the closed copy was left alone")
        b.trap(
            "closed", f"the closed copy of {label}", swap={key: str(closed["id"])}, answer=str(closed["id"])
        )
    ask_answer = b.rng.random() < 0.3
    if ask_answer:
        b.ask(key, kind="text", exclude=tuple(rivals), what=f"the {res.noun}'s id")
    b.write(
        frame(
            b.rng,
            b.say(
                f"send {who.name} the id they asked for in {name}",
                f"find the {res.noun} {who.first} emailed about in {name} and reply with its id",
                f"answer {who.first}'s email about one of our {name} {_pl(res.noun)}",
            )
            + (", then tell me the id too" if ask_answer else ""),
            context=b.say(f"{who.first} is waiting on it", f"{who.first}'s email says which {res.noun}", ""),
        ),
        hint=f"Read {who.first}'s email, find the {res.noun} it names in {name} (the open one with that exact "
        f"{_lab_words(res)}), and reply on the thread with its id.",
        subtasks=[f"Read {who.first}'s email", f"Find the {res.noun} in {name}", "Reply with its id"],
    )


def _update_call(b: Builder, res: Res, rec: dict[str, Any], changes: dict[str, Any]) -> None:
    tool = {**res.updater, "service": res.service}  # type: ignore[dict-item]
    args = _args(b, tool, fixed={**rec, **changes})
    props = _props(res.updater)  # type: ignore[arg-type]
    for p in list(args) + [p for w in res.updater["op"].get("nested", ()) for p in (args.get(w) or {})]:  # type: ignore[index]
        if p in rec and p not in changes and p in props:  # a required field keeps its value
            args = _set(res.updater, args, p, rec[p])  # type: ignore[arg-type]
    args = _set(res.updater, args, res.updater["op"]["id_param"], rec["id"])  # type: ignore[index]
    for k, v in changes.items():
        args = _set(res.updater, args, k, v)  # type: ignore[arg-type]
    _valid(res.updater, args)  # type: ignore[arg-type]
    b.call(f"{res.service}__{res.updater['name']}", args)  # type: ignore[index]


def update_from_email(b: Builder, res: Res) -> None:
    name = display(b.svc(res.service).manifest)
    options: list[tuple[str, Any]] = []
    if res.updater is not None:
        options += [("field", x) for x in res.values if x[0] in res.update_fields]
        if res.status and res.status in res.update_fields and res.status in res.enums:
            options += [("enum", v) for v in res.enums[res.status] if v != res.status_values[0]]  # type: ignore[index]
    options += [("transition", t) for t in res.transitions]
    if not options:
        raise PlantError(f"{res.resource} has nothing a request can change")
    how, what = b.pick(options)
    w = _setup(b, res)
    who, label, near, twin = w["who"], w["label"], w["near"], w["namesake"]
    used = _Used()
    extra: dict[str, Any] = {}
    if how == "field":
        f, kind, jtype = what
        # a person's record moves from an old address (or phone) to their own
        old = _value(b, f, kind, jtype, res, used, w["subjects"]["closed"])
        new = _value(b, f, kind, jtype, res, used, w["subjects"]["target"])
        extra = {f: old}
        change = f"change the {_human(f)} to {new}"
        b.fact(new)
    elif how == "enum":
        f, new = res.status, what
        change = f"set its {_human(f)} to {words(str(new))}"  # type: ignore[arg-type]
    else:
        f, new = what["op"]["field"], what["op"]["value"]
        change = (
            f"{words(what['op'].get('verb', 'mark'))} it"
            if isinstance(new, bool)
            else f"mark it {words(str(new))}"
        )
    # the namesake is the newest record; the near-duplicate and a closed duplicate are older than the target
    t = _plant(b, res, label, dict(extra), days_ago=b.rng.choice(TARGET_DAYS))
    n = _plant(b, res, near, dict(extra), days_ago=b.rng.choice(OLDER_DAYS))
    tw = _plant(b, res, twin, dict(extra), days_ago=2)
    closed = (
        _plant(b, res, label, dict(extra), closed=True, days_ago=b.rng.choice(CLOSED_DAYS))
        if res.status
        else None
    )
    subject = b.say(f"{label} in {name}", f"Update to {label}", f"Can you update {label}?")
    qualifier = f" {_now_work(b)}" if closed else ""
    _mail(
        b,
        who,
        subject,
        f'Hi {b.me.first},\n\nPlease find the {res.noun} "{label}" in {name} and {change}.{qualifier} '
        f"Reply with its id once done.\n\nThanks,\n{who.first}",
        hours_ago=b.rng.choice((1, 3, 26)),
    )
    b.begin()
    msg, _ = _read_request(b, who, subject)
    hits = _find(b, res, w["query"], label)
    assert [h["id"] for h in hits] == [t["id"]], (hits, t)
    rec = hits[0]
    b.decide()
    if how == "transition":
        tool = {**what, "service": res.service}
        args = _set(what, _args(b, tool, fixed=rec), what["op"]["id_param"], rec["id"])
        _valid(what, args)
        b.call(f"{res.service}__{what['name']}", args)
    else:
        _update_call(b, res, rec, {f: new})  # type: ignore[dict-item]
    _reply(b, who, msg, f"Done: {label} is updated (id {rec['id']}).")
    expect = new if not isinstance(new, str) else str(new)
    b.expect_change(
        res.service, res.table, rec["id"], f, expect, f"the {res.noun} {label} has {_human(f)} {new}"
    )  # type: ignore[arg-type]
    b.expect_message(
        "email", who, contains=[str(rec["id"])], description=f"{who.first} got a reply with the record's id"
    )
    b.keep(res.service, res.table, n["id"], "the near-duplicate record was left alone")
    b.trap("near_duplicate", f"the {res.noun} {near}", swap={str(rec["id"]): str(n["id"])})
    b.keep(res.service, res.table, tw["id"], "the namesake record was left alone")
    b.trap("namesake", f"the {res.noun} {twin}", swap={str(rec["id"]): str(tw["id"])})
    if closed is not None:
        b.keep(res.service, res.table, closed["id"], "the closed copy was left alone")
        b.trap("closed", f"the closed copy of {label}", swap={str(rec["id"]): str(closed["id"])})
    b.write(
        frame(
            b.rng,
            b.say(
                f"take care of {who.name}'s update request for {name}",
                f"make the change {who.first} emailed about one of our {name} {_pl(res.noun)} and let them know",
                f"handle {who.first}'s email about updating {_an(res.noun)} in {name}",
            ),
            context=b.say(
                f"{who.first} is waiting to hear back", f"{who.first} wants the record's id back", ""
            ),
        ),
        hint=f"Read {who.first}'s email, find the open {res.noun} it names in {name}, make the change, "
        "then reply on the thread with the record's id.",
        subtasks=[
            f"Read {who.first}'s email",
            f"Find the {res.noun} in {name}",
            "Make the change",
            "Reply with its id",
        ],
    )


def record_request(b: Builder, res: Res) -> None:
    name = display(b.svc(res.service).manifest)
    if res.create is None:
        raise PlantError(f"{res.resource}: no create takes its {res.label}")
    # the open record already exists: one the agent creates without looking would pass whenever
    # none did, so the work is always to find it among its look-alikes and update it
    vals = [x for x in res.values if x[0] in res.create_fields and x[0] in res.update_fields]
    if not vals or res.updater is None:
        raise PlantError(f"{res.resource}: no value field that create and update both set")
    f, kind, jtype = b.pick(vals)
    w = _setup(b, res)
    who, label, near, twin = w["who"], w["label"], w["near"], w["namesake"]
    used = _Used()
    sub = w["subjects"]
    v, v_old, v_near, v_twin = (
        _value(b, f, kind, jtype, res, used, sub[k]) for k in ("target", "closed", "near", "namesake")
    )
    current = _plant(b, res, label, {f: v_old}, days_ago=b.rng.choice(TARGET_DAYS))
    # a closed duplicate with the label does not count as existing
    closed = (
        _plant(b, res, label, {f: v_old}, closed=True, days_ago=b.rng.choice(CLOSED_DAYS))
        if res.status
        else None
    )
    n = _plant(b, res, near, {f: v_near}, days_ago=b.rng.choice(OLDER_DAYS))
    tw = _plant(b, res, twin, {f: v_twin}, days_ago=3)
    fh = _human(f)
    now = f" {_now_work(b)}" if closed is not None else ""
    subject = b.say(
        f"{res.noun.capitalize()} for {label}", f"New {res.noun}: {label}", f"{label} - please set up"
    )
    _mail(
        b,
        who,
        subject,
        f'Hi {b.me.first},\n\nWe need {_an(res.noun)} "{label}" in {name} with {fh} {v}. If we already have '
        f"it, just update it rather than making a duplicate.{now} Send me its id when it's there.\n\n"
        f"Thanks,\n{who.first}",
        hours_ago=b.rng.choice((2, 6, 30)),
    )
    b.begin()
    msg, body = _read_request(b, who, subject)
    hits = _find(b, res, w["query"], label)
    b.decide()
    assert [h["id"] for h in hits] == [current["id"]]
    _update_call(b, res, hits[0], {f: _typed(v, {"type": jtype})})
    rid = str(hits[0]["id"])
    b.expect_change(res.service, res.table, rid, f, v, f"the open {res.noun} {label} has {fh} {v}")
    _reply(b, who, msg, f"Hi {who.first}, {label} is in {name} with {fh} {v}: id {rid}.")
    b.expect_message("email", who, contains=[rid], description=f"{who.first} got the record's id ({rid})")
    b.keep(res.service, res.table, n["id"], "the near-duplicate record was left alone")
    if closed is not None:
        b.keep(res.service, res.table, closed["id"], "the closed record with the same name was left alone")
        b.trap(
            "closed",
            f"the closed {res.noun} {label} (it does not count as existing)",
            swap={rid: str(closed["id"])},
        )
    b.trap("near_duplicate", f"the {res.noun} {near}", swap={rid: str(n["id"])})
    b.keep(res.service, res.table, tw["id"], "the namesake record was left alone")
    b.trap("namesake", f"the {res.noun} {twin}", swap={rid: str(tw["id"])})
    b.write(
        frame(
            b.rng,
            b.say(
                f"sort out {who.name}'s request for {_an(res.noun)} in {name}",
                f"set up the {res.noun} {who.first} asked for in {name} (no duplicates) and send them its id",
                f"handle {who.first}'s email about {_an(res.noun)} in {name}",
            ),
            context=b.say(
                "No duplicates, please",
                f"{who.first} needs its id for their records",
                "",
            ),
        ),
        hint=f"Read {who.first}'s email, look for an open {res.noun} with that {_lab_words(res)} in {name}; "
        f"update its {fh} if one exists, else create it; reply with its id.",
        subtasks=[
            f"Read {who.first}'s email",
            f"Check {name} for an open {res.noun} with that {_lab_words(res)}",
            "Update it or create it",
            "Reply with its id",
        ],
    )


def total_reply(b: Builder, res: Res) -> None:
    name = display(b.svc(res.service).manifest)
    nums = [x for x in res.values if x[1] in ("money", "count") and x[2] in ("integer", "number")]
    if not nums or not res.search or not res.status:
        raise PlantError(f"{res.resource}: no searchable numeric field with a status")
    f, kind, jtype = b.pick(nums)
    w = _setup(b, res)
    who, cust = w["who"], w["cust"]
    if res.noun.split()[-1] in PERSONS | ORGS:
        raise PlantError("totals are over records per customer")
    used = _Used()
    k = b.rng.randrange(2, 4)
    purposes = b.pick(PURPOSES, k + 2)
    mine = [
        _plant(b, res, f"{cust.name} {p}", {f: _value(b, f, kind, jtype, res, used)}, days_ago=5 + i)
        for i, p in enumerate(purposes[:k])
    ]
    shut = _plant(
        b,
        res,
        f"{cust.name} {purposes[k]}",
        {f: _value(b, f, kind, jtype, res, used)},
        closed=True,
        days_ago=90,
    )
    other = b.customer(where=lambda c: c.name.split()[0] != cust.name.split()[0])
    theirs = _plant(
        b, res, f"{other.name} {purposes[k + 1]}", {f: _value(b, f, kind, jtype, res, used)}, days_ago=7
    )
    fh = _human(f)
    subject = b.say(
        f"Total {fh} for {cust.name}?", f"{cust.name} {_pl(res.noun)}", f"Numbers for {cust.name}"
    )
    _mail(
        b,
        who,
        subject,
        f"Hi {b.me.first},\n\nWhat's the total {fh} across {_poss(cust.name)} {_pl(res.noun)} that are still "
        f"{_still(res)} in {name}? {b.say('I need it for the account review.', 'Their team asked this morning.')}"
        f"\n\nThanks,\n{who.first}",
        hours_ago=b.rng.choice((3, 8, 22)),
    )
    b.begin()
    msg, _ = _read_request(b, who, subject)
    data = b.call(f"{res.service}__{res.lister['name']}", list_args(b, res, cust.name))
    got = [
        r
        for r in rows(data)
        if _lab(res, r).startswith(cust.name) and r.get(res.status) == res.status_values[0]  # type: ignore[index]
    ]
    assert sorted(r["id"] for r in got) == sorted(r["id"] for r in mine)
    b.aggregate()
    total = round(sum(float(r[f]) for r in got), 2)
    wrong = round(total + float(shut[f]), 2)
    fmt = (lambda x: f"{x:.2f}") if kind == "money" else (lambda x: str(int(x)))
    b.composed(fmt(total))
    _reply(
        b,
        who,
        msg,
        f"Hi {who.first}, the open {_pl(res.noun)} for {cust.name} add up to {fmt(total)} ({fh}).",
    )
    b.expect_message(
        "email", who, contains=[fmt(total)], description=f"{who.first} got the total {fmt(total)}"
    )
    b.ask(fmt(total), kind="number", exclude=(fmt(wrong),), what=f"the total {fh}")
    b.not_written("email", fmt(wrong), "the closed record was not counted")
    b.keep(res.service, res.table, theirs["id"], "another customer's record was left alone")
    b.trap("closed", f"a closed {res.noun} of {cust.name}", swap={fmt(total): fmt(wrong)}, answer=fmt(wrong))
    b.write(
        frame(
            b.rng,
            b.say(
                f"answer {who.name}'s question about {_poss(cust.name)} {_pl(res.noun)} in {name} and tell me the "
                "figure too",
                f"work out the total {who.first} asked for from {name}, reply to them, and give me the number",
            ),
            context=b.say(f"It's about the {fh}", ""),
        ),
        hint=f"Read {who.first}'s email, list {_poss(cust.name)} {_pl(res.noun)} in {name}, add up the {fh} of the open "
        "ones, reply with the total and give it in your answer.",
        subtasks=[
            f"Read {who.first}'s email",
            f"List {_poss(cust.name)} {_pl(res.noun)}",
            f"Add up the open ones' {fh}",
            "Reply with the total",
        ],
    )


# what a colleague asks to have added (a child record's label; a person's record is their name)
ITEMS = (
    "kickoff checklist",
    "contract review",
    "security questionnaire",
    "data export",
    "training session",
    "handover notes",
    "budget sign-off",
    "launch plan",
    "access review",
    "status report",
)


def _parent_of(b: Builder, res: Res) -> tuple[str, str, Res] | None:
    """(the create's parent parameter, the stored field, the parent resource) where the create names
    its parent and the parent is known by a label and can be listed; else None."""
    par = (res.create or {}).get("op", {}).get("parent") if res.create else None
    if not par:
        return None
    p = resource_of(b.svc(res.service).__class__, par["resource"], need_create=False)
    if not isinstance(p, Res):
        raise PlantError(f"parent_{p}:{par['resource']}")
    if p.parents and any(
        norm(x) in {norm(f) for f, _ in p.parents} for x in p.lister["input_schema"].get("required", [])
    ):
        raise PlantError(f"parent_needs_parent:{par['resource']}")
    return par["param"], par.get("field", par["param"]), p


def _create_call(b: Builder, res: Res, fixed: dict[str, Any]) -> Any:
    """Create the record with the values the work decides (its label, its parent, the asked value)."""
    tool = {**res.create, "service": res.service}  # type: ignore[dict-item]
    args = _args(b, tool, fixed=fixed)
    for k, v in fixed.items():
        args = _set(res.create, args, k, v)  # type: ignore[arg-type]
    _valid(res.create, args)  # type: ignore[arg-type]
    return b.call(f"{res.service}__{res.create['name']}", args)  # type: ignore[index]


def _created_key(res: Res, data: Any, before: set[str], b: Builder) -> str:
    new = sorted(set(b.svc(res.service).table(res.table)) - before)
    if len(new) != 1:
        raise PlantError(f"the create of {res.noun} left {len(new)} new records")
    return new[0]


def child_request(b: Builder, res: Res) -> None:
    """A colleague asks for a record under a parent they name by its name (a task in a project, a
    goal for an employee): find the parent among its look-alikes, add the record there, confirm."""
    if res.create is None:
        raise PlantError(f"{res.resource}: no create takes its {res.label}")
    found = _parent_of(b, res)
    if found is None:
        raise PlantError(f"{res.resource}: its create names no parent")
    param, pfield, par = found
    w = _setup(b, par)  # the parent is what the email names among its look-alikes
    pt = _plant(b, par, w["label"], {}, days_ago=b.rng.choice(TARGET_DAYS))
    pn = _plant(b, par, w["near"], {}, days_ago=b.rng.choice(OLDER_DAYS))
    ptw = _plant(b, par, w["namesake"], {}, days_ago=3)
    pc = (
        _plant(b, par, w["label"], {}, closed=True, days_ago=b.rng.choice(CLOSED_DAYS))
        if par.status
        else None
    )
    _add(b, res, w, (param, pfield, par, pt, pn, ptw, pc))


def create_request(b: Builder, res: Res) -> None:
    """A colleague asks for a new record (a page, a template, a list) with a value they give: add it
    with their words, leave the look-alike that already exists alone, confirm."""
    if res.create is None:
        raise PlantError(f"{res.resource}: no create takes its {res.label}")
    if res.create["op"].get("parent"):
        raise PlantError(f"{res.resource}: its create names a parent")
    _add(b, res, {"who": _colleague(b)}, None)


def _add(b: Builder, res: Res, w: dict[str, Any], parent: tuple[Any, ...] | None) -> None:
    name = display(b.svc(res.service).manifest)
    who = w["who"]
    if parent is not None:
        param, pfield, par, pt, pn, ptw, pc = parent
        plabel, near, twin = w["label"], w["near"], w["namesake"]
    else:
        pc = None
    taken = {_lab(res, r).casefold() for r in b.svc(res.service).table(res.table).values()}
    if res.person:  # our own people for a directory, else the contacts of customers
        pool = [
            p
            for p in (b.company.employees if res.staff else b.company.contacts)
            if p.id not in (b.me.id, who.id) and p.name.casefold() not in taken
        ]
        person = b.fresh(pool, 1, key=lambda p: p.id)[0]
        label = {"key": _slug(person.name), "email": person.email}.get(res.label_kind, person.name)
    else:
        item = b.pick([i for i in ITEMS if i.casefold() not in taken])
        label = _slug(item) if res.label_kind == "key" else item.capitalize()
        if res.label_kind == "url":
            label = f"https://{b.customer().domain}/{_slug(item)}"
    # one value the request gives, where the create takes one (a due date, a priority, an amount)
    # values the request gives: every one the create requires, else one it takes (a priority, an amount)
    req = set(res.create["input_schema"].get("required", []))  # type: ignore[index]
    vals = [x for x in res.values if x[0] in res.create_fields and "date" not in x[1]]
    need = [x for x in vals if x[0] in req]
    chosen = need[:3] if need else [b.pick(vals)] if vals and b.rng.random() < 0.7 else []
    extra: dict[str, Any] = {}
    said = []
    for f, kind, jtype in chosen:
        v = _value(b, f, kind, jtype, res, _Used())
        extra[f] = _typed(v, {"type": jtype})
        said.append(f"{_human(f)} {v}")
    clause = f" with {' and '.join(said)}" if said else ""
    if parent is None:  # a look-alike already exists: it is no reason to skip the new one, nor to edit
        # look-alikes that already exist (an old one, the colleague's own draft): no reason to skip the
        # new record, nor ones to edit
        key = res.label_kind != "label"
        # last year's one is known by its year, not by a label calling it old
        year = (b.now - timedelta(days=400)).year
        look = _plant(b, res, f"{label}-{year}" if key else f"{label} {year}", {}, days_ago=40)
        mine = f"{label}-{_slug(who.first)}-draft" if key else f"{label} ({who.name}'s draft)"
        draft = _plant(b, res, mine, {}, days_ago=2)
        subject = b.say(f"New {res.noun}: {label}", f"{label} in {name}", f"Please set up {label}")
        _mail(
            b,
            who,
            subject,
            f'Hi {b.me.first},\n\nCould you set up {_an(res.noun)} "{label}" in {name}{clause}? '
            f"Let me know when it's there.\n\nThanks,\n{who.first}",
            hours_ago=b.rng.choice((2, 5, 26)),
        )
        b.begin()
        msg, _ = _read_request(b, who, subject)
        before = set(b.svc(res.service).table(res.table))
        data = _create_call(b, res, {**_lab_fields(res, label), **extra})
        _created_key(res, data, before, b)
        _reply(b, who, msg, f"Hi {who.first}, {label} is set up in {name}.")
        b.expect_record(
            res.service,
            res.table,
            {**_lab_fields(res, label), **extra},
            f"the {res.noun} {label} exists" + (clause and f" ({clause.strip()})"),
        )
        b.expect_message(
            "email", who, contains=[label], description=f"{who.first} heard that {label} is set up"
        )
        b.keep(res.service, res.table, look["id"], "the older look-alike was left alone")
        b.trap("near_duplicate", f"the older {res.noun} {_lab(res, look)}", swap={label: _lab(res, look)})
        b.keep(res.service, res.table, draft["id"], f"{who.first}'s own draft was left alone")
        b.trap("namesake", f"the {res.noun} {mine}", swap={label: mine})
        b.write(
            frame(
                b.rng,
                b.say(
                    f"set up the {res.noun} {who.first} asked for in {name} and let them know",
                    f"take care of {who.name}'s request for a new {res.noun} in {name}",
                    f"handle {who.first}'s email about {_an(res.noun)} in {name}",
                ),
                context=b.say(f"{who.first} is waiting on it", ""),
            ),
            hint=f"Read {who.first}'s email, create the {res.noun} it asks for in {name} with its values, "
            "then reply on the thread.",
            subtasks=[
                f"Read {who.first}'s email",
                f"Create the {res.noun} in {name}",
                f"Reply to {who.first}",
            ],
        )
        return
    pn_ = par.noun
    subject = b.say(f"{label} for {plabel}", f"New {res.noun} under {plabel}", f"Please add {label}")
    _mail(
        b,
        who,
        subject,
        f'Hi {b.me.first},\n\nCould you add {_an(res.noun)} "{label}" to the {pn_} "{plabel}" in {name}{clause}? '
        f"{_now_work(b) + ' ' if pc else ''}"
        f"Let me know when it's there.\n\nThanks,\n{who.first}",
        hours_ago=b.rng.choice((2, 5, 26)),
    )
    b.begin()
    msg, _ = _read_request(b, who, subject)
    hits = _find(b, par, w["query"], plabel)
    assert [h["id"] for h in hits] == [pt["id"]], (hits, pt)
    pid = hits[0]["id"]
    b.decide()
    before = set(b.svc(res.service).table(res.table))
    data = _create_call(b, res, {**_lab_fields(res, label), param: pid, **extra})
    _created_key(res, data, before, b)
    _reply(b, who, msg, f"Hi {who.first}, {label} is added to {plabel} in {name}.")
    b.expect_record(
        res.service,
        res.table,
        {**_lab_fields(res, label), pfield: str(pid), **extra},
        f"the {res.noun} {label} is under the {pn_} {plabel}" + (clause and f" ({clause.strip()})"),
    )
    b.expect_message("email", who, contains=[label], description=f"{who.first} heard that {label} was added")
    b.keep(res.service, par.table, pn["id"], f"the {pn_} {near} was left alone")
    b.trap("near_duplicate", f"the {pn_} {near}", swap={str(pid): str(pn["id"])})
    b.keep(res.service, par.table, ptw["id"], f"the {pn_} {twin} was left alone")
    b.trap("namesake", f"the {pn_} {twin}", swap={str(pid): str(ptw["id"])})
    if pc is not None:
        b.keep(res.service, par.table, pc["id"], f"the closed copy of the {pn_} {plabel} was left alone")
        b.trap("closed", f"the closed copy of the {pn_} {plabel}", swap={str(pid): str(pc["id"])})
    b.write(
        frame(
            b.rng,
            b.say(
                f"add the {res.noun} {who.first} asked for in {name} and let them know",
                f"take care of {who.name}'s request for a new {res.noun} in {name}",
                f"handle {who.first}'s email about adding {_an(res.noun)} in {name}",
            ),
            context=b.say(
                f"{who.first}'s email says which {pn_} it belongs to", f"{who.first} is waiting on it", ""
            ),
        ),
        hint=f"Read {who.first}'s email, find the open {pn_} it names in {name} (that exact {_lab_words(par)}), "
        f"add the {res.noun} under it, then reply on the thread.",
        subtasks=[
            f"Read {who.first}'s email",
            f"Find the {pn_} in {name}",
            f"Add the {res.noun} under it",
            f"Reply to {who.first}",
        ],
    )


# `create_request` is not drawn: its only choice is which of the colleague's emails to read, and
# every one names the same sender, so the audit's lazy solvers pass it (a decision is still to add)
KINDS = {
    "lookup_reply": (
        lookup_reply,
        "Look up one field of the right record (not its closed copy or near-duplicate) and reply by email.",
    ),
    "update_from_email": (
        update_from_email,
        "Change a field or the status of the record a colleague names, and confirm by email.",
    ),
    "record_request": (
        record_request,
        "A colleague asks for a record that already exists: update the open one (no duplicate, not its "
        "closed copy or look-alikes) and reply with its id.",
    ),
    "total_reply": (total_reply, "Total a numeric field over a customer's open records and reply by email."),
    "id_reply": (
        id_reply,
        "Find the record a colleague names (not its closed copy or look-alikes) and reply with its id.",
    ),
    "child_request": (
        child_request,
        "Add a record under the parent a colleague names (not its closed copy or look-alikes) and confirm.",
    ),
}


def _fits(kind: str, res: Res) -> bool:
    if kind == "lookup_reply":
        return any("date" not in k and k != "enum" for _, k, _ in res.values)
    if kind == "id_reply":  # where no field can be asked about, and an id is what the tools take
        return (
            bool(res.id_tools)
            and not _fits("lookup_reply", res)
            and res.label_kind in ("label", "key", "url")
        )
    if kind == "update_from_email":
        return bool(res.transitions) or (
            res.updater is not None
            and (
                any(f in res.update_fields for f, _, _ in res.values)
                or (res.status in res.enums if res.status else False)
            )
        )
    if kind == "record_request":
        return (
            res.create is not None
            and res.updater is not None
            and any(f in res.create_fields and f in res.update_fields for f, _, _ in res.values)
        )
    if kind == "child_request":
        return bool(res.create and res.create["op"].get("parent"))
    if kind == "create_request":
        return bool(res.create and not res.create["op"].get("parent"))
    return bool(
        res.search
        and res.status
        and any(k in ("money", "count") and t in ("integer", "number") for _, k, t in res.values)
    )


def _builder(kind: str, choices: tuple[Res, ...]):
    fn = KINDS[kind][0]

    def build(b: Builder) -> None:
        fn(b, b.pick(choices))

    return build


PROBES = 3  # seeds a resource is tried with before a family gives up on it


def works(cls: Any, kind: str, res: Res) -> bool:
    """Whether the family's work can really be done on this resource: planted and solved on a seeded
    copy of the service (the spec's tools may need ids no request can name, or refuse the values)."""
    return probe(cls, kind, res) is None


def probe(cls: Any, kind: str, res: Res) -> str | None:
    """None when the family's work is planted and solved on a seeded copy of the service, else why
    not (the cause of the last seed tried, see `_cause`)."""
    from compoworld.core.company import make_company
    from compoworld.core.environment import Environment
    from compoworld.tasks.workflow import Unsolvable

    env = Environment.from_snapshot([cls.name, "email"], _probe_world(cls.name))
    s0 = env.snapshot()
    company = make_company(0, "small")
    stub = Family(f"compiled.{cls.name}.{kind}", "project_management", (cls.name, "email"), lambda b: None)
    cause = "probe_failed:no instruction"
    for seed in range(PROBES):
        env.restore(s0)
        b = Builder(env=env, rng=random.Random(seed), company=company, family=stub)
        try:
            KINDS[kind][0](b, res)
        except (
            PlantError,
            Unsolvable,
            NoValue,
            ToolError,  # a key the spec cannot mint, a value the service refuses
            AssertionError,
            StopIteration,
            KeyError,
            ValueError,
            TypeError,
        ) as e:
            cause = _cause(res, e)
            continue
        if b.instruction and b.s0 is not None:
            return None
    return cause


_NAMES_RECORD = re.compile(r"'([^']+)' names a record")


def _cause(res: Res, e: Exception) -> str:
    """A probe's failure as a class: `needs_parent:<param>` (a tool needs the id of a parent the work
    does not name), `needs_unknown_id:<param>`, `search_misses_planted`, `tool_refused`, `plant:<why>`."""
    from compoworld.tasks.workflow import Unsolvable

    msg = str(e)
    if isinstance(e, NoValue):
        m = _NAMES_RECORD.search(msg)
        if m:
            p = m.group(1)
            parents = {norm(f) for f, _ in res.parents} | {norm(f).removesuffix("id") for f, _ in res.parents}
            return (
                f"needs_parent:{p}"
                if norm(p) in parents or norm(p).removesuffix("id") in parents
                else f"needs_unknown_id:{p}"
            )
        return f"value_refused:{msg[:60]}"
    if isinstance(e, AssertionError):
        return "search_misses_planted"
    if isinstance(e, Unsolvable):
        return f"tool_refused:{msg.split(': ', 1)[-1][:60]}"
    if isinstance(e, PlantError):
        return f"plant:{msg[:60]}"
    if isinstance(e, ToolError):
        return f"tool_refused:{msg[:60]}"
    return f"probe_failed:{type(e).__name__}:{msg[:50]}"


def _unfit(kind: str, res: Res) -> str:
    """Why a family does not fit a resource at all (before any probe)."""
    if kind == "lookup_reply":
        return "no_value_field"
    if kind == "id_reply":
        return "no_tool_takes_its_id" if not res.id_tools else "asked_by_a_field_instead"
    if kind == "update_from_email":
        return "no_updater" if res.updater is None and not res.transitions else "nothing_to_change"
    if kind == "record_request":
        return "no_updater" if res.updater is None else "no_value_create_and_update_share"
    if kind == "child_request":
        return "create_names_no_parent"
    if kind == "create_request":
        return "no_create_of_label" if res.create is None else "create_names_a_parent"
    if not res.status:
        return "no_status"
    return "no_search" if not res.search else "no_numeric_field"


@lru_cache(maxsize=8)
def _families_for(classes: tuple[Any, ...]) -> dict[str, Family]:
    return _survey(classes)[0]


@lru_cache(maxsize=8)
def _survey(classes: tuple[Any, ...]) -> tuple[dict[str, Family], dict[str, dict[str, dict[str, str]]]]:
    """(families by name, per service and resource: kind -> "ok" or why the kind does not fit it)."""
    from compoworld.compiler.domains import domains_of, product_of
    from compoworld.services import registry
    from compoworld.tasks.families import compiled_info as info

    out: dict[str, Family] = {}
    why: dict[str, dict[str, dict[str, str]]] = {}
    mail = product_of(registry().get("email"))
    for cls in classes:
        mine = why.setdefault(cls.name, {})
        if mail is not None and product_of(cls) == mail:  # its tasks would sit beside the email they copy
            mine["*"] = {"*": "same_product_as:email (its families would put it beside the hand-built email)"}
            continue
        res = []
        for rname in sorted(cls.manifest["resources"]):
            # a record nothing creates (a catalog, a directory) can still be asked about: the
            # families that make records check for a create themselves
            r = resource_of(cls, rname, need_create=False)
            if isinstance(r, Res):
                res.append(r)
            else:
                mine[rname] = {"*": r}
        work = getattr(cls, "work_domain", None) or domains_of(cls.manifest)[1]
        work = work if work in DOMAINS else "project_management"
        for kind, (_, summary) in KINDS.items():
            fit = []
            for r in res:
                cause = probe(cls, kind, r) if _fits(kind, r) else _unfit(kind, r)
                mine.setdefault(r.resource, {})[kind] = cause or "ok"
                if cause is None:
                    fit.append(r)
            if fit:
                name = f"compiled.{cls.name}.{kind}"
                out[name] = Family(
                    name, work, tuple(sorted((cls.name, "email"))), _builder(kind, tuple(fit)), summary
                )
        # a service's info tools (weather, prices, rates, places, balance) answer questions of their own
        infos = tuple(info.infos_of(cls))
        if infos:
            ok, cause = info.probe_info(cls, infos)
            mine[INFO_KEY] = {"info_question": cause or "ok"}
            if ok:
                name = f"compiled.{cls.name}.info_question"
                out[name] = Family(
                    name, work, tuple(sorted((cls.name, "email"))), info.info_builder(ok), info.SUMMARY
                )
    return out, why


INFO_KEY = "(info tools)"  # where `tasks families --compiled` states why a service's info tools have none


def coverage() -> dict[str, dict[str, Any]]:
    """Per compiled service of the current library: its families, and per resource without one the
    cause (the first kind's, in the order `KINDS` tries them; a probe failure over a mere unfit)."""
    from compoworld.compiler.runtime import CompiledService
    from compoworld.services import registry

    reg = registry()
    if "email" not in reg:
        return {}
    classes = tuple(c for _, c in sorted(reg.items()) if issubclass(c, CompiledService))
    fams, why = _survey(classes)
    out: dict[str, dict[str, Any]] = {}
    for cls in classes:
        names = sorted(f.name.split(".", 2)[2] for f in fams.values() if f.name.split(".")[1] == cls.name)
        causes = {}
        for rname, kinds in why.get(cls.name, {}).items():
            if "ok" in kinds.values():
                continue
            probed = [c for c in kinds.values() if ":" in c or c == "search_misses_planted"]
            causes[rname] = probed[0] if probed else next(iter(kinds.values()))
        if not names and not causes:  # say why, even where the service keeps no records at all
            tools = cls.manifest["tools"]
            code = sum(t["status"] == "compiled" for t in tools)
            causes["*"] = (
                f"no_records: its {len(tools)} tools keep no record type"
                f" ({code} run as code: computations or lookups; the rest are simulated)"
            )
        out[cls.name] = {"families": names, "causes": causes}
    return out


def compiled_families() -> dict[str, Family]:
    """Families for the compiled services of the current library (by name)."""
    from compoworld.compiler.runtime import CompiledService
    from compoworld.services import registry

    reg = registry()
    if "email" not in reg:
        return {}
    return _families_for(tuple(c for _, c in sorted(reg.items()) if issubclass(c, CompiledService)))
