"""End states a careful user rejects, built by editing the reference's final state (issue 23's
follow-ups): the attack suite of `tasks.adversaries` runs them beside its own.

- mixed_row: a log the work appends to (sheet rows, CSV lines) with two of its new rows' cells
  swapped, or one new row holding an older row's value;
- extra_row: the log with one more row (a new row's copy with an older row's value in one column);
- state_changed: a record the work touches moved to another state (a ticket it should leave open
  resolved or closed, a deal moved on), and one it leaves alone in the same table too;
- wrong_mention: a message that must name a person naming someone else instead (by their @-mention).

Each is a state, not a tool call, so it needs no tool to exist for it and costs one verification.
"""

from __future__ import annotations

import copy
import csv
import io
import re
from collections.abc import Iterator
from typing import Any

from compoworld.tasks.model import Task
from compoworld.verify.predicates import MESSAGE_TABLES, at_path, new_rows, sheet_rows

WORK_ATTACKS = ("mixed_row", "extra_row", "state_changed", "wrong_mention")
_STATE = {"status", "state", "stage", "dealstage", "pipeline_stage", "hs_pipeline_stage", "lifecyclestage"}
_STATE |= {"closed", "is_closed", "archived", "is_archived", "resolved", "done", "completed", "trashed"}


def _with(final: dict[str, Any], service: str, table: str, key: Any, rec: Any) -> dict[str, Any]:
    """The final state with one record replaced (copy-on-write: only that table is copied)."""
    state = copy.copy(final)
    state["services"] = {**final["services"], service: {**final["services"][service]}}
    state["services"][service][table] = {**final["services"][service][table], key: rec}
    return state


def _record(state: dict[str, Any], service: str, table: str, key: str) -> tuple[Any, Any]:
    recs = state.get("services", {}).get(service, {}).get(table)
    if not isinstance(recs, dict):
        return None, None
    rk = next((k for k in recs if str(k) == key), None)
    return rk, recs.get(rk) if rk is not None else None


def work_attacks(task: Task, final: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(attack, what it did, end state) for each attack that applies to the task."""
    s0 = task.initial_state
    for item in task.rubric:
        c = item.check
        if c.get("predicate") == "rows_written":
            yield from _row_attacks(c, s0, final)
    yield from _state_attacks(task, s0, final)
    yield from _mention_attacks(task, final)


# ---- logs -----------------------------------------------------------------------------------
def _row_attacks(c: dict[str, Any], s0: dict[str, Any], final: dict[str, Any]):
    service, table, key, fmt = c["service"], c["table"], c["key"], c.get("format", "cells")
    rk, after = _record(final, service, table, key)
    _, before = _record(s0, service, table, key)
    if not isinstance(after, dict):
        return
    rows = new_rows(before, after, fmt, c.get("path", "content"))
    old = _old_rows(before, fmt, c.get("path", "content"))
    if not rows:
        return
    mixed = [list(r) for r in rows]
    if len(rows) >= 2:
        col = next((i for i in range(min(len(rows[0]), len(rows[1]))) if rows[0][i] != rows[1][i]), None)
        if col is None:
            return
        mixed[0][col], mixed[1][col] = rows[1][col], rows[0][col]
        how = f"two new rows with column {col + 1} swapped"
    else:
        swap = _older_value(rows[0], old)
        if swap is None:
            return
        col, v = swap
        mixed[0][col] = v
        how = f"the new row holding an older row's column {col + 1} ({v!r})"
    state = _rewrite_rows(final, service, table, rk, before, after, fmt, c, rows, mixed)
    if state is not None:
        yield "mixed_row", f"the log with {how} passes", state
    swap = _older_value(rows[0], old) or ((0, rows[-1][0]) if len(rows) > 1 else None)
    if swap is not None:
        extra = list(rows[0])
        extra[swap[0]] = swap[1]
        state = _rewrite_rows(final, service, table, rk, before, after, fmt, c, rows, [*rows, extra])
        if state is not None:
            yield "extra_row", f"the log with one more row {extra!r} passes", state


def _old_rows(before: Any, fmt: str, path: str) -> list[list[Any]]:
    if not isinstance(before, dict):
        return []
    if fmt == "csv":
        from compoworld.verify.predicates import csv_rows

        return csv_rows(at_path(before, path))[1:]  # the header is no row of data
    return [r for k, r in sorted(sheet_rows(before).items()) if k[1] > 1]


def _older_value(row: list[Any], old: list[list[Any]]) -> tuple[int, Any] | None:
    """A column where an older row of the log holds another value (a wrong but plausible cell)."""
    for i in range(len(row) - 1, -1, -1):
        for o in reversed(old):
            if i < len(o) and o[i] not in ("", None) and str(o[i]).strip() != str(row[i]).strip():
                return i, o[i]
    return None


def _rewrite_rows(final, service, table, rk, before, after, fmt, c, rows, new) -> dict[str, Any] | None:
    rec = copy.deepcopy(after)
    if fmt == "csv":
        path = c.get("path", "content")
        text = str(at_path(before, path) or "") if isinstance(before, dict) else ""
        if text and not text.endswith("\n"):
            text += "\n"
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(new)
        rec[path] = text + buf.getvalue()
        return _with(final, service, table, rk, rec)
    a = sheet_rows(before) if isinstance(before, dict) else {}
    places = [k for k, r in sorted(sheet_rows(after).items()) if a.get(k) != r and r]
    if len(places) != len(rows):
        return None
    tab = places[0][0]
    last = max(n for t, n in sheet_rows(after) if t == tab)
    places += [(tab, last + 1 + i) for i in range(len(new) - len(places))]
    cells = rec["sheets"][tab]["cells"]
    for (t, n), r in zip(places, new, strict=False):
        cells = rec["sheets"][t]["cells"]
        row = re.compile(rf"[A-Z]+{n}")  # once per row, not looked up again for every cell
        for ref in [x for x in cells if row.fullmatch(x)]:
            del cells[ref]
        for i, v in enumerate(r):
            cells[f"{_letters(i)}{n}"] = v
    return _with(final, service, table, rk, rec)


def _letters(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


# ---- states ---------------------------------------------------------------------------------
def _state_attacks(task: Task, s0: dict[str, Any], final: dict[str, Any]):
    """A record the work changed, moved to a state another record of its table holds."""
    for service, tables in final.get("services", {}).items():
        before_tables = s0.get("services", {}).get(service, {})
        if tables is before_tables or not isinstance(tables, dict):
            continue
        for table, recs in tables.items():
            old = before_tables.get(table) if isinstance(before_tables, dict) else None
            if not isinstance(recs, dict) or not isinstance(old, dict) or recs is old:
                continue
            for k, rec in recs.items():
                was = old.get(k)
                if not isinstance(rec, dict) or not isinstance(was, dict) or was == rec:
                    continue
                for f, v in rec.items():
                    if f.casefold() not in _STATE or isinstance(v, dict | list):
                        continue
                    other = next(
                        (
                            r[f]
                            for r in old.values()
                            if isinstance(r, dict)
                            and r.get(f) not in (v, was.get(f), None)
                            and type(r.get(f)) is type(v)
                        ),
                        None,
                    )
                    if other is None:
                        continue
                    state = _with(final, service, table, k, {**rec, f: other})
                    yield "state_changed", f"{service}.{table}/{k} {f} set to {other!r} passes", state
                    yield from _sibling_flip(final, service, table, recs, old, f)
                    return  # one touched record's state is enough to show the guard holds


def _sibling_flip(final, service: str, table: str, recs: dict, old: dict, f: str):
    """A record of the same table the work leaves alone ("leave the duplicate we closed alone")
    moved to another state."""
    values = [r.get(f) for r in old.values() if isinstance(r, dict) and r.get(f) is not None]
    for k, rec in recs.items():
        if not isinstance(rec, dict) or old.get(k) != rec or rec.get(f) is None:
            continue
        other = next((v for v in values if v != rec[f] and type(v) is type(rec[f])), None)
        if other is not None:
            state = _with(final, service, table, k, {**rec, f: other})
            yield "state_changed", f"{service}.{table}/{k} (left alone) {f} set to {other!r} passes", state
            return


# ---- people ---------------------------------------------------------------------------------
def _mention_attacks(task: Task, final: dict[str, Any]):
    """A message that must name a person names another user instead, by @-mention."""
    for item in task.rubric:
        c = item.check
        if c.get("predicate") != "message_sent" or c.get("service") not in MESSAGE_TABLES:
            continue
        people = [f for f in c.get("contains", []) if isinstance(f, dict) and f.get("kind") == "person"]
        if not people:
            continue
        service = c["service"]
        table, _, text_path = MESSAGE_TABLES[service]
        recs = final["services"].get(service, {}).get(table)
        old = task.initial_state["services"].get(service, {}).get(table) or {}
        if not isinstance(recs, dict):
            continue
        who = _other_user(final, people)
        if who is None:
            continue
        other = who[0] if service == "chat" else who[1]  # a chat mentions by id; a mail names them
        forms = sorted((x for x in people[0]["forms"] if x), key=len, reverse=True)
        state = None
        for k, r in recs.items():  # every new message, so no other one still names them
            if k in old or not isinstance(r, dict):
                continue
            new = dict(r)
            for path in (text_path, "subject", "htmlBody"):  # every text the message check reads
                if isinstance(r.get(path), str):
                    for f in forms:
                        new[path] = re.sub(
                            rf"(?<![\w@.-]){re.escape(f)}(?![\w@-])", other, new[path], flags=re.I
                        )
            if new != r:
                state = _with(state or final, service, table, k, new)
        if state is not None:
            yield "wrong_mention", f"messages naming {other} instead of {forms[-1]} pass", state
            return


def _other_user(final: dict[str, Any], people: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(@-mention, full name) of a chat user who is none of the people the message must name."""
    named = {x.casefold() for p in people for x in p.get("forms", []) if x}
    for service in final.get("services", {}).values():
        users = service.get("users") if isinstance(service, dict) else None
        if not isinstance(users, dict):
            continue
        for u in users.values():
            if not isinstance(u, dict) or u.get("is_bot"):
                continue
            ids = {str(u.get(f, "")).casefold() for f in ("email", "name", "real_name")}
            words = {w.casefold() for w in str(u.get("real_name", "")).split()}
            if not (ids | words) & named and isinstance(u.get("id"), str) and u.get("real_name"):
                return f"<@{u['id']}>", str(u["real_name"])
    return None
