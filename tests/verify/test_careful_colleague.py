"""What a careful colleague writes passes; the trap it resembles still fails (issue 23, from an
honest player's hard composed tasks):
- a ruled-out person named as labelled context ("X is no longer the right person for this") passes;
  asking that person, or sending to them, fails;
- a message to a colleague that greets them by first name, surname never written, passes;
- the reply to a request under review may quote its amount as under review; crediting it (or
  pledging to) before approval fails;
- a gutted text fails;
- a failed text check names exactly the facts missing from the record that comes closest.
"""

from __future__ import annotations

import pytest

from compoworld.tasks import variants as V
from compoworld.tasks.adversaries import gut
from compoworld.verify.verifier import verify_checks


@pytest.fixture(scope="module")
def hard():
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    return generate(6, 8181, Settings(k=5, difficulty="hard"))[0]


def _ok(task, calls) -> tuple[bool, str]:
    return V.run_variant(task, calls, task.answer)


def test_the_careful_shapes_pass_on_hard_tasks(hard) -> None:
    tried = {"ruled_out_context": 0, "first_name_greeting": 0, "quote_under_review": 0}
    for t in hard:
        ref = V._calls(t)
        for name in tried:
            calls = getattr(V, name)(t, ref)
            if calls is None:
                continue
            assert calls != ref
            ok, why = _ok(t, calls)
            assert ok, (t.id, name, why)
            tried[name] += 1
    assert all(tried.values()), tried


def test_a_credit_promised_before_approval_fails(hard) -> None:
    tried = 0
    for t in hard:
        ref = V._calls(t)
        for pledge in (
            "We have credited ${amt} to your account.",
            "We will credit ${amt} once it is approved.",
        ):
            calls = V.quote_under_review(t, ref, pledge)
            if calls is None:
                continue
            ok, _ = _ok(t, calls)
            assert not ok, (t.id, pledge)
            tried += 1
    assert tried >= 2


def _rival_email(task, name: str) -> str | None:
    return next((a for a, n in V._people(task).items() if n == name), None)


def test_asking_or_sending_to_the_ruled_out_person_fails(hard) -> None:
    tried = 0
    for t in hard:
        names = V._ruled_out(t)
        if not names:
            continue
        rival, ref = names[0], V._calls(t)
        # a message that asks the ruled-out person (no label: it is addressed to them)
        asks = [
            {**c, "arguments": {**c["arguments"], k: f"{rival}, please approve this. " + c["arguments"][k]}}
            if V._message_call(c) and (k := next((k for k in V._MESSAGE_KEYS if k in c["arguments"]), None))
            else c
            for c in ref
        ]
        assert asks != ref
        assert not _ok(t, asks)[0], t.id
        email = _rival_email(t, rival)
        if email:
            sent = []
            for c in ref:
                a = dict(c["arguments"])
                for k in ("to", "notify_emails"):
                    if k in a and a[k]:
                        a[k] = [email]
                sent.append({**c, "arguments": a})
            if sent != ref:
                assert not _ok(t, sent)[0], t.id
        tried += 1
    assert tried >= 1


def test_a_gutted_text_fails_on_hard_tasks(hard) -> None:
    for t in hard:
        ref = V._calls(t)
        gutted = [{**c, "arguments": gut(c["arguments"])} if V._message_call(c) else c for c in ref]
        if gutted != ref:
            assert not _ok(t, gutted)[0], t.id


def _mail(*msgs):
    recs = {
        f"m{i}": {"to": to, "subject": "Credit", "body": body, "labelIds": ["SENT"]}
        for i, (to, body) in enumerate(msgs)
    }
    return {"clock": "2026-03-02T09:00:00Z", "services": {"email": {"messages": recs}}}


SOFIA = {"kind": "person", "forms": ["sofia.osei@lumina.example", "Sofia Osei", "Osei"]}
CHECK = {
    "predicate": "text_carries",
    "service": "email",
    "table": "messages",
    "paths": ["body"],
    "facts": [{"kind": "amount", "value": 1186.15, "currency": "USD"}, SOFIA],
    "forbid": ["Felix Murphy"],
}
S0 = _mail()


def _run(s1):
    r = verify_checks([{"id": "c", "description": "", "check": CHECK}], S0, s1, None)
    return r.passed, r.checks[0].detail


@pytest.mark.parametrize(
    ("msgs", "expected"),
    [
        (
            [
                (
                    ["sofia.osei@lumina.example"],
                    "Hi Sofia, Stark Capital asks for $1186.15: can you approve it?",
                )
            ],
            True,
        ),
        (
            [
                (
                    ["sofia.osei@lumina.example"],
                    "Hi Sofia, please approve $1186.15. You are the approver because the account manager, "
                    "Felix Murphy, is no longer with the company.",
                )
            ],
            True,
        ),
        ([(["sofia.osei@lumina.example"], "Felix Murphy, please approve $1186.15.")], False),
        ([(["liam.smyth@lumina.example"], "Hi Liam, Stark Capital asks for $1186.15.")], False),
        ([(["sofia.osei@lumina.example"], "Hi Sofia, Stark Capital asks for a credit.")], False),
    ],
)
def test_the_addressee_needs_no_naming_and_context_is_no_rival(msgs, expected) -> None:
    assert _run(_mail(*msgs))[0] is expected


def test_the_detail_names_exactly_the_missing_facts() -> None:
    # the closest record has the amount but goes to somebody else: the person is what is missing
    ok, detail = _run(
        _mail(
            (["liam.smyth@lumina.example"], "Hi Liam, Stark Capital asks for $1186.15."),
            (["maya@customer.example"], "Your request is under review."),
        )
    )
    assert not ok
    assert "sofia.osei@lumina.example" in detail and "1186.15" not in detail
    ok, detail = _run(_mail((["maya@customer.example"], "Your request is under review.")))
    assert "1186.15" in detail and "sofia.osei@lumina.example" in detail
