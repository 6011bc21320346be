"""Read-only access to tables inside snapshots, including the SQL service's serialised database."""

from __future__ import annotations

import hashlib
import pickle
import sqlite3
from collections.abc import Callable
from typing import Any

from compoworld.core.state import META, forget_oldest
from compoworld.services.sql.service import decode_image

_DB = "_sqlite"
# decoded databases by image: a gate run verifies many snapshots that share one unchanged SQL image
# (an image is an immutable string; the decoded tables are only read)
_DECODED: dict[str, dict[str, dict[str, Any]]] = {}
_DECODED_MAX = 64


def _decoded(image: str) -> dict[str, dict[str, Any]]:
    """The tables of one serialised database, rows by id (or rowid), decoded once per image."""
    hit = _DECODED.get(image)
    if hit is not None:
        return hit
    out: dict[str, dict[str, Any]] = {}
    db = sqlite3.connect(":memory:")
    db.deserialize(decode_image(image))
    names = [
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
    ]
    for name in names:
        cur = db.execute(f'SELECT rowid AS "__rowid__", * FROM "{name}"')
        cols = [d[0] for d in cur.description]
        rows = {}
        for r in cur:
            rec = dict(zip(cols, r, strict=True))
            key = rec.pop("__rowid__")
            rows[str(rec.get("id", key))] = {
                k: (v.hex() if isinstance(v, bytes) else v) for k, v in rec.items()
            }
        out[name] = _interned(name, rows)
    db.close()
    if len(_DECODED) >= _DECODED_MAX:
        forget_oldest(_DECODED)  # the oldest image first
    _DECODED[image] = out
    return out


# decoded tables by their content: a table an image shares with another (every table a write left
# alone) is decoded to the very same object, so checks and kept verdicts compare it by identity
# (decoded tables are only read); tables of up to 4096 rows, 256 of them
_INTERNED: dict[bytes, dict[str, Any]] = {}


def _interned(name: str, rows: dict[str, Any]) -> dict[str, Any]:
    if len(rows) > 4096:
        return rows
    # pickled, not JSON: an infinite REAL and a NULL, 1 and 1.0 are other tables
    key = hashlib.blake2b(pickle.dumps((name, rows), 5), digest_size=16).digest()
    hit = _INTERNED.get(key)
    if hit is not None:
        return hit
    if len(_INTERNED) >= 256:
        forget_oldest(_INTERNED)
    _INTERNED[key] = rows
    return rows


class StateView:
    """Tables of one snapshot by (service, table); SQL tables are decoded once per snapshot."""

    def __init__(self, snapshot: dict[str, Any] | None) -> None:
        self.snapshot = snapshot or {"services": {}}
        self._sql: dict[str, dict[str, dict[str, Any]]] = {}
        self._texts: dict[int, tuple[Any, str]] = {}
        # as the s0 of checks: the records that differ between its tables and another view's,
        # by the pair (`predicates._pair`), for as long as this view lives
        self.pairs: dict[tuple[int, int], list[Any]] = {}

    def text_of(self, record: Any, render: Callable[[Any], str]) -> str:
        """`render(record)` for a record of this snapshot, computed once per view (several checks
        read the same changed record; the record is kept beside its text, so its id stays its own)."""
        hit = self._texts.get(id(record))
        if hit is None or hit[0] is not record:
            hit = self._texts[id(record)] = (record, render(record))
        return hit[1]

    def services(self) -> dict[str, Any]:
        return self.snapshot.get("services", {})

    def table(self, service: str, table: str) -> dict[str, Any]:
        svc = self.services().get(service)
        if svc is None:
            return {}
        if _DB in svc and table not in svc:
            return self._sql_table(service, svc[_DB]["image"], table)
        return svc.get(table) or {}

    def _sql_table(self, service: str, image: str, table: str) -> dict[str, Any]:
        cache = self._sql.get(service)
        if cache is None:
            cache = self._sql[service] = _decoded(image)
        return cache.get(table, {})

    def tables(self, service: str) -> list[str]:
        svc = self.services().get(service) or {}
        names = [t for t in svc if t not in (META, _DB)]
        if _DB in svc:
            self._sql_table(service, svc[_DB]["image"], "")
            names += list(self._sql.get(service, {}))
        return names
