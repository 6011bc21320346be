"""A JQL subset: `field op value` clauses joined by AND / OR (AND binds tighter), with
=, !=, ~, !~, >, >=, <, <=, IN (...), NOT IN (...), IS [NOT] EMPTY, currentUser(), and ORDER BY.
Parsed into predicates over issue records; nothing is evaluated as code."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

FIELDS = {
    "project": "project",
    "status": "status",
    "assignee": "assignee",
    "reporter": "reporter",
    "priority": "priority",
    "issuetype": "issuetype",
    "type": "issuetype",
    "summary": "summary",
    "description": "description",
    "text": "_text",
    "labels": "labels",
    "component": "components",
    "sprint": "sprint",
    "parent": "parent",
    "epic link": "parent",
    "created": "created",
    "updated": "updated",
    "duedate": "duedate",
    "due": "duedate",
    "key": "id",
    "issuekey": "id",
}
_TOK = re.compile(
    r'\s*(?:("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(!=|>=|<=|!~|=|~|>|<)|([(),])|([\w.@:+-]+(?:\(\))?))',
    re.I,
)


class JqlError(ValueError):
    pass


def parse(
    jql: str, me: str, resolve_user: Callable[[str], str | None]
) -> tuple[Callable[[dict[str, Any]], bool], list[tuple[str, bool]]]:
    text = jql.strip()
    order: list[tuple[str, bool]] = []
    m = re.search(r"\border\s+by\b(.*)$", text, re.I | re.S)
    if m:
        text = text[: m.start()].strip()
        for part in m.group(1).split(","):
            bits = part.split()
            if not bits or bits[0].lower() not in FIELDS:
                raise JqlError(f"cannot order by {part.strip()!r}")
            order.append((FIELDS[bits[0].lower()], len(bits) > 1 and bits[1].lower() == "desc"))
    tokens = _tokens(text)
    if not tokens:
        return (lambda issue: True), order
    pos, pred = _or(tokens, 0, me, resolve_user)
    if pos != len(tokens):
        raise JqlError(f"unexpected {tokens[pos]!r}")
    return pred, order


def _tokens(text: str) -> list[str]:
    out, i = [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        m = _TOK.match(text, i)
        if not m or m.end() == i:
            raise JqlError(f"cannot read JQL at {text[i : i + 20]!r}")
        out.append(next(g for g in m.groups() if g is not None))
        i = m.end()
    return out


def _or(t, i, me, ru):
    i, left = _and(t, i, me, ru)
    while i < len(t) and t[i].upper() == "OR":
        i, right = _and(t, i + 1, me, ru)
        left = (lambda a, b: lambda x: a(x) or b(x))(left, right)
    return i, left


def _and(t, i, me, ru):
    i, left = _clause(t, i, me, ru)
    while i < len(t) and t[i].upper() == "AND":
        i, right = _clause(t, i + 1, me, ru)
        left = (lambda a, b: lambda x: a(x) and b(x))(left, right)
    return i, left


def _val(tok: str, field: str, me: str, ru) -> Any:
    if tok.lower() == "currentuser()":
        return me
    v = tok[1:-1] if tok[:1] in "\"'" else tok
    if field in ("assignee", "reporter"):
        return ru(v) or v
    return v


def _clause(t, i, me, ru):
    if t[i] == "(":
        i, p = _or(t, i + 1, me, ru)
        if i >= len(t) or t[i] != ")":
            raise JqlError("missing ')'")
        return i + 1, p
    name = t[i].strip("\"'").lower()
    if name == "not":
        i, p = _clause(t, i + 1, me, ru)
        return i, lambda x: not p(x)
    if name not in FIELDS:
        raise JqlError(f"field {t[i]!r} does not exist; use one of {', '.join(sorted(set(FIELDS)))}")
    field = FIELDS[name]
    i += 1
    if i >= len(t):
        raise JqlError(f"expected an operator after {name}")
    op = t[i].upper()
    if op == "IS":
        neg = i + 1 < len(t) and t[i + 1].upper() == "NOT"
        j = i + 2 if neg else i + 1
        if j >= len(t) or t[j].upper() not in ("EMPTY", "NULL"):
            raise JqlError("IS must be followed by [NOT] EMPTY")
        return j + 1, lambda x: _empty(x.get(field)) != neg
    if op in ("IN", "NOT"):
        neg = op == "NOT"
        if neg:
            if i + 1 >= len(t) or t[i + 1].upper() != "IN":
                raise JqlError("expected NOT IN")
            i += 1
        if i + 1 >= len(t) or t[i + 1] != "(":
            raise JqlError("IN needs a list in parentheses")
        i += 2
        vals = []
        while i < len(t) and t[i] != ")":
            if t[i] != ",":
                vals.append(_val(t[i], field, me, ru))
            i += 1
        if i >= len(t):
            raise JqlError("missing ')'")
        return i + 1, lambda x: any(_eq(x.get(field), v) for v in vals) != neg
    if op not in ("=", "!=", "~", "!~", ">", ">=", "<", "<="):
        raise JqlError(f"unknown operator {t[i]!r}")
    if i + 1 >= len(t):
        raise JqlError(f"expected a value after {op}")
    v = _val(t[i + 1], field, me, ru)
    return i + 2, _op(field, op, v)


def _empty(v: Any) -> bool:
    return v in (None, "", [])


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return any(_eq(x, b) for x in a)
    return a is not None and str(a).strip().lower() == str(b).strip().lower()


def _op(field: str, op: str, v: Any) -> Callable[[dict[str, Any]], bool]:
    if op == "=":
        return lambda x: _eq(x.get(field), v)
    if op == "!=":
        return lambda x: not _eq(x.get(field), v)
    if op in ("~", "!~"):
        words = str(v).lower().split()

        def contains(x: dict[str, Any]) -> bool:
            hay = (
                f"{x.get('summary', '')} {x.get('description', '')}"
                if field == "_text"
                else str(x.get(field) or "")
            ).lower()
            return all(w in hay for w in words)

        return contains if op == "~" else (lambda x: not contains(x))
    cmp = {
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
    }[op]
    return lambda x: x.get(field) is not None and cmp(str(x.get(field))[: len(str(v))], str(v))
