"""The predicate library on hand-made states: robust text matching, goals not paths, collateral damage."""

from __future__ import annotations

import pytest

from compoworld.verify.predicates import validate_check
from compoworld.verify.verifier import verify_checks


def state(**services: dict) -> dict:
    return {"clock": "2026-03-02T09:00:00Z", "services": services}


S0 = state(
    chat={"messages": {"1": {"ts": "1", "channel": "C1", "user": "U1", "text": "old"}}, "_meta": {}},
    email={"messages": {}, "labels": {}, "_meta": {}},
    calendar={"events": {}, "_meta": {}},
)


def run(check: dict, final: dict, answer: str | None = None, s0: dict = S0):
    return verify_checks([{"id": "c", "check": check}], s0, final, answer).checks[0]


def test_record_exists_reads_text_loosely_system_values_exactly_and_new_only() -> None:
    final = state(
        chat={
            "messages": {
                **S0["services"]["chat"]["messages"],
                "2": {"ts": "2", "channel": "C1", "user": "U1", "text": "Invoice  PO-12345 is  ready"},
            },
            "_meta": {"n": 1},
        },
        email=S0["services"]["email"],
        calendar=S0["services"]["calendar"],
    )
    check = {
        "predicate": "record_exists",
        "service": "chat",
        "table": "messages",
        "new": True,
        "where": {"channel": "C1", "text": {"contains": "invoice po-12345"}},
    }
    assert run(check, final).passed
    # an id, key or enum value is spelled as the system spells it: its case matters there
    assert not run({**check, "where": {"channel": "c1"}}, final).passed
    assert not run({**check, "where": {"text": {"contains": "old"}}}, final).passed  # exists, but not new
    assert run({**check, "new": False, "where": {"text": "OLD"}}, final).passed
    assert not run({**check, "predicate": "record_absent"}, final).passed


def test_message_and_event_predicates_accept_equivalent_end_states() -> None:
    sent = {
        "id": "m1",
        "from": "me@x.co",
        "to": ["Pat@Client.example"],
        "cc": [],
        "subject": "Hi",
        "body": "ref PO-1",
        "labelIds": ["SENT"],
    }
    draft = {**sent, "id": "m2", "labelIds": ["DRAFT"]}
    final = state(
        chat=S0["services"]["chat"],
        email={"messages": {"m1": sent, "m2": draft}, "labels": {}},
        calendar=S0["services"]["calendar"],
    )
    assert run(
        {"predicate": "message_sent", "service": "email", "to": "pat@client.example", "contains": ["po-1"]},
        final,
    ).passed
    assert run(
        {"predicate": "message_not_sent", "service": "email", "to": "other@client.example"}, final
    ).passed
    only_draft = state(
        chat=S0["services"]["chat"],
        email={"messages": {"m2": draft}, "labels": {}},
        calendar=S0["services"]["calendar"],
    )
    assert not run(
        {"predicate": "message_sent", "service": "email", "to": "pat@client.example"}, only_draft
    ).passed
    ev = {
        "id": "e1",
        "summary": "Sync",
        "start": "2026-03-05T10:00:00Z",
        "attendees": [{"email": "A@b.co"}, {"email": "c@d.co"}],
    }
    final = state(chat=S0["services"]["chat"], email=S0["services"]["email"], calendar={"events": {"e1": ev}})
    assert run({"predicate": "event_scheduled", "attendees": ["a@b.co"], "date": "2026-03-05"}, final).passed
    assert not run(
        {"predicate": "event_scheduled", "attendees": ["a@b.co"], "date": "2026-03-06"}, final
    ).passed


def test_answers() -> None:
    assert run({"predicate": "answer_contains", "value": "PO-12345"}, S0, "The number is po-12345.").passed
    assert run({"predicate": "answer_equals", "value": "Acme Labs"}, S0, "  acme   labs. ").passed
    assert run({"predicate": "answer_number", "value": 4213.5}, S0, "It is $4,213.50 in total").passed
    assert not run({"predicate": "answer_number", "value": 4213.5}, S0, "about 4000").passed
    assert not run({"predicate": "answer_contains", "value": "x"}, S0, None).passed


def test_no_changes_except_and_field_changes() -> None:
    final = state(
        chat={
            "messages": {"1": {"ts": "1", "channel": "C1", "user": "U1", "text": "edited"}},
            "_meta": {"counter": 5},
        },
        email=S0["services"]["email"],
        calendar=S0["services"]["calendar"],
    )
    allow_chat = {"predicate": "no_changes_except", "allow": [{"service": "chat", "table": "messages"}]}
    assert run(allow_chat, final).passed  # the engine's own counters in _meta never count
    assert not run({"predicate": "no_changes_except", "allow": [{"service": "email"}]}, final).passed
    assert not run(
        {"predicate": "no_changes_except", "allow": [{"service": "chat", "table": "messages", "key": "9"}]},
        final,
    ).passed
    assert run(
        {
            "predicate": "field_changed",
            "service": "chat",
            "table": "messages",
            "key": "1",
            "field": "text",
            "from": "old",
            "to": "EDITED",
        },
        final,
    ).passed
    assert not run(
        {"predicate": "record_unchanged", "service": "chat", "table": "messages", "key": "1"}, final
    ).passed


def test_checks_are_validated_data() -> None:
    with pytest.raises(ValueError, match="unknown predicate"):
        validate_check({"predicate": "exec", "code": "import os"})
    with pytest.raises(ValueError, match="invalid arguments"):
        validate_check({"predicate": "record_exists", "service": "chat"})
    with pytest.raises(ValueError, match="'predicate' field"):
        validate_check(["record_exists"])


def test_weighted_score_and_v() -> None:
    rubric = [
        {"id": "a", "weight": 3.0, "check": {"predicate": "answer_contains", "value": "yes"}},
        {"id": "b", "weight": 1.0, "check": {"predicate": "answer_contains", "value": "no"}},
    ]
    r = verify_checks(rubric, S0, S0, "yes")
    assert r.score == 0.75 and not r.passed and r.V == 0
    assert verify_checks(rubric, S0, S0, "yes and no").V == 1


def test_a_message_sent_in_posts_to_one_place_carries_what_they_carry_together() -> None:
    """A long message split in posts to one channel counts as the message (an access review's list of
    names in two posts); posts to other places, or one naming a rival, add nothing to it."""

    def posts(*texts: tuple[str, str]) -> dict:
        msgs = {
            **S0["services"]["chat"]["messages"],
            **{
                str(i + 2): {"ts": str(i + 2), "channel": c, "user": "U1", "text": t}
                for i, (c, t) in enumerate(texts)
            },
        }
        return state(
            chat={"messages": msgs, "_meta": {}},
            email=S0["services"]["email"],
            calendar=S0["services"]["calendar"],
        )

    check = {
        "predicate": "message_sent",
        "service": "chat",
        "to": "C1",
        "contains": ["Yara Larsen", "Felix Larsen"],
        "exclude": ["Omar Baker"],
    }
    assert run(
        check, posts(("C1", "Revoked today: Yara Larsen (left)."), ("C1", "And Felix Larsen (moved)."))
    ).passed
    assert run(check, posts(("C1", "Revoked: Yara Larsen and Felix Larsen."))).passed
    assert not run(
        check, posts(("C1", "Revoked today: Yara Larsen (left)."), ("C2", "And Felix Larsen."))
    ).passed
    assert not run(
        check,
        posts(("C1", "Revoked today: Yara Larsen (left)."), ("C1", "Felix Larsen and Omar Baker (moved).")),
    ).passed
    assert not run(check, posts(("C1", "Revoked today: Yara Larsen (left)."))).passed
