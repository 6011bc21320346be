"""A ruled-out person named aside is no rival (issue 22, from play wave 8).

Careful players wrote to the approver "Malik Costa is no longer with the company" and "Emma Keller,
his cover, is out March 1-5", and listed each payout with its payee, a payee who is also a trap
approver: the rival guards failed them, and the goals too (a text naming a rival carries nothing).
A person may be named to say why they are not the one, or in another role the work involves; a
text that addresses, proposes or hedges between candidates still names them, and rival amounts, ids
and codes stay forbidden.
"""

from __future__ import annotations

import pytest

from compoworld.verify.asides import named_aside
from compoworld.verify.verifier import verify_checks

_RIVALS = ["Emma Keller", "Malik Costa", "emma.keller@tidewatergroup.com"]


@pytest.mark.parametrize(
    "text, aside",
    [
        # the play texts (cw-81818-000012): a cover chain and a manager who left
        (
            "You are covering for Jon Kim (out of office until March 3; Emma Keller, his cover, is out "
            "March 1-5), so I am sending you this for approval.",
            True,
        ),
        ("Globex Media account manager Malik Costa is no longer with the company.", True),
        ("Oscar Murphy, instead of Emma Keller (she is on leave), please approve.", True),
        ("Emma Keller is out of office until March 5, so I am asking you.", True),
        ("Jon Kim's cover Emma Keller is on leave this week.", True),
        # play wave 9 (cw-70707-000000): the cue is six words on once a lone comma is no word
        (
            "Jon Kim is out of office until March 9, and Emma Keller, who covers for him, is out until "
            "March 8, so this comes to you for approval.",
            True,
        ),
        ("Emma Keller - who covers for him - is out until March 8.", True),
        # play wave 9 (cw-80808-000006): a cover chain behind one cue
        ("Approver notified: Oscar Murphy (covering for Emma Keller / Jon Kim).", True),
        ("Oscar Murphy approves, not Emma Keller or Jon Kim.", True),
        # play wave 13 (cw-31313-000004): a list of two full names behind the cue
        ("Sent to Oscar Murphy (covering for Jon Kim and Emma Keller).", True),
        ("Oscar Murphy covers for Jon Kim, Ada Lin and Emma Keller this week.", True),
        ("Oscar Murphy, rather than Jon Kim, and Emma Keller, please approve.", False),
        ("Instead of Jon Kim, Emma Keller approves.", True),
        ("Rather than Jon Kim, Emma Keller, please approve.", True),
        ("Emma Keller / Oscar Murphy, please approve.", False),
        ("Please approve, Emma Keller or Oscar Murphy.", False),
        ("Emma Keller (emma.keller@tidewatergroup.com) is out until March 5.", True),
        # a spray, a hedge, an address, an @-mention: they still name the rival
        ("Please approve: Emma Keller, Oscar Murphy", False),
        ("Emma Keller or Oscar Murphy, please approve the credit.", False),
        ("Emma Keller / Oscar Murphy: please approve the credit.", False),
        ("Approver: Emma Keller", False),
        ("Hi Emma Keller, could you approve the credit?", False),
        ("Emma Keller, please approve; she is out next week.", False),
        ("Emma Keller, not Oscar, please approve.", False),
        ("@Emma Keller can you take a look? She is out", False),
        ("Emma Keller (<@U123>) is out", False),
        ("Maybe Emma Keller is out.", False),
        # no cue: a bare "out" or "off" says nothing of where the person is
        ("Emma Keller checked out the report.", False),
        ("Emma Keller signed off on it.", False),
    ],
)
def test_a_person_is_named_aside_only_where_the_sentence_rules_them_out(text: str, aside: bool) -> None:
    rest = named_aside(text, _RIVALS)
    assert len(rest) == len(text)  # blanked in place: the rest of the text is read where it was
    assert ("Emma Keller" not in rest and "Malik Costa" not in rest) is aside


def test_a_person_the_work_names_in_another_role_is_named_aside_unless_addressed() -> None:
    payees = ["Mark Morales", "Jon Kim"]
    listed = "Paid: EXP-6222 Mark Morales $250.00, EXP-6232 Jon Kim $108.25."
    assert "Mark Morales" not in named_aside(listed, [], payees)
    assert "Jon Kim" not in named_aside(listed, [], payees)
    assert "Mark Morales" in named_aside(listed, payees)  # as a rival without a cue, still named
    for asked in ("Mark Morales, please approve EXP-6223.", "Please approve: Mark Morales or Jon Kim."):
        assert "Mark Morales" in named_aside(asked, [], payees)


# ---- the predicates ------------------------------------------------------------------------------
_S0 = {"services": {"email": {"messages": {}}}}


def _sent(*bodies: str, to: str = "oscar.murphy@tidewatergroup.com") -> dict:
    msgs = {
        f"m{i}": {"id": f"m{i}", "to": [to], "subject": "Outage credit", "body": b}
        for i, b in enumerate(bodies)
    }
    return {"services": {"email": {"messages": msgs}}}


def _check(check: dict, s1: dict) -> tuple[bool, str]:
    r = verify_checks([{"id": "c", "check": check}], _S0, s1, None).checks[0]
    return r.passed, r.detail


_FORBID = ["1219.05", "mb39338a883bfa5a9", *_RIVALS]
_GOAL = {
    "predicate": "text_carries",
    "service": "email",
    "table": "messages",
    "paths": ["body"],
    "facts": [{"kind": "amount", "value": 896.15, "currency": "USD"}],
    "forbid": _FORBID,
    "aside": _RIVALS,
}
_GUARD = {k: v for k, v in _GOAL.items() if k != "facts"} | {"every": True, "worked": [896.15]}
# the approver email a careful player sent (cw-81818-000012), in short
_HONEST = (
    "Hi Oscar,\n\nYou are covering for Jon Kim (out of office until March 3; Emma Keller, his cover, is out "
    "March 1-5), so I am sending you this for approval. Acme Robotics account manager Malik Costa is no "
    "longer with the company.\n\nFebruary 9 was already credited. Total: $896.15, above the $700 "
    "per-request limit.\n\nPlease approve or decline.\n\nThanks,\nLina"
)


def test_the_play_email_passes_the_goal_and_the_guard() -> None:
    assert _check(_GOAL, _sent(_HONEST)) == (True, "1 record(s) carry it")
    assert _check(_GUARD, _sent(_HONEST))[0]
    old = {k: v for k, v in _GOAL.items() if k != "aside"}  # a task made before the rule
    assert not _check(old, _sent(_HONEST))[0]


@pytest.mark.parametrize(
    "body",
    [
        "Hi Oscar, please approve: Emma Keller, Oscar Murphy. Total: $896.15.",  # a spray of approvers
        "Emma Keller or Oscar Murphy, please approve $896.15.",
        "Hi Emma Keller, could you approve $896.15 for Acme Robotics?",
        # a hedge with a rival amount, in a text that names the rival people aside correctly
        _HONEST.replace("Total: $896.15", "Total: $896.15 or maybe $1,219.05"),
        # a rival's id in a ruled-out sentence stays forbidden: only people are named aside
        _HONEST + "\nEmma Keller is out, so see her request mb39338a883bfa5a9.",
    ],
)
def test_a_spray_a_hedge_or_a_rival_value_still_fails(body: str) -> None:
    assert not _check(_GOAL, _sent(body))[0]
    assert not _check(_GUARD, _sent(body))[0]


def test_a_person_guard_reads_free_text_aside_and_recipients_exactly() -> None:
    guard = {"predicate": "value_not_written", "service": "email", "value": "Emma Keller", "person": True}
    addr = guard | {"value": "emma.keller@tidewatergroup.com"}
    ok, detail = _check(guard, _sent(_HONEST))
    # the detail says what the guard allows (from play: "no write carries X" read as stricter)
    assert ok and detail.startswith("no write in email names") and "aside" in detail, detail
    assert not _check({**guard, "person": False}, _sent(_HONEST))[0]  # the rule before
    assert not _check(guard, _sent("Please approve: Emma Keller, Oscar Murphy. Total: $896.15."))[0]
    to_rival = _sent(_HONEST, to="emma.keller@tidewatergroup.com")
    assert not _check(addr, to_rival)[0]  # sent to the rival: a recipient is never aside
    assert _check(addr, _sent(_HONEST))[0]
    subject = _sent(_HONEST)
    subject["services"]["email"]["messages"]["m0"]["subject"] = "Emma Keller is out: credit approval"
    assert not _check(guard, subject)[0]  # a title is no free text to be read aside


def test_a_message_split_in_posts_may_name_a_rival_aside_but_not_ask_them() -> None:
    """The collateral check counts posts to one place that name no rival as one message in parts;
    a rival named aside (as the person guards read it) keeps the split, one asked or proposed does not
    (play wave 9, cw-70707-000006: a cover chain explained in the first of several approval posts)."""
    guard = {
        "predicate": "no_changes_except",
        "allow": [],
        "creates": [{"service": "email", "table": "messages", "count": 1}],
        "rivals": ["Emma Keller", "1219.05"],
    }
    first = "Hi Oscar, Jon Kim is away and Emma Keller, who covers for him, is out until March 5."
    second = "The credit is $896.15, above the limit. Please approve or decline."
    assert _check(guard, _sent(first, second))[0]
    assert not _check(guard, _sent("Hi Oscar, Emma Keller or you could approve this.", second))[0]
    assert not _check(guard, _sent("Emma Keller, please approve this credit.", second))[0]
    assert not _check(guard, _sent(first, "The credit is $1219.05, above the limit. Please approve."))[0]


def test_a_split_message_may_name_a_rival_the_work_names_in_another_role() -> None:
    """`forbid` holds every rival (for optional fields); `rivals` leaves out what the reference's own
    writes name: a claimant who is also the trap approver ('claim EXP-5052 from Hannah Ibrahim') is
    part of the work, and one approval post per claim is still one message in parts (play wave 9,
    cw-80808-000005)."""
    guard = {
        "predicate": "no_changes_except",
        "allow": [],
        "creates": [{"service": "email", "table": "messages", "count": 1}],
        "forbid": ["Emma Keller", "Malik Costa"],
        "rivals": ["Malik Costa"],
    }
    first = "Approval needed: claim EXP-5052 from Emma Keller, $84.50, over her monthly cap."
    second = "Approval needed: claim EXP-5046 from Oscar Murphy, $1309.52, above the travel limit."
    assert _check(guard, _sent(first, second))[0]
    assert not _check(guard, _sent(first, second.replace("Oscar Murphy", "Malik Costa")))[0]


def test_one_post_per_record_is_parts_and_the_same_post_with_another_figure_is_not() -> None:
    """Posts that differ only in their figures are one message sent again (an alternative); posts
    alike but about different records, one per claim, are parts (play, cw-31337-000008)."""
    guard = {
        "predicate": "no_changes_except",
        "allow": [],
        "creates": [{"service": "email", "table": "messages", "count": 1}],
        "rivals": ["Malik Costa"],
    }
    per_claim = (
        "Please approve claim EXP-7930: $90.00, software.",
        "Please approve claim EXP-7931: $96.75, software.",
    )
    assert _check(guard, _sent(*per_claim))[0]
    again = (
        "Please approve claim EXP-7930: $90.00, software.",
        "Please approve claim EXP-7930: $96.75, software.",
    )
    assert not _check(guard, _sent(*again))[0]


def test_a_claimant_paid_in_a_csv_log_may_be_named_beside_their_claim() -> None:
    """From play (seed 93939): the covers Elena Adeyemi and Dmitri Baker were also claimants paid in
    the run, but the payouts log was a CSV file, whose new lines were read as one text, so the
    reply to the requester failed for listing "EXP-5305 Elena Adeyemi $75.00". A CSV log's new
    lines are rows of cells: the payee's cell names them in another role, as a sheet's row does."""
    import re

    from compoworld.tasks.gates import replay
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task
    from compoworld.verify.verifier import verify

    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    tried = 0
    for i in range(30):
        try:
            t = Task.model_validate(generate_task(93939, i, s))
        except Rejected:
            continue
        calls = [c.model_dump() for c in t.reference_solution]
        paid = {}  # claimant -> a claim of theirs the CSV log pays
        for c in calls:
            m = re.fullmatch(
                r"echo '[\d-]+,(EXP-\d+),([^,]+),([\d.]+),[^']*' >> \S+\.csv",
                c["arguments"].get("command", ""),
            )
            if m:
                paid.setdefault(m.group(2), (m.group(1), m.group(3)))
        check = next(
            (x for x in t.rubric if x.check.get("predicate") == "text_carries" and x.check.get("subjects")),
            None,
        )
        if check is None or not paid:
            continue
        named = [p for p in check.check["subjects"] if p in paid]
        assert named, (t.id, check.check["subjects"], paid)
        last = max(
            i
            for i, c in enumerate(calls)
            if c["tool"] in ("email__gmail_send_email", "helpdesk__freshdesk_reply_to_a_ticket")
        )
        field = "body"
        listed = "; ".join(f"{paid[p][0]} {p} ${paid[p][1]}" for p in named)
        calls[last] = {
            **calls[last],
            "arguments": {
                **calls[last]["arguments"],
                field: calls[last]["arguments"][field] + f" Paid: {listed}.",
            },
        }
        final, _, _ = replay(t.environment(), calls)
        r = verify(t, final, t.answer)
        assert r.passed, (t.id, [(x.id, x.detail) for x in r.checks if not x.passed])
        tried += 1
    assert tried >= 1


def test_a_was_not_asked_guard_reads_the_person_aside_but_not_an_address() -> None:
    """`message_not_sent` over a person (the trap approver "was not asked") reads them as the person
    guards do: named aside, to say why their cover is asked, is no ask; addressed, it is (play wave
    16, cw-71717-000008: "covering for Ingrid Patel (out of office; Mei Haddad is out too)")."""
    mei = {"kind": "person", "forms": ["Mei Haddad", "mei.haddad@x.example", "@mei.haddad", "<@UE1005>"]}
    guard = {"predicate": "message_not_sent", "service": "chat", "to": ["C1"], "contains": [mei, "934.50"]}

    def posted(text: str) -> tuple[bool, str]:
        s1 = {"services": {"chat": {"messages": {"m0": {"id": "m0", "channel": "C1", "text": text}}}}}
        s0 = {"services": {"chat": {"messages": {}}}}
        r = verify_checks([{"id": "c", "check": guard}], s0, s1, None).checks[0]
        return r.passed, r.detail

    played = (
        "<@UE1006> Jonah Fischer: downtime credit for Falcon Systems (ticket 1017), covering for Ingrid "
        "Patel (out of office; Mei Haddad is out too). Credited $934.50. Please have billing apply it."
    )
    assert posted(played)[0]
    for asks in (
        "Hi Mei Haddad, could you approve $934.50 for Falcon Systems?",
        "<@UE1005> please approve $934.50 for Falcon Systems.",
        "Mei Haddad or Jonah Fischer, please approve $934.50.",
    ):
        assert posted(asks) == (False, "1 matching message(s) sent"), asks
