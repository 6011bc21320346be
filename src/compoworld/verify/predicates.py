"""The predicate library: named, typed, declarative checks over (s0, s_final, final_answer).

A check is data: ``{"predicate": "record_exists", "service": "chat", "table": "messages", "where": {...}}``.
Predicates test goals, not paths: they look for *some* record with the right fields, so every
equivalent correct end state passes. Text matches ignore case and runs of whitespace.

`where` maps a dotted field path to a matcher. A path walks dicts and fans out over lists
("attendees.email" matches if any attendee's email matches). A matcher is a plain value (equality;
for a list field, membership) or one operator: {"eq"|"ne"|"contains"|"contains_all"|"in"|"startswith"|
"gte"|"lte"|"empty": value}.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from compoworld.core.query import norm
from compoworld.core.state import META
from compoworld.verify.state_view import StateView


@dataclass
class CheckContext:
    s0: StateView
    final: StateView
    answer: str | None


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


Predicate = tuple[type[_Args], Callable[[CheckContext, Any], tuple[bool, str]]]
PREDICATES: dict[str, Predicate] = {}


def predicate(name: str, args: type[_Args]):
    def register(fn: Callable[[CheckContext, Any], tuple[bool, str]]):
        PREDICATES[name] = (args, fn)
        return fn

    return register


# ---- matching ---------------------------------------------------------------------------
def _values(rec: Any, path: str) -> list[Any]:
    cur = [rec]
    for part in path.split("."):
        nxt = []
        for v in cur:
            if isinstance(v, dict):
                if part in v:
                    nxt.append(v[part])
            elif isinstance(v, list):
                nxt.extend(x[part] for x in v if isinstance(x, dict) and part in x)
        cur = nxt
    out = []
    for v in cur:
        out.extend(v if isinstance(v, list) else [v])
    return out


def _text(v: Any) -> str:
    return norm(v) if v is not None else ""


def _num(v: Any) -> float | None:
    try:
        return float(str(v).replace(",", "").replace("$", ""))
    except (TypeError, ValueError):
        return None


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, int | float) or isinstance(b, int | float):
        x, y = _num(a), _num(b)
        return x is not None and y is not None and math.isclose(x, y, rel_tol=0, abs_tol=1e-6)
    return _text(a) == _text(b)


def match(rec: dict[str, Any], where: dict[str, Any]) -> bool:
    for path, m in where.items():
        vals = _values(rec, path)
        if isinstance(m, dict) and len(m) == 1 and next(iter(m)) in OPS:
            op, arg = next(iter(m.items()))
            if not OPS[op](vals, arg):
                return False
        elif not any(_eq(v, m) for v in vals):
            return False
    return True


OPS: dict[str, Callable[[list[Any], Any], bool]] = {
    "eq": lambda vals, a: any(_eq(v, a) for v in vals),
    "ne": lambda vals, a: all(not _eq(v, a) for v in vals),
    "contains": lambda vals, a: any(_text(a) in _text(v) for v in vals),
    "contains_all": lambda vals, a: all(any(_text(x) in _text(v) for v in vals) for x in a),
    "in": lambda vals, a: any(_eq(v, x) for v in vals for x in a),
    "startswith": lambda vals, a: any(_text(v).startswith(_text(a)) for v in vals),
    "gte": lambda vals, a: any(
        (x := _num(v)) is not None and x >= float(a) if _num(a) is not None else str(v) >= str(a)
        for v in vals
    ),
    "lte": lambda vals, a: any(
        (x := _num(v)) is not None and x <= float(a) if _num(a) is not None else str(v) <= str(a)
        for v in vals
    ),
    "empty": lambda vals, a: (not any(v not in (None, "", []) for v in vals)) == bool(a),
}


def _fresh(ctx: CheckContext, service: str, table: str) -> list[dict[str, Any]]:
    """Records that are new or changed since s0 (what the episode did)."""
    before = ctx.s0.table(service, table)
    return [r for k, r in ctx.final.table(service, table).items() if before.get(k) != r]


# ---- record predicates --------------------------------------------------------------------
class RecordArgs(_Args):
    service: str
    table: str
    where: dict[str, Any]
    new: bool = False  # only records created or changed during the episode


@predicate("record_exists", RecordArgs)
def record_exists(ctx: CheckContext, a: RecordArgs) -> tuple[bool, str]:
    recs = _fresh(ctx, a.service, a.table) if a.new else list(ctx.final.table(a.service, a.table).values())
    hits = sum(1 for r in recs if isinstance(r, dict) and match(r, a.where))
    return hits > 0, f"{hits} matching record(s) in {a.service}.{a.table}"


@predicate("record_absent", RecordArgs)
def record_absent(ctx: CheckContext, a: RecordArgs) -> tuple[bool, str]:
    ok, detail = record_exists(ctx, a)
    return not ok, detail


class FieldArgs(_Args):
    service: str
    table: str
    key: str
    field: str
    to: Any = None
    from_: Any = None


@predicate("field_changed", FieldArgs)
def field_changed(ctx: CheckContext, a: FieldArgs) -> tuple[bool, str]:
    before = ctx.s0.table(a.service, a.table).get(a.key)
    after = ctx.final.table(a.service, a.table).get(a.key)
    if after is None:
        return False, f"{a.service}.{a.table}/{a.key} no longer exists"
    b, v = _values(before or {}, a.field), _values(after, a.field)
    if a.from_ is not None and not any(_eq(x, a.from_) for x in b):
        return False, f"{a.field} was {b!r} before, not {a.from_!r}"
    ok = any(_eq(x, a.to) for x in v) if a.to is not None else b != v
    return ok, f"{a.field} is now {v!r}"


class KeyArgs(_Args):
    service: str
    table: str
    key: str


@predicate("record_unchanged", KeyArgs)
def record_unchanged(ctx: CheckContext, a: KeyArgs) -> tuple[bool, str]:
    same = ctx.s0.table(a.service, a.table).get(a.key) == ctx.final.table(a.service, a.table).get(a.key)
    return same, "unchanged" if same else f"{a.service}.{a.table}/{a.key} was changed or removed"


# ---- messages and events ------------------------------------------------------------------
MESSAGE_TABLES: dict[str, tuple[str, str, str]] = {
    # service: (table, recipient path, text path); a sent message is a new record in the table
    "email": ("messages", "to", "body"),
    "chat": ("messages", "channel", "text"),
    "sms": ("messages", "to", "body"),
    "community": ("messages", "channel_id", "content"),
}


class MessageArgs(_Args):
    service: str
    to: str | None = None
    contains: list[str] = []
    subject_contains: str | None = None


def _messages(ctx: CheckContext, a: MessageArgs) -> list[dict[str, Any]]:
    table, to_path, text_path = MESSAGE_TABLES[a.service]
    out = []
    for r in _fresh(ctx, a.service, table):
        if a.service == "email" and "SENT" not in r.get("labelIds", []):
            continue
        if a.service == "sms" and r.get("direction") != "outbound-api":
            continue
        if a.to is not None and not any(
            _eq(v, a.to) for v in _values(r, to_path) + (_values(r, "cc") if a.service == "email" else [])
        ):
            continue
        text = _text(
            " ".join(
                str(x) for x in _values(r, text_path) + _values(r, "subject") + _values(r, "htmlBody") if x
            )
        )
        if all(_text(c) in text for c in a.contains) and (
            a.subject_contains is None or _text(a.subject_contains) in _text(r.get("subject"))
        ):
            out.append(r)
    return out


@predicate("message_sent", MessageArgs)
def message_sent(ctx: CheckContext, a: MessageArgs) -> tuple[bool, str]:
    if a.service not in MESSAGE_TABLES:
        return False, f"no message table known for service {a.service!r}"
    hits = _messages(ctx, a)
    return bool(hits), f"{len(hits)} matching message(s) sent"


@predicate("message_not_sent", MessageArgs)
def message_not_sent(ctx: CheckContext, a: MessageArgs) -> tuple[bool, str]:
    ok, detail = message_sent(ctx, a)
    return not ok, detail


class EventArgs(_Args):
    service: str = "calendar"
    attendees: list[str] = []
    date: str | None = None  # YYYY-MM-DD of the start
    start: str | None = None  # exact start, ISO
    summary_contains: str | None = None


@predicate("event_scheduled", EventArgs)
def event_scheduled(ctx: CheckContext, a: EventArgs) -> tuple[bool, str]:
    table = {"calendar": "events", "meet": "meetings"}.get(a.service, "events")
    for r in _fresh(ctx, a.service, table):
        start = r.get("start") if isinstance(r.get("start"), str) else None
        people = {_text(x) for x in _values(r, "attendees.email") + _values(r, "attendees")}
        if not all(_text(p) in people for p in a.attendees):
            continue
        if a.date and not (start or "").startswith(a.date):
            continue
        if a.start and start != a.start:
            continue
        if a.summary_contains and _text(a.summary_contains) not in _text(r.get("summary")):
            continue
        return True, f"event {r.get('id')} matches"
    return False, "no new event matches"


# ---- answers --------------------------------------------------------------------------------
class AnswerArgs(_Args):
    value: str


class NumberArgs(_Args):
    value: float
    tolerance: float = 0.01


@predicate("answer_equals", AnswerArgs)
def answer_equals(ctx: CheckContext, a: AnswerArgs) -> tuple[bool, str]:
    return ctx.answer is not None and _text(ctx.answer).strip(" .") == _text(
        a.value
    ), f"answer {ctx.answer!r}"


@predicate("answer_contains", AnswerArgs)
def answer_contains(ctx: CheckContext, a: AnswerArgs) -> tuple[bool, str]:
    return ctx.answer is not None and _text(a.value) in _text(ctx.answer), f"answer {ctx.answer!r}"


@predicate("answer_number", NumberArgs)
def answer_number(ctx: CheckContext, a: NumberArgs) -> tuple[bool, str]:
    if ctx.answer is None:
        return False, "no answer"
    nums = [_num(m) for m in re.findall(r"-?[\d,]*\.?\d+", ctx.answer)]
    ok = any(n is not None and abs(n - a.value) <= a.tolerance for n in nums)
    return ok, f"answer {ctx.answer!r}"


# ---- collateral damage ----------------------------------------------------------------------
class Allow(_Args):
    service: str
    table: str | None = None
    key: str | None = None


class NoChangesArgs(_Args):
    allow: list[Allow]


@predicate("no_changes_except", NoChangesArgs)
def no_changes_except(ctx: CheckContext, a: NoChangesArgs) -> tuple[bool, str]:
    s0, s1 = ctx.s0.services(), ctx.final.services()
    for service in sorted(set(s0) | set(s1)):
        ta, tb = s0.get(service, {}), s1.get(service, {})
        if ta is tb or (ta.keys() == tb.keys() and all(ta[t] is tb[t] or ta[t] == tb[t] for t in ta)):
            continue  # copy-on-write snapshots share untouched tables: nothing to look at
        ephemeral = _ephemeral(service)
        for table in sorted(set(ctx.s0.tables(service)) | set(ctx.final.tables(service))):
            if table == META or table in ephemeral:  # UI state such as a browser tab is not a change
                continue
            a_t, b_t = ctx.s0.table(service, table), ctx.final.table(service, table)
            if a_t is b_t or a_t == b_t:
                continue
            a_t, b_t = a_t or {}, b_t or {}
            # keys straight from the tables: a key may itself contain '/' (a file path)
            for key in sorted(set(a_t) | set(b_t), key=str):
                if key in a_t and key in b_t and (a_t[key] is b_t[key] or a_t[key] == b_t[key]):
                    continue
                if not any(
                    al.service == service and al.table in (None, table) and al.key in (None, str(key))
                    for al in a.allow
                ):
                    op = "add" if key not in a_t else "remove" if key not in b_t else "change"
                    return False, f"unexpected change: {op} {service}:{table}/{key}"
    return True, "no changes outside the allow-list"


def validate_check(check: dict[str, Any]) -> tuple[str, _Args]:
    """The predicate name and its validated arguments; ValueError names what is wrong."""
    if not isinstance(check, dict) or "predicate" not in check:
        raise ValueError(f"a check must be an object with a 'predicate' field, got {check!r}")
    name = check["predicate"]
    if name not in PREDICATES:
        raise ValueError(f"unknown predicate {name!r}; known: {', '.join(sorted(PREDICATES))}")
    model, _ = PREDICATES[name]
    args = {("from_" if k == "from" else k): v for k, v in check.items() if k != "predicate"}
    try:
        return name, model.model_validate(args)
    except ValidationError as e:
        raise ValueError(f"invalid arguments for predicate {name!r}: {e.errors(include_url=False)}") from None


def _ephemeral(service: str) -> frozenset[str]:
    from compoworld.services import registry

    cls = registry().get(service)
    return cls.ephemeral_tables if cls is not None else frozenset()
