"""Canonical state: hashing, diffs, and the copy-on-write record store services keep their state in.

A service's state is a set of named tables, each a dict ``key -> record`` of plain JSON data.
Records are values: a write replaces a record, it never edits one in place. That single rule makes
three things cheap:

- snapshots share unchanged tables (and all records) with the live state, so a snapshot or a reset
  costs what the episode changed, not what the state holds;
- hashes are cached per table and recomputed only for tables written since;
- a failed call is undone from a small journal of the records it replaced.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

import orjson

_MISSING: Any = object()
META = "_meta"  # reserved table for engine-owned scalars such as id counters
_SORT = orjson.OPT_SORT_KEYS


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, UTF-8. Stable across processes and machines."""
    try:
        return orjson.dumps(value, option=_SORT)
    except orjson.JSONEncodeError:
        # Lone surrogates (legal in JSON escapes, illegal in UTF-8) or huge ints: the slow exact path.
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def hash_value(value: Any) -> str:
    return digest(canonical_json(value))


def combine(parts: dict[str, str]) -> str:
    """Hash of a mapping of name -> hash; the tree of hashes is itself canonical JSON."""
    return hash_value(parts)


class Change(NamedTuple):
    """One difference between two states. ``path`` is ``table/key`` or ``table/key/field``."""

    service: str
    path: str
    op: str  # "add" | "remove" | "change"
    before: Any
    after: Any


def diff_tables(service: str, a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    """Record- and field-level differences between two snapshots of one service's tables."""
    out: list[Change] = []
    for table in sorted(set(a) | set(b)):
        ta, tb = a.get(table), b.get(table)
        if ta is tb:  # shared by copy-on-write: nothing changed
            continue
        ta = ta if ta is not None else {}
        tb = tb if tb is not None else {}
        for key in sorted(set(ta) | set(tb), key=str):
            ra, rb = ta.get(key, _MISSING), tb.get(key, _MISSING)
            if ra is rb:
                continue
            if ra is _MISSING:
                out.append(Change(service, f"{table}/{key}", "add", None, rb))
            elif rb is _MISSING:
                out.append(Change(service, f"{table}/{key}", "remove", ra, None))
            elif ra != rb:
                if isinstance(ra, dict) and isinstance(rb, dict):
                    for f in sorted(set(ra) | set(rb)):
                        fa, fb = ra.get(f, _MISSING), rb.get(f, _MISSING)
                        if fa != fb:
                            out.append(
                                Change(
                                    service,
                                    f"{table}/{key}/{f}",
                                    "add" if fa is _MISSING else "remove" if fb is _MISSING else "change",
                                    None if fa is _MISSING else fa,
                                    None if fb is _MISSING else fb,
                                )
                            )
                else:
                    out.append(Change(service, f"{table}/{key}", "change", ra, rb))
    return out


class Store:
    """Tables of JSON records with an undo journal, copy-on-write snapshots and cached hashes."""

    __slots__ = ("tables", "_journal", "_base", "_clean", "_base_hash", "_hash", "_saved")

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Any]] = {META: {}}
        self._journal: list[tuple[str, Any, Any]] = []
        self._saved: dict[str, tuple[bool, str | None]] = {}  # caches as they were before this call
        self._base: dict[str, dict] = {}  # table -> snapshot object it was last copied to/from
        self._clean: dict[str, bool] = {}  # table still equals its base
        self._base_hash: dict[str, str] = {}
        self._hash: dict[str, str] = {}

    # ---- writes (journaled) -------------------------------------------------------------
    def _touch(self, table: str) -> None:
        if table not in self._saved:
            self._saved[table] = (self._clean.get(table, False), self._hash.get(table))
            self._clean[table] = False
            self._hash.pop(table, None)

    def put(self, table: str, key: Any, record: Any) -> None:
        t = self.tables.get(table)
        if t is None:
            t = self.tables[table] = {}
        self._touch(table)
        self._journal.append((table, key, t.get(key, _MISSING)))
        t[key] = record

    def delete(self, table: str, key: Any) -> Any:
        t = self.tables[table]
        self._touch(table)
        old = t.pop(key)
        self._journal.append((table, key, old))
        return old

    # ---- transactions -------------------------------------------------------------------
    def commit(self) -> None:
        if self._journal:
            self._journal.clear()
        if self._saved:
            self._saved.clear()

    def rollback(self) -> None:
        for table, key, old in reversed(self._journal):
            t = self.tables[table]
            if old is _MISSING:
                t.pop(key, None)
            else:
                t[key] = old
        self._journal.clear()
        for table, (clean, h) in self._saved.items():  # contents are back, so are their caches
            self._clean[table] = clean
            if h is not None:
                self._hash[table] = h
        self._saved.clear()

    # ---- snapshot / restore / hash ------------------------------------------------------
    def snapshot(self) -> dict[str, dict]:
        out = {}
        for name, live in self.tables.items():
            if self._clean.get(name):
                out[name] = self._base[name]
            else:
                copy = dict(live)
                self._base[name] = copy
                self._clean[name] = True
                h = self._hash.get(name)
                if h is None:
                    self._base_hash.pop(name, None)
                else:
                    self._base_hash[name] = h
                out[name] = copy
        return out

    def restore(self, snap: dict[str, dict]) -> None:
        for name in [n for n in self.tables if n not in snap]:
            del self.tables[name]
            for cache in (self._base, self._clean, self._base_hash, self._hash):
                cache.pop(name, None)
        for name, src in snap.items():
            if self._base.get(name) is src:
                if self._clean.get(name):
                    continue  # untouched since this very snapshot: nothing to do
                h = self._base_hash.get(name)
            else:
                self._base[name] = src
                self._base_hash.pop(name, None)
                h = None
            self.tables[name] = dict(src)
            self._clean[name] = True
            if h is None:
                self._hash.pop(name, None)
            else:
                self._hash[name] = h
        self._journal.clear()
        self._saved.clear()

    def table_hash(self, name: str) -> str:
        h = self._hash.get(name)
        if h is None:
            h = self._hash[name] = hash_value(self.tables[name])
            if self._clean.get(name):
                self._base_hash[name] = h
        return h

    def state_hash(self) -> str:
        return combine({name: self.table_hash(name) for name in self.tables})
