"""Equivalent correct solutions pass, and near misses fail: a hand-written suite across services.

Part 1 states end states by hand (a message, an event, a record, an answer) and checks them
against the predicates the generator emits: other wording, other date and phone formats, names for
emails, case and whitespace pass; a wrong value, an extra recipient or a competing candidate fails.
Part 2 takes generated tasks and solves them another way (extra reads, another order of writes,
other wording of what is sent) and requires V = 1 each time.
"""

from __future__ import annotations

import pytest

from compoworld.verify.verifier import verify_checks


def state(service: str, table: str, records: dict) -> dict:
    return {"clock": "2026-03-02T09:00:00Z", "services": {service: {table: records}}}


S0_MAIL = state("email", "messages", {})
S0_CAL = state("calendar", "events", {})


def mail(to, body, subject="Update", cc=()):
    return state(
        "email",
        "messages",
        {"m1": {"to": list(to), "cc": list(cc), "subject": subject, "body": body, "labelIds": ["SENT"]}},
    )


def event(start, end, attendees, summary="Review"):
    return state(
        "calendar",
        "events",
        {
            "e1": {
                "summary": summary,
                "start": start,
                "end": end,
                "attendees": [{"email": a} for a in attendees],
            }
        },
    )


def passes(check, s0, s1, answer=None) -> bool:
    return verify_checks([{"id": "c", "description": "", "check": check}], s0, s1, answer).passed


SARA = ["sara.chen@acme.example", "Sara Chen"]
MSG = {"predicate": "message_sent", "service": "email", "to": SARA, "exclusive": True}

CASES = [
    # (name, check, s0, s1, answer, expected)
    (
        "a rival value named beside the right one",
        {**MSG, "contains": ["Spanish"], "exclude": ["Japanese", "English"]},
        S0_MAIL,
        mail([SARA[0]], "A: Spanish; B: Japanese"),
        None,
        False,
    ),
    (
        "a rival inside the right value names nothing",
        {**MSG, "contains": ["Senior Engineer"], "exclude": ["Engineer"]},
        S0_MAIL,
        mail([SARA[0]], "Her title is Senior Engineer."),
        None,
        True,
    ),
    (
        "email by address",
        {**MSG, "contains": ["RMA-55102"]},
        S0_MAIL,
        mail(["sara.chen@acme.example"], "Ref RMA-55102"),
        None,
        True,
    ),
    ("email as 'Name <addr>'", MSG, S0_MAIL, mail(["Sara Chen <sara.chen@acme.example>"], "hi"), None, True),
    ("recipient case and spaces", MSG, S0_MAIL, mail(["  SARA.CHEN@ACME.EXAMPLE "], "hi"), None, True),
    ("contact given by name", MSG, S0_MAIL, mail(["Sara  Chen"], "hi"), None, True),
    (
        "fact in other case",
        {**MSG, "contains": ["rma-55102"]},
        S0_MAIL,
        mail([SARA[0]], "ref RMA-55102"),
        None,
        True,
    ),
    (
        "amount written with a comma",
        {**MSG, "contains": ["1250.50"]},
        S0_MAIL,
        mail([SARA[0]], "You owe $1,250.50"),
        None,
        True,
    ),
    (
        "date written out",
        {**MSG, "contains": ["2026-03-10"]},
        S0_MAIL,
        mail([SARA[0]], "See you March 10, 2026"),
        None,
        True,
    ),
    (
        "date day-first words",
        {**MSG, "contains": ["2026-03-10"]},
        S0_MAIL,
        mail([SARA[0]], "on 10 Mar 2026"),
        None,
        True,
    ),
    (
        "phone formatted",
        {**MSG, "contains": ["+15551325763"]},
        S0_MAIL,
        mail([SARA[0]], "call +1 (555) 132-5763"),
        None,
        True,
    ),
    ("extra cc recipient fails", MSG, S0_MAIL, mail([SARA[0]], "hi", cc=["boss@x.example"]), None, False),
    ("wrong person fails", MSG, S0_MAIL, mail(["sara.chan@acme.example"], "hi"), None, False),
    (
        "fact missing fails",
        {**MSG, "contains": ["RMA-55102"]},
        S0_MAIL,
        mail([SARA[0]], "RMA-55103"),
        None,
        False,
    ),
    (
        "other date fails",
        {**MSG, "contains": ["2026-03-10"]},
        S0_MAIL,
        mail([SARA[0]], "March 11, 2026"),
        None,
        False,
    ),
    (
        "event in another zone",
        {
            "predicate": "event_scheduled",
            "attendees": [SARA[0]],
            "start": "2026-03-10T15:00:00Z",
            "duration_minutes": 30,
        },
        S0_CAL,
        event("2026-03-10T16:00:00+01:00", "2026-03-10T16:30:00+01:00", [SARA[0]]),
        None,
        True,
    ),
    (
        "event with wrong duration fails",
        {
            "predicate": "event_scheduled",
            "attendees": [SARA[0]],
            "start": "2026-03-10T15:00:00Z",
            "duration_minutes": 30,
        },
        S0_CAL,
        event("2026-03-10T15:00:00Z", "2026-03-10T16:00:00Z", [SARA[0]]),
        None,
        False,
    ),
    (
        "event at the wrong hour fails",
        {"predicate": "event_scheduled", "attendees": [SARA[0]], "start": "2026-03-10T15:00:00Z"},
        S0_CAL,
        event("2026-03-10T14:00:00Z", "2026-03-10T14:30:00Z", [SARA[0]]),
        None,
        False,
    ),
    (
        "event with an extra guest fails when exclusive",
        {"predicate": "event_scheduled", "attendees": [SARA[0]], "exclusive": True},
        S0_CAL,
        event("2026-03-10T15:00:00Z", "2026-03-10T15:30:00Z", [SARA[0], "x@y.example"]),
        None,
        False,
    ),
    (
        "record date in words",
        {
            "predicate": "record_exists",
            "service": "crm",
            "table": "t",
            "new": True,
            "where": {"due": {"at": "2026-03-10"}},
        },
        state("crm", "t", {}),
        state("crm", "t", {"1": {"due": "March 10, 2026"}}),
        None,
        True,
    ),
    (
        "record phone in another format",
        {
            "predicate": "record_exists",
            "service": "crm",
            "table": "t",
            "new": True,
            "where": {"phone": {"phone": "+15551325763"}},
        },
        state("crm", "t", {}),
        state("crm", "t", {"1": {"phone": "555.132.5763"}}),
        None,
        True,
    ),
    (
        "record text with other whitespace",
        {
            "predicate": "record_exists",
            "service": "crm",
            "table": "t",
            "new": True,
            "where": {"stage": "closed won"},
        },
        state("crm", "t", {}),
        state("crm", "t", {"1": {"stage": "  Closed   Won"}}),
        None,
        True,
    ),
    (
        "answer amount with a currency sign",
        {"predicate": "answer_matches", "value": "4200.5", "kind": "number"},
        S0_MAIL,
        S0_MAIL,
        "It is $4,200.50 in total.",
        True,
    ),
    (
        "answer within tolerance",
        {"predicate": "answer_matches", "value": "4200.5", "kind": "number"},
        S0_MAIL,
        S0_MAIL,
        "It comes to 4200.505.",
        True,
    ),
    (
        "answer date in words",
        {"predicate": "answer_matches", "value": "2026-03-10", "kind": "date"},
        S0_MAIL,
        S0_MAIL,
        "It's due Tuesday, March 10, 2026.",
        True,
    ),
    (
        "answer person by name",
        {"predicate": "answer_matches", "value": "sara.chen@acme.example", "alternates": ["Sara Chen"]},
        S0_MAIL,
        S0_MAIL,
        "That would be sara chen.",
        True,
    ),
    (
        "answer phone formatted",
        {"predicate": "answer_matches", "value": "+15551325763", "kind": "phone"},
        S0_MAIL,
        S0_MAIL,
        "(555) 132-5763",
        True,
    ),
    (
        "answer listing a competitor fails",
        {"predicate": "answer_matches", "value": "INV-20041", "exclude": ["INV-20014"]},
        S0_MAIL,
        S0_MAIL,
        "INV-20041 or INV-20014",
        False,
    ),
    (
        "answer of a prefix code fails",
        {"predicate": "answer_matches", "value": "INV-2004"},
        S0_MAIL,
        S0_MAIL,
        "INV-20041",
        False,
    ),
    (
        "answer of another number fails",
        {"predicate": "answer_matches", "value": "4200.5", "kind": "number", "exclude": ["3900"]},
        S0_MAIL,
        S0_MAIL,
        "4200.50, maybe 3900",
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "check", "s0", "s1", "answer", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_equivalent_forms(name, check, s0, s1, answer, expected) -> None:
    assert passes(check, s0, s1, answer) is expected, name


def test_the_suite_is_large_and_balanced() -> None:
    assert len(CASES) >= 20
    assert sum(c[-1] for c in CASES) >= 12 and sum(not c[-1] for c in CASES) >= 8


# ---- part 2: generated tasks solved another way ---------------------------------------------
@pytest.fixture(scope="module")
def tasks():
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    return generate(16, 21, Settings())[0]


def _run(task, calls, answer):
    from compoworld.verify.verifier import verify

    env = task.environment()
    for c in calls:
        r = env.call(c["tool"], c["arguments"])
        assert r["success"], (c["tool"], r)
    return verify(task, env.snapshot(), answer)


def test_extra_reads_pass(tasks) -> None:
    for t in tasks:
        env = t.environment()
        calls = []
        for c in t.reference_solution:
            calls.append(c.model_dump())
            if not env.tool_spec(c.tool).mutates:
                calls.append(c.model_dump())  # look twice: reading is never penalised
        assert _run(t, calls, t.answer).passed, t.id


def test_writes_in_another_order_pass(tasks) -> None:
    """Writes that do not depend on each other (different services) may come in any order."""
    tried = 0
    for t in tasks:
        env = t.environment()
        calls = [c.model_dump() for c in t.reference_solution]
        w = [i for i, c in enumerate(calls) if env.tool_spec(c["tool"]).mutates]
        if len(w) < 2:
            continue
        a, b = w[-2], w[-1]
        ca, cb = calls[a], calls[b]
        if ca["tool"].split("__")[0] == cb["tool"].split("__")[0]:
            continue
        if any(v.startswith(f"obs:{a}") for v in cb["sources"].values()):
            continue  # the second write uses what the first returned
        swapped = [*calls[:a], cb, *calls[a + 1 : b], ca, *calls[b + 1 :]]
        if _run(t, swapped, t.answer).passed:
            tried += 1
        else:
            raise AssertionError(f"{t.id}: writes of {ca['tool']} and {cb['tool']} in the other order fail")
    assert tried >= 2


def test_other_wording_of_messages_passes(tasks) -> None:
    """What is sent may be worded differently: a greeting before, a sign-off after."""
    text_keys = ("text", "body", "content", "note_body")
    changed = 0
    for t in tasks:
        calls = []
        for c in t.reference_solution:
            d = c.model_dump()
            for k in text_keys:
                if isinstance(d["arguments"].get(k), str):
                    d["arguments"] = {
                        **d["arguments"],
                        k: "Hello, " + d["arguments"][k] + "\n\nThanks, and have a good day.",
                    }
                    changed += 1
            calls.append(d)
        assert _run(t, calls, t.answer).passed, t.id
    assert changed >= 5


def test_answers_in_other_words_pass(tasks) -> None:
    asked = [t for t in tasks if t.answer]
    for t in asked:
        calls = [c.model_dump() for c in t.reference_solution]
        assert _run(t, calls, f"Done. The answer is {t.answer}, as far as I can tell.").passed, t.id
