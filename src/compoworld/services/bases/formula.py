"""Airtable filterByFormula, the subset agents write: comparisons of {Field} with literals, joined
by AND(...), OR(...), NOT(...), plus FIND('text', {Field}). Parsed, never evaluated as code."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_TOK = re.compile(
    r"\s*(?:(\{[^}]*\})|('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(-?\d+(?:\.\d+)?)|(AND|OR|NOT|FIND|TRUE|FALSE|BLANK)\b|(!=|>=|<=|=|>|<)|([(),]))",
    re.I,
)

Pred = Callable[[dict[str, Any]], bool]


def compile_formula(text: str) -> Pred:
    tokens = _tokenize(text)
    pos, pred = _expr(tokens, 0)
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r}")
    return pred


def _tokenize(text: str) -> list[tuple[str, str]]:
    out, i = [], 0
    text = text.strip()
    while i < len(text):
        m = _TOK.match(text, i)
        if not m or m.end() == i:
            raise ValueError(f"cannot read formula at {text[i : i + 20]!r}")
        kinds = ("field", "str", "num", "kw", "op", "punct")
        kind, val = next((k, v) for k, v in zip(kinds, m.groups(), strict=True) if v is not None)
        out.append((kind, val.upper() if kind == "kw" else val))
        i = m.end()
    return out


def _value(tokens, i) -> tuple[int, Callable[[dict[str, Any]], Any]]:
    kind, val = tokens[i]
    if kind == "field":
        name = val[1:-1]
        return i + 1, lambda rec: rec.get(name)
    if kind == "str":
        s = val[1:-1]
        return i + 1, lambda rec: s
    if kind == "num":
        n = float(val)
        return i + 1, lambda rec: n
    if (
        kind == "kw"
        and val in ("TRUE", "FALSE", "BLANK")
        and tokens[i + 1] == ("punct", "(")
        and tokens[i + 2] == ("punct", ")")
    ):
        v = {"TRUE": True, "FALSE": False, "BLANK": None}[val]
        return i + 3, lambda rec: v
    raise ValueError(f"expected a value, got {val!r}")


def _cmp(a: Any, b: Any, op: str) -> bool:
    if a in ("", []):
        a = None
    if op in ("=", "!="):
        if isinstance(a, str) and isinstance(b, str):
            eq = a.strip().lower() == b.strip().lower()
        elif isinstance(a, bool) or isinstance(b, bool):
            eq = bool(a) == bool(b)
        else:
            try:
                eq = float(a) == float(b) if a is not None and b is not None else a == b
            except (TypeError, ValueError):
                eq = str(a) == str(b)
        return eq if op == "=" else not eq
    if a is None or b is None:
        return False
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        x, y = str(a), str(b)
    return {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]


def _expr(tokens, i) -> tuple[int, Pred]:
    kind, val = tokens[i]
    if kind == "kw" and val in ("AND", "OR", "NOT"):
        if tokens[i + 1] != ("punct", "("):
            raise ValueError(f"{val} needs '('")
        i, args = i + 2, []
        while True:
            i, p = _expr(tokens, i)
            args.append(p)
            if tokens[i] == ("punct", ","):
                i += 1
                continue
            if tokens[i] == ("punct", ")"):
                i += 1
                break
            raise ValueError("expected ',' or ')'")
        if val == "AND":
            return i, lambda rec: all(p(rec) for p in args)
        if val == "OR":
            return i, lambda rec: any(p(rec) for p in args)
        if len(args) != 1:
            raise ValueError("NOT takes one argument")
        return i, lambda rec: not args[0](rec)
    if kind == "kw" and val == "FIND":
        i, needle = _value(tokens, i + 2)
        if tokens[i] != ("punct", ","):
            raise ValueError("FIND takes two arguments")
        i, hay = _value(tokens, i + 1)
        if tokens[i] != ("punct", ")"):
            raise ValueError("expected ')'")
        return i + 1, lambda rec: str(needle(rec)).lower() in str(hay(rec) or "").lower()
    i, left = _value(tokens, i)
    if i < len(tokens) and tokens[i][0] == "op":
        op = tokens[i][1]
        i, right = _value(tokens, i + 1)
        return i, lambda rec: _cmp(left(rec), right(rec), op)
    return i, lambda rec: bool(left(rec))
