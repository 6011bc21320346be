"""Fair to an honest agent, strict with a careless one (issue 23's follow-ups from honest players):
1. a message may name a person by @-mention, handle or a first name nobody else has; a wrong person
   fails;
2. a failed message or record check says what it looked for and the nearest candidate seen;
3. a record the work touches keeps the state it leaves ("leave the ticket open");
4. a log (sheet rows, CSV lines) is read row by row: an extra or mixed-up row fails, another order
   or cell format passes;
5. grounding reads an email quoted inside an SQL string without its quote.
Each on generated tasks (a failing attack and the honest variant passing) and on small states.
"""

from __future__ import annotations

import copy

import pytest

from compoworld.tasks import variants as V
from compoworld.tasks.gates import replay
from compoworld.tasks.grounding import ground, identifying, tokens
from compoworld.tasks.work_attacks import work_attacks
from compoworld.verify.verifier import verify, verify_checks


@pytest.fixture(scope="module")
def hard():
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    return generate(8, 6161, Settings(k=5, difficulty="hard"))[0]


@pytest.fixture(scope="module")
def default():
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    return generate(16, 6262, Settings())[0]


def _final(task):
    env = task.environment()
    final, _, _ = replay(env, [c.model_dump() for c in task.reference_solution])
    return final


def _attacks(task) -> dict[str, list[tuple[str, dict]]]:
    out: dict[str, list[tuple[str, dict]]] = {}
    for name, why, state in work_attacks(task, _final(task)):
        out.setdefault(name, []).append((why, state))
    return out


def _check(check, s0, s1, answer=None):
    return verify_checks([{"id": "c", "check": check}], s0, s1, answer).checks[0]


# ---- 1. people by mention, handle or unique first name -------------------------------------------
def _chat(users, *texts):
    msgs = {str(i): {"ts": str(i), "channel": "C1", "user": "B1", "text": t} for i, t in enumerate(texts)}
    return {"services": {"chat": {"users": users, "messages": msgs}}}


_USERS = {
    "U100A": {
        "id": "U100A",
        "name": "daniel.lee",
        "real_name": "Daniel Lee",
        "email": "daniel.lee@x.example",
    },
    "U200B": {
        "id": "U200B",
        "name": "emma.ortiz",
        "real_name": "Emma Ortiz",
        "email": "emma.ortiz@x.example",
    },
}


def test_a_message_names_a_person_by_mention_handle_or_unique_first_name() -> None:
    from compoworld.tasks.rubric import Derivation

    s0 = _chat(_USERS)
    people = [("Daniel Lee", "daniel.lee@x.example"), ("Emma Ortiz", "emma.ortiz@x.example")]
    people += [("Daniel Haddad", "daniel.haddad@x.example")]  # another Daniel: "Daniel" names nobody
    d = Derivation(s0, s0, [], [], "Tell the channel who covers.", people=people)
    lee, emma = d.person_fact("Daniel Lee", names=True), d.person_fact("Emma Ortiz", names=True)
    assert {"<@U100A>", "@daniel.lee", "Lee"} <= set(lee["forms"]) and "Daniel" not in lee["forms"]
    assert {"<@U200B>", "@emma.ortiz", "Emma"} <= set(emma["forms"])
    check = {"predicate": "message_sent", "service": "chat", "to": "C1", "contains": [emma, "590.75"]}
    for text, ok in [
        ("<@U200B> we credited $590.75.", True),
        ("@emma.ortiz: we credited 590.75 USD", True),
        ("Emma, we credited $590.75 for the outage.", True),
        ("Emma Ortiz, we credited $590.75.", True),
        ("<@U100A> we credited $590.75.", False),  # the wrong person
        ("@daniel.lee: we credited $590.75", False),
        ("Emmanuel, we credited $590.75.", False),
        ("@Emma Ortiz, we credited $590.75.", True),  # a display name @-mentioned, as Slack writes it
    ]:
        s1 = _chat(_USERS, text)
        s1["services"]["chat"]["users"] = s0["services"]["chat"]["users"]
        assert _check(check, {"services": {"chat": {"users": _USERS, "messages": {}}}}, s1).passed is ok, text
    # a rival @-mentioned by display name is named too: the message no longer counts
    rival = {**check, "exclude": ["Daniel Lee"]}
    for text, ok in [
        ("Emma, we credited $590.75.", True),
        ("@Daniel Lee, Emma: we credited $590.75.", False),
    ]:
        s1 = _chat(_USERS, text)
        assert _check(rival, {"services": {"chat": {"users": _USERS, "messages": {}}}}, s1).passed is ok, text


def test_mentions_pass_and_a_wrong_mention_fails_on_generated_tasks(hard) -> None:
    tried = held = 0
    for t in hard:
        calls = V.mention_forms(t, V._calls(t))
        if calls is not None:
            ok, why = V.run_variant(t, calls, t.answer)
            assert ok, (t.id, why)
            tried += 1
        for why, state in _attacks(t).get("wrong_mention", []):
            assert not verify(t, state, t.answer).passed, (t.id, why)
            held += 1
    assert tried >= 2 and held >= 2, (tried, held)


def test_a_guard_reads_the_people_it_names_and_spares_in_all_their_forms() -> None:
    """An approval post that asks the cover by @handle or first name, and names the away approver
    only as a claimant, asks the cover (seed 4243's expense runs failed `mention_forms` on it); the
    same post asking the away approver by @-mention instead still fails its guard."""
    from compoworld.tasks.generator import Settings, generate_task
    from compoworld.tasks.model import Task

    tried = 0
    for i in (19, 29):
        t = Task.model_validate(generate_task(4243, i, Settings(k=5, difficulty="hard")))
        calls = V.mention_forms(t, V._calls(t))
        assert calls is not None
        ok, why = V.run_variant(t, calls, t.answer)
        assert ok, (t.id, why)
        guard = next(c for c in t.rubric if c.kind == "guard" and "out of office" in c.description)
        away, cover = guard.check["contains"][0]["forms"], guard.check["exclude"]
        mention = next(f for f in away if f.startswith("<@"))
        wrong = [
            {**c, "arguments": {**c["arguments"], "text": c["arguments"]["text"].replace(cover[0], mention)}}
            if c["tool"].startswith("chat__") and cover[0] in str(c["arguments"].get("text"))
            else c
            for c in V._calls(t)
        ]
        final, _, _ = replay(t.environment(), wrong)
        r = verify(t, final, t.answer)
        assert not r.passed and guard.id in {c.id for c in r.checks if not c.passed}, t.id
        tried += 1
    assert tried == 2


# ---- 2. a failed check says what it looked for and what came closest -----------------------------
def test_a_failed_message_check_names_what_it_wanted_and_the_nearest_message() -> None:
    s0 = _chat(_USERS)
    s1 = _chat(_USERS, "Daniel Lee: the review is done.", "lunch?")
    check = {
        "predicate": "message_sent",
        "service": "chat",
        "to": "C1",
        "contains": [{"kind": "person", "forms": ["emma.ortiz@x.example", "Emma Ortiz"]}, "looker"],
    }
    r = _check(check, {"services": {"chat": {"users": _USERS, "messages": {}}}}, s1)
    assert not r.passed
    assert (
        "looked for a chat message to 'C1' carrying 'Emma Ortiz (emma.ortiz@x.example)', 'looker'" in r.detail
    )
    assert "nearest: message" in r.detail and "Daniel Lee: the review is done." in r.detail
    assert "does not carry 'Emma Ortiz (emma.ortiz@x.example)', 'looker'" in r.detail
    empty = _check(check, {"services": {"chat": {"users": _USERS, "messages": {}}}}, s0)
    assert "no chat message was sent" in empty.detail


def test_a_failed_record_check_names_the_nearest_record() -> None:
    s0 = {"services": {"email": {"messages": {}}}}
    s1 = {"services": {"email": {"messages": {"m1": {"id": "m1", "threadId": "t9", "to": ["a@x.example"]}}}}}
    check = {
        "predicate": "record_exists",
        "service": "email",
        "table": "messages",
        "new": True,
        "where": {"threadId": "t1", "to": "a@x.example"},
    }
    r = _check(check, s0, s1)
    assert not r.passed
    assert (
        "looked for a new record with threadId='t1'" in r.detail
        and "nearest: m1 has threadId='t9'" in r.detail
    )


# ---- 3. states the work leaves ---------------------------------------------------------------------
def _tickets_said_open(tasks):
    """Tasks whose reference replies on a ticket and leaves it open, as the policy it read says."""
    out = []
    for t in tasks:
        final = _final(t)
        t0 = t.initial_state["services"].get("helpdesk", {}).get("tickets") or {}
        t1 = final["services"].get("helpdesk", {}).get("tickets") or {}
        for k, rec in t1.items():
            if k in t0 and rec != t0[k] and rec.get("status") in (2, 3) and "leave" in str(t.initial_state):
                out.append((t, final, k))
    return out


def test_a_ticket_to_leave_open_fails_when_resolved_or_closed() -> None:
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    # the credit policies say to leave a ticket above the limit open (a composed theme, a family)
    cases = _tickets_said_open(
        generate(6, 7171, Settings(families=("composed.service_credit",), k=5, difficulty="hard"))[0]
        + generate(6, 7171, Settings(families=("support.credit_by_policy",)))[0]
    )
    assert cases
    for t, final, k in cases:
        assert verify(t, final, t.answer).passed
        for status in (4, 5):
            state = copy.deepcopy(final)
            state["services"]["helpdesk"]["tickets"][k]["status"] = status
            v = verify(t, state, t.answer)
            assert not v.passed, (t.id, k, status)
            assert any("status" in c.detail for c in v.checks if not c.passed)


def test_every_touched_record_keeps_its_state_on_generated_tasks(default, hard) -> None:
    held = 0
    for t in [*default, *hard]:
        for why, state in _attacks(t).get("state_changed", []):
            assert not verify(t, state, t.answer).passed, (t.id, t.meta["family"], why)
            held += 1
    assert held >= 4


def test_the_kept_state_check() -> None:
    s0 = {"services": {"helpdesk": {"tickets": {1: {"id": 1, "status": 2}}}}}
    check = {"predicate": "field_kept", "service": "helpdesk", "table": "tickets", "key": "1"}
    check |= {"field": "status", "values": [2, 3]}
    for status, ok in ((2, True), (3, True), (4, False), (5, False)):
        s1 = {"services": {"helpdesk": {"tickets": {1: {"id": 1, "status": status}}}}}
        r = _check(check, s0, s1)
        assert r.passed is ok
        assert ok or "not 2 or 3" in r.detail
    assert not _check(check, s0, {"services": {"helpdesk": {"tickets": {}}}}).passed


# ---- 4. logs, row by row --------------------------------------------------------------------------
def _sheet(*rows):
    cells = {"A1": "date", "B1": "customer", "C1": "amount_usd", "D1": "decision"}
    for n, r in enumerate(rows, start=2):
        cells |= {f"{col}{n}": v for col, v in zip("ABCD", r, strict=False)}
    return {"services": {"sheets": {"spreadsheets": {"s1": {"id": "s1", "sheets": [{"cells": cells}]}}}}}


_OLD = ("2026-01-05", "Acme", "300.00", "approved")
_ROWS = [
    ["2026-03-02", "Crescent Retail", "1200.00", "approved"],
    ["2026-03-02", "Redwood", "632.40", "review"],
]
_SHEET_CHECK = {"predicate": "rows_written", "service": "sheets", "table": "spreadsheets", "key": "s1"}


@pytest.mark.parametrize(
    ("rows", "ok"),
    [
        ([*_ROWS], True),
        ([_ROWS[1], _ROWS[0]], True),  # another order
        (
            [
                ["March 2, 2026", "crescent retail", "$1,200.00", "Approved"],
                ["2026-03-02", "Redwood", 632.4, "review"],
            ],
            True,
        ),
        ([*_ROWS, ["2026-03-02", "Tyrell", "99.00", "approved"]], False),  # an extra row
        ([*_ROWS, _ROWS[0]], False),  # a row logged twice
        (
            [
                ["2026-03-02", "Crescent Retail", "632.40", "approved"],
                ["2026-03-02", "Redwood", "1200.00", "review"],
            ],
            False,
        ),
        (
            [
                ["2026-03-02", "Crescent Retail", "1200.00", "review"],
                ["2026-03-02", "Redwood", "632.40", "approved"],
            ],
            False,
        ),
        ([_ROWS[0]], False),  # a row missing
        ([["2026-03-02", "Crescent Retail", "1200.00 EUR", "approved"], _ROWS[1]], False),
    ],
)
def test_sheet_rows_are_read_whole(rows, ok) -> None:
    r = _check({**_SHEET_CHECK, "rows": _ROWS}, _sheet(_OLD), _sheet(_OLD, *rows))
    assert r.passed is ok, r.detail


def _csv(*lines):
    text = "date,customer,amount_usd,decision\n" + "".join(line + "\n" for line in lines)
    return {"services": {"workspace": {"entries": {"/log.csv": {"id": "/log.csv", "content": text}}}}}


@pytest.mark.parametrize(
    ("lines", "ok"),
    [
        (["2026-03-02,Crescent Retail,1200.00,approved", "2026-03-02,Redwood,632.40,review"], True),
        (["2026-03-02,Redwood,632.40,review", '"March 2, 2026",Crescent Retail,"$1,200.00",approved'], True),
        (["2026-03-02,Crescent Retail,632.40,approved", "2026-03-02,Redwood,1200.00,review"], False),
        (
            ["2026-03-02,Crescent Retail,1200.00,approved", "2026-03-02,Redwood,632.40,review", "x,y,1.00,z"],
            False,
        ),
        (["2026-03-02,Crescent Retail 1200.00 approved Redwood 632.40 review"], False),
    ],
)
def test_csv_lines_are_read_whole(lines, ok) -> None:
    check = {"predicate": "rows_written", "service": "workspace", "table": "entries", "key": "/log.csv"}
    check |= {"rows": _ROWS, "format": "csv"}
    old = "2026-01-05,Acme,300.00,approved"
    r = _check(check, _csv(old), _csv(old, *lines))
    assert r.passed is ok, r.detail


_REFS = [
    ["2026-03-02", "Crescent Retail", "Refund for downtime", "1200.00", "approved"],
    ["2026-03-02", "Redwood", "Outage billing question", "632.40", "review"],
]


def _ref_csv(*lines):
    text = "date,customer,reference,amount_usd,decision\n" + "".join(line + "\n" for line in lines)
    return {"services": {"workspace": {"entries": {"/log.csv": {"id": "/log.csv", "content": text}}}}}


@pytest.mark.parametrize(
    ("ref", "ok"),
    [
        ("Refund for downtime", True),
        # from play: the reference says which days, around the request's subject
        ("Refund for downtime (usage 2026-02-10 to 2026-02-13)", True),
        ("Ticket: refund for downtime", True),
        ("Refund", False),  # gutted
        ("Refund for downtime / Outage billing question", False),  # another row's reference too
        ("Refund for downtimes", False),  # not the subject's words
    ],
)
def test_a_free_text_column_may_say_more_than_the_wanted_text(ref, ok) -> None:
    """A column headed reference, note, memo or the like is read as free text: the wanted text with
    more words around it passes; the wanted text gutted, or beside another row's, fails. The other
    columns are read as before (a wrong decision beside a good reference still fails)."""
    check = {"predicate": "rows_written", "service": "workspace", "table": "entries", "key": "/log.csv"}
    check |= {"rows": _REFS, "format": "csv"}
    old = "2026-01-05,Acme,usage 2026-01-02,300.00,approved"
    good = "2026-03-02,Redwood,Outage billing question,632.40,review"
    r = _check(
        check, _ref_csv(old), _ref_csv(old, f'2026-03-02,Crescent Retail,"{ref}",1200.00,approved', good)
    )
    assert r.passed is ok, r.detail
    wrong = f'2026-03-02,Crescent Retail,"{ref}",1200.00,review'
    assert not _check(check, _ref_csv(old), _ref_csv(old, wrong, good)).passed


def test_a_free_text_column_is_known_by_its_header_only() -> None:
    """Where the column is headed otherwise (a receipt, a customer), its cell must be the wanted one."""
    check = {"predicate": "rows_written", "service": "workspace", "table": "entries", "key": "/log.csv"}
    check |= {"rows": _ROWS, "format": "csv"}
    old = "2026-01-05,Acme,300.00,approved"
    lines = ["2026-03-02,Crescent Retail (renewal),1200.00,approved", "2026-03-02,Redwood,632.40,review"]
    assert not _check(check, _csv(old), _csv(old, *lines)).passed


def test_a_mixed_up_or_extra_row_fails_and_reordered_rows_pass_on_generated_tasks(hard) -> None:
    derived = mixed = extra = variants = 0
    for t in hard:
        if not any(r.check["predicate"] == "rows_written" for r in t.rubric):
            continue
        derived += 1
        attacks = _attacks(t)
        for why, state in attacks.get("mixed_row", []):
            assert not verify(t, state, t.answer).passed, (t.id, why)
            mixed += 1
        for why, state in attacks.get("extra_row", []):
            assert not verify(t, state, t.answer).passed, (t.id, why)
            extra += 1
        calls = V.rows_reformatted(t, V._calls(t))
        if calls is not None:
            ok, why = V.run_variant(t, calls, t.answer)
            assert ok, (t.id, why)
            variants += 1
    assert derived >= 3 and mixed >= 3 and extra >= 3 and variants >= 2, (derived, mixed, extra, variants)


# ---- 5. grounding ----------------------------------------------------------------------------------
def test_an_email_quoted_in_sql_is_read_without_its_quote() -> None:
    sql = "SELECT * FROM contacts WHERE email = 'ana.o@acme.example' OR email=\"bo@acme.example\""
    assert [v for _, v in identifying({"sql": sql})] == ["ana.o@acme.example", "bo@acme.example"]
    assert [v for _, v in identifying({"query": sql})][:2] == ["ana.o@acme.example", "bo@acme.example"]
    assert tokens("write to o'brien@acme.example") == ["o'brien@acme.example"]  # inside: part of it
    calls = [
        {"tool": "crm__search", "arguments": {}},
        {"tool": "sql__write_query", "arguments": {"sql": sql}},
    ]
    calls[1]["turn"] = 1
    shown = [{"data": [{"email": "ana.o@acme.example"}, {"email": "bo@acme.example"}]}, {"data": {}}]
    _, problems = ground("", "Update Ana's row.", [{**calls[0], "turn": 0}, calls[1]], shown)
    assert problems == []
    _, problems = ground("", "Update Ana's row.", [{**calls[0], "turn": 0}, calls[1]], [{"data": []}, {}])
    assert any("sql~='ana.o@acme.example'" in p for p in problems), problems  # not "'ana.o@..."


def test_a_failed_event_check_names_the_nearest_event() -> None:
    s0 = {"services": {"calendar": {"events": {}}}}
    ev = {"id": "e1", "summary": "Sync", "start": "2026-03-10T15:00:00Z", "end": "2026-03-10T15:30:00Z"}
    ev["attendees"] = [{"email": "a@x.example"}]
    s1 = {"services": {"calendar": {"events": {"e1": ev}}}}
    check = {"predicate": "event_scheduled", "attendees": ["a@x.example", "b@x.example"]}
    check |= {"start": "2026-03-10T15:00:00Z", "duration_minutes": 30}
    r = _check(check, s0, s1)
    assert not r.passed
    assert "looked for a new event with a@x.example, b@x.example" in r.detail
    assert "nearest: event e1 does not invite b@x.example" in r.detail and "starts" not in r.detail
    ev["attendees"].append({"email": "b@x.example"})
    assert _check(check, s0, s1).passed


def test_sql_log_rows_are_read_whole_on_generated_tasks() -> None:
    """An SQL log's rows are records of their own: two rows with their amounts swapped or an extra
    row fail; the same INSERTs in the other order pass."""
    import re

    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    tried = 0
    for t in generate(20, 7171, Settings(families=("composed.service_credit",), k=5, difficulty="hard"))[0]:
        ref = V._calls(t)
        ins = [i for i, c in enumerate(ref) if "INSERT" in str(c["arguments"].get("query", "")).upper()]
        if len(ins) < 2:
            continue
        q = [ref[i]["arguments"]["query"] for i in ins]
        nums = [re.findall(r"\b\d+\.\d{2}\b", x) for x in q]
        if not (nums[0] and nums[1]) or nums[0][-1] == nums[1][-1]:
            continue

        def run(queries, extra=None, t=t, ref=ref, ins=ins):
            calls = [dict(c) for c in ref]
            for i, x in zip(ins, queries, strict=True):
                calls[i] = {**ref[i], "arguments": {**ref[i]["arguments"], "query": x}}
            if extra:
                calls.insert(ins[-1] + 1, {**ref[ins[-1]], "arguments": {"query": extra}})
            return V.run_variant(t, calls, t.answer)[0]

        a, b = nums[0][-1], nums[1][-1]
        assert not run([q[0].replace(a, b), q[1].replace(b, a), *q[2:]]), t.id
        assert not run(q, extra=q[0].replace(a, "99.00")), t.id
        assert run([q[1], q[0], *q[2:]]), t.id
        tried += 1
    assert tried >= 1


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("Q3 close checklist (or maybe Offsite agenda draft)", False),  # "draft" is the rival's own word
        ("Q3 close checklist, or the Offsite agenda draft", False),
        ("Q3 close checklist", True),
        ("It is Q3 close checklist. Offsite agenda draft was an older broadcast and does not count.", True),
    ],
)
def test_a_label_word_inside_a_rivals_name_labels_nothing(answer, ok) -> None:
    check = {"predicate": "answer_matches", "value": "Q3 close checklist", "kind": "text"}
    check["exclude"] = ["Offsite agenda draft", "Onboarding welcome letter"]
    assert _check(check, {"services": {}}, {"services": {}}, answer).passed is ok


# ---- 6. a guard on new messages holds for every message, not for "as many as the reference" --------
def test_a_rival_guard_reads_every_new_message_and_needs_no_count() -> None:
    """The reference wrote two emails to the approver; an honest agent writes one that asks about both.
    The guard "no new email names a rival" must pass that one email, and fail a clean email sent beside
    one that names the rival (the old count-of-clean-records rule passed it and failed the honest one)."""
    guard = {
        "predicate": "text_carries",
        "service": "chat",
        "table": "messages",
        "paths": ["text"],
        "key": None,
        "forbid": ["Emma Ortiz"],
        "every": True,
    }
    s0 = _chat(_USERS)
    one = _chat(_USERS, "Daniel Lee: claims 14 and 17 are over the limit, please approve or reject both.")
    spray = _chat(_USERS, "Daniel Lee: claim 14 is over the limit.", "Emma Ortiz: claim 17 too.")
    assert _check(guard, s0, one).passed
    assert not _check(guard, s0, spray).passed and "Emma Ortiz" in _check(guard, s0, spray).detail
    assert _check(guard, s0, s0).passed  # no message at all: the goals ask for them, not this guard
    counted = {k: v for k, v in guard.items() if k != "every"} | {"count": 2}
    assert not _check(counted, s0, one).passed  # the rule the guard no longer follows


def test_derived_rival_guards_read_every_message_on_generated_tasks(hard) -> None:
    guards = [
        i.check
        for t in hard
        for i in t.rubric
        if i.kind == "guard" and i.check.get("predicate") == "text_carries" and i.check.get("key") is None
    ]
    assert guards and all(g.get("every") and g.get("count", 1) == 1 for g in guards)


# ---- 7. a breakdown a reader can check names no rival --------------------------------------------
@pytest.mark.parametrize(
    "text, ok",
    [
        # the honest approver email: the gross figure, what was credited before, the amount to approve
        (
            "Hi Sara, could you approve a credit of $985.90 for Vandelay? The outage totals $1,094.15; "
            "Feb 9 ($108.25) was already credited.",
            True,
        ),
        ("Please approve $985.90 (that is $1,094.15 less the $108.25 credited before).", True),
        ("Please approve $1,094.15 or maybe $985.90 (a difference of $108.25).", False),  # a hedge
        ("Please approve $985.90. The outage totals $1,094.15.", False),  # no working: a second figure
        ("Please approve $985.90, or $1,094.15 with the first day ($108.25).", False),
    ],
)
def test_a_rival_amount_worked_through_to_the_asked_one_is_allowed(text: str, ok: bool) -> None:
    check = {
        "predicate": "text_carries",
        "service": "chat",
        "table": "messages",
        "paths": ["text"],
        "key": None,
        "facts": [{"kind": "amount", "value": 985.9, "currency": "USD"}],
        "forbid": ["1094.15"],
    }
    assert _check(check, _chat(_USERS), _chat(_USERS, text)).passed is ok


def test_a_rival_guard_takes_a_breakdown_to_an_amount_the_goals_ask_for() -> None:
    """The guard has no facts of its own: `worked` holds what the goals' texts on that table carry."""
    text = (
        "Could you approve $985.90 for Vandelay? The outage totals $1,094.15; Feb 9 ($108.25) was credited."
    )
    guard = {
        "predicate": "text_carries",
        "service": "chat",
        "table": "messages",
        "paths": ["text"],
        "key": None,
        "forbid": ["1094.15"],
        "every": True,
    }
    s0, s1 = _chat(_USERS), _chat(_USERS, text)
    assert not _check(guard, s0, s1).passed
    assert _check(guard | {"worked": [985.9]}, s0, s1).passed
    assert not _check(guard | {"worked": [985.9]}, s0, _chat(_USERS, "Approve $1,094.15 please.")).passed


def test_derived_rival_guards_know_the_amounts_their_goals_carry(hard) -> None:
    from compoworld.verify.meaning import is_numeric

    for t in hard:
        goals = {
            (i.check["service"], i.check["table"])
            for i in t.rubric
            if i.kind == "goal" and i.check.get("predicate") == "text_carries"
            for f in i.check.get("facts") or []
            if is_numeric(f.get("value") if isinstance(f, dict) and f.get("kind") == "amount" else f)
        }
        for i in t.rubric:
            c = i.check
            if (
                i.kind == "guard"
                and c.get("predicate") == "text_carries"
                and c.get("forbid")
                and c.get("key") is None
            ):
                assert bool(c.get("worked")) == ((c["service"], c["table"]) in goals), (t.id, i.description)


# ---- 6. one message split in several to the same place --------------------------------------------
def _posted(*posts: tuple[str, str]):
    msgs = {str(i): {"ts": str(i), "channel": ch, "user": "B1", "text": t} for i, (ch, t) in enumerate(posts)}
    return {"services": {"chat": {"users": _USERS, "messages": msgs}}}


def test_a_message_split_in_several_to_the_same_place_reads_as_one() -> None:
    """A played expense run asked the approver about each claim in its own post in the approvals
    channel; the reference asked about all of them in one. Both are what a colleague does."""
    goal = {
        "predicate": "text_carries",
        "service": "chat",
        "table": "messages",
        "paths": ["text"],
        "key": None,
        "facts": [
            {"kind": "amount", "value": 256.75, "currency": "USD"},
            {"kind": "code", "value": "EXP-4230"},
        ]
        + [{"kind": "amount", "value": 217.75, "currency": "USD"}, {"kind": "code", "value": "EXP-4235"}],
        "forbid": ["1016"],
    }
    s0 = _posted()
    one = _posted(("C1", "Please approve EXP-4230 ($256.75) and EXP-4235 ($217.75), both over the limit."))
    split = _posted(
        ("C1", "Please approve EXP-4230: $256.75, over the limit."), ("C1", "And EXP-4235: $217.75.")
    )
    apart = _posted(
        ("C1", "Please approve EXP-4230: $256.75, over the limit."), ("C2", "And EXP-4235: $217.75.")
    )
    short = _posted(("C1", "Please approve EXP-4230: $256.75, over the limit."), ("C1", "And EXP-4235 too."))
    rival = _posted(
        ("C1", "Please approve EXP-4230: $256.75."), ("C1", "And EXP-4235: $217.75, see ticket 1016.")
    )
    assert _check(goal, s0, one).passed
    assert _check(goal, s0, split).passed
    assert not _check(goal, s0, apart).passed  # another place: not the same message
    assert not _check(goal, s0, short).passed  # one amount is missing from every post
    assert not _check(goal, s0, rival).passed  # a rival in one of the posts
    collateral = {
        "predicate": "no_changes_except",
        "allow": [],
        "creates": [{"service": "chat", "table": "messages", "count": 1}],
        "rivals": ["EXP-4299"],
    }
    assert _check(collateral, s0, one).passed
    assert _check(collateral, s0, split).passed  # two posts to one place count once
    assert not _check(collateral, s0, apart).passed  # a post somewhere else is a change
    twice = _posted(*[("C1", "Please approve EXP-4230 ($256.75) and EXP-4235 ($217.75).")] * 2)
    sent_twice = _check(collateral, s0, twice)
    assert not sent_twice.passed  # a message sent twice is not one in parts
    # which of the two is the surplus is no one's to say: the detail names the count and both posts
    assert "2 records added to chat:messages, the work adds 1 (0, 1)" in sent_twice.detail
    again = _posted(
        ("C1", "It would be 124.93 USD after the payment."),
        ("C1", "It would be 142.35 USD after the payment."),
    )
    assert not _check(collateral, s0, again).passed  # nor sent again with another figure: alternatives
    assert not _check({**collateral, "rivals": ["1016"]}, s0, rival).passed  # nor the work for a rival
    wrapped = _posted(("C1", "Please approve EXP-4230: $256.75."), ("C1", "And EXP-4235, see ticket\n1016."))
    assert not _check({**collateral, "rivals": ["1016"]}, s0, wrapped).passed  # a rival after a line break
    many = _posted(*[("C1", f"Option {i}: EXP-4230 for ${i}56.75.") for i in "ABCDE"])
    assert not _check(collateral, s0, many).passed  # five posts for one message: alternatives, not parts
    two = {**goal, "count": 2, "facts": goal["facts"][:2]}
    whole_and_split = _posted(
        ("C1", "Approve EXP-4230 ($256.75)."), ("C2", "Approve EXP-4230,"), ("C2", "it is $256.75.")
    )
    assert _check(two, s0, whole_and_split).passed  # one place whole, the other split: both carry it
    old = {k: v for k, v in collateral.items() if k != "rivals"}
    assert not _check(old, s0, split).passed  # a task made before the rule knows no rivals: every post counts


def test_mails_split_to_the_same_people_read_as_one_though_each_starts_its_own_thread() -> None:
    def mails(*bodies: tuple[str, str]):
        return {
            "services": {
                "email": {
                    "messages": {
                        f"m{i}": {
                            "id": f"m{i}",
                            "threadId": f"t{i}",
                            "to": [to],
                            "subject": "Review",
                            "body": b,
                        }
                        for i, (to, b) in enumerate(bodies)
                    }
                }
            }
        }

    collateral = {
        "predicate": "no_changes_except",
        "allow": [],
        "creates": [{"service": "email", "table": "messages", "count": 1}],
        "rivals": ["Anya Meyer"],
    }
    s0 = mails()
    split = mails(("pablo@x.example", "The review is done."), ("pablo@x.example", "Revoked: Oscar Rossi."))
    apart = mails(("pablo@x.example", "The review is done."), ("anya@x.example", "Revoked: Oscar Rossi."))
    assert _check(collateral, s0, split).passed
    assert not _check(collateral, s0, apart).passed


def test_a_split_message_is_an_honest_variant_that_passes_on_generated_tasks(hard) -> None:
    tried = 0
    for t in hard:
        calls = V.split_message(t, V._calls(t))
        if calls is not None:
            assert len(calls) == len(t.reference_solution) + 1
            ok, why = V.run_variant(t, calls, t.answer)
            assert ok, (t.id, why)
            tried += 1
    assert tried >= 2, tried
