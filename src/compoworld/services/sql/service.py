"""SQL database: a real embedded SQLite engine, modelled on mcp-official-archived_sqlite.json (the
official SQLite MCP server), plus the official Postgres server's read-only `query` tool
(mcp-official-archived_postgres.json).

State is the database itself: snapshots and restores use SQLite's own `serialize` /
`deserialize`, and the hash is taken over the canonical content (schema and sorted rows). An
authorizer allows only plain SQL: no ATTACH, no VACUUM INTO, no extension loading, so no query can
reach the host's files; `random()` and the wall clock ('now', CURRENT_TIMESTAMP) are refused so
that every query is deterministic. Each write runs in a savepoint: a failed statement changes nothing.
"""

from __future__ import annotations

import base64
import re
import sqlite3
import zlib
from typing import Any

from compoworld.core import limits
from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import Change, forget_oldest, hash_value
from compoworld.core.tool import tool
from compoworld.services.sql.seed import seed_sql
from compoworld.services.sql.state import SqlState

DB = "_sqlite"  # the pseudo-table that carries the serialised database in snapshots
MAX_ROWS = 1000
_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_INSERT,
    sqlite3.SQLITE_UPDATE,
    sqlite3.SQLITE_DELETE,
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_VIEW,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_TRANSACTION,
    sqlite3.SQLITE_SAVEPOINT,
    sqlite3.SQLITE_RECURSIVE,
    sqlite3.SQLITE_INSERT,
}
_FORBIDDEN_FUNCS = {"random", "randomblob", "load_extension", "changes", "last_insert_rowid", "total_changes"}
_CLOCK = re.compile(r"'now'|\bcurrent_(timestamp|date|time)\b", re.I)
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


def _authorizer(
    action: int, arg1: str | None, arg2: str | None, dbname: str | None, source: str | None
) -> int:
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _FORBIDDEN_FUNCS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA:
        return (
            sqlite3.SQLITE_OK
            if (arg1 or "").lower() in ("table_info", "table_xinfo", "index_list", "foreign_key_list")
            else sqlite3.SQLITE_DENY
        )
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


# a database image's content and its hash, in this process: pure functions of the image (an
# immutable string), read again by each environment restored from it (a task's gates, its
# regeneration) and by each diff that compares it; images of up to 1 MB, a few of them
_CONTENTS: dict[str, dict[str, Any]] = {}
_CONTENT_HASHES: dict[str, str] = {}


def _keep(memo: dict[str, Any], image: str, value: Any, most: int) -> None:
    if len(image) > 1 << 20:
        return
    if len(memo) >= most:
        forget_oldest(memo)  # the oldest first
    memo[image] = value


def encode_image(raw: bytes) -> str:
    """A database image as JSON-able text: zlib-compressed (pages compress ~5x), then base64."""
    return base64.b64encode(zlib.compress(raw, 6)).decode()


def decode_image(text: str) -> bytes:
    return zlib.decompress(base64.b64decode(text))


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


def _one_statement(query: str, field: str = "query") -> str:
    if "\x00" in query:  # SQLite refuses NUL bytes in statement text
        raise InvalidArguments(f"'{field}' contains a NUL character")
    q = query.strip()
    body = _COMMENT.sub(" ", q).strip().rstrip(";").strip()
    if not body:
        raise InvalidArguments(f"'{field}' is empty")
    if not sqlite3.complete_statement(body + ";") or ";" in _strip_strings(body):
        raise InvalidArguments(f"'{field}' must be exactly one complete SQL statement")
    if _CLOCK.search(_strip_strings_keep(body)):
        raise InvalidArguments(
            f"'{field}' reads the wall clock ('now' / CURRENT_TIMESTAMP); this database has none. Use an explicit date, "
            "e.g. '2026-03-02'",
            type="nondeterministic_query",
        )
    return body


def _strip_strings(sql: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def _strip_strings_keep(sql: str) -> str:
    """Keep the literal 'now' but blank other strings, so 'now' inside a longer text is allowed."""
    return re.sub(r"'(?:[^']|'')*'", lambda m: m.group(0) if m.group(0).lower() == "'now'" else "''", sql)


def _first_word(sql: str) -> str:
    m = re.match(r"\s*(\w+)", sql)
    return m.group(1).upper() if m else ""


class SqlService(Service):
    """SQLite business database: customers, contacts, products, employees, orders, invoices."""

    name = "sql"
    domain = "database"
    spec = "mcp-official-archived_sqlite.json"
    state_model = SqlState

    # Byte budget of the database. `INSERT ... SELECT` doubles a table with a few bytes of SQL, so
    # SQLite itself enforces it (max_page_count): a write past it fails with a 422, changing nothing.
    # A server lowers it to what is left of a session's state budget.
    quota_bytes: int | None = 64 * 1024 * 1024

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA foreign_keys = ON")
        self._bound(self.db)
        self._image: str | None = None  # serialised database, valid while not dirty
        self._dirty = True
        self._hash: str | None = None
        self._hashes: dict[str, str] = {}  # content hash by image (restoring one seen before is free)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_sql(self.db, ctx)
        self.db.set_authorizer(_authorizer)

    # ---- state: the database is part of every snapshot -----------------------------------
    def _serialise(self) -> str:
        if self._dirty or self._image is None:
            self.db.set_authorizer(None)
            self._image = encode_image(self.db.serialize())
            self.db.set_authorizer(_authorizer)
            self._dirty = False
        return self._image

    def snapshot(self) -> dict[str, Any]:
        return {**self.store.snapshot(), DB: {"image": self._serialise()}}

    def restore(self, snap: dict[str, Any]) -> None:
        self.store.restore({k: v for k, v in snap.items() if k != DB})
        image = snap[DB]["image"]
        if image is self._image and not self._dirty:
            return
        self.db.set_authorizer(None)
        self.db.deserialize(decode_image(image))
        self.db.execute("PRAGMA foreign_keys = ON")
        self._bound(self.db)
        self.db.set_authorizer(_authorizer)
        self._image, self._dirty = image, False
        self._hash = self._hashes.get(image) or _CONTENT_HASHES.get(image)

    def _content(self, db: sqlite3.Connection) -> dict[str, Any]:
        db.set_authorizer(None)
        try:
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            schema = [
                r[0]
                for r in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
            ]
            rows = {}
            for t in tables:
                cur = db.execute(f'SELECT * FROM "{t}"')
                cols = [d[0] for d in cur.description]
                rows[t] = sorted(([_plain(v) for v in r] for r in cur), key=repr)
                rows[t].insert(0, cols)
            return {"schema": schema, "rows": rows}
        finally:
            if db is self.db:
                db.set_authorizer(_authorizer)

    def state_hash(self) -> str:
        if self._hash is None or self._dirty:
            image = self._image if not self._dirty else None
            known = _CONTENT_HASHES.get(image) if image is not None else None
            self._hash = known or hash_value(self._content(self.db))
            if image is not None:  # the image is this content: keep its hash
                if len(self._hashes) >= 4:  # a few images held beside the snapshots that hold them
                    self._hashes.clear()
                self._hashes[image] = self._hash
                _keep(_CONTENT_HASHES, image, self._hash, 64)
        return hash_value([self.store.state_hash(), self._hash])

    def _image_content(self, image: str) -> dict[str, Any]:
        """The content (`_content`) of a database image, read once per image in this process."""
        hit = _CONTENTS.get(image)
        if hit is None:
            db = sqlite3.connect(":memory:")
            db.deserialize(decode_image(image))
            hit = self._content(db)
            db.close()
            _keep(_CONTENTS, image, hit, 8)
        return hit

    def diff(self, a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
        out = super().diff({k: v for k, v in a.items() if k != DB}, {k: v for k, v in b.items() if k != DB})
        if a.get(DB, {}).get("image") == b.get(DB, {}).get("image"):
            return out
        contents = [self._image_content(snap[DB]["image"]) for snap in (a, b)]
        ra, rb = contents[0]["rows"], contents[1]["rows"]
        for t in sorted(set(ra) | set(rb)):
            cols = (rb.get(t) or ra.get(t))[0]
            keyed = []
            for rows in (ra.get(t, [])[1:], rb.get(t, [])[1:]):
                by_first = {repr(r[0]): r for r in rows}
                keyed.append(by_first if len(by_first) == len(rows) else {repr(r): r for r in rows})
            ka, kb = keyed
            for k in sorted(set(ka) | set(kb)):
                x, y = ka.get(k), kb.get(k)
                if x == y:
                    continue
                path = f"db/{t}/{(x or y)[0]}"
                if x is None:
                    out.append(Change(self.name, path, "add", None, dict(zip(cols, y, strict=False))))
                elif y is None:
                    out.append(Change(self.name, path, "remove", dict(zip(cols, x, strict=False)), None))
                else:
                    for c, va, vb in zip(cols, x, y, strict=False):
                        if va != vb:
                            out.append(Change(self.name, f"{path}/{c}", "change", va, vb))
        if contents[0]["schema"] != contents[1]["schema"]:
            out.append(Change(self.name, "db/schema", "change", contents[0]["schema"], contents[1]["schema"]))
        return out

    def validate_state(self) -> None:
        super().validate_state()
        self.db.set_authorizer(None)
        try:
            problems = self.db.execute("PRAGMA foreign_key_check").fetchall()
            if self.db.execute("PRAGMA integrity_check").fetchone()[0] != "ok" or problems:
                raise ValueError(f"database integrity check failed: {problems[:3]}")
        finally:
            self.db.set_authorizer(_authorizer)

    def size_bytes(self) -> int:
        """Bytes the database holds (its pages)."""
        self.db.set_authorizer(None)
        try:
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            return pages * self.db.execute("PRAGMA page_size").fetchone()[0]
        finally:
            self.db.set_authorizer(_authorizer)

    engine_bytes = size_bytes  # what a session's budget charges this service beyond its records

    @staticmethod
    def _bound(db: sqlite3.Connection) -> None:
        """Sorts and temporary tables stay in memory (never a host file). A runaway query is
        stopped by the call's watchdog through `Connection.interrupt` (see `_run`), not by a
        progress handler: that would run Python, and so take the GIL from the quiet sessions'
        threads, every few thousand VM steps of a query that otherwise runs without it."""
        db.execute("PRAGMA temp_store = MEMORY")

    def _cap(self) -> None:
        """Let SQLite refuse any write that would take the database past `quota_bytes`."""
        self.db.set_authorizer(None)
        try:
            size = self.db.execute("PRAGMA page_size").fetchone()[0]
            cap = (self.quota_bytes // size) if self.quota_bytes is not None else 1073741823
            self.db.execute(f"PRAGMA max_page_count = {max(1, int(cap))}")
        finally:
            self.db.set_authorizer(_authorizer)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """All rows of a table as dicts (for verifiers and task generation, not an agent tool)."""
        self.db.set_authorizer(None)
        try:
            cur = self.db.execute(f'SELECT * FROM "{table}"')
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, map(_plain, r), strict=True)) for r in cur]
        finally:
            self.db.set_authorizer(_authorizer)

    # ---- execution --------------------------------------------------------------------
    def _run(self, sql: str, write: bool) -> dict[str, Any]:
        limits.on_stop(self.db.interrupt)  # past the call's limit the watchdog interrupts the query
        try:
            if not write:
                with limits.gil_free():  # past a few ms, SQLite's own work runs at idle priority
                    cur = self.db.execute(sql)
                    rows = cur.fetchmany(MAX_ROWS + 1)
                cols = [d[0] for d in cur.description] if cur.description else []
                return {
                    "columns": cols,
                    "rows": [dict(zip(cols, map(_plain, r), strict=True)) for r in rows[:MAX_ROWS]],
                    "truncated": len(rows) > MAX_ROWS,
                }
            self._cap()
            self.db.execute("SAVEPOINT tool_call")
            try:
                with limits.gil_free():
                    cur = self.db.execute(sql)
                    if cur.description:
                        cur.fetchall()
                affected = cur.rowcount
                self.db.execute("RELEASE tool_call")
            except BaseException:
                if self.db.in_transaction:  # SQLITE_FULL has already rolled the transaction back
                    self.db.execute("ROLLBACK TO tool_call")
                    self.db.execute("RELEASE tool_call")
                raise
            self._dirty, self._hash = True, None
            return {"affected_rows": affected}
        except sqlite3.IntegrityError as e:
            raise RuleViolation(f"constraint violated: {e}", type="constraint_violation") from None
        except sqlite3.DatabaseError as e:
            msg = str(e)
            if "not authorized" in msg or "prohibited" in msg:
                raise RuleViolation(
                    f"not allowed here: {msg} (ATTACH, PRAGMA, random() and extensions are disabled)",
                    type="not_authorized",
                ) from None
            if "database or disk is full" in msg:
                raise RuleViolation(
                    f"database quota exceeded: this write would take the database past its budget of "
                    f"{self.quota_bytes} bytes (it holds {self.size_bytes()}); delete rows first",
                    type="quota_exceeded",
                ) from None
            if "interrupted" in msg:
                raise limits.ResourceLimit(
                    f"query stopped: it ran past this call's CPU time limit of {limits.cpu_limit():g} s "
                    "(a recursive CTE without a bound, or a join too large); nothing was changed"
                ) from None
            if "no such table" in msg:
                raise NotFound(f"{msg}; see list_tables", type="table_not_found") from None
            raise InvalidArguments(f"SQL error: {msg}", type="sql_error") from None
        except (OverflowError, ValueError, MemoryError) as e:
            raise InvalidArguments(f"SQL error: {e}", type="sql_error") from None

    # ---- tools ------------------------------------------------------------------------
    @tool
    def read_query(self, query: str) -> dict[str, Any]:
        """Execute a SELECT query on the SQLite database (at most 1000 rows are returned).

        Args:
            query: SELECT SQL query to execute
        """
        sql = _one_statement(query)
        if _first_word(sql) not in ("SELECT", "WITH", "VALUES"):
            raise InvalidArguments(
                "read_query only runs SELECT queries; use write_query for changes", type="not_a_select"
            )
        if _first_word(sql) == "WITH" and re.search(
            r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", _strip_strings(sql), re.I
        ):
            raise InvalidArguments(
                "read_query only runs SELECT queries; use write_query for changes", type="not_a_select"
            )
        return self._run(sql, write=False)

    @tool
    def query(self, sql: str | None = None) -> dict[str, Any]:
        """Run a read-only SQL query (the Postgres server's tool; same database).

        Args:
            sql: The SQL query to run.
        """
        if sql is None:
            raise InvalidArguments("'sql' is required")
        return self.read_query(sql)

    @tool(mutates=True)
    def write_query(self, query: str) -> dict[str, Any]:
        """Execute an INSERT, UPDATE, or DELETE query on the SQLite database. Constraints (keys, CHECKs, foreign keys) are enforced.

        Args:
            query: SQL query to execute
        """
        sql = _one_statement(query)
        if _first_word(sql) not in ("INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"):
            raise InvalidArguments(
                "write_query runs INSERT, UPDATE or DELETE; use read_query or create_table otherwise",
                type="not_a_write",
            )
        return self._run(sql, write=True)

    @tool(mutates=True)
    def create_table(self, query: str) -> dict[str, Any]:
        """Create a new table in the SQLite database (also CREATE INDEX / CREATE VIEW).

        Args:
            query: CREATE TABLE SQL statement
        """
        sql = _one_statement(query)
        if _first_word(sql) != "CREATE":
            raise InvalidArguments("create_table runs a CREATE TABLE statement", type="not_a_create")
        self._run(sql, write=True)
        return {"created": True, "statement": sql}

    @tool
    def list_tables(self) -> list[str]:
        """List all tables in the SQLite database"""
        return [
            r["name"]
            for r in self._run(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                False,
            )["rows"]
        ]

    @tool
    def describe_table(self, table_name: str) -> list[dict[str, Any]]:
        """Get the schema information for a specific table

        Args:
            table_name: Name of the table to describe
        """
        if table_name not in self.list_tables():
            raise NotFound(f"table '{table_name}' not found; see list_tables", type="table_not_found")
        info = self._run(f'PRAGMA table_info("{table_name}")', False)["rows"]
        return [
            {
                "name": c["name"],
                "type": c["type"],
                "notnull": bool(c["notnull"]),
                "default": c["dflt_value"],
                "pk": bool(c["pk"]),
            }
            for c in info
        ]

    @tool(mutates=True)
    def append_insight(self, insight: str) -> dict[str, Any]:
        """Add a business insight to the memo

        Args:
            insight: Business insight discovered from data analysis
        """
        if not insight.strip():
            raise InvalidArguments("'insight' must not be empty")
        if len(insight) > 10000:
            raise InvalidArguments("'insight' is longer than 10000 characters")
        rec = {"id": self.next_id("ins", 10), "text": insight.strip(), "created_at": self.clock.iso()}
        self.insert("insights", rec)
        memo = sorted(self.table("insights").values(), key=lambda r: r["id"])
        return {"added": rec, "memo": "\n".join(f"- {r['text']}" for r in memo)}
