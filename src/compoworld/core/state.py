"""Canonical state: hashing, diffs, and the copy-on-write record store services keep their state in.

A service's state is a set of named tables, each a dict ``key -> record`` of plain JSON data.
Records are values: a write replaces a record, it never edits one in place. That single rule makes
three things cheap:

- snapshots share unchanged tables (and all records) with the live state, so a snapshot or a reset
  costs what the episode changed, not what the state holds;
- each record's digest is computed once and the hash of a table is their sum, so the hash after k
  writes costs O(k), whatever the size of the state (see `Store`, `HASH_VERSION`);
- a failed call is undone from a small journal of the records it replaced;
- indexes and cached search text stay valid by construction (a record is replaced, never edited).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any, NamedTuple

import orjson

from compoworld.core.query import haystack

HASH_VERSION = 2  # 1: canonical JSON of whole tables; 2: sum of per-record digests (flat in size)
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


def forget_oldest(memo: dict[Any, Any]) -> None:
    """Drop a bounded memo's oldest entry. Threads share such memos (a server verifies sessions in
    threads): another may have dropped that entry, or changed the memo, meanwhile; then nothing is
    dropped now (the memo passes its bound by one entry a thread at most, until the next drop)."""
    with contextlib.suppress(KeyError, RuntimeError, StopIteration):
        del memo[next(iter(memo))]


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


class _Tab:
    """Bookkeeping of one table: its base snapshot, what changed since, digests and indexes."""

    __slots__ = ("base", "delta", "reorder", "dig", "acc", "dirty", "h", "ix", "pos", "npos", "text")

    def __init__(self) -> None:
        self.base: dict | None = None  # the snapshot table it was last copied to/from
        self.delta: set | None = None  # keys written since `base` (None: no base)
        self.reorder = False  # a key of `base` was deleted: undoing in place would reorder keys
        self.dig: dict[Any, tuple[Any, int]] | None = None  # key -> (record, its digest)
        self.acc = 0  # sum of the digests, mod 2**128
        self.dirty: set | None = set()  # keys whose digest may be stale (None: all of them)
        self.h: str | None = None  # cached table hash
        self.ix: dict[str, dict[Any, set]] = {}  # field -> value -> keys
        self.pos: dict[Any, int] | None = None  # key -> insertion rank (the table's order)
        self.npos = 0
        self.text: dict[Any, tuple[Any, tuple, str]] = {}  # key -> (record, fields, search text)

    def forget_order(self) -> None:
        self.ix = {}
        self.pos = None


class Store:
    """Tables of JSON records with an undo journal, copy-on-write snapshots and incremental hashes.

    Hash (version `HASH_VERSION`): each record has a digest of ``[key, record]``; a table's hash is
    the sum of its records' digests (mod 2**128) and its size, so it is independent of order and a
    write costs one record's digest. A service's hash combines its tables' hashes.

    Restore to the snapshot a table was last copied to or from undoes only the keys written since,
    in place; restore to the last snapshot visits only the tables written since.

    Indexes (`lookup`) and cached search text (`text_of`) are kept by the store on every put,
    delete, rollback and restore, so services read by key instead of scanning whole tables.
    """

    __slots__ = ("tables", "_tabs", "_journal", "_changed", "_snap", "_hash", "_saved_hash", "_memo", "_mid")

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Any]] = {META: {}}
        self._tabs: dict[str, _Tab] = {}
        self._journal: list[tuple[str, Any, Any, bool]] = []
        self._changed: set[str] = set()  # tables written since the last snapshot()/restore()
        self._snap: dict[str, dict] | None = None  # what the last snapshot()/restore() made current
        self._hash: str | None = None  # the service-level hash while nothing changes
        self._saved_hash: str | None = None  # ... as it was before the current call
        self._memo: dict[tuple[int, Any], tuple[Any, int]] = {}  # (id(record), key) -> (record, digest)
        self._mid = False  # a snapshot was taken while writes were uncommitted

    def _tab(self, table: str) -> _Tab:
        tab = self._tabs.get(table)
        if tab is None:
            tab = self._tabs[table] = _Tab()
        return tab

    # ---- writes (journaled) -------------------------------------------------------------
    def put(self, table: str, key: Any, record: Any) -> None:
        t = self.tables.get(table)
        if t is None:
            if not self._journal:
                self._saved_hash = self._hash
            t = self.tables[table] = {}
            self._journal.append((table, _NEW_TABLE, None, False))
        tab = self._tabs.get(table) or self._tab(table)
        old = t.get(key, _MISSING)
        self._note(table, tab, key, old, record)
        t[key] = record

    def delete(self, table: str, key: Any) -> Any:
        t = self.tables[table]
        tab = self._tabs.get(table) or self._tab(table)
        old = t[key]
        self._note(table, tab, key, old, _MISSING)
        if tab.base is not None and key in tab.base:
            tab.reorder = True
        del t[key]
        return old

    def _note(self, table: str, tab: _Tab, key: Any, old: Any, new: Any) -> None:
        if not self._journal:
            self._saved_hash = self._hash
        self._hash = None
        d = tab.delta
        added = d is not None and key not in d
        if added:
            d.add(key)  # type: ignore[union-attr]
        self._journal.append((table, key, old, added))
        tab.h = None
        if tab.dirty is not None:
            tab.dirty.add(key)
        self._changed.add(table)
        if tab.ix:
            _reindex(tab, key, old, new)
        if tab.pos is not None:
            if old is _MISSING:
                tab.pos[key] = tab.npos
                tab.npos += 1
            elif new is _MISSING:
                del tab.pos[key]

    # ---- transactions -------------------------------------------------------------------
    def commit(self) -> None:
        if self._journal:
            self._journal.clear()
        self._mid = False

    def rollback(self) -> None:
        if not self._journal:
            return
        for table, key, old, added in reversed(self._journal):
            if key is _NEW_TABLE:
                if not self.tables.get(table):
                    self.tables.pop(table, None)
                    self._tabs.pop(table, None)
                continue
            t = self.tables[table]
            tab = self._tabs[table]
            cur = t.get(key, _MISSING)
            if tab.ix:
                _reindex(tab, key, cur, old)
            if tab.dirty is not None:
                tab.dirty.add(key)
            if old is _MISSING:
                t.pop(key, None)
                if tab.pos is not None:
                    tab.pos.pop(key, None)
            else:
                if cur is _MISSING and tab.pos is not None:  # re-inserted: it goes to the end
                    tab.pos[key] = tab.npos
                    tab.npos += 1
                t[key] = old
            if added:
                tab.delta.discard(key)  # type: ignore[union-attr]
            tab.h = None
        if self._mid:  # a snapshot saw the writes just undone: it is no base for these tables
            for table, *_ in self._journal:
                tab = self._tabs.get(table)
                if tab is not None:
                    tab.reorder = True
            self._snap = None
            self._mid = False
        self._journal.clear()
        self._hash = self._saved_hash  # contents are back, so is the hash

    # ---- snapshot / restore -------------------------------------------------------------
    def snapshot(self) -> dict[str, dict]:
        """The tables as plain data, sharing every unchanged table (and all records) with the
        previous snapshot; nothing changed since the last one gives the very same object."""
        if self._snap is not None and not self._changed and len(self._snap) == len(self.tables):
            return self._snap
        out = {}
        for name, live in self.tables.items():
            tab = self._tabs.get(name) or self._tab(name)
            if tab.base is not None and not tab.delta and not tab.reorder:
                out[name] = tab.base
            else:
                copy = dict(live)
                tab.base, tab.delta, tab.reorder = copy, set(), False
                out[name] = copy
        self._snap = out
        self._changed.clear()
        if self._journal:
            self._mid = True
        return out

    def restore(self, snap: dict[str, dict]) -> None:
        if snap is self._snap:  # back to the last snapshot: visit only the tables written since
            names: Any = list(self._changed)
        else:
            names = [*self.tables, *(n for n in snap if n not in self.tables)]
        for name in names:
            src = snap.get(name)
            if src is None:
                if name in self.tables:
                    del self.tables[name]
                    self._tabs.pop(name, None)
                    self._hash = None
                continue
            tab = self._tabs.get(name) or self._tab(name)
            if tab.base is src and tab.delta is not None and not tab.reorder:
                d = tab.delta
                if not d:
                    continue  # untouched since this very snapshot
                live = self.tables[name]
                for key in d:  # undo in place: updated keys keep their place, added ones go
                    cur = live.get(key, _MISSING)
                    old = src.get(key, _MISSING)
                    if tab.ix:
                        _reindex(tab, key, cur, old)
                    if old is _MISSING:
                        live.pop(key, None)
                        if tab.pos is not None:
                            tab.pos.pop(key, None)
                    else:
                        live[key] = old
                    if tab.dirty is not None:
                        tab.dirty.add(key)
                tab.delta = set()
            else:
                self.tables[name] = dict(src)
                tab.base, tab.delta, tab.reorder = src, set(), False
                known = _KNOWN.get(id(src))
                if known is not None and known[0] is src:  # digested before: adopt its digests
                    tab.dig, tab.acc, tab.dirty = dict(known[1]), known[2], set()
                else:
                    tab.dirty = None  # every digest is checked (by identity) at the next hash
                tab.forget_order()
            tab.h = None
            self._hash = None
        self._snap = snap
        self._changed.clear()
        self._journal.clear()
        self._mid = False

    def written(self) -> dict[str, set | None]:
        """Per table written since the last snapshot()/restore(): the keys written (a superset of
        those that differ), or None where the store cannot tell (compare the whole table). What a
        caller diffs instead of every record (persona worlds' day patches)."""
        out: dict[str, set | None] = {}
        for name in self._changed:
            tab = self._tabs.get(name)
            ok = tab is not None and tab.base is not None and tab.delta is not None
            out[name] = set(tab.delta) if ok else None  # type: ignore[union-attr,arg-type]
        return out

    # ---- hash ---------------------------------------------------------------------------
    def _digest(self, key: Any, rec: Any) -> int:
        m = self._memo.get((id(rec), key))  # a digest covers the key too: one record, two keys, two digests
        if m is not None and m[0] is rec:
            return m[1]
        return record_digest(key, rec)

    def _stash(self, key: Any, entry: tuple[Any, int]) -> None:
        if len(self._memo) > 4096:
            self._memo.clear()
        self._memo[(id(entry[0]), key)] = entry

    def table_hash(self, name: str) -> str:
        tab = self._tabs.get(name) or self._tab(name)
        if tab.h is not None:
            return tab.h
        t = self.tables[name]
        dig = tab.dig
        if dig is None or tab.dirty is None:  # first hash, or a restore from another snapshot
            old = dig or {}
            dig = {}
            acc = 0
            for k, r in t.items():
                e = old.get(k)
                if e is None or e[0] is not r:
                    if e is not None:
                        self._stash(k, e)
                    e = (r, self._digest(k, r))
                dig[k] = e
                acc += e[1]
            tab.dig, tab.acc = dig, acc & _MASK
            if tab.base is not None and not tab.delta and not tab.reorder and len(t) >= 8:
                if len(_KNOWN) >= 512:
                    _KNOWN.clear()
                _KNOWN[id(tab.base)] = (tab.base, dict(dig), tab.acc)
        elif tab.dirty:
            acc = tab.acc
            for k in tab.dirty:
                r = t.get(k, _MISSING)
                e = dig.get(k)
                if e is not None and e[0] is r:
                    continue
                if e is not None:
                    acc -= e[1]
                    self._stash(k, e)
                if r is _MISSING:
                    dig.pop(k, None)
                else:
                    e = (r, self._digest(k, r))
                    dig[k] = e
                    acc += e[1]
            tab.acc = acc & _MASK
        tab.dirty = set()
        tab.h = f"{len(t)}:{tab.acc:032x}"
        return tab.h

    def state_hash(self) -> str:
        h = self._hash
        if h is None:
            h = self._hash = combine({name: self.table_hash(name) for name in self.tables})
            if not self._journal:
                self._saved_hash = h
        return h

    # ---- indexes ------------------------------------------------------------------------
    def _order(self, tab: _Tab, t: dict) -> dict[Any, int]:
        if tab.pos is None:
            tab.pos = {k: i for i, k in enumerate(t)}
            tab.npos = len(t)
            tab.ix = {}
        return tab.pos

    def lookup(self, table: str, field: str, value: Any) -> list[Any]:
        """The records whose `field` equals `value`, in table order (what a scan would give).

        Built on first use, then kept by every write, rollback and restore. `value` must be
        hashable; records whose field holds an unhashable value never match a hashable one."""
        t = self.tables.get(table)
        if t is None:
            return []
        tab = self._tabs.get(table) or self._tab(table)
        pos = self._order(tab, t)
        ix = tab.ix.get(field)
        if ix is None:
            ix = tab.ix[field] = {}
            for k, r in t.items():
                v = _field(r, field)
                if v is not _UNHASHABLE:
                    ix.setdefault(v, set()).add(k)
        try:
            keys = ix.get(value)
        except TypeError:  # an unhashable value: scan, as the caller would
            return [r for r in t.values() if isinstance(r, dict) and r.get(field) == value]
        if not keys:
            return []
        if len(keys) == 1:
            return [t[k] for k in keys]
        return [t[k] for k in sorted(keys, key=pos.__getitem__)]

    def text_of(self, table: str, key: Any, rec: Any, fields: tuple[str, ...]) -> str:
        """The normalised search text of a record's `fields`, cached per record (records are values)."""
        tab = self._tabs.get(table) or self._tab(table)
        e = tab.text.get(key)
        if e is not None and e[0] is rec and e[1] == fields:
            return e[2]
        text = haystack(*(rec.get(f) for f in fields))
        tab.text[key] = (rec, fields, text)
        return text


# Digests of snapshot tables, keyed by identity: a memo of a pure function (the entry holds the
# table, so its id cannot be reused), so environments restored from one shared snapshot (every task
# of a base world) digest each record once. Bounded; clearing it only costs a rehash.
_KNOWN: dict[int, tuple[dict, dict, int]] = {}
_NEW_TABLE: Any = object()
_UNHASHABLE: Any = object()
_MASK = (1 << 128) - 1


def _field(rec: Any, field: str) -> Any:
    if not isinstance(rec, dict):
        return _UNHASHABLE
    v = rec.get(field)
    try:
        hash(v)
    except TypeError:
        return _UNHASHABLE
    return v


def _reindex(tab: _Tab, key: Any, old: Any, new: Any) -> None:
    for field, ix in tab.ix.items():
        a = _UNHASHABLE if old is _MISSING else _field(old, field)
        b = _UNHASHABLE if new is _MISSING else _field(new, field)
        if a is b or (a is not _UNHASHABLE and b is not _UNHASHABLE and a == b and type(a) is type(b)):
            continue
        if a is not _UNHASHABLE:
            s = ix.get(a)
            if s is not None:
                s.discard(key)
                if not s:
                    del ix[a]
        if b is not _UNHASHABLE:
            ix.setdefault(b, set()).add(key)


def record_digest(key: Any, record: Any) -> int:
    """The digest of one record under its key (see `Store`)."""
    return int.from_bytes(hashlib.blake2b(canonical_json([key, record]), digest_size=16).digest(), "big")


def table_hash_full(table: dict[Any, Any]) -> str:
    """A table's hash computed from scratch: what `Store.table_hash` keeps incrementally."""
    return f"{len(table)}:{sum(record_digest(k, r) for k, r in table.items()) & _MASK:032x}"
