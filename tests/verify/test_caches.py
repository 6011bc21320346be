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
