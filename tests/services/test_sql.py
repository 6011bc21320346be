from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "sql__"


def test_queries_writes_and_rules() -> None:
    env = Environment(services=["sql"], seed=2)
    assert "invoices" in ok(env, S + "list_tables")
    cols = {c["name"] for c in ok(env, S + "describe_table", {"table_name": "orders"})}
    assert cols == {"id", "customer_id", "order_date", "status", "total"}
    err(env, S + "describe_table", {"table_name": "nope"}, 404)
    rows = ok(
        env,
        S + "read_query",
        {"query": "SELECT status, COUNT(*) AS n FROM invoices GROUP BY status ORDER BY status"},
    )["rows"]
    assert sum(r["n"] for r in rows) == len(env.services["sql"].rows("invoices"))
    assert ok(env, S + "query", {"sql": "SELECT 1 AS one"})["rows"] == [{"one": 1}]
    err(env, S + "read_query", {"query": "DELETE FROM orders"}, 400, "not_a_select")
    err(env, S + "read_query", {"query": "SELECT 1; DELETE FROM orders"}, 400)
    err(env, S + "read_query", {"query": "SELECT * FROM missing"}, 404)
    err(env, S + "read_query", {"query": "SELEC 1"}, 400)
    r = ok(env, S + "write_query", {"query": "UPDATE invoices SET status = 'paid' WHERE status = 'open'"})
    assert r["affected_rows"] >= 1
    err(
        env,
        S + "write_query",
        {"query": "INSERT INTO orders VALUES (1, 'C-none', '2026-01-01', 'pending', 10)"},
        422,
        "constraint_violation",
    )
    err(env, S + "write_query", {"query": "UPDATE orders SET status = 'lost'"}, 422)
    err(env, S + "write_query", {"query": "SELECT 1"}, 400, "not_a_write")
    ok(env, S + "create_table", {"query": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"})
    err(env, S + "create_table", {"query": "CREATE TABLE notes (id INTEGER)"}, 400)
    err(env, S + "create_table", {"query": "DROP TABLE orders"}, 400)
    ok(env, S + "write_query", {"query": "INSERT INTO notes (body) VALUES ('hello')"})
    assert ok(env, S + "read_query", {"query": "SELECT body FROM notes"})["rows"] == [{"body": "hello"}]
    memo = ok(env, S + "append_insight", {"insight": "Most invoices are paid on time"})["memo"]
    assert "paid on time" in memo
    err(env, S + "append_insight", {"insight": " "}, 400)


def test_sandbox_and_determinism() -> None:
    env = Environment(services=["sql"], seed=2)
    for q in (
        "ATTACH DATABASE '/tmp/x.db' AS x",
        "VACUUM INTO '/tmp/x.db'",
        "PRAGMA writable_schema = 1",
        "SELECT load_extension('x')",
        "SELECT random()",
        "SELECT datetime('now')",
        "SELECT CURRENT_TIMESTAMP",
    ):
        r = env.call(S + "read_query", {"query": q})
        assert not r["success"] and r["error"]["code"] in (400, 422), (q, r)
    assert (
        ok(env, S + "read_query", {"query": "SELECT 'now is the time' AS t"})["rows"][0]["t"]
        == "now is the time"
    )
    s0, h0 = env.snapshot(), env.state_hash()
    ok(env, S + "write_query", {"query": "DELETE FROM order_items WHERE quantity > 15"})
    changes = env.diff(s0)
    assert changes and all(c.path.startswith("db/order_items/") and c.op == "remove" for c in changes)
    env.restore(s0)
    assert env.state_hash() == h0 and env.diff(s0) == []
    assert env.validate() == {"sql": None}


def test_a_restored_image_hashes_as_its_content() -> None:
    """The content hash is kept by image: restoring one seen before costs no rehash, and gives the
    hash a fresh environment in that state computes."""
    env = Environment(services=["sql"], seed=2)
    s0, h0 = env.snapshot(), env.state_hash()
    ok(env, S + "write_query", {"query": "UPDATE invoices SET status = 'paid' WHERE status = 'open'"})
    s1, h1 = env.snapshot(), env.state_hash()
    assert h1 != h0
    for snap, h in ((s0, h0), (s1, h1), (s0, h0), (s1, h1)):
        env.restore(snap)
        assert env.state_hash() == h == Environment.from_snapshot(["sql"], snap).state_hash()
    env.restore(s0)
    ok(env, S + "write_query", {"query": "UPDATE invoices SET status = 'void' WHERE status = 'open'"})
    assert env.state_hash() not in (h0, h1)  # a write after a restore is hashed again


def test_image_contents_kept_in_the_process_answer_as_read_afresh() -> None:
    """A database image's content and hash are kept per image for the whole process (every
    environment restored from it, every diff comparing it): they answer as a fresh read does."""
    from compoworld.services.sql import service as sql

    env = Environment(services=["sql"], seed=4)
    s0 = env.snapshot()
    ok(env, S + "write_query", {"query": "UPDATE invoices SET status = 'void' WHERE status = 'open'"})
    s1 = env.snapshot()
    first, again = env.diff(s0, s1), env.diff(s0, s1)
    hashes = [Environment.from_snapshot(["sql"], s).state_hash() for s in (s0, s1)]
    sql._CONTENTS.clear()
    sql._CONTENT_HASHES.clear()
    assert first and first == again == env.diff(s0, s1)
    assert hashes == [Environment.from_snapshot(["sql"], s).state_hash() for s in (s0, s1)]
    assert hashes[0] != hashes[1]
