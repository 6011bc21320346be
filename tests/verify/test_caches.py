"""The verifier's caches never change a verdict: a check edited in place is validated again, and
a cached text match answers as the uncached one does."""

from compoworld.verify.meaning import _carries, _names_value, carries, names_value
from compoworld.verify.verifier import verify_checks

S0 = {"services": {"chat": {"messages": {}}}}
S1 = {
    "services": {
        "chat": {"messages": {"m1": {"id": "m1", "channel": "ops", "text": "Refund of $1,250.00 done"}}}
    }
}


def test_a_check_edited_in_place_is_read_again():
    check = {
        "predicate": "record_exists",
        "service": "chat",
        "table": "messages",
        "where": {"channel": "ops"},
    }
    rubric = [{"id": "c", "description": "", "check": check}]
    assert verify_checks(rubric, S0, S1, None).passed
    check["where"] = {"channel": "billing"}  # same dict object, new content
    assert not verify_checks(rubric, S0, S1, None).passed
    check["where"] = {"channel": "ops"}
    assert verify_checks(rubric, S0, S1, None).passed


def test_unchanged_tables_hold_no_write():
    guard = {"predicate": "value_not_written", "service": "chat", "value": "1,250.00"}
    rubric = [{"id": "g", "description": "", "check": guard, "kind": "guard"}]
    assert verify_checks(rubric, S1, S1, None).passed  # the same (shared) table: nothing was written
    assert not verify_checks(rubric, S0, S1, None).passed


def test_cached_matches_agree_with_uncached():
    text = "We credited 1250 USD on 9 March 2026; Dana Lee approved."
    for fact in ("$1,250.00", "2026-03-09", "Dana Lee", "approve", "1,300.00", "Ravi"):
        assert carries(text, fact) == _carries(text, fact)
        assert carries(text, fact) == carries(text, fact)  # a second (cached) read agrees
        assert names_value(text, fact) == _names_value(text, fact)
    assert carries(text, "$1,250.00") and not carries(text, "1,300.00")


def _plain_changes(x: dict, y: dict) -> list:
    return [
        (k, "add" if k not in x else "remove" if k not in y else "change")
        for k in sorted(set(x) | set(y), key=str)
        if not (k in x and k in y and x[k] == y[k])
    ]


def test_table_changes_kept_by_pair_answer_as_a_fresh_comparison():
    from compoworld.verify.predicates import _table_changes

    base = {f"r{i}": {"id": f"r{i}", "n": i} for i in range(40)}
    edited = {**base, "r3": {"id": "r3", "n": -3}, "r41": {"id": "r41", "n": 41}}
    del edited["r7"]
    rebuilt = {k: dict(v) for k, v in edited.items()}  # equal records, other objects
    memo: dict = {}  # an s0 view's (`StateView.pairs`): the second (base, edited) reads its entry
    for x, y in ((base, edited), (base, edited), (edited, base), (base, rebuilt), (edited, rebuilt)):
        assert _table_changes(x, y, memo) == _plain_changes(x, y)
    assert len(memo) == 4  # one entry a pair
    assert _table_changes(edited, rebuilt, memo) == []
    assert [k for k, _ in _table_changes(base, edited, memo)] == ["r3", "r41", "r7"]
    assert _table_changes(base, edited) == _plain_changes(base, edited)  # no memo: compared afresh


def test_table_pairs_are_kept_by_the_s0_view_and_go_with_it():
    """A gate run's views keep the pairs they compared (its s0 view lives as long as the run); a
    served verification's go with its views, never held by the process for other sessions."""
    import gc
    import weakref

    from compoworld.verify.verifier import verify_checks

    class Table(dict):  # a dict that can be weakly referenced, to see it go
        pass

    s0 = {
        "services": {"chat": {"messages": Table({f"m{i}": {"id": f"m{i}", "text": "hi"} for i in range(20)})}}
    }
    final = {
        "services": {"chat": {"messages": Table({**s0["services"]["chat"]["messages"], "mx": {"id": "mx"}})}}
    }
    check = {"predicate": "no_changes_except", "allow": []}
    rubric = [{"id": "g", "description": "", "check": check, "kind": "guard"}]
    assert not verify_checks(rubric, s0, final, None).passed  # one pair compared and kept
    gone = weakref.ref(final["services"]["chat"]["messages"])
    del final
    gc.collect()
    assert gone() is None


def test_rows_compared_once_answer_as_each_time():
    from compoworld.verify.predicates import _row_same, cell_same

    rows = [["EXP-1", "2026-03-09", 12.5], ["EXP-1", "2026-03-09", "12.50"], ["EXP-1", True, 1], [["x"], 1]]
    wants = [["EXP-1", "2026-03-09", "12.50"], ["EXP-1", "2026-03-09", "$12.50"], ["EXP-1", 1, 1.0]]
    for _ in range(2):  # the second pass reads the kept answers
        for r in rows:
            for w in wants:
                n = max(len(r), len(w))
                plain = all(
                    cell_same(r[i] if i < len(r) else "", w[i] if i < len(w) else "") for i in range(n)
                )
                assert _row_same(r, w) is plain, (r, w)


def _image(*statements: str) -> str:
    import sqlite3

    from compoworld.services.sql.service import encode_image

    db = sqlite3.connect(":memory:")
    for s in statements:
        db.execute(s)
    db.commit()
    return encode_image(db.serialize())


def test_a_table_two_images_share_is_decoded_to_one_object():
    from compoworld.verify.state_view import _decoded

    make = (
        "CREATE TABLE a (id INTEGER PRIMARY KEY, x REAL)",
        "CREATE TABLE b (id INTEGER PRIMARY KEY, y TEXT)",
    )
    one = _decoded(_image(*make, "INSERT INTO a VALUES (1, 1.5)", "INSERT INTO b VALUES (1, 'p')"))
    two = _decoded(_image(*make, "INSERT INTO a VALUES (1, 1.5)", "INSERT INTO b VALUES (1, 'q')"))
    assert one["a"] is two["a"] and one["a"] == {"1": {"id": 1, "x": 1.5}}
    assert one["b"] is not two["b"] and two["b"] == {"1": {"id": 1, "y": "q"}}
    # an infinite REAL and a NULL are other tables, though JSON writes both as null
    inf = _decoded(_image(*make, "INSERT INTO a VALUES (1, 9e999)"))
    null = _decoded(_image(*make, "INSERT INTO a VALUES (1, NULL)"))
    assert inf["a"]["1"]["x"] == float("inf") and null["a"]["1"]["x"] is None
