"""The hard tier's evidence kinds shared by the composed themes: an approver out of office (their
Slack post or Gmail auto-reply names who covers; only its dates against today say whether it holds)
and, in the expense run, a receipt paid before but keyed another way in the payouts log. For each:
the reference passes every gate, lazy solvers fail, and who is asked flips when the evidence flips.
Also in the credit review: the approver's time off in BambooHR (its note names the cover) where they
are told by a ticket note, and the policy owner's later change to the limit in their thread. And the
disguised kinds (the same thing under another key, an aggregate the agent computes): an earlier
credit logged as one adjustment over a run of days, an access-list login under a name its holder had
then (only its employee_id is BambooHR's), a monthly cap that counts this month's payouts (some
keyed by the employee's work email), a submission window counted from each claim's expense date,
approved time off in BambooHR that covers the gap since an access holder's last login, and the
access policy owner's keep of a holder's access for a while, which holds until it runs out."""

from __future__ import annotations

import contextlib
import json
import re

import pytest

from compoworld.tasks.adversaries import solve_lazily, swap_args
from compoworld.tasks.compose_expense import same_receipt
from compoworld.tasks.gates import run_gates
from compoworld.tasks.generator import Rejected, Settings, workflow_task
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify

THEMES = ("composed.service_credit", "composed.access_review", "composed.expense_claims")
CREDIT = Settings(k=5, difficulty="hard", families=("composed.service_credit",))


def _forced(seed: int, i: int, s: Settings, **force: object) -> Task:
    return Task.model_validate(workflow_task(seed, i, s, composed=True, force=force))


def _first(s: Settings, seed: int, want) -> int:
    for i in range(40):
        try:
            t = _forced(seed, i, s)
        except Rejected:
            continue
        if want(t):
            return i
    raise AssertionError("no task with that evidence")


def _asked(t: Task) -> set[str]:
    """Everyone the reference wrote to (email recipients, and names opening a Slack post)."""
    out: set[str] = set()
    for c in t.reference_solution:
        if c.tool == "email__gmail_send_email":
            out |= set(c.arguments["to"])
        elif c.tool == "chat__slack_user_post_message":
            out.add(c.arguments["text"].split(",")[0].split(":")[0].replace("FYI ", ""))
        elif c.tool == "helpdesk__freshdesk_add_note_to_ticket":
            out |= set(c.arguments["notify_emails"])
    return out


def _paid(t: Task) -> set[str]:
    """The claims a world's checks want paid ("claim EXP-... paid ($...)")."""
    return {m.group(1) for g in t.rubric if (m := re.search(r"claim (EXP-\d+) paid \(", g.description))}


def _flips(a: Task, b: Task) -> None:
    """Both worlds pass every gate, lazy solvers fail both, and each world's reference fails the
    other world's checks."""
    for t in (a, b):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, (t.id, lazy)
    for x, y in ((a, b), (b, a)):
        env = y.environment()
        for c in x.reference_solution:
            env.call(c.tool, c.arguments)
        assert not verify(y, env.snapshot(), None).passed


@pytest.mark.parametrize("family", THEMES)
def test_who_is_asked_flips_with_the_out_of_office_dates(family: str) -> None:
    s = Settings(k=5, difficulty="hard", families=(family,))
    i = _first(s, 31, lambda t: t.meta["composition"].get("away") is not None)
    # an expense run's absence is of the approver the owner's change names: it decides once that holds
    out, back = _forced(31, i, s, away=True, amended=True), _forced(31, i, s, away=False, amended=True)
    assert out.meta["composition"]["away"] is True and back.meta["composition"]["away"] is False
    # the same work and the same request: only the dates of the out-of-office differ
    assert out.instruction == back.instruction and out.services == back.services
    assert _asked(out) != _asked(back)
    for t in (out, back):
        assert "away" in t.meta["composition"]["stages"]
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, (t.id, lazy)
    # each world's reference fails the other's checks: the person asked depends on today's date
    for a, b in ((out, back), (back, out)):
        env = b.environment()
        for c in a.reference_solution:
            env.call(c.tool, c.arguments)
        res = verify(b, env.snapshot(), None)
        assert not res.passed


def test_the_out_of_office_is_there_in_both_worlds_and_names_the_cover() -> None:
    """Not a label: the post or auto-reply is planted whether or not it holds today."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    i = _first(s, 31, lambda t: t.meta["composition"].get("away") is not None)
    for away in (True, False):
        t = _forced(31, i, s, away=away)
        env = t.environment()
        seen = []
        for c in t.reference_solution:
            r = env.call(c.tool, c.arguments)
            if c.tool in ("chat__slack_get_channel_history", "email__gmail_read_email"):
                seen.append(str(r))
        assert any("out of office" in x for x in seen), t.id
        assert any("covers for me" in x for x in seen)


def test_a_receipt_keyed_another_way_is_still_a_duplicate() -> None:
    assert same_receipt("R 482913", "R-482913") and same_receipt("RCPT 482913", "R-482913")
    assert same_receipt("482913", "R-482913") and not same_receipt("R-482914", "R-482913")
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    for i in range(12):
        try:
            t = _forced(37, i, s)
        except Rejected:
            continue
        assert t.meta["composition"]["branches"].count("duplicate") == 2
        env = t.environment()
        logs = [
            str(env.call(c.tool, c.arguments))
            for c in t.reference_solution
            if "payout" in str(c.arguments) or "expense_payouts" in str(c.arguments)
        ]
        # the second duplicate's receipt is not written the way the claims list writes it
        told = [c.arguments for c in t.reference_solution if "already reimbursed" in str(c.arguments)]
        assert len(told) == 2
        receipts = [str(a).split("receipt ")[1].split(" ")[0] for a in told]
        assert any(r not in " ".join(logs) for r in receipts), receipts
        # ... and it is no odd one out: older payouts of other claims were keyed by hand too (from
        # play: "the only receipt without the R- prefix" gave the duplicate away)
        forms = r"(?<![\w-])(?:R|RCPT-|RCPT |rcpt-)?(\d{6})(?!\w)"
        hand = set(re.findall(forms, " ".join(logs))) - set(re.findall(r"R-(\d{6})", " ".join(logs)))
        assert len(hand - {r[-6:] for r in receipts}) >= 1, hand
        # paying that claim as well (an exact lookup of its receipt finds nothing) fails the task
        cid = re.search(r"claim (EXP-\d+)", str(told[1])).group(1)
        writes = ("sql__write_query", "workspace__shell", "sheets__google_sheets_append_rows")
        pays = [
            c
            for c in t.reference_solution
            if c.tool in writes and "EXP-" in str(c.arguments) and "SELECT" not in str(c.arguments)
        ]
        paid = re.search(r"EXP-\d+", str(pays[0].arguments)).group(0)
        env = t.environment()
        for c in t.reference_solution:
            env.call(c.tool, c.arguments)
        env.call(pays[0].tool, swap_args(pays[0].arguments, {paid: cid}))
        assert not verify(t, env.snapshot(), None).passed
        return
    raise AssertionError("no expense run kept")


def test_two_claims_of_one_expense_go_for_approval_together_and_flip_apart() -> None:
    """Same person, merchant and day: held together against the limit (each is within it); filed a
    day apart, they are two expenses and both are paid."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    i = _first(s, 43, lambda t: True)
    one, two = _forced(43, i, s), _forced(43, i, s, split=False)
    assert one.instruction == two.instruction and one.services == two.services
    # two more claims paid when they are separate expenses
    assert (
        two.meta["composition"]["branches"].count("pay")
        == one.meta["composition"]["branches"].count("pay") + 2
    )
    for t in (one, two):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, (t.id, lazy)
    assert "one expense" in " ".join(str(c.arguments) for c in one.reference_solution)
    for a, b in ((one, two), (two, one)):
        env = b.environment()
        for c in a.reference_solution:
            env.call(c.tool, c.arguments)
        assert not verify(b, env.snapshot(), None).passed


def test_limits_are_counted_to_the_day_and_the_cent() -> None:
    """Exactly at a limit is within it: a last login exactly the policy's days ago keeps its access; a
    claim of exactly its category limit is paid. Treating either as over it fails the task."""
    acc = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    t = _forced(47, _first(acc, 47, lambda t: len(_deleted(t)) == 3), acc)  # no keep running
    env = t.environment()
    for c in t.reference_solution:
        env.call(c.tool, c.arguments)
    final = env.snapshot()
    keys = [c.arguments["key"] for c in t.reference_solution if c.tool == "kv__delete"]
    kept = [
        g.check["key"]
        for g in t.rubric
        if g.check.get("predicate") == "record_unchanged" and g.check.get("service") == "kv"
    ]
    assert len(keys) == 3 and len(kept) == 3
    # revoking any kept key (the one at the limit among them) breaks the task
    for k in kept:
        env.restore(final)
        env.call("kv__delete", {"key": k})
        assert not verify(t, env.snapshot(), None).passed
    exp = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    t = _forced(47, _first(exp, 47, lambda t: True), exp)
    pays = [c for c in t.rubric if re.search(r"claim EXP-\d+ paid \(\$", str(c.description))]
    assert len(pays) == t.meta["composition"]["branches"].count("pay")
    env = t.environment()
    text = " ".join(str(env.call(c.tool, c.arguments)) for c in t.reference_solution)  # what was read
    limits = set(re.findall(r"(?:meals|travel|lodging|software) \$(\d+)", text))
    assert any(re.search(rf"paid \(\${lim}\.00\)", c.description) for c in pays for lim in limits)


def test_a_correction_later_in_the_request_sets_the_window() -> None:
    """The customer's own follow-up (a reply on the ticket, a mail in the thread) shortens the window
    the request first named: the credit is the corrected window's; without it, the first one's."""
    s = Settings(k=5, difficulty="hard", families=("composed.service_credit",))
    for i in range(40):
        try:
            fixed, first = _forced(53, i, s, corrected=True), _forced(53, i, s, corrected=False)
        except Rejected:
            continue
        break
    else:
        raise AssertionError("no credit task kept")
    assert fixed.instruction == first.instruction and fixed.services == first.services
    env = fixed.environment()
    seen = " ".join(str(env.call(c.tool, c.arguments)) for c in fixed.reference_solution)
    assert "A correction to my request" in seen
    for t in (fixed, first):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0, (t.id, lazy)
    assert any("corrected window" in r.description for r in fixed.rubric)
    for a, b in ((fixed, first), (first, fixed)):
        env = b.environment()
        for c in a.reference_solution:
            env.call(c.tool, c.arguments)
        assert not verify(b, env.snapshot(), None).passed


def test_a_claim_abroad_is_paid_at_its_submission_days_rate() -> None:
    """Hard runs price two claims in EUR and GBP: the payout is the amount at the rate of the day the
    claim was submitted (the rates table); the latest rate's amount fails the task."""
    from compoworld.tasks.compose_expense import usd_cents

    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    t = _forced(59, _first(s, 59, lambda t: True), s)
    env = t.environment()
    seen = [env.call(c.tool, c.arguments) for c in t.reference_solution]
    text = " ".join(str(x) for x in seen)
    assert "'currency': 'EUR'" in text or ",EUR," in text or "'EUR'" in text
    guards = [r for r in t.rubric if "submission day's rate" in r.description]
    assert len(guards) == 2  # the claim abroad paid and the one sent for approval
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    lazy = solve_lazily(t)
    assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, lazy
    # the paid EUR claim's logged amount is its amount at its day's rate, not at the latest rate
    pays = [
        c
        for c in t.reference_solution
        if c.tool in ("sql__write_query", "workspace__shell", "sheets__google_sheets_append_rows")
    ]
    logged = " ".join(str(c.arguments) for c in pays)
    paid_abroad = [g for g in guards if re.search(r"EXP-\d+", g.description).group(0) in logged]
    assert len(paid_abroad) == 1
    wrong = paid_abroad[0].check["value"]
    assert wrong not in logged
    pays = [c for c in pays if re.search(r"EXP-\d+", paid_abroad[0].description).group(0) in str(c.arguments)]
    assert usd_cents(6051, 1.0536) == 6375 and usd_cents(12320, 1.25) == 15400
    base = t.environment()
    for c in t.reference_solution:
        base.call(c.tool, c.arguments)
    final = base.snapshot()
    for c in pays:
        paid = re.search(r"\b\d+\.\d\d\b", str(c.arguments))
        if paid is None:
            continue
        base.restore(final)
        base.call(c.tool, swap_args(c.arguments, {paid.group(0): wrong}))
        if not verify(t, base.snapshot(), None).passed:
            return
    raise AssertionError("writing the latest-rate amount passed")


def _seen(t: Task) -> str:
    env = t.environment()
    return " ".join(str(env.call(c.tool, c.arguments)) for c in t.reference_solution)


def test_a_ticket_note_goes_to_the_cover_when_bamboohr_shows_the_approver_out() -> None:
    """Told by a private ticket note, the approver's absence is their approved time off in BambooHR,
    its note naming the cover; planted in both worlds, only its dates say whether it holds today."""

    def by_note(t: Task) -> bool:
        c = t.meta["composition"]
        return c["plan"]["notify"] == "helpdesk" and c.get("away") is not None

    i = _first(CREDIT, 61, by_note)
    out, back = _forced(61, i, CREDIT, away=True), _forced(61, i, CREDIT, away=False)
    assert out.instruction == back.instruction and out.services == back.services
    assert out.meta["composition"]["away"] is True and back.meta["composition"]["away"] is False
    assert _asked(out) != _asked(back)
    for t in (out, back):
        seen = _seen(t)
        assert "Out of office." in seen and "covers for me" in seen, t.id
        assert "hr__bamboohr_get_time_off_requests" in {c.tool for c in t.reference_solution}
    _flips(out, back)


@pytest.mark.parametrize(
    ("family", "title"),
    [
        ("composed.service_credit", "service credit policy"),
        ("composed.expense_claims", "expense policy"),
        ("composed.access_review", "access policy"),
    ],
)
def test_a_change_in_the_policy_owners_thread_holds_from_its_date(family: str, title: str) -> None:
    """The policy in force states a limit (credits), an approver (expenses) or a tool owner (access);
    its owner's later post
    (Slack or Gmail) changes it from a date. Dated before today it decides the work; dated after
    today it does not hold yet. The post is there in both worlds with the same words: only its date
    differs."""
    s = Settings(k=5, difficulty="hard", families=(family,))
    i = _first(s, 67, lambda t: t.meta["composition"].get("amended") is not None)
    now, later = _forced(67, i, s, amended=True), _forced(67, i, s, amended=False)
    assert now.instruction == later.instruction and now.services == later.services
    assert now.meta["composition"]["amended"] is True and later.meta["composition"]["amended"] is False
    if family == "composed.service_credit":  # the limit today decides a request's branch
        assert now.meta["composition"]["branches"] != later.meta["composition"]["branches"]
    else:  # the approver or tool owner today is the one told
        assert _asked(now) != _asked(later)
    for t in (now, later):
        assert "amend" in t.meta["composition"]["stages"]
        seen = _seen(t)
        assert f"Change to the {title}" in seen and "announces changes" in seen, t.id
    _flips(now, later)


def test_bamboohr_shows_no_unexplained_absence_of_whoever_may_act() -> None:
    """The seed's random time off never puts an approver (or the fallback, or a cover) out today
    without a cover: the only absence of theirs in BambooHR is the planted one."""
    for i in range(30):
        try:
            t = _forced(73, i, CREDIT)
        except Rejected:
            continue
        if "hr" not in t.services + t.distractors:
            continue
        env = t.environment()
        hr = env.services["hr"]
        notes = [r for r in hr.requests.all() if r["notes"].startswith("Out of office.")]
        asked = _asked(t)
        emps = {e["id"]: {e["workEmail"], f"{e['firstName']} {e['lastName']}"} for e in hr.employees.all()}
        assert asked
        for r in hr.requests.all():
            if emps.get(r["employee_id"], set()) & asked and r["status"] == "approved":
                assert r in notes, (t.id, r)
        return
    raise AssertionError("no credit task with BambooHR kept")


def test_the_customers_service_tier_on_their_account_record_sets_the_limit() -> None:
    """The policy doubles the limit for customers on the Enterprise service tier; which tier a
    customer is on is on their account record (the HubSpot company, or the web app's account notes),
    one hop from the request. The first request's total lies between the limit and twice it: its
    tier decides whether it is credited now or sent for approval."""
    i = _first(CREDIT, 79, lambda t: t.meta["composition"].get("enterprise") is not None)
    # the owner's change to the limit holds in both worlds: the limit it names is the one in force
    ent, std = (_forced(79, i, CREDIT, enterprise=x, amended=True) for x in (True, False))
    assert ent.instruction == std.instruction and ent.services == std.services
    assert ent.meta["composition"]["enterprise"][0] is True
    assert std.meta["composition"]["enterprise"][0] is False
    assert ent.meta["composition"]["branches"][0] == "approve"
    assert std.meta["composition"]["branches"][0] == "review"
    for t in (ent, std):
        seen = _seen(t)
        assert "twice that limit" in seen and ("Service tier: " in seen or "service_tier" in seen)
    _flips(ent, std)


def test_an_invoice_paid_inside_the_window_is_not_usage() -> None:
    """Stripe holds the daily usage and, now and then, an invoice the customer paid inside the outage
    window (its payment names the invoice): the credit counts the usage only, and crediting the
    invoice payment too fails the task."""
    from compoworld.tasks.adversaries import swap_args

    for seed in (6, 7):
        for i in range(40):
            try:
                t = _forced(seed, i, CREDIT)
            except Rejected:
                continue
            guards = [r for r in t.rubric if r.description.endswith("is not credited their invoice payment")]
            if not guards:
                continue
            assert t.meta["composition"]["plan"]["usage"] == "payments"
            assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
            env = t.environment()
            intents = [
                p
                for c in t.reference_solution
                if c.tool == "payments__list_payment_intents"
                for p in env.call(c.tool, c.arguments)["data"]
            ]
            assert any(p.get("invoice") for p in intents)  # the invoice payment is there to see
            cust = guards[0].description.removesuffix(" is not credited their invoice payment")
            logged = next(r.description for r in t.rubric if f"has {cust}, $" in r.description)
            right = logged.split(f"has {cust}, $")[1].split(",")[0]
            wrong = guards[0].check["value"]
            env = t.environment()
            for c in t.reference_solution:  # the same work, the invoice payment counted in
                env.call(c.tool, swap_args(c.arguments, {right: wrong}))
            assert not verify(t, env.snapshot(), None).passed
            return
    raise AssertionError("no credit task with an invoice paid inside a window")


@pytest.mark.parametrize("family", THEMES)
def test_the_next_in_line_acts_when_the_cover_is_away_too(family: str) -> None:
    """The cover's own absence is one hop further (a reply in the heads-up's Slack thread, their own
    out-of-office mail, their BambooHR time off) and names who is next: with the approver away, who
    is asked flips with the cover's dates."""
    s = Settings(k=5, difficulty="hard", families=(family,))
    i = _first(s, 83, lambda t: t.meta["composition"].get("cover_away") is not None)
    force = {"away": True, "amended": True}  # the approver (the change names, if any) is away today
    both, one = _forced(83, i, s, cover_away=True, **force), _forced(83, i, s, cover_away=False, **force)
    assert both.instruction == one.instruction and both.services == one.services
    assert both.meta["composition"]["cover_away"] is True and one.meta["composition"]["cover_away"] is False
    assert _asked(both) != _asked(one)
    for t in (both, one):  # the cover's note is there in both worlds, naming who is next
        seen = _seen(t)
        assert re.search(r"out (of office )?myself,? from \w+ \d+ to", seen) and "takes it" in seen, t.id
        # the cover's own note says they are out once (from play: "I'll be out of office myself.
        # Note I'm out myself from ...")
        # (a text with an apostrophe is shown in double quotes: no quote inside it)
        assert not re.search(r'myself[^"]*myself', seen), t.id
    _flips(both, one)


def test_a_change_posted_in_slack_is_a_reply_in_the_owners_thread() -> None:
    """In Slack the owner's change is a reply in their thread for the policy: the channel's history
    shows the thread's first post and its reply count, never the change itself."""
    i = _first(
        CREDIT,
        89,
        lambda t: (
            t.meta["composition"].get("amended") is not None
            and t.meta["composition"]["plan"]["notify"] == "chat"
        ),
    )
    t = _forced(89, i, CREDIT)
    env = t.environment()
    history, thread = "", ""
    for c in t.reference_solution:
        r = str(env.call(c.tool, c.arguments))
        if c.tool == "chat__slack_get_channel_history":
            history += r
        elif c.tool == "chat__slack_get_thread_replies":
            thread += r
    assert "go in this thread" in history and "'reply_count': 1" in history
    assert "Change to the service credit policy" not in history
    assert "Change to the service credit policy" in thread


def test_a_second_correction_by_email_is_the_customers_latest_word() -> None:
    """A request corrected on its ticket may be corrected once more in the customer's later email
    (the outage began a day later): the credit is for the window the latest word names; the window
    after the first correction alone fails."""

    def fits(t: Task) -> bool:
        p = t.meta["composition"]["plan"]
        return p["request"] != "email" and p["notify"] == "email"

    # an index whose two worlds draw the same request (its framing is drawn after the world's
    # amounts, which the second correction moves)
    i = _first(
        CREDIT,
        97,
        lambda t: (
            fits(t)
            and _forced(97, int(t.id[-6:]), CREDIT, corrected=True, recorrected=True).instruction
            == _forced(97, int(t.id[-6:]), CREDIT, corrected=True, recorrected=False).instruction
        ),
    )
    twice, once = (_forced(97, i, CREDIT, corrected=True, recorrected=x) for x in (True, False))
    assert twice.instruction == once.instruction and twice.services == once.services
    seen = _seen(twice)
    assert "A correction to my request" in seen and "One more correction to my request" in seen
    assert "One more correction" not in _seen(once)
    assert any("latest correction" in r.description for r in twice.rubric)
    _flips(twice, once)


@pytest.mark.parametrize("family", ["composed.expense_claims", "composed.access_review"])
def test_an_absence_of_someone_not_in_charge_yet_changes_nothing(family: str) -> None:
    """The absence planted is of the approver (tool owner) the owner's change names; dated after
    today, that change does not hold, so the approver in force is asked and nobody in the absence's
    chain is: asking the cover is caught (the decoy adversary fails), the gates pass."""
    s = Settings(k=5, difficulty="hard", families=(family,))
    i = _first(s, 101, lambda t: t.meta["composition"].get("away") is not None)
    t = _forced(101, i, s, away=True, amended=False)
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
    covers = [r for r in t.rubric if "not the one to ask today" in r.description]
    assert covers  # the cover (and the next in line) are guarded though the absence holds


def test_credits_go_on_the_next_invoice_so_stripe_shows_no_refund() -> None:
    """From play: the policy said a credited day shows as refunded in Stripe while the work refunds
    nothing (and a refund broke the collateral check). Now billing applies credits to the next
    invoice: the policy says so, no daily-usage payment is refunded (the days credited before are in
    the credits log, which the reference reads), and refunding a payment of the window fails."""
    for i in range(40):
        try:
            t = _forced(5, i, CREDIT)
        except Rejected:
            continue
        if t.meta["composition"]["plan"]["usage"] != "payments":
            continue
        assert "credits" in t.meta["composition"]["stages"]
        seen = _seen(t)
        assert "next invoice" in seen and "support refunds nothing" in seen
        assert "the credits log shows the days credited before" in seen
        env = t.environment()
        usage = [  # the requests' customers' payments, as the reference lists them
            p
            for c in t.reference_solution
            if c.tool == "payments__list_payment_intents"
            for p in env.call(c.tool, c.arguments)["data"]
            if str(p.get("description", "")).startswith("Daily usage")
        ]
        assert usage and all(p["amount_refunded"] == 0 for p in usage)
        # the days credited before: the credits log is read before the usage is totalled
        ledger = t.meta["composition"]["plan"]["ledger"] + "__"
        first = next(j for j, c in enumerate(t.reference_solution) if c.tool.startswith("payments__"))
        assert any(c.tool.startswith(ledger) for c in t.reference_solution[:first])
        for c in t.reference_solution:  # the work, and then a refund of a day's usage in Stripe
            env.call(c.tool, c.arguments)
        assert env.call("payments__create_refund", {"payment_intent": usage[0]["id"]})["success"]
        assert not verify(t, env.snapshot(), None).passed
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        return
    raise AssertionError("no credit task with its usage in Stripe")


def test_a_credit_given_as_one_adjustment_over_a_run_of_days_covers_each_day() -> None:
    """Hard credit reviews log the first request's earlier credit as one adjustment over a run of
    days ("usage adjustment November 9 to November 11"): no row names a day by its date, so a lookup
    of the window's dates misses it. Every day it covers is credited already; a total that counts
    them (or takes off the whole adjustment, days outside the window too) fails. When the run ends
    before the window, the window's days count."""
    from compoworld.tasks.compose import _span_days, span_ref

    assert _span_days(span_ref(*map(_iso, ("2026-12-30", "2027-01-01"))), _iso("2027-01-02")) == {
        "2026-12-30",
        "2026-12-31",
        "2027-01-01",
    }
    i = _first(CREDIT, 61, lambda t: True)
    inside, before = _forced(61, i, CREDIT), _forced(61, i, CREDIT, span=False)
    assert inside.instruction == before.instruction and inside.services == before.services
    for t in (inside, before):
        seen = _seen(t)
        assert "usage adjustment " in seen
        # the log names the run of days, not each day by its date
        span = re.search(r"usage adjustment (\w+ \d+ to \w+ \d+)", seen)
        assert span is not None
    _flips(inside, before)
    # the first request's credited amount differs: the window's covered days count in one world only
    amounts = [
        {
            c.arguments["body"]
            for c in t.reference_solution
            if c.tool in ("helpdesk__freshdesk_reply_to_a_ticket", "email__gmail_send_email")
        }
        for t in (inside, before)
    ]
    assert amounts[0] != amounts[1]
    # the careless total (the covered days counted again) is guarded
    assert any("credited days" in r.description for r in inside.rubric)


def _iso(x: str):
    from datetime import date

    return date.fromisoformat(x)


def test_a_login_under_a_name_the_person_had_then_is_still_theirs() -> None:
    """Hard access reviews list one login under the name and email its holder had when it was
    granted: neither is in BambooHR, but the row's employee_id is, under today's name. The policy
    says people are matched by that id, so they keep access; revoking it as a leaver fails. When the
    id is nobody's in BambooHR, the login is a former employee's: revoked (left)."""
    s = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    i = _first(s, 67, lambda t: True)
    theirs, former = _forced(67, i, s), _forced(67, i, s, renamed=False)
    assert theirs.instruction == former.instruction and theirs.services == former.services
    assert former.meta["composition"]["branches"].count("left") == 2
    assert theirs.meta["composition"]["branches"].count("left") == 1
    _flips(theirs, former)
    gone = {c.arguments["key"] for c in former.reference_solution if c.tool == "kv__delete"}
    kept = {c.arguments["key"] for c in theirs.reference_solution if c.tool == "kv__delete"}
    (alias,) = gone - kept
    user = alias.split(":")[-1]
    env = theirs.environment()
    seen = " ".join(json.dumps(env.call(c.tool, c.arguments)) for c in theirs.reference_solution)
    assert "people are matched to BambooHR by it" in seen  # the rule, in general words
    # the login's email is nobody's in the directory, in either world
    directory = env.call("hr__bamboohr_get_employee_directory", {"response_format": "json"})
    assert user not in json.dumps(directory)
    # the hurried review (email not in BambooHR: revoke it as a leaver) fails
    env = theirs.environment()
    for c in theirs.reference_solution:
        env.call(c.tool, c.arguments)
    env.call("kv__delete", {"key": alias})
    assert not verify(theirs, env.snapshot(), None).passed


def test_a_monthly_cap_counts_what_the_payouts_log_paid_this_month() -> None:
    """Hard expense runs cap what an employee is reimbursed in a calendar month (the policy says so,
    in general words): a claim within its category limit goes for approval when the payouts log
    already shows enough paid to its employee this month. Paying it (or counting last month's
    payouts too) fails; when that earlier payout was last month, the claim is paid."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    i = _first(s, 71, lambda t: bool(t.meta["composition"]["capped"]))
    held, paid = _forced(71, i, s), _forced(71, i, s, capped=False)
    assert held.instruction == paid.instruction and held.services == paid.services
    assert held.meta["composition"]["capped"] is True and paid.meta["composition"]["capped"] is False
    one, two = held.meta["composition"]["branches"], paid.meta["composition"]["branches"]
    assert one.count("pay") == two.count("pay") - 1 and one.count("approval") == two.count("approval") + 1
    seen = _seen(held)
    assert "in a calendar month" in seen  # the rule, in general words; nothing names the claim
    # the month's payouts are not the capped employee's alone (from play: that gave it away)
    month = re.findall(r"'A': '(\d{4}-\d\d)-\d\d', 'B': 'EXP-\d+', 'C': '([^']+)'", seen)
    assert month, "the payouts log is a sheet in this draw"
    this = max(m for m, _ in month)
    assert len({who for m, who in month if m == this}) >= 2, month
    _flips(held, paid)
    # the claim held back by the cap is within its category limit: only the month's payouts decide it
    (cid,) = _paid(paid) - _paid(held)
    assert any(cid in r.description and "approve" in r.description for r in held.rubric)


def test_a_claim_submitted_past_the_window_is_rejected_and_one_at_it_is_paid() -> None:
    """Hard expense runs have a submission window (every version of the policy states it, in
    general words): a claim submitted more than its days after its expense date is rejected and its
    employee told; only the claims list's two dates show it. Others sit a few days inside the window
    and one, paid, exactly at it. When the late claim's expense date is as far inside as it was
    past, it is paid; each world's reference fails the other."""
    from datetime import date

    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    i = _first(s, 73, lambda t: t.meta["composition"]["plan"]["claims"] == "sql")
    late, paid = _forced(73, i, s), _forced(73, i, s, late=False)
    assert late.instruction == paid.instruction and late.services == paid.services
    assert late.meta["composition"]["late"] is True and paid.meta["composition"]["late"] is False
    one, two = late.meta["composition"]["branches"], paid.meta["composition"]["branches"]
    assert one.count("late") == 1 and one.count("pay") == two.count("pay") - 1 and "late" not in two
    seen = _seen(late)
    windows = sorted({int(w) for w in re.findall(r"submitted within (\d+) days of its expense date", seen)})
    assert len(windows) == 2, windows  # the older version's window is longer
    assert "past" not in late.instruction and "window" not in late.instruction
    env = late.environment()
    got = env.call("sql__read_query", {"query": "SELECT * FROM expense_claims WHERE status = 'submitted'"})
    rows = got["data"]["rows"]
    gaps = {
        x["claim_id"]: (date.fromisoformat(x["submitted"]) - date.fromisoformat(x["expense_date"])).days
        for x in rows
    }
    paid_ids = _paid(late)
    # which window holds: the one that leaves exactly one claim past it and a paid one exactly at it
    (window,) = [w for w in windows if sum(g > w for g in gaps.values()) == 1]
    (cid,) = [c for c, g in gaps.items() if g > window]
    assert cid not in paid_ids and any(
        cid in g.description and "window" in g.description for g in late.rubric
    )
    at = [c for c, g in gaps.items() if g == window]
    assert at and set(at) <= paid_ids, (at, paid_ids)  # exactly at the window is within it
    assert sum(window - 5 <= g < window for g in gaps.values()) >= 2, gaps  # look-alikes just inside
    # the late claim's expense is not the oldest of the batch
    spent = {x["claim_id"]: x["expense_date"] for x in rows}
    assert min(spent.values()) < spent[cid] or min(spent, key=spent.get) != cid
    _flips(late, paid)
    # rejecting the claim exactly at the window as well (never logging it) fails the task
    writes = ("sql__write_query", "workspace__shell", "sheets__google_sheets_append_rows")
    env = late.environment()
    for c in late.reference_solution:
        if c.tool in writes and at[0] in str(c.arguments) and "SELECT" not in str(c.arguments):
            continue
        env.call(c.tool, c.arguments)
    assert not verify(late, env.snapshot(), None).passed


def test_a_payout_keyed_by_work_email_counts_toward_the_monthly_cap() -> None:
    """The payouts log keys some payouts by the employee's work email (the policy says the month's
    payouts count under their name or their work email): the capped employee's largest payout this
    month is one, and without it the claim would be within the cap, so a sum over their name alone
    pays it. Other employees' payouts are keyed by email too (no odd one out). When that earlier
    claim (its claims-list row and its payout) is another employee's, the claim is paid."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))

    def keyed(t: Task) -> bool:
        c = t.meta["composition"]
        return c.get("payee") is True and c["plan"]["log"] == "sql"

    i = _first(s, 79, keyed)
    held, paid = _forced(79, i, s), _forced(79, i, s, payee=False)
    assert held.instruction == paid.instruction and held.services == paid.services
    assert held.meta["composition"]["payee"] is True and paid.meta["composition"]["payee"] is False
    assert held.meta["composition"]["capped"] is True
    one, two = held.meta["composition"]["branches"], paid.meta["composition"]["branches"]
    assert one.count("pay") == two.count("pay") - 1 and one.count("approval") == two.count("approval") + 1
    assert "under their name or their work email" in _seen(held)
    env = held.environment()
    log = env.call("sql__read_query", {"query": "SELECT * FROM expense_payouts"})["data"]["rows"]
    by_email = [x for x in log if "@" in str(x["employee"])]
    assert len({x["employee"] for x in by_email}) >= 2, by_email  # several people's, not one
    # the claim held back: approved in one world, paid in the other
    (cid,) = _paid(paid) - _paid(held)
    # its employee: the name the other world's reference logs it under
    row = next(
        c.arguments["query"]
        for c in paid.reference_solution
        if c.tool == "sql__write_query" and cid in str(c.arguments)
    )
    name = row.split("'")[5]
    email = name.lower().replace(" ", ".") + "@"
    month = max(str(x["date"])[:7] for x in log)
    this = [x for x in log if str(x["date"])[:7] == month]
    # this month's payouts to them under both keys
    assert any(x["employee"] == name for x in this), (name, this)
    assert any(str(x["employee"]).startswith(email) for x in this), (email, this)
    # ... and this month's payouts keyed by email are not theirs alone (no odd one out)
    assert len({x["employee"] for x in this if "@" in str(x["employee"])}) >= 2, this
    _flips(held, paid)


def test_approved_time_off_since_a_last_login_is_not_unused() -> None:
    """Hard access reviews say (in every policy version, in general words) that days on approved
    time off in BambooHR are not unused. One kept holder last logged in longer ago than the limit,
    but approved time off since covers enough of the gap: they keep access, and revoking them as
    inactive fails. The inactive holder has approved time off too, covering too little, so time off
    is not the tell. When that holder's requests were denied instead, they are revoked (inactive)."""
    s = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    i = _first(s, 83, lambda t: True)
    kept, denied = _forced(83, i, s), _forced(83, i, s, leave=False)
    assert kept.instruction == denied.instruction and kept.services == denied.services
    assert kept.meta["composition"]["leave"] is True and denied.meta["composition"]["leave"] is False
    assert kept.meta["composition"]["branches"].count("inactive") == 1
    assert denied.meta["composition"]["branches"].count("inactive") == 2
    _flips(kept, denied)
    gone = {c.arguments["key"] for c in denied.reference_solution if c.tool == "kv__delete"}
    keys = {c.arguments["key"] for c in kept.reference_solution if c.tool == "kv__delete"}
    (covered,) = gone - keys
    seen = _seen(kept)
    assert "less the days of its holder's approved time off" in seen  # the rule, in general words
    # both logins the reference looked up time off for are older than the limit; both have
    # approved time off in the window: the one revoked has too little
    reads = [c for c in kept.reference_solution if c.tool == "hr__bamboohr_get_time_off_requests"]
    assert len(reads) == 2
    env = kept.environment()
    approved = 0
    for c in reads:
        got = env.call(c.tool, c.arguments)["data"]["requests"]
        approved += any(x["status"] == "approved" for x in got)
    assert approved == 2
    # the hurried review (days since the last login alone) revokes the covered holder: that fails
    env = kept.environment()
    for c in kept.reference_solution:
        env.call(c.tool, c.arguments)
    env.call("kv__delete", {"key": covered})
    assert not verify(kept, env.snapshot(), None).passed


def test_the_policy_owners_keep_holds_until_it_runs_out() -> None:
    """Hard access reviews say (in every policy version, in general words) that the policy owner may
    keep someone's access for a while past a review, in writing where they announce changes, the time
    running from the day they wrote. The mover's keep, still running today, keeps their access though
    BambooHR shows the move; revoking it fails. Run out, they are revoked (moved). The inactive
    holder's keep has run out in both worlds, so a keep is not the tell."""
    s = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    i = _first(s, 89, lambda t: True)
    kept, out = _forced(89, i, s, granted=True), _forced(89, i, s, granted=False)
    assert kept.instruction == out.instruction and kept.services == out.services
    assert kept.meta["composition"]["granted"] is True and out.meta["composition"]["granted"] is False
    assert "moved" not in kept.meta["composition"]["branches"]
    assert out.meta["composition"]["branches"].count("moved") == 1
    _flips(kept, out)
    deleted = {c.arguments["key"] for c in kept.reference_solution if c.tool == "kv__delete"}
    (mover,) = {c.arguments["key"] for c in out.reference_solution if c.tool == "kv__delete"} - deleted
    seen = _seen(kept)
    assert "the time runs from the day they wrote" in seen  # the rule, in general words
    assert seen.count("please keep their") >= 2  # the mover's keep, and the inactive holder's
    # the hurried review (BambooHR shows the move: revoke it) fails while the keep runs
    env = kept.environment()
    for c in kept.reference_solution:
        env.call(c.tool, c.arguments)
    env.call("kv__delete", {"key": mover})
    assert not verify(kept, env.snapshot(), None).passed


def test_notes_about_claims_carry_their_ids_and_amounts_not_dates_a_writer_may_leave_out() -> None:
    """From play (seed 94949): the approval post named the split pair's submission date, so its
    content check wanted that date, and a post giving the pair's expense date, or none, failed; the
    late claim's note wanted its expense date too. The ids, amounts and the gap carry what matters."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    seen = 0
    for i in range(12):
        try:
            t = _forced(94949, i, s)
        except Rejected:
            continue
        for c in t.rubric:
            facts = c.check.get("facts") or []
            if c.check.get("predicate") == "text_carries" and c.check.get("service") in ("chat", "email"):
                codes = {f.get("value") for f in facts if isinstance(f, dict) and f.get("kind") == "code"}
                if any(str(x).startswith("EXP-") for x in codes):
                    seen += 1
                    assert not [f for f in facts if isinstance(f, dict) and f.get("kind") == "date"], (
                        t.id,
                        c.id,
                    )
    assert seen >= 3


def test_a_correction_on_the_ticket_touches_the_ticket() -> None:
    """From play: a ticket whose updated_at predated the customer's correction hid that anything
    came later. As in Freshdesk, a reply on the ticket moves its updated_at to the reply's time."""
    s = Settings(k=5, difficulty="hard", families=("composed.service_credit",))
    touched = 0
    for i in range(40):
        try:
            t = _forced(53, i, s, corrected=True)
        except Rejected:
            continue
        if "helpdesk" not in t.services:
            continue
        env = t.environment()
        listed = env.call("helpdesk__freshdesk_list_tickets", {"per_page": 100})["data"]["results"]
        for tk in listed:
            full = env.call(
                "helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": tk["id"], "include": "conversations"}
            )
            convs = full["data"].get("conversations") or []
            if any("A correction to my request" in str(c.get("body")) for c in convs):
                assert full["data"]["updated_at"] == max(c["created_at"] for c in convs), tk["id"]
                touched += 1
        if touched:
            break
    assert touched >= 1


def test_no_earlier_claim_is_one_expense_with_a_claim_of_the_run() -> None:
    """From play (seed 99191): a paid claim of the list had the same employee, merchant and expense
    date as a submitted one, and the policy's rule ("claims ... on the same expense date are one
    expense") read as holding them together. Earlier claims never share that key with the run's."""
    s = Settings(k=5, difficulty="hard")  # the played set's draws (its index 8 had such a claim)
    looked = 0
    for i in range(80):  # the played index 8 draws no cover now (the capped employee never covers)
        try:
            t = _forced(99191, i, s)
        except Rejected:
            continue
        if t.meta["family"] != "composed.expense_claims" or t.meta["composition"]["plan"]["claims"] != "sql":
            continue
        rows = t.environment().call("sql__read_query", {"query": "SELECT * FROM expense_claims"})["data"][
            "rows"
        ]
        day = "expense_date" if "expense_date" in rows[0] else "submitted"
        run = {(x["employee"], x["merchant"], x[day]) for x in rows if x["status"] == "submitted"}
        earlier = [
            x for x in rows if x["status"] != "submitted" and (x["employee"], x["merchant"], x[day]) in run
        ]
        assert not earlier, (t.id, earlier)
        looked += 1
    assert looked >= 1


@pytest.mark.parametrize("request_via", ["email", "helpdesk"])
def test_a_key_set_up_by_hand_is_named_only_in_the_requesters_follow_up(request_via: str) -> None:
    """Hard access reviews may hold a key set up by hand, so on no export: only the requester's
    follow-up on the request (a reply on the ticket, or in the email thread) names it and its last
    login. BambooHR decides it like the rest: its holder left (revoked), or is still in the team
    (kept). A review of the export alone leaves the leaver's key live, and fails."""
    s = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    gone = here = None
    for i in range(60):  # both worlds build (the key's holder off the export, paging still matters)
        try:
            gone = _forced(97, i, s, unlisted=True, unlisted_left=True)
            here = _forced(97, i, s, unlisted=True, unlisted_left=True, left=False)
        except Rejected:
            continue
        if gone.meta["composition"]["plan"]["request"] == request_via:
            break
    assert (
        gone is not None and here is not None and gone.meta["composition"]["plan"]["request"] == request_via
    )
    assert gone.instruction == here.instruction and gone.services == here.services
    assert gone.meta["composition"]["unlisted"] is True and here.meta["composition"]["unlisted"] is False
    (key,) = _deleted(gone) - _deleted(here)
    tool, user = key.split(":")[1:]
    for t in (gone, here):
        seen = _seen(t)
        assert "set up by hand" in seen and f"{user}@" in seen
        # the export never lists that key's holder for the tool (the other rows are filtered to it
        # or listed in full)
        roster = " ".join(
            str(t.environment().call(c.tool, c.arguments))
            for c in t.reference_solution
            if c.tool in ("sheets__google_sheets_get_spreadsheet", "sql__read_query")
            or (c.tool == "workspace__shell" and "access_list" in c.arguments["command"])
        )
        assert roster and not re.search(re.escape(f"{user}@") + r"[^\]\n]{0,80}'?" + tool + r"\b", roster)
        if request_via == "helpdesk":  # behind the ticket's conversation
            assert any(c.arguments.get("include") == "conversations" for c in t.reference_solution)
    _flips(gone, here)
    # the review of the export alone (the follow-up unread) leaves the key live, and fails
    env = gone.environment()
    for c in gone.reference_solution:
        if not (c.tool == "kv__delete" and c.arguments["key"] == key):
            env.call(c.tool, c.arguments)
    assert not verify(gone, env.snapshot(), None).passed


def _deleted(t: Task) -> set[str]:
    return {c.arguments["key"] for c in t.reference_solution if c.tool == "kv__delete"}


@pytest.mark.parametrize("notify", ["chat", "email"])
def test_a_claim_its_employee_withdrew_in_their_own_message_is_not_paid(notify: str) -> None:
    """Hard expense runs may hold a claimant's own message about a claim of the batch, where they
    would write (a post in the expenses channel, or an email to me): withdrawing it (not paid, out
    of the total), or a note that changes nothing (paid). Only the message's words differ."""
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    gone = kept = None
    for i in range(60):
        try:
            gone, kept = _forced(71, i, s, withdrawn=True), _forced(71, i, s, withdrawn=False)
        except Rejected:
            continue
        c = gone.meta["composition"]
        if c["plan"]["notify"] == notify and c.get("withdrawn") is not None:
            break
    assert gone is not None and kept is not None and gone.meta["composition"]["plan"]["notify"] == notify
    assert gone.meta["composition"]["withdrawn"] is True and kept.meta["composition"]["withdrawn"] is False
    assert gone.instruction == kept.instruction and gone.services == kept.services
    assert "withdrawn" in gone.meta["composition"]["branches"]
    assert "withdrawn" not in kept.meta["composition"]["branches"]
    (cid,) = _paid(kept) - _paid(gone)
    seen = _seen(gone)
    assert f"Please withdraw my claim {cid}" in seen and f"About my claim {cid}" in _seen(kept)
    _flips(gone, kept)
    # a word back to its employee (where the work tells employees) is a correct alternative
    env = gone.environment()
    for c in gone.reference_solution:
        env.call(c.tool, c.arguments)
    text = f"Noted: claim {cid} is withdrawn, so it was not paid."
    if notify == "chat":
        (channel,) = {
            c.arguments["channel_id"]
            for c in gone.reference_solution
            if c.tool == "chat__slack_user_post_message"
        }
        env.call("chat__slack_user_post_message", {"channel_id": channel, "text": text})
    else:
        found = env.call("email__gmail_search_emails", {"query": f"subject:{cid}"})["data"]["messages"]
        (who,) = {m["from"] for m in found if m["subject"] == f"My expense claim {cid}"}
        env.call(
            "email__gmail_send_email", {"to": [who], "subject": f"Re: My expense claim {cid}", "body": text}
        )
    assert verify(gone, env.snapshot(), None).passed
    if notify == "chat":  # or in the thread of their post (which moves the post's count of replies)
        env = gone.environment()
        for c in gone.reference_solution:
            env.call(c.tool, c.arguments)
        hist = env.call("chat__slack_get_channel_history", {"channel_id": channel, "limit": 50})["data"]
        (post,) = [m["ts"] for m in hist["messages"] if f"withdraw my claim {cid}" in m["text"]]
        env.call("chat__slack_user_reply_to_thread", {"channel_id": channel, "thread_ts": post, "text": text})
        assert verify(gone, env.snapshot(), None).passed


def test_a_key_set_up_by_hand_may_be_a_holders_who_keeps_access() -> None:
    """Being named in the requester's follow-up decides nothing: the key set up by hand is at times
    a holder's who keeps access (by BambooHR, the last login and the policy's limit), and revoking
    it because the follow-up names it fails."""
    s = Settings(k=5, difficulty="hard", families=("composed.access_review",))
    t = None
    for i in range(60):
        try:
            t = _forced(97, i, s, unlisted=True, unlisted_left=False)
        except Rejected:
            continue
        if t.meta["composition"]["unlisted"] is False:
            break
    assert t is not None and t.meta["composition"]["unlisted"] is False
    seen = _seen(t)
    m = re.search(r"One more for this review: [^(]+ \(([^@)]+)@[^)]+\) has a (\w+) key", seen)
    assert m, "the follow-up names the key"
    key = f"access:{m.group(2)}:{m.group(1)}"
    assert key not in _deleted(t) and len(_deleted(t)) >= 1
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}
    env = t.environment()
    for c in t.reference_solution:
        env.call(c.tool, c.arguments)
    assert verify(t, env.snapshot(), None).passed
    env.call("kv__delete", {"key": key})  # revoked because the follow-up names it
    assert not verify(t, env.snapshot(), None).passed
    # the login the follow-up names is the same whoever's key it is (from an attack: a recent login
    # meant the leaver's, an old one a kept holder's)
    theirs = _forced(97, i, s, unlisted=True, unlisted_left=True)
    assert theirs.meta["composition"]["unlisted"] is True

    def login(x: Task) -> str:
        return re.search(r"Its last login was (\w+ \d+)", _seen(x)).group(1)

    assert login(theirs) == login(t)


def test_the_usage_export_names_a_customer_by_its_legal_name_from_a_day_inside_a_window(monkeypatch) -> None:
    """Hard credit reviews: from a day inside one request's window the usage export names every
    customer by its legal name ("Stark Robotics Inc."), nothing but the rows saying so. The window's
    days under either name are billed to the request (the same writes as in a world without the
    change), and a sum over the customer's exact name misses the later ones."""
    from compoworld.tasks import compose

    i = _first(CREDIT, 73, lambda t: bool(t.meta["composition"].get("legal_names")))
    renamed, plain = _forced(73, i, CREDIT), _forced(73, i, CREDIT, legal_names=False)
    assert renamed.meta["composition"]["legal_names"] and not plain.meta["composition"]["legal_names"]
    assert renamed.instruction == plain.instruction
    for t in (renamed, plain):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0, lazy

    calls = [
        [(c.tool, json.dumps(c.arguments, sort_keys=True)) for c in t.reference_solution]
        for t in (renamed, plain)
    ]
    # the same days billed, the same credits: the two references differ in reads of the export only
    differ = {x for x in calls[0] if x not in calls[1]} | {x for x in calls[1] if x not in calls[0]}
    assert all(tool == "sql__read_query" for tool, _ in differ), differ
    seen = _seen(renamed)
    forms = {f.format("") for f in compose.LEGAL_FORMS}
    assert any(f.strip() in seen for f in forms) and not any(f.strip() in _seen(plain) for f in forms)
    # the careless sum over the exact name is another amount than the request's
    monkeypatch.setattr(compose, "_names", lambda w, c: {c.cust.name})
    with pytest.raises((AssertionError, Rejected)):
        _forced(73, i, CREDIT)


def test_whoever_covers_for_the_approver_has_no_claim_held_by_the_cap(monkeypatch) -> None:
    """The capped employee's claim was drawn to be paid and goes for approval: a reply that lists each
    claim beside its employee names them, so they never cover for the approver (nor are next in
    line), whom the reply must not name (from play: a cover's cover named beside their own claim)."""
    from compoworld.tasks import compose_expense as ce

    seen: list[tuple[object, object]] = []
    capped_of, away_of = ce._capped, ce.draw_away

    def capped(*a, **k):
        c = capped_of(*a, **k)
        seen.append(("capped", c))
        return c

    def away(*a, **k):
        w = away_of(*a, **k)
        seen.append(("away", w))
        return w

    monkeypatch.setattr(ce, "_capped", capped)
    monkeypatch.setattr(ce, "draw_away", away)
    s = Settings(k=5, difficulty="hard", families=("composed.expense_claims",))
    checked = 0
    for i in range(30):
        seen.clear()
        try:
            _forced(81, i, s)
        except Rejected:
            continue
        got = dict(seen)
        c, w = got.get("capped"), got.get("away")
        if c is None or w is None:
            continue
        checked += 1
        assert c.person.id not in {w.cover.id, *([w.second.id] if w.second else [])}, i
    assert checked >= 5, checked


def test_finance_logs_an_earlier_credit_under_the_customers_billing_account(monkeypatch) -> None:
    """Hard credit reviews with a CRM account: every company carries its billing account number, and
    finance logged one request's earlier credit of days under it (and others' credits too: no odd
    one out). The same reads and writes as in a world where it was logged by name, and a reading of
    the log by the customer's name alone counts a credited day again."""
    from compoworld.tasks import compose
    from compoworld.tasks.families._common import rows

    i = _first(CREDIT, 74, lambda t: t.meta["composition"].get("billing_keys") is not None)
    keyed, plain = _forced(74, i, CREDIT), _forced(74, i, CREDIT, billing_keys=False)
    k = keyed.meta["composition"]["billing_keys"]
    assert plain.meta["composition"]["billing_keys"] is None and keyed.instruction == plain.instruction
    for t in (keyed, plain):
        assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
        lazy = solve_lazily(t)
        assert lazy["every"] == lazy["recent"] == 0, lazy
    assert [(c.tool, c.arguments) for c in keyed.reference_solution] == [
        (c.tool, c.arguments) for c in plain.reference_solution
    ]
    assert keyed.initial_state_hash != plain.initial_state_hash
    # the key is the company's in the CRM, and the log's credited days for it are under the key only
    env = keyed.environment()
    names = [
        c.arguments["value"] for c in keyed.reference_solution if c.tool == "crm__hubspot_search_by_property"
    ]
    name = names[k]
    found = env.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "name",
            "operator": "EQ",
            "value": name,
            "properties": ["billing_account"],
        },
    )
    number = rows(found)[0]["properties"]["billing_account"]
    # the reference reads it on the CRM record in both worlds, and in the log in the keyed one only
    assert number.startswith("BA-") and _seen(keyed).count(number) > _seen(plain).count(number)
    # the careless reading by the exact name misses the credit: the reference's own check trips
    monkeypatch.setattr(compose, "log_keys", lambda c: {c.cust.name, c.found.get("log_legal", c.cust.name)})
    with pytest.raises((AssertionError, Rejected)):
        _forced(74, i, CREDIT)
    _forced(74, i, CREDIT, billing_keys=False)  # by name it is found by name


@pytest.mark.parametrize("request_via", ["helpdesk", "email"])
def test_requests_waiting_in_the_queue_are_found_by_reading_it_not_by_keyword(request_via: str) -> None:
    """Hard credit reviews name no requester: the requests wait among the customers' other open
    messages, one in the customer's own words (none of the policy's terms). Every gate holds, lazy
    solvers fail; a reading of the queue by keyword misses that one, and leaving its work undone
    fails; with the queue off the instruction names the requesters again."""
    from compoworld.tasks import compose

    def queued(t: Task) -> bool:
        c = t.meta["composition"]
        return c.get("queue") is not None and c["plan"]["request"] == request_via

    i = _first(CREDIT, 81, queued)
    t, named = _forced(81, i, CREDIT), _forced(81, i, CREDIT, queue=False)
    assert named.meta["composition"]["queue"] is None
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
    lazy = solve_lazily(t)
    assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, lazy
    env = t.environment()
    if request_via == "helpdesk":
        got = env.call("helpdesk__freshdesk_list_tickets", {"status": 2, "per_page": 100})["data"]["results"]
        texts = {str(x["id"]): x["subject"] + " " + x["description"] for x in got}
    else:
        got = env.call("email__gmail_search_emails", {"query": "in:inbox", "maxResults": 200})["data"]
        texts = {}
        for m in got["messages"]:
            thread = env.call("email__gmail_read_email", {"messageId": m["id"]})["data"]["messages"]
            texts[m["id"]] = m["subject"] + " " + next(x["body"] for x in thread if x["id"] == m["id"])
    assert len(texts) >= 20  # the requests sit among the customers' other messages
    # the requests: the messages the reference read whole (the ticket with its conversation, the
    # thread); the one in the customer's own words carries none of the policy's terms
    read = [
        str(c.arguments.get("ticket_id", c.arguments.get("messageId")))
        for c in t.reference_solution
        if c.tool in ("helpdesk__freshdesk_get_ticket_by_id", "email__gmail_read_email")
    ][:3]
    words = re.compile(r"credit|outage|downtime|refund", re.I)
    keyed = {k for k, v in texts.items() if words.search(v)}
    plain = [k for k in read if k not in keyed]
    assert len(plain) == 1 and len(set(read) & keyed) == 2
    # nor does anything the customer wrote later about it (a correction on the ticket, in the thread)
    if request_via == "helpdesk":
        got = env.call(
            "helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": int(plain[0]), "include": "conversations"}
        )
        later = [x["body"] for x in got["data"]["conversations"]]
    else:
        later = [
            x["body"]
            for x in env.call("email__gmail_read_email", {"messageId": plain[0]})["data"]["messages"]
        ]
    assert not any(words.search(x) for x in later)
    # work every request but that one: it fails
    env = t.environment()
    cust = re.sub(r"<[^>]+>", "", texts[plain[0]]).rsplit(",", 1)[1].strip()  # "... Name, Customer"
    skip = [c for c in t.reference_solution if (s := env.tool_spec(c.tool)) and s.mutates]
    skip = [c for c in skip if plain[0] in json.dumps(c.arguments) or cust in json.dumps(c.arguments)]
    assert skip
    for c in t.reference_solution:
        if c not in skip:
            env.call(c.tool, c.arguments)
    assert not verify(t, env.snapshot(), None).passed
    # named, the instruction says who asked; queued, it says nobody
    people = re.findall(r"([A-Z][a-z]+ [A-Z][a-z]+) at ", named.instruction)
    assert len(people) == 3 and cust in named.instruction
    assert not any(p in t.instruction for p in people) and cust not in t.instruction
    assert compose.TIERS["hard"]["queue"] and "queue" not in compose.TIERS["medium"]


def test_the_credits_log_holds_eighteen_months_of_credits_that_change_no_answer(monkeypatch) -> None:
    """Hard credit reviews: the credits log holds 30 or more earlier credits beside the requests'
    (other customers' requests, goodwill days and runs of days, some under a billing account
    number; the requests' own customers' only from before their earlier request). The reference's
    writes are those of a world whose log holds only the requests' rows: the history is reading,
    not a different answer."""
    from compoworld.tasks import compose

    i = _first(CREDIT, 83, lambda t: t.meta["composition"]["plan"]["ledger"] == "sql")
    long = _forced(83, i, CREDIT)
    assert not {g: why for g, why in run_gates(long, regenerate=False).items() if why}, long.id
    env = long.environment()
    got = env.call("sql__read_query", {"query": "SELECT * FROM credits_log"})["data"]["rows"]
    assert len(got) >= 30 and len({r["customer"] for r in got}) >= 6
    monkeypatch.setitem(
        compose.TIERS, "hard", {k: v for k, v in compose.TIERS["hard"].items() if k != "log_rows"}
    )
    short = _forced(83, i, CREDIT)
    got = short.environment().call("sql__read_query", {"query": "SELECT * FROM credits_log"})["data"]["rows"]
    assert len(got) < 20

    def amounts(t: Task) -> list[str]:
        e = t.environment()
        said = " ".join(
            json.dumps(c.arguments) for c in t.reference_solution if (s := e.tool_spec(c.tool)) and s.mutates
        )
        return sorted(re.findall(r"\d+\.\d\d", said))

    # the same branches and amounts written (who approves is drawn after the log, so it may differ)
    assert long.meta["composition"]["branches"] == short.meta["composition"]["branches"]
    assert amounts(long) == amounts(short) and amounts(long)


def test_usage_is_billed_by_product_so_a_window_is_a_sum_of_many_lines() -> None:
    """Hard credit reviews: the usage export bills each day by product (two or three lines a day)
    and an outage runs 5 to 9 days, so each request's total is a sum of 10 or more lines less the
    days credited before; one line a day (the first product listed) is another, wrong total."""
    from compoworld.tasks import compose

    i = _first(CREDIT, 85, lambda t: t.meta["composition"]["plan"]["usage"] == "sql")
    t = _forced(85, i, CREDIT)
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
    env = t.environment()
    sums = [
        c.arguments["query"]
        for c in t.reference_solution
        if c.tool == "sql__read_query" and "SUM(amount_usd)" in c.arguments["query"]
    ]
    assert len(sums) == 3
    said = " ".join(json.dumps(c.arguments) for c in t.reference_solution)
    for q in sums:
        total = env.call("sql__read_query", {"query": q})["data"]["rows"][0]["total"]
        lines = env.call("sql__read_query", {"query": q.replace("SUM(amount_usd) AS total", "COUNT(*) AS n")})
        assert lines["data"]["rows"][0]["n"] >= 10
        products = env.call(
            "sql__read_query",
            {"query": q.replace("SUM(amount_usd) AS total", "COUNT(DISTINCT product) AS n")},
        )
        assert products["data"]["rows"][0]["n"] >= 2
        first = env.call(
            "sql__read_query",
            {"query": q.replace("SUM(amount_usd) AS total", "SUM(amount_usd) AS total") + " GROUP BY day"},
        )
        one_a_day = sum(
            env.call(
                "sql__read_query",
                {
                    "query": q.replace("SUM(amount_usd) AS total", "amount_usd")
                    + f" AND day = '{r['day']}' LIMIT 1"
                },
            )["data"]["rows"][0]["amount_usd"]
            for r in env.call(
                "sql__read_query", {"query": q.replace("SUM(amount_usd) AS total", "DISTINCT day")}
            )["data"]["rows"]
        )
        assert first["data"]["rows"] and f"{total:.2f}" in said and f"{one_a_day:.2f}" not in said
    assert compose.TIERS["hard"]["lines"] and "lines" not in compose.TIERS["medium"]


def test_finance_logs_one_requests_credited_days_under_its_legal_name(monkeypatch) -> None:
    """Hard credit reviews whose usage export has legal names: finance logged one request's credited
    days under the customer's legal name, as on its invoices (and some other customers' credits too).
    Every gate holds, lazy solvers fail; a reading of the log by the name and the billing account
    alone counts a credited day again: the reference's own check trips."""
    from compoworld.tasks import compose

    i = _first(CREDIT, 87, lambda t: t.meta["composition"].get("log_legal") is not None)
    t = _forced(87, i, CREDIT)
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
    lazy = solve_lazily(t)
    assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, lazy
    assert any(tr.kind == "alias" and "legal name" in tr.description for tr in t.traps)
    monkeypatch.setattr(compose, "log_keys", lambda c: {c.cust.name, c.found.get("account_no", c.cust.name)})
    with pytest.raises((AssertionError, Rejected)):
        _forced(87, i, CREDIT)


def test_one_requests_credited_days_were_keyed_by_hand(monkeypatch) -> None:
    """Hard credit reviews: the credits log's older rows were keyed by hand (in capitals, in lower
    case, or beside the account number), one request's credited days among them. Every gate holds,
    lazy solvers fail; a reading of the log by its exact keys counts a credited day again (the
    reference's own check trips); forced off, the same request's rows are under its plain name."""
    from compoworld.tasks import compose

    assert compose.logged_as("STARK MOTORS", {"Stark Motors"})
    assert compose.logged_as("Stark Motors (BA-10234)", {"Stark Motors"})
    assert compose.logged_as("stark motors - BA-10234", {"BA-10234"})
    assert not compose.logged_as("Stark Motors Ltd", {"Stark Motors"})
    assert not compose.logged_as("Stark", {"Stark Motors"})
    i = _first(CREDIT, 89, lambda t: t.meta["composition"].get("hand_keyed") is not None)
    t = _forced(89, i, CREDIT)
    assert not {g: why for g, why in run_gates(t, regenerate=False).items() if why}, t.id
    lazy = solve_lazily(t)
    assert lazy["every"] == lazy["recent"] == 0 and max(lazy.values()) <= 0.25, lazy
    hand = [tr for tr in t.traps if tr.kind == "alias" and "keyed by hand" in tr.description]
    assert len(hand) == 1
    typed = hand[0].description.split(" as ", 1)[1].strip("'\"")
    assert typed != typed.title() or "(" in typed or " - " in typed, typed
    monkeypatch.setattr(compose, "logged_as", lambda cell, keys: cell in keys)
    with pytest.raises((AssertionError, Rejected)):
        _forced(89, i, CREDIT)
    monkeypatch.undo()
    plain = _forced(89, i, CREDIT, hand_keyed=False)
    assert plain.meta["composition"]["hand_keyed"] is None
    assert not [tr for tr in plain.traps if "keyed by hand" in tr.description]


def test_whoever_covers_comes_from_the_absent_persons_team(monkeypatch) -> None:
    """An approver's or tool owner's cover comes from their own team while it has someone free, else
    from a team next to it (from play, wave 16: a Content Strategist covering a billing approver);
    only where neither has anyone free (a small company's teams are one or two people) from anyone."""
    from compoworld.tasks import compose, compose_access, compose_expense

    near = compose.NEAR_TEAMS
    drawn: list[tuple[str, str, bool]] = []
    real = compose.draw_away

    def away(b, who, exclude, *a, **k):
        staff = [p for p in b.company.employees if p.id not in {b.me.id, who.id, *exclude}]
        free = {p.team for p in b.unused(staff, key=lambda p: p.id)}
        best = who.team if who.team in free else next((t for t in near[who.team] if t in free), None)
        w = real(b, who, exclude, *a, **k)
        ok = best is None or w.cover.team == best or (best != who.team and w.cover.team in near[who.team])
        drawn.append((who.team, w.cover.team, ok))
        return w

    for mod in (compose, compose_access, compose_expense):
        monkeypatch.setattr(mod, "draw_away", away)
    for fam in ("composed.service_credit", "composed.access_review", "composed.expense_claims"):
        s = Settings(k=5, difficulty="hard", families=(fam,))
        for i in range(8):
            with contextlib.suppress(Rejected):
                _forced(91, i, s)
    assert len(drawn) >= 12, drawn
    assert all(ok for *_, ok in drawn), drawn
    assert sum(c == t or c in near[t] for t, c, _ in drawn) >= len(drawn) / 3


def test_no_post_announces_an_absence_already_over() -> None:
    """A heads-up in Slack, or the cover's reply under it, is posted before the absence it announces
    ends (from play, wave 17: a cover's reply announcing dates already past); a cover whose own
    absence was over by then had posted their own heads-up the day before it began."""
    import re
    from datetime import datetime

    checked = 0
    for fam in THEMES:
        s = Settings(k=5, difficulty="hard", families=(fam,))
        for i in range(12):
            try:
                t = _forced(5151, i, s)
            except Rejected:
                continue
            env = t.environment()
            if "chat" not in env.services:
                continue
            year = env.clock.now().year
            for m in env.services["chat"].store.tables.get("messages", {}).values():
                got = re.search(r"out (?:of office|myself),? from (\w+ \d+) to (\w+ \d+)", m["text"])
                if not got:
                    continue
                end = datetime.strptime(f"{got.group(2)} {year}", "%B %d %Y").date()
                posted = datetime.fromtimestamp(float(m["ts"]), env.clock.now().tzinfo).date()
                if end.month == 12 and posted.month < 3:  # the dates of last December
                    end = end.replace(year=year - 1)
                assert posted <= end, (t.id, m["text"], posted)
                checked += 1
    assert checked >= 5, checked
