"""A small, safe spreadsheet formula evaluator: numbers, A1 references, + - * / and parentheses,
and SUM / AVERAGE / MIN / MAX / COUNT over ranges. No Python `eval`: formulas are data."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from compoworld.core.limits import checkpoint

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Z]+\d+(?::[A-Z]+\d+)?)|([A-Z]+)\(|([-+*/()]))")
FUNCS: dict[str, Callable[[list[float]], float]] = {
    "SUM": sum,
    "AVERAGE": lambda xs: sum(xs) / len(xs) if xs else 0.0,
    "MIN": lambda xs: min(xs) if xs else 0.0,
    "MAX": lambda xs: max(xs) if xs else 0.0,
    "COUNT": lambda xs: float(len(xs)),
}


def col_index(col: str) -> int:
    n = 0
    for ch in col:
        n = n * 26 + ord(ch) - 64
    return n


def col_name(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


_REF = re.compile(r"([A-Z]+)(\d+)")


def split_ref(ref: str) -> tuple[str, int]:
    return _split_kept(ref) if len(ref) <= 16 else _split(ref)


@lru_cache(maxsize=1 << 14)  # a pure function of the text: appends and reads scan every cell's ref
def _split_kept(ref: str) -> tuple[str, int]:
    return _split(ref)


@lru_cache(maxsize=1 << 14)  # the row alone, as `split_ref` gives it: `max(map(row_of, cells))` runs in C
def row_of(ref: str) -> int:
    return _split(ref)[1]


def _split(ref: str) -> tuple[str, int]:
    m = _REF.fullmatch(ref)
    if not m:
        raise ValueError(f"bad cell reference {ref!r}")
    return m.group(1), int(m.group(2))


def expand(rng: str) -> list[str]:
    a, _, b = rng.partition(":")
    if not b:
        return [a]
    (ca, ra), (cb, rb) = split_ref(a), split_ref(b)
    c1, c2 = sorted((col_index(ca), col_index(cb)))
    r1, r2 = sorted((ra, rb))
    if (c2 - c1 + 1) * (r2 - r1 + 1) > 10000:
        raise ValueError("range too large")
    return [f"{col_name(c)}{r}" for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]


class CellError(Exception):
    """An error value (#REF!, #DIV/0!, ...) in a referenced cell: it propagates, as in a spreadsheet."""


MAX_DEPTH = 50  # formulas referring to formulas, this deep at most (a cycle reads as #REF!)
MAX_CELLS = 50_000  # cells one read may visit across all its formulas (each formula cell is evaluated once)


class TooMuchWork(Exception):
    """The formulas of one read would visit more than `MAX_CELLS` cells."""


class Evaluation:
    """One read's formula evaluation: each formula cell is evaluated once (chains of ranges over
    formulas cost what the cells are, not the product of the ranges), and the cells visited are
    counted against `MAX_CELLS`, so no formula can make a read run away."""

    def __init__(self, lookup: Callable[[str], Any], max_cells: int | None = None) -> None:
        self.lookup = lookup
        self.memo: dict[str, Any] = {}
        self.visits = 0
        self.max_cells = MAX_CELLS if max_cells is None else max_cells

    def cell(self, ref: str, depth: int) -> Any:
        """The value of cell `ref` (a formula's result, or its raw value)."""
        self.visits += 1
        checkpoint()  # a long read yields its share of the GIL to other sessions (core.limits.Pacer)
        if self.visits > self.max_cells:
            raise TooMuchWork(f"formulas refer to more than {self.max_cells} cells in one read")
        hit = self.memo.get(ref, _UNSEEN)
        if hit is _IN_PROGRESS:  # a cycle
            return "#REF!"
        if hit is not _UNSEEN:
            return hit
        v = self.lookup(ref)
        if isinstance(v, str) and v.startswith("="):
            self.memo[ref] = _IN_PROGRESS
            v = self.formula(v, depth + 1)
        self.memo[ref] = v
        return v

    def formula(self, formula: str, depth: int = 0) -> float | str:
        if depth > MAX_DEPTH:
            return "#REF!"
        try:
            tokens = _tokens(formula[1:].upper())
            pos, val = _expr(tokens, 0, lambda ref: _num(self.cell(ref, depth)))
            if pos != len(tokens):
                return "#ERROR!"
            return int(val) if float(val).is_integer() else round(val, 10)
        except CellError as e:
            return str(e)
        except ZeroDivisionError:
            return "#DIV/0!"
        except (ValueError, IndexError, TypeError, OverflowError):
            return "#ERROR!"


_UNSEEN: Any = object()
_IN_PROGRESS: Any = object()


def evaluate(formula: str, lookup: Callable[[str], Any], ev: Evaluation | None = None) -> float | str:
    """Value of '=...'; errors become '#ERROR!' like a spreadsheet, never exceptions (except
    `TooMuchWork`). Pass one `Evaluation` to share its work across the cells of one read."""
    return (ev or Evaluation(lookup)).formula(formula)


def _num(v: Any) -> float | None:
    if isinstance(v, str) and v.startswith("#"):
        raise CellError(v)
    if isinstance(v, bool) or v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _tokens(s: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(s):
        if s[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(s, i)
        if not m:
            raise ValueError(f"cannot read formula at {s[i:]!r}")
        kind = "num" if m.group(1) else "ref" if m.group(2) else "fn" if m.group(3) else "op"
        out.append((kind, m.group(1) or m.group(2) or m.group(3) or m.group(4)))
        i = m.end()
    return out


def _expr(t, i, cell):
    i, v = _term(t, i, cell)
    while i < len(t) and t[i] in (("op", "+"), ("op", "-")):
        op = t[i][1]
        i, w = _term(t, i + 1, cell)
        v = v + w if op == "+" else v - w
    return i, v


def _term(t, i, cell):
    i, v = _factor(t, i, cell)
    while i < len(t) and t[i] in (("op", "*"), ("op", "/")):
        op = t[i][1]
        i, w = _factor(t, i + 1, cell)
        v = v * w if op == "*" else v / w
    return i, v


def _factor(t, i, cell):
    kind, val = t[i]
    if kind == "num":
        return i + 1, float(val)
    if kind == "op" and val == "-":
        i, v = _factor(t, i + 1, cell)
        return i, -v
    if kind == "op" and val == "(":
        i, v = _expr(t, i + 1, cell)
        if t[i] != ("op", ")"):
            raise ValueError("missing )")
        return i + 1, v
    if kind == "ref":
        if ":" in val:
            raise ValueError("a range needs a function")
        return i + 1, cell(val) or 0.0
    if kind == "fn":
        if val not in FUNCS or t[i + 1][0] != "ref" or t[i + 2] != ("op", ")"):
            raise ValueError(f"unknown function {val}")
        nums = [x for ref in expand(t[i + 1][1]) if (x := cell(ref)) is not None]
        return i + 3, FUNCS[val](nums)
    raise ValueError("unexpected token")
