"""The store's incremental hash, in-place restore and indexes agree with a from-scratch computation.

Random programs of puts, deletes, failed calls (rollbacks), snapshots and restores run against a
`Store`; after every step the incremental hash equals a full rehash, an index lookup equals a scan,
and restoring a snapshot gives back exactly its contents, in its order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compoworld.core.environment import Environment
from compoworld.core.state import HASH_VERSION, META, Store, combine, table_hash_full

KEYS = [f"k{i}" for i in range(8)]
TABLES = ["a", "b", "c"]  # "c" does not exist until a put makes it
VALUES = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["x", "y", "z"]), st.booleans())
RECORDS = st.one_of(  # small ints are shared objects: one object under two keys has two digests
    st.fixed_dictionaries({"f": VALUES, "g": st.lists(st.integers(0, 2), max_size=2)}), st.integers(0, 3)
)

OPS = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(TABLES), st.sampled_from(KEYS), RECORDS),
    st.tuples(st.just("delete"), st.sampled_from(TABLES), st.sampled_from(KEYS)),
    st.tuples(st.just("copy"), st.sampled_from(TABLES), st.sampled_from(KEYS), st.sampled_from(KEYS)),
    st.tuples(st.just("commit")),
    st.tuples(st.just("rollback")),
    st.tuples(st.just("snapshot")),
    st.tuples(st.just("restore"), st.integers(0, 5)),
    st.tuples(st.just("hash")),
    st.tuples(st.just("lookup"), st.sampled_from(TABLES), VALUES),
)


def full_hash(store: Store) -> str:
    return combine({name: table_hash_full(t) for name, t in store.tables.items()})


def scan(store: Store, table: str, field: str, value: object) -> list:
    return [r for r in store.tables.get(table, {}).values() if isinstance(r, dict) and r.get(field) == value]


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(OPS, max_size=60))
def test_incremental_hash_restore_and_indexes_match_a_full_recomputation(ops: list) -> None:
    store = Store()
    for t in TABLES[:2]:
        store.tables[t] = {}
    snaps: list[tuple[dict, dict, str]] = []  # (snapshot, its contents copied, its hash)
    committed = {n: dict(t) for n, t in store.tables.items()}
    committed_hash = full_hash(store)
    for op in ops:
        kind = op[0]
        if kind == "put":
            store.put(op[1], op[2], op[3])
        elif kind == "copy":  # the very same record object under another key
            if op[2] in store.tables.get(op[1], {}):
                store.put(op[1], op[3], store.tables[op[1]][op[2]])
        elif kind == "delete":
            if op[2] in store.tables.get(op[1], {}):
                store.delete(op[1], op[2])
        elif kind == "commit":
            store.commit()
            committed = {n: dict(t) for n, t in store.tables.items()}
            committed_hash = full_hash(store)
        elif kind == "rollback":
            store.rollback()
            assert store.tables == committed  # a failed call changes nothing
            assert store.state_hash() == committed_hash
        elif kind == "snapshot":  # mid-call too: a later rollback must not leave it as a base
            s = store.snapshot()
            snaps.append((s, {n: list(t.items()) for n, t in s.items()}, full_hash(store)))
            assert snaps[-1][1] == {n: list(t.items()) for n, t in store.tables.items()}
        elif kind == "restore" and snaps:
            s, contents, h = snaps[op[1] % len(snaps)]
            store.restore(s)
            assert {n: list(t.items()) for n, t in store.tables.items()} == contents  # same order too
            assert {n: list(t.items()) for n, t in s.items()} == contents  # snapshots never change
            assert store.state_hash() == h
            committed = {n: dict(t) for n, t in store.tables.items()}
            committed_hash = h
        elif kind == "lookup":
            assert store.lookup(op[1], "f", op[2]) == scan(store, op[1], "f", op[2])
        elif kind == "hash":  # hashing only now and then: caches must stay true between hashes
            assert store.state_hash() == full_hash(store)
    assert store.state_hash() == full_hash(store)
    for t in TABLES:
        for v in (None, 0, 1, "x", True):
            assert store.lookup(t, "f", v) == scan(store, t, "f", v)


def test_hash_is_flat_in_table_size_and_order_independent() -> None:
    a, b = Store(), Store()
    for i in range(50):
        a.put("t", f"k{i}", {"n": i})
    for i in reversed(range(50)):
        b.put("t", f"k{i}", {"n": i})
    assert a.state_hash() == b.state_hash() and HASH_VERSION == 2
    h = a.state_hash()
    a.put("t", "k3", {"n": -1})
    assert a.state_hash() != h
    a.put("t", "k3", {"n": 3})
    assert a.state_hash() == h
    a.delete("t", "k3")
    assert a.state_hash() not in (h, b.state_hash())


def test_restore_to_the_last_snapshot_visits_only_written_tables_and_keeps_order() -> None:
    env = Environment(services=["email", "crm"], seed=3, size="small")
    s0 = env.snapshot()
    h0 = env.state_hash()
    order = list(env.services["email"].table("messages"))
    mid = order[0]
    env.call("email__gmail_modify_email", {"messageId": mid, "addLabelIds": ["STARRED"]})
    env.call("email__gmail_delete_email", {"messageId": order[1]})
    assert env.state_hash() != h0
    assert env.snapshot() is not s0 and env.services["crm"].snapshot() is s0["services"]["crm"]
    env.restore(s0)
    assert env.state_hash() == h0 and list(env.services["email"].table("messages")) == order
    assert env.snapshot()["services"]["email"] is s0["services"]["email"]


def test_a_failed_call_keeps_the_hash_and_the_indexes() -> None:
    env = Environment(services=["email"], seed=1, size="small")
    email = env.services["email"]
    msg = next(iter(email.table("messages").values()))
    before = env.state_hash()
    thread = email.store.lookup("messages", "threadId", msg["threadId"])
    r = env.call("email__gmail_send_email", {"to": ["not an email"], "subject": "s", "body": "b"})
    assert not r["success"] and env.state_hash() == before
    assert email.store.lookup("messages", "threadId", msg["threadId"]) == thread
    sent = env.call(
        "email__gmail_send_email",
        {"to": ["a@example.com"], "subject": "Re", "body": "b", "threadId": msg["threadId"]},
    )
    assert sent["success"]
    thread2 = email.store.lookup("messages", "threadId", msg["threadId"])
    assert (
        thread2 == scan(email.store, "messages", "threadId", msg["threadId"])
        and len(thread2) == len(thread) + 1
    )
    env.reset()
    assert email.store.lookup("messages", "threadId", msg["threadId"]) == thread
    assert env.state_hash() == before


def test_clock_iso_is_cached_per_tick() -> None:
    env = Environment(services=["email"], seed=1, size="small")
    first = env.clock.iso()
    assert env.clock.iso() is first
    env.clock.advance(60)
    assert env.clock.iso() != first and env.clock.iso().endswith(":01:00Z")
    env.clock.set(first)
    assert env.clock.iso() == first
    env.clock.advance(0.5)
    env.clock.set(env.clock.iso())
    assert env.clock.now().microsecond == 0


def test_envelope_text_is_compact_json_and_takes_anything_a_tool_returns() -> None:
    import json

    from compoworld.core.envelope import envelope_text, ok

    assert json.loads(envelope_text(ok({"a": "é", "n": [1, 2]}))) == {
        "success": True,
        "data": {"a": "é", "n": [1, 2]},
    }
    assert json.loads(envelope_text(ok(2**70)))["data"] == 2**70
    assert META == "_meta"


def test_forget_oldest_drops_the_oldest_and_bears_a_memo_another_thread_changed() -> None:
    """`forget_oldest`: the oldest entry goes; where another thread dropped it (or changed the
    memo) between reading the oldest key and dropping it, nothing is dropped and nothing raises."""
    from compoworld.core.state import forget_oldest

    memo = {"a": 1, "b": 2}
    forget_oldest(memo)
    assert memo == {"b": 2}
    forget_oldest({})

    class Raced(dict):
        def __iter__(self):  # the oldest key as this thread read it: another has dropped it since
            yield "gone"

    raced = Raced(b=2)
    forget_oldest(raced)
    assert raced == {"b": 2}
