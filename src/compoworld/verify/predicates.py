"""The predicate library: named, typed, declarative checks over (s0, s_final, final_answer).

A check is data: ``{"predicate": "record_exists", "service": "chat", "table": "messages", "where": {...}}``.
Predicates test goals, not paths: they look for *some* record with the right fields, so every
equivalent correct end state passes. Text matches ignore case and runs of whitespace.

`where` maps a dotted field path to a matcher. A path walks dicts and fans out over lists
("attendees.email" matches if any attendee's email matches). A matcher is a plain value (equality;
for a list field, membership) or one operator: {"eq"|"ne"|"contains"|"contains_all"|"in"|"startswith"|
"gte"|"lte"|"empty": value}, or an equivalence operator that accepts the forms a person would:
{"at": ISO date or instant} (any written date form and time zone), {"phone": number},
{"person": [email, name, ...]}, {"approx": [value, tolerance]}, {"not_contains": text}.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from compoworld.core.query import norm
from compoworld.core.state import META
from compoworld.verify.answers import commitment_problem
from compoworld.verify.asides import named_aside, record_aside
from compoworld.verify.forms import contains_phone, contains_when, person_matches, same_phone, same_when
from compoworld.verify.meaning import amounts, at_name, carries, is_numeric, names_value, num_of, word_in
from compoworld.verify.state_view import StateView


@dataclass
class CheckContext:
    s0: StateView
    final: StateView
    answer: str | None
    # False where only the verdict is used (`verifier.Verdicts`, the gates): a check may then skip
    # the diagnosis of a miss and stop counting once it knows; its verdict is the same
    explain: ClassVar[bool] = True


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
                if part.isdigit() and not any(isinstance(x, dict) and part in x for x in v):
                    nxt.extend(v[int(part) : int(part) + 1])  # "sheets.0.cells": one item by index
                else:
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
    if isinstance(b, str) and _ISO_DAY.match(b) and isinstance(a, str):
        return _text(a) == _text(b) or same_when(a, b)  # the same day or instant, in another form or zone
    if isinstance(a, str) and isinstance(b, str) and _SYSTEM_VALUE.fullmatch(b.strip()):
        return a.strip() == b.strip()  # an enum value, key or flag: its case matters to the system
    return _text(a) == _text(b)


_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
# one token of letters, digits and separators, not an address: how systems spell enum values, keys,
# flags and codes ('waitlist', 'closedwon', 'feature:beta-api', 'ENG-7'); a person's words have spaces
_SYSTEM_VALUE = re.compile(
    r"(?=.*[a-z])(?!.*@)[A-Za-z0-9_:./#-]+|(?=.*[A-Z])(?!.*@)[A-Z0-9_:./#-]*[_:-][A-Z0-9_:./#-]*"
)


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
    # a fact is a value or a typed fact ({"kind": "person", "forms": [email, name]}, see verify.meaning)
    "contains": lambda vals, a: any(text_has(str(v), a) for v in vals if v is not None),
    "contains_all": lambda vals, a: all(any(text_has(str(v), x) for v in vals if v is not None) for x in a),
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
    "at": lambda vals, a: any(same_when(v, a) for v in vals),
    "phone": lambda vals, a: any(same_phone(v, a) for v in vals),
    "person": lambda vals, a: any(person_matches(v, a if isinstance(a, list) else [a]) for v in vals),
    "approx": lambda vals, a: any(
        (x := _num(v)) is not None and abs(x - float(a[0])) <= float(a[1]) for v in vals
    ),
    "not_contains": lambda vals, a: all(_text(a) not in _text(v) for v in vals),
}


def _fresh(ctx: CheckContext, service: str, table: str) -> list[dict[str, Any]]:
    """Records that are new or changed since s0 (what the episode did)."""
    before, after = ctx.s0.table(service, table), ctx.final.table(service, table)
    if before is after:  # copy-on-write snapshots share an untouched table: nothing is fresh
        return []
    return [r for _, r in _written(before, after, ctx.s0.pairs)]


# ---- record predicates --------------------------------------------------------------------
class RecordArgs(_Args):
    service: str
    table: str
    where: dict[str, Any]
    new: bool = False  # only records created or changed during the episode
    count: int = 1  # at least this many matching records


@predicate("record_exists", RecordArgs)
def record_exists(ctx: CheckContext, a: RecordArgs) -> tuple[bool, str]:
    recs = _fresh(ctx, a.service, a.table) if a.new else list(ctx.final.table(a.service, a.table).values())
    if not ctx.explain:
        return _at_least(recs, a.where, max(a.count, 1)), ""
    hits = sum(1 for r in recs if isinstance(r, dict) and match(r, a.where))
    detail = f"{hits} matching record(s) in {a.service}.{a.table}"
    if hits < max(a.count, 1):
        detail += ": " + _record_miss(recs, a)
    return hits >= max(a.count, 1), detail


def _at_least(recs: list[Any], where: dict[str, Any], n: int) -> bool:
    """At least `n` of the records match (counting stops there)."""
    for r in recs:
        if isinstance(r, dict) and match(r, where):
            n -= 1
            if n <= 0:
                return True
    return False


def _record_miss(recs: list[Any], a: RecordArgs) -> str:
    """What was looked for and the record that comes closest, with the fields it misses."""
    want = "looked for " + ("a new record" if a.new else "a record") + " with "
    want += ", ".join(f"{p}={_short(m)}" for p, m in a.where.items())
    best: tuple[int, str] | None = None
    for r in recs:
        if not isinstance(r, dict):
            continue
        bad = [p for p, m in a.where.items() if not match(r, {p: m})]
        if best is None or len(bad) < best[0]:
            rid = r.get("id", "?")
            best = (len(bad), f"{rid} has " + ", ".join(f"{p}={_short(_values(r, p))}" for p in bad[:3]))
    if best is None:
        return want + ("; nothing was created or changed there" if a.new else "; the table is empty")
    return want + f"; nearest: {best[1]}"


def _short(v: Any) -> str:
    s = repr(v[0] if isinstance(v, list) and len(v) == 1 else v)
    return s if len(s) <= 80 else s[:77] + "..."


@predicate("record_absent", RecordArgs)
def record_absent(ctx: CheckContext, a: RecordArgs) -> tuple[bool, str]:
    recs = _fresh(ctx, a.service, a.table) if a.new else list(ctx.final.table(a.service, a.table).values())
    if not ctx.explain:
        return not _at_least(recs, a.where, max(a.count, 1)), ""
    hits = sum(1 for r in recs if isinstance(r, dict) and match(r, a.where))
    return hits < max(a.count, 1), f"{hits} matching record(s) in {a.service}.{a.table}"


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
    to: str | list[str] | None = None  # the recipient, in any of these forms (email, name, id)
    contains: list[Any] = []  # values or typed facts (a person by name or address)
    subject_contains: str | None = None
    exclusive: bool = False  # every recipient of the matching message is one of `to` (no extra people)
    exclude: list[str] = []  # rival values (a decoy's): a message that names one does not count


def _recipients(service: str, r: dict[str, Any]) -> list[Any]:
    _, to_path, _ = MESSAGE_TABLES[service]
    extra = _values(r, "cc") + _values(r, "bcc") if service == "email" else []
    return _values(r, to_path) + extra


def _message_text(service: str, r: dict[str, Any]) -> str:
    _, _, text_path = MESSAGE_TABLES[service]
    return " ".join(
        str(x) for x in _values(r, text_path) + _values(r, "subject") + _values(r, "htmlBody") if x
    )


def _sent(ctx: CheckContext, service: str) -> list[dict[str, Any]]:
    table = MESSAGE_TABLES[service][0]
    out = []
    for r in _fresh(ctx, service, table):
        if service == "email" and "SENT" not in r.get("labelIds", []):
            continue
        if service == "sms" and r.get("direction") != "outbound-api":
            continue
        out.append(r)
    return out


def text_has(text: str, fact: Any) -> bool:
    """The text carries the fact, by meaning (`verify.meaning.carries`): a number in another notation
    or with its currency, a date in another form or zone, a phone number, a synonym of a verb."""
    return carries(text, fact)


def _sent_to(ctx: CheckContext, a: MessageArgs) -> Iterator[dict[str, Any]]:
    """The messages sent to `a.to` (only to them, where `a.exclusive`), in order."""
    forms = [a.to] if isinstance(a.to, str) else list(a.to or [])
    for r in _sent(ctx, a.service):
        rcpt = _recipients(a.service, r)
        if forms and not any(person_matches(v, forms) for v in rcpt):
            continue
        if a.exclusive and not all(person_matches(v, forms) for v in rcpt):
            continue
        yield r


def _messages(ctx: CheckContext, a: MessageArgs, aside: bool = False) -> list[dict[str, Any]]:
    """The messages sent that match (without `ctx.explain`: the first one, if any). `aside`: a
    person the facts name counts only where the text does not name them aside (`verify.asides`):
    "Mei Haddad is out too" in a post that asks her cover asks nobody else."""
    out = []
    people = (
        [
            str(x)
            for f in a.contains
            if isinstance(f, dict) and f.get("kind") == "person"
            for x in f.get("forms") or []
            if x and not str(x).startswith(("@", "<@"))  # a handle addresses them: never aside
        ]
        if aside
        else []
    )
    for r in _sent_to(ctx, a):
        text = _message_text(a.service, r)
        if people:
            text = named_aside(text, people)
        # every condition must hold: the rival reading, the dearest, is asked last
        if not (
            all(text_has(text, c) for c in a.contains)
            and (a.subject_contains is None or _text(a.subject_contains) in _text(r.get("subject")))
        ):
            continue
        if a.exclude and _names_rival(text, a.contains, a.exclude):
            continue
        out.append(r)
        if not ctx.explain:
            break
    return out


def _names_rival(text: str, facts: list[str], rivals: list[str]) -> bool:
    """The text names a rival value as a word of its own, once the facts asked for are taken out
    (a rival inside the right value, "Engineer" in "Senior Engineer", names nothing); a rival in
    labelled context ("X is no longer with the company") names no rival either."""
    rest = _text(_outside_context(text, facts, rivals))
    forms = [
        x for f in facts for x in (f.get("forms") or [f.get("value")] if isinstance(f, dict) else [f]) if x
    ]
    for f in sorted(map(str, forms), key=len, reverse=True):
        rest = rest.replace(_text(f), " ")
    return any(_names(rest, v, "text", 0.0) or at_name(rest, v) for v in rivals if _text(v))


@predicate("message_sent", MessageArgs)
def message_sent(ctx: CheckContext, a: MessageArgs) -> tuple[bool, str]:
    if a.service not in MESSAGE_TABLES:
        return False, f"no message table known for service {a.service!r}"
    hits = _messages(ctx, a)
    if hits:
        return True, f"{len(hits)} matching message(s) sent"
    parts = _message_in_parts(ctx, a)
    if parts:
        return True, f"one message sent in {parts} posts to one place"
    if not ctx.explain:
        return False, ""
    return False, f"0 matching message(s) sent: {_message_miss(ctx, a)}"


def _message_in_parts(ctx: CheckContext, a: MessageArgs) -> int:
    """How many posts to one place, none naming a rival, carry what one message must between them
    (a careful colleague may split a long message: the owner's list in two posts); 0 if none do."""
    groups: dict[str | None, list[tuple[dict[str, Any], str]]] = {}
    for r in _sent_to(ctx, a):
        text = _message_text(a.service, r)
        if a.exclude and _names_rival(text, a.contains, a.exclude):
            continue
        groups.setdefault(place(r), []).append((r, text))
    for where, posts in groups.items():
        if where is None or len(posts) < 2:
            continue
        text = " ".join(t for _, t in posts)
        subject = a.subject_contains is None or any(
            _text(a.subject_contains) in _text(r.get("subject")) for r, _ in posts
        )
        if subject and all(text_has(text, c) for c in a.contains):
            return len(posts)
    return 0


def _message_miss(ctx: CheckContext, a: MessageArgs) -> str:
    """What was looked for and the sent message that comes closest, with what it lacks (so a player
    or a trainer sees why the check failed)."""
    forms = [a.to] if isinstance(a.to, str) else list(a.to or [])
    article = "an" if a.service[:1] in "aeiou" else "a"
    want = f"looked for {article} {a.service} message" + (f" to {forms[0]!r}" if forms else "")
    if a.contains:
        want += " carrying " + ", ".join(_fact_label(f) for f in a.contains)
    if a.subject_contains:
        want += f" with {a.subject_contains!r} in its subject"
    best: tuple[int, str] | None = None
    for r in _sent(ctx, a.service):
        rcpt = _recipients(a.service, r)
        why, cost = [], 0
        if forms and not any(person_matches(v, forms) for v in rcpt):
            why.append(f"goes to {', '.join(map(str, rcpt)) or 'nobody'}")
            cost += 10
        elif a.exclusive and not all(person_matches(v, forms) for v in rcpt):
            why.append("also goes to " + ", ".join(str(v) for v in rcpt if not person_matches(v, forms)))
            cost += 5
        text = _message_text(a.service, r)
        missing = [f for f in a.contains if not text_has(text, f)]
        if missing:
            why.append("does not carry " + ", ".join(_fact_label(f) for f in missing))
            cost += len(missing)
        if a.exclude and _names_rival(text, a.contains, a.exclude):
            why.append(
                "names a ruled-out value (" + ", ".join(x for x in a.exclude if word_in(text, x))[:80] + ")"
            )
            cost += 3
        if a.subject_contains is not None and _text(a.subject_contains) not in _text(r.get("subject")):
            why.append(f"its subject is {r.get('subject')!r}")
            cost += 1
        if best is None or cost < best[0]:
            rid = r.get("id") or r.get("ts") or r.get("sid") or "?"
            best = (cost, f"message {rid} {'; '.join(why)}: {text[:120]!r}")
    return want + (f"; nearest: {best[1]}" if best else f"; no {a.service} message was sent")


@predicate("message_not_sent", MessageArgs)
def message_not_sent(ctx: CheckContext, a: MessageArgs) -> tuple[bool, str]:
    if a.service not in MESSAGE_TABLES:
        return True, f"no message table known for service {a.service!r}"
    # no diagnosis of a miss here: a miss is what this check wants; a person it must not ask may be
    # named aside, as the person guards read free text (`value_not_written`)
    hits = _messages(ctx, a, aside=True)
    return not hits, f"{len(hits)} matching message(s) sent"


class EventArgs(_Args):
    service: str = "calendar"
    attendees: list[str] = []  # each an email (a name is accepted too, through `names`)
    names: list[str] = []  # the attendees' names, same order as `attendees`
    date: str | None = None  # the day of the start (any written form in the record passes)
    start: str | None = None  # the start instant, ISO; any zone or written form that names it passes
    duration_minutes: int | None = None
    summary_contains: str | None = None
    exclusive: bool = False  # nobody else is invited (the organizer aside)


def _minutes(r: dict[str, Any]) -> int | None:
    a, b = _values(r, "start"), _values(r, "end")
    if not a or not b:
        return None
    x, y = parse_when_dt(a[0]), parse_when_dt(b[0])
    return int((y - x).total_seconds() // 60) if x and y else None


def parse_when_dt(v: Any):
    from datetime import datetime

    from compoworld.verify.forms import parse_when

    w = parse_when(str(v))
    return w if isinstance(w, datetime) else None


@predicate("event_scheduled", EventArgs)
def event_scheduled(ctx: CheckContext, a: EventArgs) -> tuple[bool, str]:
    table = {"calendar": "events", "meet": "meetings"}.get(a.service, "events")
    best: tuple[int, str] | None = None
    for r in _fresh(ctx, a.service, table):
        starts = _values(r, "start") + _values(r, "start.dateTime")
        start = next((x for x in starts if isinstance(x, str)), None)
        people = _values(r, "attendees.email") + [x for x in _values(r, "attendees") if isinstance(x, str)]
        forms = [[e, *([a.names[i]] if i < len(a.names) else [])] for i, e in enumerate(a.attendees)]
        why = []
        missing = [f[0] for f in forms if not any(person_matches(p, f) for p in people)]
        if missing:
            why.append("does not invite " + ", ".join(missing))
        if a.exclusive and not missing:
            organizer = _values(r, "organizer") + _values(r, "calendar_id")
            extra = [p for p in people if not any(person_matches(p, f) for f in forms) and p not in organizer]
            if extra:
                why.append("also invites " + ", ".join(map(str, extra)))
        if (a.date and not same_when(start, a.date)) or (a.start and not same_when(start, a.start)):
            why.append(f"starts {start!r}")
        if a.duration_minutes is not None and _minutes(r) != a.duration_minutes:
            why.append(f"lasts {_minutes(r)} minutes")
        if a.summary_contains and _text(a.summary_contains) not in _text(
            " ".join(str(x) for x in _values(r, "summary") + _values(r, "title") if x)
        ):
            why.append(f"its title is {(_values(r, 'summary') + _values(r, 'title') or [''])[0]!r}")
        if not why:
            return True, f"event {r.get('id')} matches"
        if best is None or len(why) < best[0]:
            best = (len(why), f"event {r.get('id')} {'; '.join(why)}")
    want = "looked for a new event" + (f" with {', '.join(a.attendees)}" if a.attendees else "")
    want += f" at {a.start or a.date}" if a.start or a.date else ""
    want += f" for {a.duration_minutes} minutes" if a.duration_minutes is not None else ""
    return False, f"no new event matches: {want}" + (
        f"; nearest: {best[1]}" if best else "; none was created"
    )


# ---- content ------------------------------------------------------------------------------
class TextArgs(_Args):
    service: str
    table: str
    paths: list[str]  # dotted paths of the text in the record (their texts are read together)
    key: str | None = None  # a record the work changes (its new text is read); None: a created record
    where: dict[str, Any] = {}  # what else a created record matches (its anchors)
    facts: list[Any] = []  # every one must be carried (`verify.meaning.carries`)
    substance: list[str] = []  # at least one of these (the text says what it is about, not "Done.")
    forbid: list[str] = []  # none may be named (a rival's value, a secret in clear text)
    count: int = 1  # at least this many records carry it (one note per contact)
    # a guard: no new record names what it must not, however many the work wrote (none need exist:
    # the goals ask for the records); one combined message is as good as the reference's several
    every: bool = False
    # amounts the work's other texts here must carry (a guard has no facts of its own): a rival worked
    # through to one of them is a breakdown
    worked: list[Any] = []
    # the people of `forbid` (full names, addresses) a sentence may name aside, to say why they are
    # not the one ("X is no longer with the company"), and those the work names in another role (a
    # payee): a mention that addresses or proposes them still names them (`verify.asides`)
    aside: list[str] = []
    subjects: list[str] = []


def new_text(before: Any, after: Any, path: str) -> str:
    """What the work wrote at `path`: the whole value of a new record, else the part that is new
    (an appended paragraph, the items a list gained)."""
    new = _values(after, path) if after is not None else []
    old = _values(before, path) if before is not None else []
    out = []
    for v in new:
        if v in old:
            continue
        if isinstance(v, str):
            for o in old:
                if isinstance(o, str) and o.strip() and o in v:
                    v = v.replace(o, " ")
            out.append(v)
        elif v is not None and not isinstance(v, bool):
            out.append(orjson_text(v) if isinstance(v, dict | list) else str(v))
    return " ".join(out)


def _reads(text: str, a: TextArgs, rcpt: list[Any] = ()) -> tuple[bool, str, int]:  # type: ignore[assignment]
    """(ok, why, how many facts are missing). A person the record is addressed to (to, cc, notify)
    needs no naming in its text: the address names them."""
    missing = [f for f in a.facts if not carries(text, f) and not _addressed(f, rcpt)]
    if missing:
        return False, "the text does not carry " + ", ".join(_fact_label(f) for f in missing), len(missing)
    if a.substance and not any(carries(text, w) for w in a.substance):
        return False, "the text says nothing of what it is about", 1
    rest = _outside_context(text, a.facts, a.forbid)
    if a.aside or a.subjects:
        rest = named_aside(rest, a.aside, a.subjects)
    bad = [
        v for v in a.forbid if names_value(rest, v) and not _worked_through(text, v, [*a.facts, *a.worked])
    ]
    if bad:
        return False, f"the text names {bad[0]!r}, which it must not", 1
    return True, "the text carries every fact", 0


def _worked_through(text: str, rival: Any, facts: list[Any]) -> bool:
    """A rival amount the text works through to an asked one: it names the difference too ("1,094.15
    in all, less 108.25 already credited: 985.90 to approve"), and no hedge sits beside the rival. A
    breakdown a reader can check names no rival; "1,094.15 or maybe 985.90" still does."""
    from compoworld.verify.answers import _CLAUSE, _HEDGE, _spans

    r = num_of(rival) if is_numeric(rival) else None
    if r is None:
        return False
    wants = [num_of(f.get("value") if isinstance(f, dict) else f) for f in facts]
    wants = [w for w in wants if w is not None and abs(w - r) > 0.005]
    found = [v for v, _c, _s, _e in amounts(text)]
    if not wants or not found:
        return False
    for _s, _e, part in _spans(
        text, _CLAUSE
    ):  # the rival's own clause (a question to the approver is no hedge)
        if any(abs(v - r) <= 0.005 for v, *_ in amounts(part)) and _HEDGE.search(part.replace("?", " ")):
            return False
    return any(
        any(abs(w - x) <= 0.005 for x in found) and any(abs(abs(r - w) - d) <= 0.005 for d in found)
        for w in wants
    )


def _addressed(fact: Any, rcpt: list[Any]) -> bool:
    if not (isinstance(fact, dict) and fact.get("kind") == "person" and rcpt):
        return False
    forms = [f for f in fact.get("forms", []) if f]
    return any(person_matches(v, forms) for v in rcpt)


def _outside_context(text: str, facts: list[Any], rivals: list[str] = ()) -> str:  # type: ignore[assignment]
    """The text without its labelled context: a sentence or clause that says what another record or
    person is ("Felix Murphy is no longer with the company", "#1016 was already closed") and carries
    none of the facts asked for. A rival there is context, as in answers (`verify.answers`); a label
    word inside a rival's own name ("Offsite agenda draft") labels nothing."""
    from compoworld.verify.answers import _CLAUSE, _LABEL, _SENTENCE, _spans, _without_values

    if not _LABEL.search(text):
        return text
    names = [str(r) for r in rivals if isinstance(r, str) and _LABEL.search(r)]

    def label(c: str) -> bool:
        return bool(_LABEL.search(_without_values(c, names) if names else c))

    cut: list[tuple[int, int]] = []
    for s0, _e0, sent in _spans(text, _SENTENCE):
        if label(sent) and not any(carries(sent, f) for f in facts):
            cut.append((s0, s0 + len(sent)))
            continue
        for c0, _c1, c in _spans(sent, _CLAUSE):
            if label(c) and not any(carries(c, f) for f in facts):
                cut.append((s0 + c0, s0 + c0 + len(c)))
    out = list(text)
    for x, y in cut:
        out[x:y] = " " * (y - x)
    return "".join(out)


def _fact_label(f: Any) -> str:
    if isinstance(f, dict):
        forms = [x for x in f.get("forms") or [] if x]
        named = next((x for x in forms if " " in str(x)), None)  # the name reads best, beside the address
        person = f"{named} ({forms[0]})" if named and forms and named != forms[0] else (forms or ["?"])[0]
        return repr(f.get("value") or person)
    return repr(f)


@predicate("text_carries", TextArgs)
def text_carries(ctx: CheckContext, a: TextArgs) -> tuple[bool, str]:
    """The text the work wrote carries the facts it must and names none it must not."""
    t0, t1 = ctx.s0.table(a.service, a.table), ctx.final.table(a.service, a.table)
    if a.key is not None:
        rk = next((k for k in t1 if str(k) == a.key), None)
        if rk is None:
            return False, f"{a.service}.{a.table}/{a.key} does not exist"
        before = next((v for k, v in t0.items() if str(k) == a.key), None)
        text = " ".join(new_text(before, t1[rk], p) for p in a.paths)
        if not text.strip():
            return False, f"nothing was written at {', '.join(a.paths)}"
        return _reads(text, a, _addressees(t1[rk]))[:2]
    good, why, least = 0, "no new record", None
    for k, r in t1.items():
        if k in t0 or not isinstance(r, dict) or not match(r, a.where):
            continue
        if a.every:
            ok, w, _n = _reads(" ".join(new_text(None, r, p) for p in a.paths), a, _addressees(r))
            if not ok:
                return False, f"{a.service}.{a.table}/{k}: {w}"
            good += 1
            continue
        ok, w, n = _reads(" ".join(new_text(None, r, p) for p in a.paths), a, _addressees(r))
        good += ok
        if least is None or n < least:  # the detail speaks of the record that comes closest
            why, least = w, n
    if a.every:
        return True, f"none of {good} new record(s) names what it must not"
    if good < max(a.count, 1):
        # one message split in several to the same place (a thread, a channel, an address) reads as one
        places: dict[Any, list[Any]] = {}
        for k, r in t1.items():
            if k not in t0 and isinstance(r, dict) and match(r, a.where) and (p := place(r)) is not None:
                places.setdefault(p, []).append(r)
        split = 0
        for rs in places.values():  # a place with one whole post counts too (count >= 2)
            text = " ".join(new_text(None, r, p) for r in rs for p in a.paths)
            split += _reads(text, a, [x for r in rs for x in _addressees(r)])[0]
        if split >= max(a.count, 1):
            return True, f"{split} place(s) carry it across their new records"
    return good >= max(a.count, 1), f"{good} record(s) carry it" + ("" if good else f" ({why})")


def _addressees(r: Any) -> list[Any]:
    if not isinstance(r, dict):
        return []
    out = []
    for f in RECIPIENT_FIELDS:
        for v in _values(r, f) if f in r else []:
            v = v.get("email") or v.get("address") if isinstance(v, dict) else v
            out.append(v.get("address") if isinstance(v, dict) else v)
    return [v for v in out if v]


# where a record sends something to people: every such field is read, none may hold anyone extra
RECIPIENT_FIELDS = ("to", "cc", "bcc", "to_emails", "cc_emails", "bcc_emails", "recipients", "toRecipients")
RECIPIENT_FIELDS += ("ccRecipients", "bccRecipients", "to_addresses", "cc_addresses", "bcc_addresses")
# where a new message goes: its addresses, or the channel, ticket or thread it is posted in
PLACE_FIELDS = (
    *RECIPIENT_FIELDS,
    "channel",
    "channel_id",
    "ticket_id",
    "thread_id",
    "threadId",
    "conversation_id",
)


# what a message says, to tell its parts apart (ids and timestamps differ in every post)
_SPLIT_TEXT = ("text", "body", "content", "message", "subject", "html", "body_text", "comment")
# the figures of a post (amounts, dates, counts), not the digits of a record's id ("EXP-7930",
# "R960477"): posts that differ only in figures are one message sent again with another figure (an
# alternative), posts about different records (one per claim) are parts
_FIGURES = re.compile(r"(?<!\w)(?<![A-Za-z]-)\d[\d,.-]*")


def place(r: dict[str, Any]) -> str | None:
    """Where a new record goes (None: it goes nowhere in particular, such as a note or a row)."""
    # addresses first: a mail service gives each new mail its own thread
    got = {f: r[f] for f in RECIPIENT_FIELDS if r.get(f) not in (None, "", [], {})}
    got = got or {f: r[f] for f in PLACE_FIELDS if r.get(f) not in (None, "", [], {})}
    return orjson_text(got) if got else None


class RecipientArgs(_Args):
    people: list[list[str]]  # the people the work addresses, each in every form that names them
    services: list[str] = []  # empty: every service
    fields: list[str] = list(RECIPIENT_FIELDS)


@predicate("recipients_only", RecipientArgs)
def recipients_only(ctx: CheckContext, a: RecipientArgs) -> tuple[bool, str]:
    """Every message the episode wrote goes only to the people the work needs: to, cc and bcc alike."""
    for service in a.services or sorted(ctx.final.services()):
        if ctx.final.services().get(service) is ctx.s0.services().get(service):
            continue  # a service the episode never touched is shared by both snapshots
        for table in ctx.final.tables(service):
            if table == META:
                continue
            before, after = ctx.s0.table(service, table), ctx.final.table(service, table)
            if before is after:  # an untouched (shared) table sent nothing
                continue
            for k, r in _written(before, after, ctx.s0.pairs):
                if not isinstance(r, dict):
                    continue
                old = before.get(k) or {}
                for f in a.fields:
                    if f not in r:
                        continue
                    was = _values(old, f) if isinstance(old, dict) else []
                    for v in _values(r, f):
                        if v in was or v in (None, ""):
                            continue
                        addr = v.get("email") or v.get("address") if isinstance(v, dict) else v
                        if isinstance(addr, dict):
                            addr = addr.get("address")
                        if not any(
                            person_matches(addr, forms) or any(same_phone(addr, f) for f in forms)
                            for forms in a.people
                        ):
                            return (
                                False,
                                f"{service}.{table}/{k} {f} holds {addr!r}, whom the work does not need",
                            )
    return True, "every message goes only to the people the work needs"


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


class AnswerMatchArgs(_Args):
    value: str
    kind: str = "text"  # text | number | date | phone | person
    alternates: list[str] = []  # other forms of the same value (a person's name beside the email)
    exclude: list[str] = []  # competing candidates: naming any of them fails the answer
    tolerance: float = 0.01
    currency: str | None = None  # a money value: its currency (an amount in another one fails)
    unit: str | None = None  # a quantity's unit (minutes, days, %): the same quantity in another fails
    many: bool = False  # the question asks for a list: several values are the answer, not a dump


_WORDS = {
    w: i
    for i, w in enumerate(
        (
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        )
    )
}


_NEGATED = re.compile(
    r"\b(?:not|isn't|wasn't|never|no longer|rather than|instead of)\s+(?:the\s+|order\s+|#)*[\w#@.,-]+", re.I
)


def _names(answer: str, value: str, kind: str, tol: float) -> bool:
    answer = _NEGATED.sub(" ", answer)  # "it is not #1018" does not name #1018
    if kind == "number":
        want = _num(value)
        return want is not None and any(abs(n - want) <= tol for n in _answer_numbers(answer))
    if kind == "text" and value.startswith("#") and _names(answer, value[1:], kind, tol):
        return True  # "order 1018" names order #1018
    if kind == "date":
        return contains_when(answer, value)
    if kind == "phone":
        return contains_phone(answer, value)
    return re.search(r"(?<![\w@.-])" + re.escape(_text(value)) + r"(?![\w@-])", _text(answer)) is not None


def _answer_numbers(answer: str) -> list[float]:
    """The quantities an answer states: numbers and number words; dates, times and references
    (#5, goal 5's "#") aside."""
    text = re.sub(r"\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?|\b\d{1,2}:\d{2}\b|#\s*\d+", " ", answer)
    out = [n for m in re.findall(r"-?\d[\d,]*\.?\d*", text) if (n := _num(m.rstrip(".,"))) is not None]
    return out + [float(_WORDS[w]) for w in re.findall(r"[a-z]+", text.casefold()) if w in _WORDS]


_HEDGE = re.compile(r"^\s*(or|/|to|-|–|~|,|and|vs\.?|between)\s*$", re.I)


def _hedged(answer: str, want: float, tol: float) -> bool:
    """The value is offered beside another number as an alternative: "5 or 7", "5870 / 5880", "5-7"."""
    text = re.sub(r"\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?", " ", answer)
    spans = [(m.start(), m.end(), _num(m.group().rstrip(".,"))) for m in re.finditer(r"\d[\d,]*\.?\d*", text)]
    spans = [s for s in spans if s[2] is not None]
    for (_a0, a1, x), (b0, _b1, y) in zip(spans, spans[1:], strict=False):
        if (abs(x - want) <= tol) != (abs(y - want) <= tol) and _HEDGE.match(text[a1:b0].replace("$", "")):
            return True
    return False


@predicate("answer_matches", AnswerMatchArgs)
def answer_matches(ctx: CheckContext, a: AnswerMatchArgs) -> tuple[bool, str]:
    """The answer names the value (in any accepted form) and names none of the competing candidates.
    A numeric answer states one number: a hedge ("5, 6 or 7") or a range fails."""
    if not ctx.answer:
        return False, "no answer"
    ans = str(ctx.answer)
    if not any(_names(ans, v, a.kind, a.tolerance) for v in [a.value, *a.alternates]):
        return False, f"answer {ans[:200]!r} does not give {a.value!r}"
    if a.kind == "number" and _hedged(ans, _num(a.value) or 0.0, a.tolerance):
        return False, "answer offers the value beside other candidates"
    hit = _hit(ans, [a.value, *a.alternates], a.kind, a.tolerance)
    others = [x for x in a.exclude if a.kind != "number"]
    why = commitment_problem(ans, a.value, a.kind, hit, others, a.currency, a.unit, a.many, a.tolerance)
    if why:
        return False, why
    # a competing candidate counts unless its own clause labels it ("#1018 was already booked")
    context = _labelled_context(ans, [a.value, *a.alternates], a.exclude)
    rivals = [
        x
        for x in a.exclude
        if _names(ans, x, a.kind, a.tolerance) and not _names(context, x, a.kind, a.tolerance)
    ]
    if rivals and not a.many:
        return False, f"answer also names competing candidate(s) {rivals}"
    return True, "answer commits to the value and names no competitor"


def _hit(answer: str, values: list[str], kind: str, tol: float) -> tuple[int, int] | None:
    """Where the answer gives the value (the first such span)."""
    from compoworld.verify.meaning import amounts

    if kind == "number":
        for v in values:
            want = _num(v)
            for x, _cur, s, e in amounts(answer):
                if want is not None and abs(x - want) <= tol:
                    return s, e
    for v in values:
        for form in (v, v.lstrip("#")):
            m = re.search(re.escape(form), answer, re.I)
            if m:
                return m.start(), m.end()
    return None


def _labelled_context(answer: str, values: list[str] | None = None, rivals: list[str] = ()) -> str:  # type: ignore[assignment]
    """The clauses, and the sentences without the value, that label other records (already booked,
    closed, not counted); a label word inside a candidate's own name ("Offsite agenda draft")
    labels nothing."""
    from compoworld.verify.answers import _CLAUSE, _LABEL, _SENTENCE, _spans, _without_values

    def label(c: str) -> bool:
        return bool(_LABEL.search(_without_values(c, [*(values or []), *rivals])))

    parts = [c for _s, _e, c in _spans(answer, _CLAUSE) if label(c)]
    for _s, _e, c in _spans(answer, _SENTENCE):
        if label(c) and not any(v and v.casefold() in c.casefold() for v in values or []):
            parts.append(c)
    return " | ".join(parts)


# ---- traps ------------------------------------------------------------------------------------
class NotWrittenArgs(_Args):
    service: str
    value: str
    tables: list[str] = []  # empty: every table of the service
    # longer names of the target that contain the value ("Acme Retail Group" for a decoy "Acme
    # Retail"): the value inside one of them names the target, not the decoy
    unless_in: list[str] = []
    # the value is a person (a full name or an address): a free-text field may name them aside, to say
    # why they are not the one (`verify.asides`); a recipient, a title or a mention still names them
    person: bool = False


@predicate("value_not_written", NotWrittenArgs)
def value_not_written(ctx: CheckContext, a: NotWrittenArgs) -> tuple[bool, str]:
    """No record created or changed in the service carries the (decoy) value."""
    plain = _text(a.value)
    want = _bounded_rx(plain)
    if _MONEYISH.fullmatch(a.value.strip()):
        return _amount_not_written(ctx, a)
    for table in a.tables or ctx.final.tables(a.service):
        if table == META:
            continue
        before, after = ctx.s0.table(a.service, table), ctx.final.table(a.service, table)
        if before is after:  # an untouched (shared) table holds no write
            continue
        for k, r in _written(before, after, ctx.s0.pairs):
            text = ctx.final.text_of(r, _record_text)
            if plain not in text:  # the cheap test first; the regex decides only where it is there
                continue
            if a.person and want.search(text):
                text = _record_text(record_aside(r, [a.value]))
            for phrase in a.unless_in:
                text = text.replace(_text(phrase), " ")
            old = before.get(k)
            if want.search(text) and not (old is not None and want.search(ctx.s0.text_of(old, _record_text))):
                return False, f"a write in {a.service}.{table} carries {a.value!r}"
    # the detail names the guard's scope (from play: "no write carries X" beside an email naming X,
    # where the guard reads the log's service only) and, for a person, what it allows
    if a.person:
        return True, f"no write in {a.service} names {a.value!r} as one to act (a mention aside is allowed)"
    return True, f"no write in {a.service} carries {a.value!r}"


# a pure function of the value, kept: a gate run checks the same decoy values in dozens of states,
# more distinct patterns than `re`'s own cache holds
@lru_cache(maxsize=4096)
def _bounded_rx(plain: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.-])" + re.escape(plain) + r"(?![\w@-])")


def _record_text(r: Any) -> str:
    return _text(orjson_text(r))


_MONEYISH = re.compile(r"[$€£]?\s*-?\d[\d,]*\.\d+|[$€£]?\s*-?\d{1,3}(?:,\d{3})+")


def _amount_not_written(ctx: CheckContext, a: NotWrittenArgs) -> tuple[bool, str]:
    """An amount is banned in every notation: "$12,000.00" and "12,000 USD" name 12000.00 too; a
    numeric field holding it counts as well."""
    want = float(re.sub(r"[^\d.-]", "", a.value))
    for table in a.tables or ctx.final.tables(a.service):
        if table == META:
            continue
        before, after = ctx.s0.table(a.service, table), ctx.final.table(a.service, table)
        if before is after:  # an untouched (shared) table holds no write
            continue
        for k, r in _written(before, after, ctx.s0.pairs):
            old = before.get(k)
            olds = {str(v) for v in _leaves(old)} if old is not None else set()
            for v in _leaves(r):
                if str(v) in olds or isinstance(v, bool):
                    continue
                if isinstance(v, int | float) and abs(v - want) < 0.005:
                    return False, f"a write in {a.service}.{table} carries {a.value!r}"
                if isinstance(v, str) and names_value(v, a.value):
                    return False, f"a write in {a.service}.{table} carries {a.value!r}"
    return True, f"no write in {a.service} carries {a.value!r}"


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, dict):
        return [x for y in v.values() for x in _leaves(y)]
    if isinstance(v, list):
        return [x for y in v for x in _leaves(y)]
    return [v]


def orjson_text(r: Any) -> str:
    import orjson

    return orjson.dumps(r, default=str).decode()


# ---- logs: rows of a sheet or a CSV file ----------------------------------------------------
class RowsArgs(_Args):
    service: str
    table: str
    key: str  # the spreadsheet or file the rows go into
    rows: list[list[Any]]  # the rows the work adds, each a list of cells in column order
    format: str = "cells"  # "cells": a sheet's tabs of A1 cells; "csv": CSV text at `path`
    path: str = "content"  # the text field of a CSV file
    exclusive: bool = True  # no other row is added or changed
    currency: str | None = None  # an amount cell naming another currency is another amount


_CELL = re.compile(r"^([A-Z]+)(\d+)$")


def _col(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def _cell_at(ref: str) -> tuple[int, int] | None:
    """(row number, column index) of an A1 reference, or None."""
    return _cell_kept(ref) if len(ref) <= 16 else _cell_parse(ref)


# a pure function of the text, kept: a gate run reads one log's refs in dozens of states
@lru_cache(maxsize=1 << 14)
def _cell_kept(ref: str) -> tuple[int, int] | None:
    return _cell_parse(ref)


def _cell_parse(ref: str) -> tuple[int, int] | None:
    m = _CELL.match(ref)
    return (int(m.group(2)), _col(m.group(1))) if m else None


# a log's rows by the snapshot record or text they were read from (`new_rows`): a gate run reads
# the same s0 log in every state; snapshot records are values, never changed in place (the record
# is held, so its id is not reused), and the rows handed out are only read
_ROWS: dict[Any, tuple[Any, Any]] = {}


def _rows_of(source: Any, read: Callable[[Any], Any]) -> Any:
    """`read(source)`, kept for logs of up to 64 KB of text or 16k cells (at most 64 of them: an
    agent's huge files are read each time, never held)."""
    key = source if isinstance(source, str) else id(source)
    hit = _ROWS.get(key)
    if hit is not None and hit[0] is source:
        return hit[1]
    rows = read(source)
    if isinstance(source, str):
        small = len(source) <= 1 << 16
    else:
        tabs = source.get("sheets") if isinstance(source, dict) else None
        cells = [t.get("cells") for t in tabs if isinstance(t, dict)] if isinstance(tabs, list) else []
        small = sum(len(c) for c in cells if isinstance(c, dict)) <= 1 << 14
    if small:
        if len(_ROWS) >= 64:
            _ROWS.clear()
        _ROWS[key] = (source, rows)
    return rows


def sheet_rows(rec: Any) -> dict[tuple[int, int], list[Any]]:
    """(tab, row number) -> the row's cells in column order, of a spreadsheet record."""
    out: dict[tuple[int, int], dict[int, Any]] = {}
    tabs = rec.get("sheets") if isinstance(rec, dict) else None
    for t, tab in enumerate(tabs if isinstance(tabs, list) else []):
        cells = tab.get("cells") if isinstance(tab, dict) else None
        for ref, v in (cells or {}).items() if isinstance(cells, dict) else ():
            # `_cell_at` inlined (this runs for every cell of every changed log in every state)
            at = _cell_kept(ref) if type(ref) is str and len(ref) <= 16 else _cell_at(str(ref))
            if at is not None:
                row = out.get((t, at[0]))
                if row is None:
                    row = out[(t, at[0])] = {}
                row[at[1]] = v
    return {k: _trim([c.get(i) for i in range(max(c) + 1)]) for k, c in out.items() if c}


def csv_rows(text: Any) -> list[list[Any]]:
    import csv
    import io

    if not isinstance(text, str):
        return []
    return [_trim(r) for r in csv.reader(io.StringIO(text)) if any(x.strip() for x in r)]


def _trim(row: list[Any]) -> list[Any]:
    row = list(row)
    while row and row[-1] in (None, ""):
        row.pop()
    return row


def new_rows(before: Any, after: Any, fmt: str, path: str = "content") -> list[list[Any]]:
    """The rows the work added or changed: a sheet's rows whose cells differ from s0; a CSV file's
    rows beyond those it had (as a multiset: a row written twice counts twice)."""
    if fmt == "csv":
        old = Counter(
            tuple(map(str, r)) for r in _rows_of(at_path(before, path) if before else None, csv_rows)
        )
        out = []
        for r in _rows_of(at_path(after, path) if after else None, csv_rows):
            k = tuple(map(str, r))
            if old[k] > 0:
                old[k] -= 1
            else:
                out.append(r)
        return out
    a = _rows_of(before, sheet_rows) if before else {}
    b = _rows_of(after, sheet_rows) if after else {}
    return [r for k, r in sorted(b.items()) if a.get(k) != r and r]


def cell_same(value: Any, want: Any, currency: str | None = None) -> bool:
    """A cell holds the wanted value as a person would read it: an amount in any notation
    ("$1,200.00" is 1200; "1,200.00 EUR" is not, where the log is in dollars), a date in any form,
    text with case and spacing aside."""
    from compoworld.verify.meaning import amounts, is_numeric, num_of

    if _text(value) == _text(want):
        return True
    if want in (None, "") or value in (None, ""):
        return False
    if is_numeric(want):
        w = num_of(re.sub(r"[^\d.,-]", "", str(want)))
        got = amounts(str(value))
        whole = len(got) == 1 and not re.sub(r"[\d.,$€£\s-]|USD|EUR|GBP", "", str(value), flags=re.I)
        cur = got[0][1] if got else None
        return w is not None and whole and abs(got[0][0] - w) < 0.005 and cur in (None, currency or "USD")
    if isinstance(want, str) and _ISO_DAY.match(want):
        return same_when(value, want)
    return False


# a log's free-text columns, by their header: a colleague's reference or note may say more than the
# wanted text around it (from play: "Refund for downtime (usage 2026-02-10 to 2026-02-13)" for the
# request's subject), so long as it says the wanted text and no other row's
_FREE = re.compile(r"^(references?|ref|notes?|comments?|memo|descriptions?|details)$")


def free_columns(rows: list[list[Any]]) -> frozenset[int]:
    """The columns of a log whose header (its first row) names free text."""
    head = rows[0] if rows else []
    return frozenset(i for i, h in enumerate(head) if isinstance(h, str) and _FREE.match(_text(h)))


def _says(value: Any, want: Any) -> bool:
    w = _text(want)
    return bool(w) and re.search(r"(?<!\w)" + re.escape(w) + r"(?!\w)", _text(value)) is not None


def _free_same(value: Any, want: Any, rivals: tuple[Any, ...]) -> bool:
    """A free-text cell holds the wanted text, more words around it allowed, and no rival row's."""
    return _says(value, want) and not any(_says(value, r) and not _says(want, r) for r in rivals)


def _row_same(
    row: list[Any],
    want: list[Any],
    currency: str | None = None,
    free: dict[int, tuple[Any, ...]] | None = None,  # free-text column -> the other rows' cells in it
) -> bool:
    if free and any(
        i < len(row) and i < len(want) and not cell_same(row[i], want[i], currency) for i in free
    ):  # a free-text cell that says more: read it as free text, the other cells as they are
        return all(
            (_free_same(row[i], want[i], free[i]) if i in free else cell_same(v, want[i], currency))
            if i < len(want)
            else v in (None, "")
            for i, v in enumerate(row)
        ) and len(row) >= len(want)
    try:  # a pure function of the cells, their types included (1, 1.0 and True read apart)
        key = (tuple((type(v), v) for v in row), tuple((type(v), v) for v in want), currency)
        hit = _SAME_ROWS.get(key)
    except TypeError:  # a cell JSON holds but Python cannot hash (a list): read it each time
        key, hit = None, None
    if hit is not None:
        return hit
    n = max(len(row), len(want))
    same = all(
        cell_same(row[i] if i < len(row) else "", want[i] if i < len(want) else "", currency)
        for i in range(n)
    )
    # kept only for rows of short cells: an agent's huge rows are read each time, never held
    if key is not None and sum(len(str(v)) for v in (*row, *want)) <= 1024:
        if len(_SAME_ROWS) >= 1 << 14:
            _SAME_ROWS.clear()
        _SAME_ROWS[key] = same
    return same


# `_row_same` by its cells: a gate run pairs the same written rows with the same wanted ones in
# dozens of states
_SAME_ROWS: dict[Any, bool] = {}


def _pairing(
    rows: list[list[Any]],
    wants: list[list[Any]],
    currency: str | None = None,
    free: frozenset[int] = frozenset(),
) -> list[int | None]:
    """For each wanted row, the written row it is matched to (one each, by augmenting paths)."""

    def rivals(j: int) -> dict[int, tuple[Any, ...]] | None:
        if not free:
            return None
        return {i: tuple(w[i] for k, w in enumerate(wants) if k != j and i < len(w)) for i in free}

    fits = []
    for j, w in enumerate(wants):
        riv = rivals(j)  # once per wanted row
        fits.append([i for i, r in enumerate(rows) if _row_same(r, w, currency, riv)])
    owner: dict[int, int] = {}

    def place(j: int, seen: set[int]) -> bool:
        for i in fits[j]:
            if i in seen:
                continue
            seen.add(i)
            if i not in owner or place(owner[i], seen):
                owner[i] = j
                return True
        return False

    for j in range(len(wants)):
        place(j, set())
    got: list[int | None] = [None] * len(wants)
    for i, j in owner.items():
        got[j] = i
    return got


def log_free_columns(rec: Any, fmt: str, path: str) -> frozenset[int]:
    """The free-text columns of a log by its header row (a CSV file's first line; a sheet's first row)."""
    if fmt == "csv":
        return free_columns(_rows_of(at_path(rec, path), csv_rows)[:1])
    rows = _rows_of(rec, sheet_rows)
    return free_columns([rows[min(rows)]] if rows else [])


def _nearest_row(rows: list[list[Any]], want: list[Any], currency: str | None = None) -> str:
    best, miss = None, None
    for r in rows:
        n = max(len(r), len(want))
        bad = [
            i
            for i in range(n)
            if not cell_same(r[i] if i < len(r) else "", want[i] if i < len(want) else "", currency)
        ]
        if miss is None or len(bad) < len(miss):
            best, miss = r, bad
    if best is None:
        return "no row was written"
    cols = ", ".join(f"column {i + 1} is {best[i] if i < len(best) else ''!r}" for i in (miss or [])[:3])
    return f"nearest {best!r}: {cols}"


@predicate("rows_written", RowsArgs)
def rows_written(ctx: CheckContext, a: RowsArgs) -> tuple[bool, str]:
    """The log gained exactly these rows, one row each, in any order; each row's cells are the
    wanted ones column by column (an amount or a date in any written form; a free-text column, by
    its header, may say more around the wanted text, but not another row's)."""
    t0, t1 = ctx.s0.table(a.service, a.table), ctx.final.table(a.service, a.table)
    rk = next((k for k in t1 if str(k) == a.key), None)
    if rk is None:
        return False, f"{a.service}.{a.table}/{a.key} does not exist"
    before = next((v for k, v in t0.items() if str(k) == a.key), None)
    rows = new_rows(before, t1[rk], a.format, a.path)
    got = _pairing(rows, a.rows, a.currency, log_free_columns(t1[rk], a.format, a.path))
    for j, i in enumerate(got):
        if i is None:
            if not ctx.explain:
                return False, ""
            return False, f"no written row is {a.rows[j]!r} ({_nearest_row(rows, a.rows[j], a.currency)})"
    extra = [r for i, r in enumerate(rows) if i not in set(got)]
    if a.exclusive and extra:
        return False, f"{len(extra)} row(s) written beyond the {len(a.rows)} asked for: {extra[0]!r}"
    return True, f"the {len(a.rows)} row(s) are written, one each"


# ---- states the work must leave as they are ------------------------------------------------
class KeptArgs(_Args):
    service: str
    table: str
    key: str
    field: str  # dotted path of a state (a ticket's status, a deal's stage)
    values: list[Any]  # what it may hold at the end: as it was, or as the work leaves it


@predicate("field_kept", KeptArgs)
def field_kept(ctx: CheckContext, a: KeptArgs) -> tuple[bool, str]:
    """A record the work touches keeps this state ("leave the ticket open"): it ends as it was or as
    the work leaves it, not closed, resolved or moved on by the way."""
    rec = next((v for k, v in ctx.final.table(a.service, a.table).items() if str(k) == a.key), None)
    if rec is None:
        return False, f"{a.service}.{a.table}/{a.key} no longer exists"
    v = at_path(rec, a.field)
    ok = any(v == x or (v is not None and x is not None and _eq(v, x)) for x in a.values)
    # what it may hold, said either way (from play: a pass's "status is 2" read as the requirement,
    # where a reply's Pending, 3, passes too)
    may = " or ".join(map(repr, a.values))
    return ok, f"{a.field} is {v!r}" + (f" ({may} passes)" if ok else f", not {may}")


# ---- collateral damage ----------------------------------------------------------------------
class Allow(_Args):
    service: str
    table: str | None = None
    key: str | None = None
    # field-level: the dotted paths inside the record that may change (None: any); a string field in
    # `grow` must keep its old text (an append, not a rewrite); a list field in `append` gains
    # exactly that many items (one comment, not two)
    fields: list[str] | None = None
    grow: list[str] = []
    append: dict[str, int] = {}
    # documented optional fields the task leaves open (a tool's other parameters): they may be
    # filled where they were empty, with a value naming nothing in `forbid` of the check
    optional: list[str] = []
    remove: bool = False  # the work deletes this record; otherwise deleting it is a change that fails


class Create(_Args):
    service: str
    table: str
    count: int  # at most this many new records


class NoChangesArgs(_Args):
    allow: list[Allow]  # records that may change or be removed (key None: the whole table)
    creates: list[Create] = []  # new records allowed, by table, with a count
    forbid: list[str] = []  # values an optional field may not carry (a decoy's, a rival's)
    # the trap candidates' values: posts to one place that name none count as one message split in
    # parts (None: a task made before that rule, where every post counts)
    rivals: list[str] | None = None


def changed_records(s0: StateView, s1: StateView) -> list[tuple[str, str, Any, str]]:
    """(service, table, key, op) of every record added, removed or changed, UI state aside.

    Keys come straight from the tables: a key may itself contain '/' (a file path)."""
    out = []
    a0, a1 = s0.services(), s1.services()
    for service in sorted(set(a0) | set(a1)):
        ta, tb = a0.get(service, {}), a1.get(service, {})
        if ta is tb or (ta.keys() == tb.keys() and all(ta[t] is tb[t] or ta[t] == tb[t] for t in ta)):
            continue  # copy-on-write snapshots share untouched tables: nothing to look at
        ephemeral = _ephemeral(service)
        for table in sorted(set(s0.tables(service)) | set(s1.tables(service))):
            if table == META or table in ephemeral:  # UI state such as a browser tab is not a change
                continue
            x, y = s0.table(service, table), s1.table(service, table)
            if x is y:
                continue
            out.extend((service, table, key, op) for key, op in _table_changes(x or {}, y or {}, s0.pairs))
    return out


def _pair(x: dict[Any, Any], y: dict[Any, Any], memo: dict[tuple[int, int], list[Any]] | None) -> list[Any]:
    """The entry of a pair of tables: [x, y, (key, op) of each changed record in key order, the
    records of `y` that differ from `x`'s in `y`'s order (None until asked)], kept by the pair in
    `memo`: the s0 view's (`StateView.pairs`), as long as that view lives (a gate run compares s0
    with dozens of states that share most of their tables; a served session's verification lets
    its tables go with its views). Snapshot tables are values, never changed in place; an entry
    holds both tables, so their ids are not reused."""
    hit = memo.get((id(x), id(y))) if memo is not None else None
    if hit is not None and hit[0] is x and hit[1] is y:
        return hit
    out: list[tuple[Any, str]] = []
    if x != y:
        gone = _GONE
        keys = [
            k for k in x.keys() | y.keys() if (a := x.get(k, gone)) is not (b := y.get(k, gone)) and a != b
        ]
        for key in sorted(keys, key=str):
            out.append((key, "add" if key not in x else "remove" if key not in y else "change"))
    entry = [x, y, out, None]
    # small tables are compared again (and often built for one read); a view holds at most 256
    # pairs of tables of up to 4096 records
    if memo is not None and len(x) + len(y) >= 16 and max(len(x), len(y)) <= 4096:
        if len(memo) >= 256:
            memo.clear()
        memo[(id(x), id(y))] = entry
    return entry


def _table_changes(
    x: dict[Any, Any], y: dict[Any, Any], memo: dict[tuple[int, int], list[Any]] | None = None
) -> list[tuple[Any, str]]:
    """(key, op) of each record added, removed or changed from `x` to `y`, in key order."""
    return _pair(x, y, memo)[2]


def _written(
    before: dict[Any, Any], after: dict[Any, Any], memo: dict[tuple[int, int], list[Any]] | None = None
) -> list[tuple[Any, Any]]:
    """(key, record) of each record of `after` that differs from `before`'s, in `after`'s order:
    what `for k, r in after.items(): if before.get(k) == r: continue` visits, at the cost of the
    changes."""
    entry = _pair(before, after, memo)
    if entry[3] is None:
        changed = {k for k, op in entry[2] if op != "remove"}
        entry[3] = (
            [(k, r) for k, r in after.items() if k in changed and before.get(k) != r] if changed else []
        )
    return entry[3]


_DIGIT = re.compile(r"\d")


# fields a record's service keeps from other records (a Slack post's count of replies in its
# thread): a change to them alone is the other record's, which is judged where it is added
_COUNTERS = {"reply_count"}


def _counted_only(ctx: CheckContext, service: str, table: str, key: Any) -> bool:
    before, after = ctx.s0.table(service, table).get(key), ctx.final.table(service, table).get(key)
    if not isinstance(before, dict) or not isinstance(after, dict):
        return False
    paths = list(changed_paths(before, after))
    return bool(paths) and all(p in _COUNTERS for p in paths)


@predicate("no_changes_except", NoChangesArgs)
def no_changes_except(ctx: CheckContext, a: NoChangesArgs) -> tuple[bool, str]:
    asked = {(c.service, c.table): c.count for c in a.creates}  # what the work adds, for the detail
    budget = dict(asked)
    changes = changed_records(ctx.s0, ctx.final)
    for st in list(budget) if a.rivals is not None else ():  # a task made before the rule: every post counts
        # a message split in several to the same place counts once: the adds of a table fit its
        # budget when they go to no more places than it allows (each add going somewhere), with at
        # most two more posts than messages (a split, not a thread of alternatives)
        adds = [ctx.final.table(*st)[k] for s_, t_, k, op in changes if (s_, t_) == st and op == "add"]
        if not budget[st] < len(adds) <= 2 * budget[st] + 2:
            continue
        where = [place(r) if isinstance(r, dict) else None for r in adds]
        if None in where or len(set(where)) > budget[st]:
            continue
        # ... none of them names a decoy or rival (the same work for a rival is no split), and no post
        # repeats another but for its figures (a message sent twice, or again with another amount,
        # gives alternatives, not parts)
        texts = [" ".join(str(r[k]) for k in _SPLIT_TEXT if isinstance(r.get(k), str)) for r in adds]
        shapes = {_FIGURES.sub("#", t) for t in texts}
        # (`rivals` holds every trap value but those the reference's own writes name: a claimant who
        # is also a trap approver is named by the work; `forbid` keeps them, for optional fields)
        banned = a.rivals
        # a rival person named aside ("X, his cover, is out") names no one to act, as in the person
        # guards (`value_not_written`); amounts, ids and codes (with digits) are never read aside
        people = [v for v in banned if isinstance(v, str) and not _DIGIT.search(v) and " " in v.strip()]
        if people:
            texts = [named_aside(t, people) for t in texts]
        if len(shapes) == len(texts) and not any(names_value(t, v) for t in texts for v in banned):
            budget[st] = len(adds)
    for service, table, key, op in changes:
        if op == "add" and budget.get((service, table), 0) > 0:
            budget[(service, table)] -= 1  # one of the records the task asks to create
            continue
        if op == "change" and _counted_only(ctx, service, table, key):
            continue  # a reply in its thread moved the post's count: the reply itself is judged above
        rule = next(
            (
                al
                for al in a.allow
                if al.service == service and al.table in (None, table) and al.key in (None, str(key))
            ),
            None,
        )
        if rule is None:
            if op == "add" and (service, table) in asked:
                # which add is the surplus is not the key order's to say: name them all
                keys = [str(k) for s_, t_, k, o in changes if (s_, t_) == (service, table) and o == "add"]
                return False, (
                    f"unexpected change: {len(keys)} records added to {service}:{table}, the work adds"
                    f" {asked[(service, table)]} ({', '.join(keys)})"
                )
            return False, f"unexpected change: {op} {service}:{table}/{key}"
        if op == "remove" and rule.key is not None and not rule.remove:
            return False, f"unexpected change: remove {service}:{table}/{key} (the work only edits it)"
        if op != "change" or (rule.fields is None and not rule.grow and not rule.append):
            continue
        before, after = ctx.s0.table(service, table)[key], ctx.final.table(service, table)[key]
        for path in changed_paths(before, after):
            if rule.fields is not None and not any(
                path == f or path.startswith(f + ".") for f in rule.fields
            ):
                if _optional_fill(rule, path, before, after, a.forbid):
                    continue
                return False, f"unexpected change: {service}:{table}/{key} field {path}"
        for path in rule.grow:
            old, new = at_path(before, path), at_path(after, path)
            if isinstance(old, str) and old.strip() and old.strip() not in str(new or ""):
                return False, f"{service}:{table}/{key} {path} lost its earlier text (append, do not rewrite)"
        for path, n in rule.append.items():
            old, new = at_path(before, path), at_path(after, path)
            if isinstance(old, list) and isinstance(new, list):
                if len(new) != len(old) + n:
                    return (
                        False,
                        f"{service}:{table}/{key} {path} gained {len(new) - len(old)} item(s), not {n}",
                    )
                if new[: len(old)] != old:
                    return False, f"{service}:{table}/{key} {path}: items that were there before changed"
    return True, "no changes outside the allow-list"


def _optional_fill(rule: Allow, path: str, before: Any, after: Any, forbid: list[str]) -> bool:
    """A documented optional field, empty before, now filled with a value that names no decoy."""
    leaf = path.split(".")[-1]
    if not any(path == f or path.startswith(f + ".") or leaf == f for f in rule.optional):
        return False
    if at_path(before, path) not in (None, "", [], {}):
        return False  # overwriting what was there is not filling in
    text = orjson_text(at_path(after, path))
    return not any(names_value(text, v) for v in forbid)


def changed_paths(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the leaves that differ between two records (dicts are walked; lists and
    scalars compare whole)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k, _GONE) != b.get(k, _GONE):
                out.extend(changed_paths(a.get(k), b.get(k), f"{prefix}{k}."))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a != b:
        out = []  # same length: an item edited in place (a sheet's tab, one attendee)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                out.extend(changed_paths(x, y, f"{prefix}{i}."))
        return out
    return [prefix[:-1]] if a != b else []


_GONE = object()


def at_path(rec: Any, path: str) -> Any:
    """The value at a dotted path of a record (list items by index), or None."""
    for part in path.split("."):
        if isinstance(rec, list) and part.isdigit() and int(part) < len(rec):
            rec = rec[int(part)]
        elif isinstance(rec, dict):
            rec = rec.get(part)
        else:
            return None
    return rec


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
