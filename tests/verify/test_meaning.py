"""Facts by meaning, answers that commit, content and recipient checks, and the guards' fairness.

Every case pairs what a careful user rejects with the honest form that must pass."""

from __future__ import annotations

import pytest

from compoworld.verify.meaning import carries, names_value, says
from compoworld.verify.verifier import verify_checks


def passes(check, s0, s1, answer=None) -> bool:
    return verify_checks([{"id": "c", "description": "", "check": check}], s0, s1, answer).passed


def st(service: str, table: str, records: dict) -> dict:
    return {"clock": "2026-03-02T09:00:00Z", "services": {service: {table: records}}}


# ---- facts ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "fact", "expected"),
    [
        ("Refunded $12,000.00 today.", "12000.00", True),
        ("Refunded 12,000 USD today.", "12000.00", True),
        ("Refunded 12000.00.", {"kind": "amount", "value": 12000.0, "currency": "USD"}, True),
        ("Refunded 12,000 EUR.", {"kind": "amount", "value": 12000.0, "currency": "USD"}, False),
        ("Refunded $12,001.00.", "12000.00", False),
        ("Order INV-12000 is due.", "12000.00", False),  # a code is not an amount
        ("Renewal due on April 9, 2026.", {"kind": "date", "value": "2026-04-09"}, True),
        ("Renewal due on 04/09/2026.", {"kind": "date", "value": "2026-04-09"}, True),
        ("Renewal due on 2026-04-10.", {"kind": "date", "value": "2026-04-09"}, False),
        ("Booked 2:30 PM UTC on March 9, 2026", {"kind": "date", "value": "2026-03-09T14:30:00Z"}, True),
        ("Booked 15:30 CET on 9 March 2026", {"kind": "date", "value": "2026-03-09T14:30:00Z"}, True),
        ("Booked 3:30 PM UTC on March 9, 2026", {"kind": "date", "value": "2026-03-09T14:30:00Z"}, False),
        ("Paged Anya Smyth.", {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]}, True),
        (
            "Paged anya.smyth@x.example.",
            {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]},
            True,
        ),
        ("Paged Omar Smyth.", {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]}, False),
        # a display name @-mentioned as Slack writes it (from play: "@Hannah Singh, approval needed")
        (
            "@Anya Smyth, approval needed",
            {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]},
            True,
        ),
        ("x@Anya Smyth", {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]}, False),
        ("@Anya Smythe, hi", {"kind": "person", "forms": ["anya.smyth@x.example", "Anya Smyth"]}, False),
        ("We replaced your key.", "rotated", True),
        ("We regenerated the key.", "rotate", True),
        ("The demo was called off.", "cancelled", True),
        ("Beta is turned on for you.", "enabled", True),
        ("You are on the waiting list.", "waitlist", True),
        ("You are on the list.", "waitlist", False),
        ("Done.", "enabled", False),
        ("Flag WAITLIST set", {"kind": "exact", "value": "waitlist"}, False),
        ("Flag waitlist set", {"kind": "exact", "value": "waitlist"}, True),
        ("See ticket 1017.", {"kind": "code", "value": "#1017"}, True),
        # an access review's reasons as a colleague words them (from play)
        ("Your aws access was revoked for inactivity.", "inactive", True),
        ("Revoked: the login was unused for 47 days.", "inactive", True),
        ("Revoked: you transferred to Marketing.", "moved", True),
        ("Revoked: you left the company.", "inactive", False),
        ("Revoked: your login was inactive.", "moved", False),
    ],
)
def test_facts_by_meaning(text, fact, expected) -> None:
    assert carries(text, fact) is expected


def test_a_banned_value_is_found_in_every_notation_and_only_as_itself() -> None:
    assert names_value("we paid $12,000.00", "12000.00")
    assert names_value("we paid 12,000 USD", "12000.00")
    assert not names_value("we paid 2,000.00", "12000.00")
    assert not names_value("Acme Retail Ltd", "Acme Retailer")
    assert says("They cancelled the meeting", "call off")


def test_an_id_is_not_named_by_the_digits_of_an_amount() -> None:
    # a played reply sent "$1016.75" for approval, and the guard against the closed ticket 1016 fired
    assert not names_value("EXP-5210 ($1016.75) goes to Sofia for approval", "1016")
    assert not names_value("a total of 1016,500.00", "1016")
    assert names_value("tickets 1017,1016", "1016") and names_value("tickets 1016,1017", "1016")  # a list
    assert names_value("as in ticket 1016.", "1016")
    assert names_value("see #1016, now closed", "1016")


# ---- answers -------------------------------------------------------------------------------------
NUM = {"predicate": "answer_matches", "value": "14723.00", "kind": "number", "currency": "USD"}
CODE = {"predicate": "answer_matches", "value": "RMA-66787", "kind": "text", "exclude": ["RMA-66757"]}
ORDER = {"predicate": "answer_matches", "value": "#1020", "kind": "text", "exclude": ["#1018", "#1016"]}
S = st("email", "messages", {})


@pytest.mark.parametrize(
    ("check", "answer", "expected"),
    [
        (NUM, "The open amount is $14,723.00.", True),
        (NUM, "14723.00 USD", True),
        (NUM, "14,723 dollars in total (5,000.00 + 9,723.00).", True),  # a breakdown adds up
        (NUM, "14723.00 (or maybe 14724.00)", False),
        (NUM, "Either 14723.00 or 14724.00.", False),
        (NUM, "I could not verify it. Possibly 14723.00?", False),
        (NUM, "14723.00 EUR", False),
        (NUM, "Amounts: 900.00, 14723.00, 3100.00, 15791.00, 250.00", False),
        (NUM, "Probably 14723.00.", False),
        (NUM, "It is 14723.00; last week's total was 12000.00.", True),
        (CODE, "The return is RMA-66787.", True),
        (CODE, "Either RMA-66787 or RMA-66757.", False),
        (CODE, "RMA-66787 or RMA-66788?", False),
        (CODE, "RMA-66787, RMA-66757, RMA-66700", False),
        (CODE, "I'm not sure, maybe RMA-66787.", False),
        (ORDER, "The missing order is #1020; #1016-#1019 were already booked.", True),
        (ORDER, "It's #1020 (#1018 was cancelled).", True),
        (ORDER, "#1020 or #1018", False),
        (ORDER, "#1016, #1018, #1020", False),
    ],
)
def test_answers_commit(check, answer, expected) -> None:
    assert passes(check, S, S, answer) is expected, answer


def test_a_count_in_dollars_and_a_time_in_the_wrong_unit_fail() -> None:
    count = {"predicate": "answer_matches", "value": "3", "kind": "number", "unit": "count"}
    assert passes(count, S, S, "3 openings fall short.")
    assert not passes(count, S, S, "3 USD")
    mins = {"predicate": "answer_matches", "value": "45", "kind": "number", "unit": "minute"}
    assert passes(mins, S, S, "45 minutes")
    assert not passes(mins, S, S, "45 hours")


# ---- content -------------------------------------------------------------------------------------
def note(body: str, rid: str = "n1") -> dict:
    return st("crm", "objects", {rid: {"object_type": "notes", "properties": {"hs_note_body": body}}})


NOTE = {
    "predicate": "text_carries",
    "service": "crm",
    "table": "objects",
    "paths": ["properties.hs_note_body"],
    "facts": [{"kind": "amount", "value": 12800.0}, {"kind": "date", "value": "2026-04-09"}],
    "forbid": ["11200.00", "Grace Cohen"],
}
EMPTY = st("crm", "objects", {})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Renewal priced at $12,800.00, due April 9, 2026.", True),
        ("Priced: 12,800 USD; renewal date 04/09/2026.", True),
        ("Done.", False),
        ("Renewal priced at $12,801.00, due April 9, 2026.", False),
        ("Renewal priced at $12,800.00, due April 10, 2026.", False),
        # a rival in labelled context is what a careful colleague writes; beside the fact it is a rival
        ("Priced at $12,800.00 (not $11,200.00), due 2026-04-09.", True),
        ("Priced at $12,800.00 or $11,200.00, due 2026-04-09.", False),
        ("Priced at $12,800.00 instead of $11,200.00, due 2026-04-09.", False),
        ("Priced at $12,800.00, due 2026-04-09. Grace Cohen has left the company.", True),
        ("Priced at $12,800.00, due 2026-04-09. Grace Cohen, please sign it off.", False),
        ("Priced at $12,800.00 for Grace Cohen, due 2026-04-09.", False),
    ],
)
def test_a_note_must_carry_its_facts_and_no_rival(body, expected) -> None:
    assert passes(NOTE, EMPTY, note(body)) is expected, body


def test_a_fact_less_text_must_still_say_what_it_is_about() -> None:
    check = {**NOTE, "facts": [], "forbid": [], "substance": ["demo", "cancelled", "re-engagement"]}
    assert passes(check, EMPTY, note("Demo was called off, not rebooked: added to re-engagement."))
    assert not passes(check, EMPTY, note("Done."))


def test_one_good_note_does_not_cover_two() -> None:
    check = {**NOTE, "count": 2}
    good = "Priced $12,800.00, due 2026-04-09."
    two = st(
        "crm",
        "objects",
        {"a": {"properties": {"hs_note_body": good}}, "b": {"properties": {"hs_note_body": "Done."}}},
    )
    assert not passes(check, EMPTY, two)
    both = st(
        "crm",
        "objects",
        {"a": {"properties": {"hs_note_body": good}}, "b": {"properties": {"hs_note_body": good}}},
    )
    assert passes(check, EMPTY, both)


def test_an_edited_record_is_read_for_what_the_work_added() -> None:
    s0 = st("hr", "applications", {"9": {"comments": [{"text": "Phone screen went well."}]}})
    s1 = st(
        "hr", "applications", {"9": {"comments": [{"text": "Phone screen went well."}, {"text": "Done."}]}}
    )
    ok = st(
        "hr",
        "applications",
        {
            "9": {
                "comments": [
                    {"text": "Phone screen went well."},
                    {"text": "Interview cancelled, back to phone screen"},
                ]
            }
        },
    )
    check = {
        "predicate": "text_carries",
        "service": "hr",
        "table": "applications",
        "key": "9",
        "paths": ["comments"],
        "substance": ["cancelled", "interview"],
    }
    assert not passes(check, s0, s1)
    assert passes(check, s0, ok)
    assert not passes(check, s0, s0)  # the old text is not the work's


# ---- recipients ----------------------------------------------------------------------------------
def reply(cc: list[str], to: list[str] = ("tessa@pied.example",)) -> dict:
    return st(
        "helpdesk",
        "conversations",
        {"1": {"ticket_id": 7, "to_emails": list(to), "cc_emails": cc, "bcc_emails": []}},
    )


RCPT = {"predicate": "recipients_only", "people": [["tessa@pied.example", "Tessa Meier"]]}


def test_recipients_are_exact_in_every_field() -> None:
    s0 = st("helpdesk", "conversations", {})
    assert passes(RCPT, s0, reply([]))
    assert passes(RCPT, s0, reply([], ["Tessa Meier <tessa@pied.example>"]))
    assert not passes(RCPT, s0, reply(["other@pied.example"]))
    mail = st("email", "messages", {"m": {"to": ["tessa@pied.example"], "bcc": ["boss@x.example"]}})
    assert not passes(RCPT, st("email", "messages", {}), mail)


# ---- guards --------------------------------------------------------------------------------------
def test_an_allowed_record_may_be_edited_but_not_deleted() -> None:
    s0 = st("marketing", "members", {"m1": {"status": "subscribed"}, "m2": {"status": "subscribed"}})
    edited = st("marketing", "members", {"m1": {"status": "unsubscribed"}, "m2": {"status": "subscribed"}})
    gone = st("marketing", "members", {"m2": {"status": "subscribed"}})
    allow = {"service": "marketing", "table": "members", "key": "m1", "fields": ["status"]}
    check = {"predicate": "no_changes_except", "allow": [allow]}
    assert passes(check, s0, edited)
    assert not passes(check, s0, gone)
    assert passes({**check, "allow": [{**allow, "remove": True}]}, s0, gone)


def test_a_documented_optional_field_may_be_filled_unless_it_names_a_rival() -> None:
    s0 = st("payments", "disputes", {"dp": {"status": "open", "evidence": {"carrier": ""}}})

    def with_evidence(extra: dict) -> dict:
        return st(
            "payments",
            "disputes",
            {"dp": {"status": "under_review", "evidence": {"carrier": "UPS", **extra}}},
        )

    allow = {
        "service": "payments",
        "table": "disputes",
        "key": "dp",
        "fields": ["status", "evidence.carrier"],
    }
    check = {
        "predicate": "no_changes_except",
        "allow": [{**allow, "optional": ["evidence"]}],
        "forbid": ["1Z999"],
    }
    assert passes(check, s0, with_evidence({}))
    assert passes(check, s0, with_evidence({"product_description": "Annual licence"}))
    assert not passes(check, s0, with_evidence({"product_description": "shipped as 1Z999"}))
    assert not passes({**check, "allow": [allow]}, s0, with_evidence({"product_description": "x"}))


def test_a_banned_amount_is_banned_in_any_notation() -> None:
    s0 = note("old", "n0")
    s1 = {
        **s0,
        "services": {
            "crm": {
                "objects": {
                    **s0["services"]["crm"]["objects"],
                    "n1": {"properties": {"hs_note_body": "We owe $12,000.00"}},
                }
            }
        },
    }
    check = {"predicate": "value_not_written", "service": "crm", "value": "12000.00"}
    assert not passes(check, s0, s1)
    assert passes({**check, "value": "13000.00"}, s0, s1)


def test_system_values_keep_their_case() -> None:
    s0 = st("kv", "keys", {"f": {"value": "off"}})
    check = {
        "predicate": "field_changed",
        "service": "kv",
        "table": "keys",
        "key": "f",
        "field": "value",
        "to": "waitlist",
    }
    assert passes(check, s0, st("kv", "keys", {"f": {"value": "waitlist"}}))
    assert not passes(check, s0, st("kv", "keys", {"f": {"value": "WAITLIST"}}))
    words = {**check, "to": "Contract sent"}
    assert passes(words, s0, st("kv", "keys", {"f": {"value": "contract  sent"}}))


@pytest.mark.parametrize(
    "answer",
    [
        "About 14723.00",
        "~14723.00",
        "around $14,723.00",
        "I can't be certain, but 14723.00",
        "14723.00 (unverified)",
        "I'm not 100% sure: 14723.00",
        "Estimated 14723.00",
        "14723.00 vs 14724.00",
    ],
)
def test_more_hedges_and_doubts_fail(answer) -> None:
    assert not passes(NUM, S, S, answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The total is $14,723.00.",
        "Here is what I found about the stage: 14723.00",
        "It's 14723.00, about 3 deals",
        "14,723.00 USD (the stale deal of 1,068.00 is excluded)",
    ],
)
def test_committed_answers_with_context_pass(answer) -> None:
    assert passes(NUM, S, S, answer)


def test_a_decoy_guard_does_not_fire_on_the_targets_longer_name() -> None:
    s0 = st("crm", "objects", {})
    own = st("crm", "objects", {"n": {"body": "Renewal for Acme Retail Group is due."}})
    decoy = st("crm", "objects", {"n": {"body": "Renewal for Acme Retail Group and Acme Retail."}})
    check = {
        "predicate": "value_not_written",
        "service": "crm",
        "value": "Acme Retail",
        "unless_in": ["Acme Retail Group"],
    }
    assert passes(check, s0, own)
    assert not passes(check, s0, decoy)
    assert not passes({**check, "unless_in": []}, s0, own)
