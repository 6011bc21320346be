"""Composed work, third theme: an expense-claims run (`composed.expense_claims`).

Someone in finance asks for the submitted expense claims to be processed. The work
crosses the request (a Freshdesk ticket, an email, or the ticket's page in the web app), the claims
list (a sheet, a SQL table or a CSV export: the aggregate, one row per claim), the expense policy
(Confluence, a sheet or files in the workspace: the version in force today sets a limit per
category and names the approver), the payouts log (which also holds what was paid before), the
approver and the claimants (Slack or Gmail), and back to the request with the total paid.

Built from compose.py's shared machinery: `Stage`s with needs/gives and `wire`, the tier knobs,
the versioned policy (`plant_versions`/`read_versions`) and the `Log`.

Evidence, not labels: a claim is a duplicate because its receipt was reimbursed months ago, which
only the payouts log shows (the claims list keeps the last weeks); a claim is over the limit by its
amount against the category limit of the version in force, which is told by its effective date
against today (the pages and files name a version number, never a date, and the newest number is
announced for later); last month's request is closed. At the hard tier an employee's monthly cap
counts what the payouts log paid them this month: one claim within its category limit goes for
approval because earlier claims of theirs were paid this month (only the log's dates, against
today's month, show it); the payouts log keys some payouts by the employee's work email, not their
name (others' too), and the capped employee's largest payout this month is one of them: a sum over
their name alone leaves the claim within the cap. With a submission window, a claim filed more
than the policy's days after its expense date is rejected and goes back to its employee: only the
two dates of its row, against the window of the version in force, show it; other claims sit just
inside the window, one exactly at it (paid), and the older version's window is longer. And a
claimant may have written about a claim of the batch where they would (a post in the expenses
channel, or an email to me): withdrawing it (not paid, out of the total), or a note that changes
nothing; the claims list shows it submitted either way. No record says any of this.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, ClassVar

from compoworld.core.company import Person
from compoworld.tasks.compose import (
    DISPLAY,
    Amend,
    Away,
    Log,
    Stage,
    amend_rest,
    amend_rule,
    away_checks,
    away_rule,
    dollars,
    draw_amend,
    draw_away,
    find_open_ticket,
    open_ticket_page,
    plant_amend,
    plant_away,
    plant_versions,
    read_amend,
    read_away,
    read_versions,
    where_context,
    wire,
)
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError

CATEGORIES = ("meals", "travel", "lodging", "software")
MERCHANTS = {
    "meals": ("Luigi's Trattoria", "Blue Door Cafe", "Harbor Grill", "Sushi Nori"),
    "travel": ("Delta Air Lines", "Amtrak", "Uber", "Hertz"),
    "lodging": ("Marriott Downtown", "Hilton Garden Inn", "Hyatt Place", "Airbnb"),
    "software": ("JetBrains", "Figma", "Notion", "Zoom"),
}
CHANNEL = "expenses"
CLAIMS_HEAD = [
    "claim_id",
    "submitted",
    "employee",
    "email",
    "category",
    "merchant",
    "amount_usd",
    "receipt",
    "status",
]
FX_HEAD = [*CLAIMS_HEAD[:6], "amount", "currency", *CLAIMS_HEAD[7:]]  # hard: claims in their currency
# hard, with a submission window: the day of the expense beside the day the claim was submitted
WINDOW_HEAD = [*FX_HEAD[:8], "expense_date", *FX_HEAD[8:]]
WINDOWS = (30, 45, 60)  # days from an expense to its claim's submission, at most (the version in force)
LOG_HEAD = ("date", "claim_id", "employee", "amount_usd", "receipt")
FX = {"EUR": (1.04, 1.12), "GBP": (1.22, 1.31)}  # USD per unit: where the rates table moves


def _fx_path() -> str:
    return "Documents/finance/fx_rates.csv"


def usd_cents(foreign: int, rate: float) -> int:
    """A foreign amount in USD cents at a rate, rounded half up (as a money log would)."""
    from decimal import ROUND_HALF_UP, Decimal

    return int((Decimal(foreign) * Decimal(str(rate))).quantize(Decimal(1), rounding=ROUND_HALF_UP))


# how a receipt number R-123456 was keyed by hand in older payouts
RECEIPT_FORMS = ("R{}", "{}", "RCPT-{}", "RCPT {}", "rcpt-{}")  # not "R 241216" (from play: read as planted)


def same_receipt(keyed: str, receipt: str) -> bool:
    """The same receipt, however it was keyed: the same digits."""
    return _digits(keyed) == _digits(receipt)


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def outcomes(cases: int) -> list[str]:
    """The submitted claims of a run, in claim order, by their outcome at a tier (its `cases` knob)."""
    if cases >= 2:  # "split": two claims of one expense (same person, merchant and day), each within
        # the limit and over it together; they go for approval beside the claim over it (one visit)
        return [
            "pay",
            "pay",
            "approval",
            "split",
            "split",
            "duplicate",
            "pay",
            "approval",
            "pay",
            "duplicate",
            "late",  # past the submission window where the tier has one (else paid)
            "pay",
        ]
    return ["pay", "approval", "pay", "duplicate", "pay"]


@dataclass(frozen=True)
class ExpensePlan:
    family: ClassVar[str] = "composed.expense_claims"
    category: ClassVar[str] = "finance"
    request: str  # helpdesk | email | browser (the ticket's page in the web app; replies via Freshdesk)
    claims: str  # sheets | sql | workspace: the claims list (aggregated)
    policy: str  # wiki | sheets | workspace
    log: str  # sheets | workspace | sql: the payouts log (read for earlier payouts, then written)
    notify: str  # chat | email: the approver and the claimants

    def services(self) -> set[str]:
        req = {"browser", "helpdesk"} if self.request == "browser" else {self.request}
        return req | {self.claims, self.policy, self.log, self.notify}

    def write_services(self) -> set[str]:
        return {self.reply_service(), self.log, self.notify}

    def reply_service(self) -> str:
        return "email" if self.request == "email" else "helpdesk"

    def walk(self, cases: int = 1) -> list[str]:
        seq = [self.request, self.claims, self.policy, self.log]
        if cases >= 2:  # hard: the policy owner's thread is read after the policy (a change of approver)
            seq.insert(3, self.notify)
        asked = False  # the approver hears once, about every claim over its limit
        for o in outcomes(cases):  # each claim in turn: pay it (the log) or tell someone
            if o == "pay":
                seq.append(self.log)
            elif o in ("duplicate", "late") or not asked:
                seq.append(self.notify)
                asked = asked or o not in ("duplicate", "late")
        seq.append(self.reply_service())
        return [s for i, s in enumerate(seq) if i == 0 or seq[i - 1] != s]


def all_plans() -> list[ExpensePlan]:
    return [
        ExpensePlan(*x)
        for x in itertools.product(
            ("helpdesk", "email", "browser"),
            ("sheets", "sql", "workspace"),
            ("wiki", "sheets", "workspace"),
            ("sheets", "workspace", "sql"),
            ("chat", "email"),
        )
    ]


PLANS = all_plans()


@dataclass
class Claim:
    cid: str
    person: Person
    category: str
    merchant: str
    cents: int
    receipt: str
    submitted: date
    # pay | approval | duplicate | late (submitted past the window: rejected) | withdrawn (by its
    # employee, in their own message: not paid)
    outcome: str
    paid_before: tuple[str, date] | None = None  # the earlier claim and day its receipt was paid
    split: bool = False  # one of two claims of one expense (same person, merchant and day)
    currency: str = "USD"  # hard: a claim paid abroad is in EUR or GBP (cents: its USD value)
    foreign: int = 0  # its amount in that currency, in cents
    wrong: int = 0  # its USD value at the latest rate, not its submission day's (a careless sum)
    # hard: within its limit, but over its employee's monthly cap with this month's payouts
    capped: bool = False
    spent: date | None = None  # hard, with a submission window: the day of the expense
    late: bool = False  # drawn past the window (its outcome is "late" unless a test moves its date inside)


def held(claims: list[Claim], c: Claim) -> int:
    """The cents held against `c`'s category limit: its expense's, the claims of one person at one
    merchant on one day together (the policy's rule at hard)."""
    return sum(
        x.cents
        for x in claims
        if (x.person.id, x.merchant, x.submitted) == (c.person.id, c.merchant, c.submitted)
        and x.outcome not in ("duplicate", "late")
    )


@dataclass
class Version:
    effective: date
    limits: dict[str, int]  # dollars per claim, by category
    approver: Person
    window: int = 0  # days from an expense to its claim's submission, at most (0: no window)


@dataclass
class Run:
    b: Builder
    plan: ExpensePlan
    tier: dict[str, Any]
    requester: Person
    claims: list[Claim]
    versions: list[Version] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    hist: list[list[Any]] = field(default_factory=list)
    subject: str = ""
    ticket: int | None = None
    old_ticket: int | None = None
    newer: Any = None
    email_id: str = ""
    thread: str = ""
    log_id: str = ""
    old_log: str = ""
    channel: str = ""
    ask: int = 0
    only: Claim | None = None
    seen: set[str] = field(default_factory=set)
    away: Away | None = None  # hard: the approver's out-of-office, naming who covers
    amend: Amend | None = None  # hard: the policy owner's later change of approver, in their thread
    rates: list[list[Any]] = field(default_factory=list)  # hard: (date, currency, USD per unit) rows
    cap: int = 0  # hard: cents an employee may be reimbursed in a calendar month (0: no cap)
    month: dict[str, int] = field(default_factory=dict)  # cents paid to each employee this month (the log)
    # hard: payouts the log keys by an employee's work email, not their name (claim id: email)
    keyed: dict[str, str] = field(default_factory=dict)
    payee: bool | None = None  # the email-keyed payout that decides the cap is the capped employee's
    # hard: the claim its employee wrote to me about (withdrawing it, or a note that changes nothing)
    noted: Claim | None = None

    @property
    def today(self) -> date:
        return self.b.now.date()

    @property
    def current(self) -> Version:
        return self.versions[0]

    @property
    def approver(self) -> Person:
        """Who approves today: the version in force's approver, or whoever covers for them."""
        ap = self.named
        return self.away.approver(ap, self.today) if self.away else ap

    @property
    def named(self) -> Person:
        """The approver the policy names today: its version in force's, unless its owner changed it."""
        if self.amend is not None and self.amend.holds(self.today):
            return self.amend.value
        return self.current.approver

    @property
    def log(self) -> Log:
        return Log(
            self.plan.log,
            "Expense payouts log",
            "Documents/finance/expense_payouts.csv",
            "expense_payouts",
            LOG_HEAD,
            numbers=("amount_usd",),
        )

    @property
    def window(self) -> int:
        """The submission window of the version in force, in days (0: none)."""
        return self.current.window

    def todo(self) -> list[Claim]:
        return [self.only] if self.only is not None else self.claims

    def paid(self) -> list[Claim]:
        return [c for c in self.claims if c.outcome == "pay"]

    def total(self) -> int:
        return sum(c.cents for c in self.paid())


def _day(d: date) -> str:
    return d.isoformat()


# ---- the request -----------------------------------------------------------------------------------
ASKS = (
    "process the expense claims {who} asked about, the way our expense policy says",
    # "claims for X" read as X's own claims (from play): X is who asked for the batch to be done
    "work through the submitted expense claims, as {who} asked, by the book",
    "run the expense claims {who} sent over through our expense policy",
)
# the ask's key words without repeating it (from play: an old request that opened with the
# instruction's own wording read as planted)
ECHOES = (
    "The submitted expense claims need processing, the way the expense policy says.",
    "Please work through the submitted expense claims, by the book as always.",
    "Could the submitted expense claims go through the expense policy?",
)


def _request_text(r: Run, echo: bool = False) -> str:
    # the batch is what the claims list shows as submitted, never a month (from play: "the February
    # claims are in" on March 2 left claims of March 1 in doubt)
    if echo:
        return f"Hi, {ECHOES[r.ask]} It is everything submitted so far. Thanks, {r.requester.first}"
    return (
        "Hi, new expense claims are in. Please handle every claim still marked submitted in the claims "
        f"list and tell me what we paid out. Thanks, {r.requester.first}"
    )


def _long(d: date) -> str:
    return f"{d:%B} {d.day}"


def plant_request(r: Run) -> None:
    from compoworld.tasks.families._common import hd_ticket, inbox_mail
    from compoworld.tasks.families.it_admin import _employee_contact

    b = r.b
    # last run's request is titled the way the ask is worded; today's is not: the request that
    # best matches the instruction's words is the closed one
    old_subject, r.subject = "Expense claims", "New claims to process"
    other = ("Parking permit", f"Could facilities renew my parking permit for next year? {r.requester.first}")
    if r.plan.request in ("helpdesk", "browser"):
        contact = _employee_contact(b, r.requester)
        r.old_ticket = hd_ticket(
            b,
            contact,
            old_subject,
            _request_text(r, echo=True),
            status=5,
            days_ago=b.rng.randrange(28, 36),
        )["id"]
        r.ticket = hd_ticket(b, contact, r.subject, _request_text(r), days_ago=b.rng.randrange(1, 3))["id"]
        r.newer = hd_ticket(b, contact, other[0], other[1], days_ago=0.2, priority=1)["id"]
    else:
        me = b.me.email
        first = inbox_mail(
            b,
            r.requester.email,
            me,
            old_subject,
            _request_text(r, echo=True),
            b.now - timedelta(days=b.rng.randrange(28, 36)),
            labels=("INBOX",),
        )
        inbox_mail(  # my answer in that thread: last month's run was done
            b,
            me,
            r.requester.email,
            "Re: " + old_subject,
            f"Hi {r.requester.first}, done: the claims are paid and logged. Best, {b.me.first}",
            b.now - timedelta(days=26),
            thread=first["threadId"],
            labels=("SENT",),
        )
        m = inbox_mail(
            b,
            r.requester.email,
            me,
            r.subject,
            _request_text(r),
            b.now - timedelta(days=b.rng.randrange(1, 3), hours=b.rng.randrange(1, 9)),
        )
        r.email_id, r.thread = m["id"], m["threadId"]
        r.newer = inbox_mail(b, r.requester.email, me, other[0], other[1], b.now - timedelta(hours=3))["id"]


def solve_request(r: Run) -> None:
    b = r.b
    if r.plan.request == "helpdesk":
        assert find_open_ticket(b, r.requester, r.subject) == r.ticket
    elif r.plan.request == "browser":
        mine = open_ticket_page(
            b, r.subject, lambda tp: r.requester.first in tp and "still marked submitted" in tp
        )
        assert mine is not None and mine[0] == f"/tickets/{r.ticket}", mine
    else:
        found = b.call("email__gmail_search_emails", {"query": r.requester.name, "maxResults": 20})
        # today's request and the last run's
        msgs = [m for m in found["messages"] if "claims" in m["subject"].lower()]
        for m in sorted(msgs, key=lambda m: m["date"]):
            b.call("email__gmail_read_email", {"messageId": m["id"]})
        assert (
            max((m for m in msgs if m["subject"] == r.subject), key=lambda m: m["date"])["id"] == r.email_id
        )
    b.decide()  # which request is today's: the open ticket / the unanswered email


# ---- the claims list (the aggregate) -------------------------------------------------------------
def plant_claims(r: Run) -> None:
    from compoworld.tasks.families._common import sheet

    b = r.b
    head = WINDOW_HEAD if r.window else FX_HEAD if r.rates else CLAIMS_HEAD
    fx = [["date", "currency", "usd_per_unit"], *r.rates]
    if r.plan.claims == "sheets":  # the open claims on their own tab, the processed ones archived
        book = sheet(
            b, "Expense claims", "Submitted", [head, *[x for x in r.rows if x[-1] == "submitted"]], 0.5
        )
        old = [head, *[x for x in r.rows if x[-1] != "submitted"]]
        cells = {f"{chr(65 + c)}{i}": v for i, row in enumerate(old, start=1) for c, v in enumerate(row)}
        tabs = [*book["sheets"], {"sheetId": 1, "title": "Processed", "cells": cells}]
        if r.rates:  # the day's rates beside the claims
            fxc = {f"{chr(65 + c)}{i}": v for i, row in enumerate(fx, start=1) for c, v in enumerate(row)}
            tabs.append({"sheetId": 2, "title": "FX rates", "cells": fxc})
        b.svc("sheets").books.update(book["id"], {"sheets": tabs})
    elif r.plan.claims == "workspace":
        b.svc("workspace").write_file(
            "/home/user/Documents/finance/expense_claims.csv",
            ",".join(head) + "\n" + "".join(",".join(str(v) for v in x) + "\n" for x in r.rows),
        )
        if r.rates:
            b.svc("workspace").write_file(
                f"/home/user/{_fx_path()}", "".join(",".join(str(v) for v in x) + "\n" for x in fx)
            )
    else:
        Log("sql", "", "", "expense_claims", tuple(head), numbers=("amount_usd", "amount")).plant(b, r.rows)
        if r.rates:
            Log(
                "sql", "", "", "fx_rates", ("day", "currency", "usd_per_unit"), numbers=("usd_per_unit",)
            ).plant(b, r.rates)


def solve_claims(r: Run) -> None:
    from compoworld.tasks.families._common import rows, sheet_rows

    b = r.b
    if r.plan.claims == "sheets":
        books = b.call("sheets__google_sheets_list_spreadsheets", {})
        sid = next(x["id"] for x in rows(books) if x.get("title") == "Expense claims")
        tabs = rows(b.call("sheets__google_sheets_list_sheets", {"spreadsheet_id": sid}))
        tab = next(str(t.get("title")) for t in tabs if t.get("title") == "Submitted")
        got_rows = sheet_rows(
            b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid, "range": tab})
        )
        got = [str(x[0]) for x in got_rows[1:] if x and x[-1] == "submitted"]
    elif r.plan.claims == "workspace":
        b.call("workspace__shell", {"command": "head -2 Documents/finance/expense_claims.csv"})
        out = b.call(
            "workspace__shell", {"command": "grep ',submitted$' Documents/finance/expense_claims.csv"}
        )
        got = [ln.split(",")[0] for ln in out["stdout"].splitlines() if ln.strip()]
    else:
        b.call("sql__list_tables", {})
        b.call("sql__describe_table", {"table_name": "expense_claims"})
        res = b.call(
            "sql__read_query",
            {"query": "SELECT * FROM expense_claims WHERE status = 'submitted' ORDER BY claim_id"},
        )
        got = [x["claim_id"] for x in rows(res)]
    assert got == [c.cid for c in r.claims], got
    if r.rates:  # the rates of the days the claims abroad were submitted (in the same place)
        need = sorted({(_day(c.submitted), c.currency) for c in r.claims if c.currency != "USD"})
        if r.plan.claims == "sheets":
            b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid, "range": "FX rates"})
        elif r.plan.claims == "workspace":
            pat = "|".join(f"{d},{cur}" for d, cur in need)
            b.call("workspace__shell", {"command": f"grep -E '^({pat}),' {_fx_path()}"})
        else:
            cond = " OR ".join(f"(day = '{d}' AND currency = '{cur}')" for d, cur in need)
            b.call("sql__read_query", {"query": f"SELECT * FROM fx_rates WHERE {cond}"})
    b.aggregate()


# ---- the policy ----------------------------------------------------------------------------------
def _where(r: Run) -> str:
    return {
        "sheets": 'the Google Sheet "Expense payouts log"',
        "workspace": "Documents/finance/expense_payouts.csv in the workspace",
        "sql": "the expense_payouts table of the SQL database",
    }[r.plan.log]


def _fx_where(r: Run) -> str:
    return {
        "sheets": 'the "FX rates" tab of the Google Sheet "Expense claims"',
        "workspace": f"{_fx_path()} in the workspace",
        "sql": "the fx_rates table of the SQL database",
    }[r.plan.claims]


def policy_text(r: Run, v: Version) -> list[str]:
    tell = f"in the #{CHANNEL} channel on Slack, naming them" if r.plan.notify == "chat" else "by email"
    limits = ", ".join(f"{c} ${v.limits[c]}" for c in CATEGORIES)
    fx = (
        [
            "A claim in another currency is converted to USD at the rate of the day it was submitted "
            f"({_fx_where(r)}); limits, approvals and payouts are in USD."
        ]
        if r.rates
        else []
    )
    window = (
        [
            f"A claim is submitted within {v.window} days of its expense date (the days from the expense "
            f"date to the day it was submitted, at most {v.window}); one submitted later is rejected, not "
            "paid."
        ]
        if v.window
        else []
    )
    return [
        f"Expense policy. Effective {_day(v.effective)}.",
        f"Per-claim limits by category: {limits}.",
        *fx,
        *window,
        *(
            [
                f"Each employee is reimbursed at most ${dollars(r.cap)} in a calendar month: what the payouts "
                "log shows paid to them this month counts"
                + (" (under their name or their work email)" if r.tier.get("payees") else "")
                + ", with what this run pays them, and a claim that would take them above it goes for "
                "approval like a claim above its limit."
            ]
            if r.cap
            else []
        ),
        f"We pay valid claims within their category limit: add each payment to {_where(r)} (date, claim_id, "
        "employee, amount_usd, receipt).",
        f"A claim above its limit goes to {v.approver.name} ({v.approver.email}) for approval {tell}, with "
        "its claim id and amount; it is not paid yet.",
        *([away_rule("the approver")] if r.away else []),
        *([amend_rule(r.amend, f"#{CHANNEL}")] if r.amend else []),
        *(
            [
                "Claims from one employee at the same merchant on the same "
                + ("expense date" if v.window else "day")
                + " are one expense: their total is held against the category limit."
            ]
            if r.tier["cases"] >= 2
            else []
        ),
        # stated, not left to infer (from play): which payouts a receipt paid before shows in
        "A claim whose receipt was reimbursed before (the payouts log holds it, under an earlier claim) "
        "is rejected, not paid.",
        f"An employee whose claim is rejected is told why {tell}, naming the claim.",
        (
            "Then answer the request with the total paid out."
            if r.plan.request == "email"
            else "Then answer the request on its ticket with the total paid out, and resolve the ticket."
        ),
        # where a decision is recorded (from play: the earlier claims show paid or rejected, so a
        # careful agent set the batch's statuses too, which the work never asked for)
        "The claims list's status column is finance's: their close sets each claim paid or rejected "
        "from the payouts log and the messages, so the claims list itself is left as it is.",
    ]


def plant_policy(r: Run) -> None:
    # a sheet of versions holds each one's text beside its date (no column a guess could pick a row by)
    plant_versions(
        r.b,
        r.plan.policy,
        "Expense policy",
        "expense_policy",
        ["effective_from", "policy"],
        [(v.effective, [], policy_text(r, v)) for v in r.versions],
        "Finance",
        r.amend.owner if r.amend else None,  # the policy owner's, where it names one
    )


def solve_policy(r: Run) -> None:
    read_versions(r.b, r.plan.policy, "Expense policy", "expense_policy", len(r.versions), ["expense policy"])


# ---- the payouts log (evidence first, then the writes) -----------------------------------------------
def plant_log(r: Run) -> None:
    b = r.b
    r.log_id = r.log.plant(b, r.hist, days_ago=b_days(r))
    if r.plan.log == "sheets":  # last year's log, closed at the year end: the current one is not the oldest
        from compoworld.tasks.families._common import sheet

        year = r.today.year - 1
        old = [
            list(LOG_HEAD),
            [f"{year}-12-1{b.rng.randrange(0, 9)}", "EXP-1000", b.me.name, 42.0, "R-100000"],
        ]
        days = (r.today - date(year, 12, 31)).days + b.rng.randrange(1, 20)
        # titled the way people asked then: the sheet that best matches the ask's words is not this year's
        r.old_log = sheet(b, f"Expense claims and payouts {year}", "Log", old, days_ago=days)["id"]
        # a sheet the team touched this morning: the log is neither the latest nor the top of the list
        sheet(b, "Team travel bookings", "Trips", [["week", "traveller"], [_day(r.today), b.me.name]], 0.2)


def b_days(r: Run) -> float:
    last = max((date.fromisoformat(str(x[0])) for x in r.hist), default=r.today - timedelta(days=30))
    return float(max(1, (r.today - last).days))


def solve_evidence(r: Run) -> None:
    """Read the payouts log whole: a submitted claim whose receipt it holds was paid before."""
    if r.plan.log == "sql":  # the batch's claimants' payouts (a receipt may be keyed another way)
        r.b.call("sql__describe_table", {"table_name": r.log.table})
        q = chr(39)
        keys = {c.person.name for c in r.claims} | ({c.person.email for c in r.claims} if r.keyed else set())
        inside = ", ".join(sorted(f"'{k.replace(q, q * 2)}'" for k in keys))
        r.b.call(
            "sql__read_query",
            {
                "query": f"SELECT {', '.join(LOG_HEAD)} FROM {r.log.table} WHERE employee IN ({inside}) ORDER BY date"
            },
        )
    else:
        r.log.read(r.b, r.log_id, whole=True)
    r.seen.add("log")
    paid = {_digits(str(x[4])) for x in r.hist}  # `same_receipt` against each payout, once
    for c in r.claims:
        assert (c.outcome == "duplicate") == (_digits(c.receipt) in paid), c
    r.b.decide(len(r.claims))  # each claim: pay, send for approval, or a receipt paid before


def solve_amend(r: Run) -> None:
    """Read the policy owner's thread: a change of approver since the version in force."""
    if r.amend is not None:
        if r.plan.notify == "chat":
            r.seen.add("channel")
        read_amend(r.b, r.amend, CHANNEL, "Expense policy")


WITHDRAW = (
    "the client is paying for it directly",
    "I put it on the company card by mistake",
    "I filed it under the wrong trip and will claim it again with the right one",
)
KEEP = (
    "the receipt shows the tip on a separate line, but the amount I claimed is the full total",
    "the merchant's name on the receipt is its parent company, in case that looks odd",
    "I attached the itemised receipt rather than the card slip",
)


def _note_text(r: Run, c: Claim) -> str:
    amt = f"${dollars(c.cents)}"
    if c.outcome == "withdrawn":
        return f"Please withdraw my claim {c.cid} ({c.merchant}, {amt}): {r.b.pick(WITHDRAW)}. Sorry for the noise."
    return f"About my claim {c.cid} ({c.merchant}, {amt}): {r.b.pick(KEEP)}. Thanks!"


def plant_note(r: Run) -> None:
    """The claimant's own word on their claim, where they would write: a post in the expenses
    channel, or an email to me (the same draws whichever it says)."""
    from compoworld.tasks.families._common import chat_user, inbox_mail

    b, c = r.b, r.noted
    assert c is not None
    when = b.now - timedelta(hours=b.rng.randrange(3, 20))
    text = _note_text(r, c)
    if r.plan.notify == "chat":
        chat = b.svc("chat")
        chat.insert(
            "messages",
            {
                "ts": f"{int(when.timestamp())}.{chat.next_seq('ts'):06d}",
                "channel": r.channel,
                "user": chat_user(c.person),
                "text": text,
                "thread_ts": None,
                "reply_count": 0,
                "reactions": {},
            },
            key="ts",
        )
    else:
        inbox_mail(b, c.person.email, b.me.email, f"My expense claim {c.cid}", text, when)


def read_notes(r: Run) -> None:
    """Before deciding: what the claimants wrote about their claims (the expenses channel, or mail
    about a claim of the batch)."""
    from compoworld.tasks.families._common import rows

    b = r.b
    if r.plan.notify == "chat":
        if "channel" not in r.seen:
            r.seen.add("channel")
            chans = b.call("chat__slack_user_list_channels", {"channel_name": CHANNEL})
            assert next(c["id"] for c in rows(chans) if c["name"] == CHANNEL) == r.channel
        b.call("chat__slack_get_channel_history", {"channel_id": r.channel, "limit": 50})
    else:
        found = b.call("email__gmail_search_emails", {"query": "claim", "maxResults": 20})
        ids = {c.cid for c in r.claims}
        for m in rows(found):
            if any(i in str(m.get("subject", "")) for i in ids):
                b.call("email__gmail_read_email", {"messageId": m["id"]})


def _notable(
    claims: list[Claim], at: Claim | None, pay0: Claim | None, capped: Claim | None, window: int
) -> list[Claim]:
    """Claims paid whose withdrawal changes nothing else: in dollars, alone (not split, not the
    capped employee's), not exactly at a limit or the window, not the claim a stale policy version
    flips."""
    return [
        c
        for c in claims
        if c.outcome == "pay"
        and not c.split
        and c.currency == "USD"
        and c is not at
        and c is not pay0
        and not (window and c.spent is not None and gap(c) == window)
        and (capped is None or c.person.id != capped.person.id)
    ]


def gap(c: Claim) -> int:
    """The days from a claim's expense to its submission (what the submission window counts)."""
    assert c.spent is not None
    return (c.submitted - c.spent).days


def solve_decide(r: Run) -> None:
    if r.tier.get("withdrawals"):  # has anyone written about their claim? (withdrawn: not paid)
        read_notes(r)
    for c in r.claims:
        if r.window:  # each claim's two dates against the window of the version in force
            assert (gap(c) > r.window) == (c.outcome == "late"), c
            if c.outcome == "late":  # the days worked out from its two dates
                r.b.composed(gap(c))
        if c.outcome not in ("duplicate", "late", "withdrawn"):
            over = held(r.claims, c) > r.current.limits[c.category] * 100
            if r.cap and not over:  # this month's payouts to them (the log) and this claim, against the cap
                month = r.month.get(c.person.name, 0) + c.cents
                assert (month > r.cap) == c.capped, c
                if c.capped:
                    r.b.composed(dollars(month))
            assert (over or c.capped) == (c.outcome == "approval"), c
            if c.split:  # the expense's total is worked out, not read
                r.b.composed(dollars(held(r.claims, c)))
            if c.currency != "USD":  # converted at the day's rate
                r.b.composed(dollars(c.cents))
    r.b.composed(dollars(r.total()))


def _line(r: Run, c: Claim) -> list[Any]:
    return [_day(r.today), c.cid, c.person.name, dollars(c.cents), c.receipt]


def solve_pay(r: Run) -> None:
    for c in r.todo():
        if c.outcome == "pay":
            r.log.append(r.b, r.log_id, [_line(r, c)])


def _chat(r: Run, text: str) -> None:
    from compoworld.tasks.families._common import rows

    b = r.b
    if "channel" not in r.seen:
        r.seen.add("channel")
        chans = b.call("chat__slack_user_list_channels", {"channel_name": CHANNEL})
        assert next(c["id"] for c in rows(chans) if c["name"] == CHANNEL) == r.channel
    b.call("chat__slack_user_post_message", {"channel_id": r.channel, "text": text})


def _ask_text(r: Run, ap: Person) -> str:
    """One message to the approver about every claim over its limit (a split pair as one expense)."""
    parts, done = [], set()
    for c in r.claims:
        if c.outcome != "approval" or c.cid in done:
            continue
        if c.split:
            other = next(x for x in r.claims if x.split and x is not c)
            done.add(other.cid)
            parts.append(
                f"claims {c.cid} (${dollars(c.cents)}) and {other.cid} (${dollars(other.cents)}) from "
                # no date (from play): the ids name the pair; a careful writer gave the expense date,
                # or none, and the check asked for the submission date the text carried
                f"{c.person.name} ({c.category}, {c.merchant}, the same day), one expense of "
                f"${dollars(held(r.claims, c))}"
            )
        else:
            parts.append(
                f"claim {c.cid} from {c.person.name} ({c.category}, {c.merchant}), ${dollars(c.cents)}"
            )
    return (
        f"{ap.name}, these expense claims are above the policy limit: can you approve them? "
        + "; ".join(parts)
        + "."
    )


def _why(r: Run, x: Claim) -> str:
    if x.outcome == "late":
        return (
            # no dates (from play): what a careful note must carry is the gap against the window
            f"claim {x.cid} was not paid: it was submitted {gap(x)} days after its expense date, past "
            f"the policy's {r.window} days."
        )
    return f"claim {x.cid} was not paid: receipt {x.receipt} was already reimbursed in an earlier payout."


def solve_notify(r: Run) -> None:
    """Who must know hears once: the approver about every claim over its limit, each employee about
    their claims whose receipt was paid before (a message per claim would do as well)."""
    b = r.b
    ap = r.approver
    for c in r.todo():
        if c.outcome == "approval":
            if "asked" in r.seen:
                continue
            r.seen.add("asked")
            if r.away and "away" not in r.seen:  # is the approver in today? (where they are told)
                r.seen.add("away")
                read_away(b, r.away, CHANNEL if r.plan.notify == "chat" and "channel" not in r.seen else "")
                r.seen.add("channel")
            text = _ask_text(r, ap)
            to, subject = ap, "Approval needed: expense claims over the limit"
        elif c.outcome in ("duplicate", "late"):
            if f"told:{c.person.id}" in r.seen:
                continue
            r.seen.add(f"told:{c.person.id}")
            mine = [x for x in r.claims if x.outcome in ("duplicate", "late") and x.person.id == c.person.id]
            text = f"Hi {c.person.first}, " + " ".join(_why(r, x) for x in mine)
            to, subject = (
                c.person,
                "Expense " + ("claims " if len(mine) > 1 else "claim ") + ", ".join(x.cid for x in mine),
            )
        else:
            continue
        if r.plan.notify == "chat":
            _chat(r, text if c.outcome == "approval" else f"{c.person.name}: {text}")
        else:
            b.call("email__gmail_send_email", {"to": [to.email], "subject": subject, "body": text})


def solve_reply(r: Run) -> None:
    b = r.b
    paid = ", ".join(c.cid for c in r.paid())
    text = (
        f"Hi {r.requester.first}, the submitted claims are done: paid ${dollars(r.total())} in total ({paid}); "
        "the rest went for approval or were "
        + ("receipts paid before or submitted past the window" if r.window else "receipts paid before")
        + (", or withdrawn by the employee." if any(c.outcome == "withdrawn" for c in r.claims) else ".")
    )
    if r.plan.request == "email":
        b.call(
            "email__gmail_send_email",
            {
                "to": [r.requester.email],
                "subject": "Re: " + r.subject,
                "body": text,
                "threadId": r.thread,
                "inReplyTo": r.email_id,
            },
        )
    else:
        b.call("helpdesk__freshdesk_reply_to_a_ticket", {"ticket_id": r.ticket, "body": text})
        b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": r.ticket, "status": 4})


# ---- checks ----------------------------------------------------------------------------------------
def add_checks(r: Run) -> None:
    b, p = r.b, r.plan
    ap = r.approver
    stale = [v.approver for v in r.versions[1:] if v.approver.id != ap.id]
    if r.amend is not None:  # the approver before the owner's change, or the one it names from later
        other = r.amend.was if r.amend.holds(r.today) else r.amend.value
        if other.id != ap.id:
            stale.append(other)
    first = next((c for c in r.claims if c.outcome == "approval"), None)
    if r.away and first is not None:  # the away approver and the cover: by who acts today
        stale = [o for o in stale if o.id not in {p.id for p in r.away.people()}]
        away_checks(b, r.away, r.today, p.notify, r.channel, [first.cid], acting=ap)
    for c in r.claims:
        amt = dollars(c.cents)
        if c.currency != "USD" and c.wrong != c.cents:  # converted at another day's rate
            b.not_written(p.log, dollars(c.wrong), f"claim {c.cid} is converted at its submission day's rate")
            b.trap("miscomputed", f"claim {c.cid} converted at the latest rate", swap={amt: dollars(c.wrong)})
        if c.outcome == "pay":
            r.log.expect_row(
                b,
                r.log_id,
                [c.cid, amt],
                {"claim_id": c.cid, "amount_usd": {"approx": [c.cents / 100, 0.01]}},
                f"claim {c.cid} paid (${amt})",
            )
            continue
        b.not_written(p.log, c.cid, f"claim {c.cid} was not paid ({c.outcome})")
        if c.outcome == "withdrawn":  # its employee's own word: nobody needs telling
            continue
        who = ap if c.outcome == "approval" else c.person
        # a split claim is asked about by its id (its own amount or the expense's total both fit)
        facts = [c.cid] + ([amt] if c.outcome == "approval" and not c.split else [])
        what = (
            f"{ap.name} was asked to approve claim {c.cid} (${amt})"
            if c.outcome == "approval"
            else f"{c.person.name} was told claim {c.cid} was submitted past the window"
            if c.outcome == "late"
            else f"{c.person.name} was told claim {c.cid} repeats a receipt paid before"
        )
        if p.notify == "email":
            b.expect_message("email", who, contains=facts, description=what)
        else:
            check: dict[str, Any] = {
                "predicate": "message_sent",
                "service": "chat",
                "to": [r.channel],
                "contains": [who.name, *facts],
            }
            if c.outcome == "approval" and stale:
                check["exclude"] = [o.name for o in stale]
            b.goal(what, check)
        if c.outcome == "duplicate":
            b.trap("near_duplicate", f"claim {c.cid}'s receipt was reimbursed before", swap={})
        if c.outcome == "late":
            b.trap(
                "window", f"claim {c.cid} was submitted {gap(c)} days after its expense ({r.window} allowed)"
            )
        if c.capped:
            b.trap(
                "miscomputed", f"claim {c.cid} paid without this month's earlier payouts to {c.person.name}"
            )
            if r.payee:
                b.trap("alias", f"a payout this month to {c.person.name} keyed by their work email")
        if c.split and c.outcome == "approval":
            b.trap(
                "miscomputed", f"claim {c.cid} held against the limit apart from its expense's other claim"
            )
    if p.notify == "email":
        for o in stale:
            b.no_message("email", o, f"{o.name} was not asked (not the approver in force)")
    for o in stale:
        b.trap("wrong_person", f"{o.name} approves under another policy version", swap={ap.email: o.email})
    total = dollars(r.total())
    naive = sorted(
        {
            dollars(sum(c.cents for c in r.claims)),
            dollars(sum(c.cents for c in r.claims if c.outcome != "approval")),
            # the split pair paid as two claims within the limit
            dollars(r.total() + sum(c.cents for c in r.claims if c.split and c.outcome == "approval")),
            # a claim abroad at the latest rate, or not converted at all
            dollars(r.total() + sum(c.wrong - c.cents for c in r.paid() if c.currency != "USD")),
            dollars(r.total() + sum(c.foreign - c.cents for c in r.paid() if c.currency != "USD")),
            # the claim the monthly cap holds back paid as well
            dollars(r.total() + sum(c.cents for c in r.claims if c.capped)),
            # the claim past the submission window paid, or one exactly at it rejected too
            dollars(r.total() + sum(c.cents for c in r.claims if c.outcome == "late")),
            # the claim its employee withdrew paid as well
            dollars(r.total() + sum(c.cents for c in r.claims if c.outcome == "withdrawn")),
            dollars(r.total() - sum(c.cents for c in r.paid() if r.window and gap(c) == r.window)),
        }
        - {total}
    )
    if p.request == "email":
        b.expect_record(
            "email",
            "messages",
            {"threadId": r.thread, "labelIds": "SENT", "to": r.requester.email},
            f"the reply is in {r.requester.name}'s expense-claims thread",
        )
        b.expect_message(
            "email",
            r.requester,
            contains=[total],
            description=f"{r.requester.name} was told the total paid (${total})",
            exclude=naive,
        )
        b.trap("recent", "a newer email on another subject", swap={r.email_id: r.newer})
    else:
        b.expect_record(
            "helpdesk",
            "conversations",
            {"ticket_id": r.ticket, "kind": "reply", "body": {"contains": total}},
            f"ticket #{r.ticket} got a reply with the total paid (${total})",
        )
        b.expect_change("helpdesk", "tickets", r.ticket, "status", 4, f"ticket #{r.ticket} is resolved")
        b.keep("helpdesk", "tickets", r.old_ticket, "last month's closed request was left alone")
        b.keep("helpdesk", "tickets", r.newer, f"{r.requester.name}'s newer ticket on another subject")
        b.trap("closed", "last month's closed request", swap={r.ticket: r.old_ticket})
        b.trap("recent", "a newer open ticket on another subject", swap={r.ticket: r.newer})
    for v in naive:
        b.not_written(r.plan.reply_service(), v, "the total does not count unpaid claims")
        b.trap("miscomputed", "a total that counts claims not paid", swap={total: v})
    if r.old_log:
        b.keep("sheets", "spreadsheets", r.old_log, "last year's payouts log was left alone")
        b.trap("stale", "last year's payouts log", swap={r.log_id: r.old_log})
    if len(r.versions) > 1:
        b.trap("stale", "a policy version that is not in force today")


# ---- composition -----------------------------------------------------------------------------------
def stages(plan: ExpensePlan, away: bool = False, amend: bool = False, window: bool = False) -> list[Stage]:
    def nothing(r: Any) -> None:
        return None

    return [
        Stage("request", "target", (), ("batch",), plant_request, solve_request, "Find this month's request"),
        Stage(
            "claims",
            "aggregate",
            ("batch",),
            ("claims",),
            plant_claims,
            solve_claims,
            f"List the submitted claims ({DISPLAY[plan.claims]})",
        ),
        Stage(
            "policy",
            "policy",
            (),
            ("limits", "approver", "log_spec"),
            plant_policy,
            solve_policy,
            f"Read the expense policy in force today ({DISPLAY[plan.policy]})",
        ),
        *(
            [
                Stage(
                    "amend",
                    "policy",
                    ("approver",),
                    ("approver_today",),
                    nothing,  # planted once the channel exists (`compose`)
                    solve_amend,
                    f"Check the policy owner's thread for a later change of approver ({DISPLAY[plan.notify]})",
                )
            ]
            if amend
            else []
        ),
        Stage(
            "evidence",
            "evidence",
            ("claims", "log_spec"),
            ("paid_before",),
            plant_log,
            solve_evidence,
            f"Check each receipt against the payouts made before ({DISPLAY[plan.log]})",
        ),
        *(
            [
                Stage(
                    "away",
                    "evidence",
                    ("approver_today" if amend else "approver",),
                    ("acting",),
                    lambda r: plant_away(r.b, r.away),
                    nothing,  # read where the approver is told, in that visit (solve_notify)
                    f"Check whether the approver is in today ({DISPLAY[plan.notify]})",
                )
            ]
            if away
            else []
        ),
        Stage(
            "decide",
            "decide",
            ("claims", "limits", "paid_before"),
            ("outcome", "total"),
            nothing,
            solve_decide,
            "Decide for each claim: pay, send for approval, or not (paid before"
            + (", or submitted past the window)" if window else ")"),
        ),
        Stage("pay", "write", ("outcome", "log_spec"), (), nothing, solve_pay, "Log each paid claim"),
        Stage(
            "notify",
            "write",
            ("outcome", "acting" if away else "approver_today" if amend else "approver"),
            (),
            nothing,
            solve_notify,
            f"Ask the approver, tell the employees ({DISPLAY[plan.notify]})",
        ),
        Stage(
            "reply",
            "write",
            ("batch", "total"),
            (),
            nothing,
            solve_reply,
            "Answer the request with the total",
        ),
    ]


def _convert(b: Builder, claims: list[Claim], limits: dict[str, int]) -> list[list[Any]]:
    """Hard: the rates table (a walk over the last thirty days), and two claims made abroad (the first
    paid, the first sent for approval) priced in EUR and GBP: their USD value is the rate of the day
    they were submitted, which the latest rate would get wrong."""
    rng = b.rng
    today = b.now.date()
    days = [today - timedelta(days=k) for k in range(30, 0, -1)]  # the batch was filed in the last days
    table: dict[tuple[date, str], float] = {}
    for cur, (lo, hi) in FX.items():
        x = rng.uniform(lo, hi)
        for d in days:
            x = min(hi, max(lo, x + rng.uniform(-0.008, 0.008)))
            table[(d, cur)] = round(x, 4)
    pay = next(c for c in claims if c.outcome == "pay" and not c.split)
    ask = next(c for c in claims if c.outcome == "approval" and not c.split)
    for c, cur in ((pay, "EUR"), (ask, "GBP")):
        if c.submitted == days[-1]:  # yesterday's rate is the latest: a day earlier keeps them apart
            c.submitted -= timedelta(days=1)
        rate, latest = table[(c.submitted, cur)], table[(days[-1], cur)]
        if abs(rate - latest) < 0.004:
            table[(days[-1], cur)] = latest = round(
                rate + (0.006 if rate < (FX[cur][0] + FX[cur][1]) / 2 else -0.006), 4
            )
        foreign = round(c.cents / rate)
        # no half cent to round: a careful agent's conversion and the log's agree to the cent
        while abs((foreign * rate) % 1 - 0.5) < 0.15:
            foreign += 1
        c.currency, c.foreign = cur, foreign
        c.cents, c.wrong = usd_cents(foreign, rate), usd_cents(foreign, latest)
        lim = limits[c.category] * 100
        if (c.cents > lim) != (c.outcome == "approval"):
            raise PlantError("a converted claim crossed its limit")
    return [[_day(d), cur, table[(d, cur)]] for d in days for cur in FX]


def _spend(b: Builder, claims: list[Claim], window: int, force: dict[str, Any]) -> None:
    """Hard, with a submission window: each claim's expense date. The late claim was submitted a day
    to five past the window; one claim paid, submitted no later, exactly at it (so the late claim's
    expense is not the oldest), two to four more a few days inside it, the rest within three weeks;
    a split pair shares its expense date. `force["late"]` False moves the late claim's date as far
    inside the window as it was past it, with the same draws (it is paid)."""
    rng = b.rng
    late = next(c for c in claims if c.late)
    over = window + (1 if rng.random() < 0.5 else rng.randrange(2, 6))
    # the claim at the window was submitted early enough that its expense is older than the late one's
    # (the late claim comes in a little later where it must: the oldest expense is not the tell)
    edge = [c for c in claims if c.outcome == "pay" and not c.late and not c.split]
    edge_c = min(edge, key=lambda c: (c.submitted, rng.random()))
    late.submitted = min(
        max(late.submitted, edge_c.submitted + timedelta(days=over - window + 1)),
        b.now.date() - timedelta(days=1),
    )
    second = {id(c) for i, c in enumerate(claims) if i and c.split and claims[i - 1].split}
    rest = [c for c in claims if c is not late and c is not edge_c and id(c) not in second]
    near = {id(c) for c in rng.sample(rest, rng.randrange(2, 5))}
    for i, c in enumerate(claims):
        if id(c) in second:  # the pair's second claim: the same expense (a day earlier where a test
            one = claims[i - 1]  # files it a day earlier: then a separate one)
            c.spent = one.spent - (one.submitted - c.submitted) if one.spent else None
            continue
        if c is late:
            g = over
        elif c is edge_c:
            g = window
        else:
            g = window - rng.randrange(1, 6) if id(c) in near else rng.randrange(0, 22)
        c.spent = c.submitted - timedelta(days=g)
    if min(c.spent for c in claims if c.spent) >= (late.spent or late.submitted):
        raise PlantError("the claim past the window has the batch's oldest expense")
    if force.get("late") is False:  # as far inside the window as it was past it
        late.spent = late.submitted - timedelta(days=2 * window - over)
        late.outcome = "pay"


def _old_gap(rng: Any, window: int, status: str) -> int:
    """The days from a processed claim's expense to its submission: mostly a few, some near the
    window; a rejected claim was often submitted past it."""
    if status == "rejected" and rng.random() < 0.5:
        return rng.randrange(window + 1, window + 40)
    return rng.randrange(0, 22) if rng.random() < 0.8 else rng.randrange(window - 8, window + 1)


def _payday(x: list[Any], today: date) -> date:
    """The day a processed claim of the list was paid (the payouts log's date for its row)."""
    return min(date.fromisoformat(x[1]) + timedelta(days=2 + int(x[0][4:]) % 6), today - timedelta(days=1))


def _capped(claims: list[Claim], at: Claim | None) -> Claim | None:
    """Hard: the claim a monthly cap holds back: paid by its limit, its employee's only claim the batch
    pays (their others are not paid: none counts, in any order), neither the first claim paid (an older version flips that one) nor the one at its limit."""
    # the claim past the submission window counts as paid (a test's flip pays it) and is never held
    pays = [c for c in claims if (c.outcome == "pay" or c.late) and not c.split]
    for c in pays[1:]:
        if c is not at and not c.late and sum(1 for x in pays if x.person.id == c.person.id) == 1:
            return c
    return None


def _earlier_claims(r: Run, c: Claim, force: dict[str, Any]) -> list[list[Any]]:
    """Three claims of `c`'s employee (other categories and merchants) processed just before the
    batch and paid this month (the payouts log dates them from the month's first day to
    yesterday), their amounts set by `_cap`. `force["capped"]` False flips the evidence with the same draws: they were
    submitted and paid last month (so this month holds nothing)."""
    b, today = r.b, r.today
    cats = b.rng.sample([x for x in CATEGORIES if x != "meals"], 3)
    drawn = [(cat, b.rng.choice(MERCHANTS[cat]), f"R-{b.rng.randrange(100000, 999999)}") for cat in cats]
    month0 = today.replace(day=1)
    # submitted on days of their own, paid from the month's first day to yesterday (`_payday`: two
    # days after), so they sit among the month's other payouts, not together on one date
    first = month0 - timedelta(days=2)
    span = [first + timedelta(days=i) for i in range((today - timedelta(days=2) - first).days + 1)]
    days = sorted(b.rng.sample(span, 3) if len(span) >= 3 else [b.rng.choice(span) for _ in cats])
    if force.get("capped", True) is False:  # the same draws, a month earlier: this month holds none
        days = [month0 - timedelta(days=10 + i) for i in range(3)]
    p = c.person
    gaps = [b.rng.randrange(0, 12) for _ in drawn]
    return [
        [
            "EXP-0",
            _day(day),
            p.name,
            p.email,
            cat,
            merchant,
            0.0,
            *(["USD"] if r.rates else []),
            *([_day(day - timedelta(days=g))] if r.window else []),
            receipt,
            "paid",
        ]
        for (cat, merchant, receipt), day, g in zip(drawn, days, gaps, strict=True)
    ]


def _cap(
    r: Run, c: Claim, earlier: list[list[Any]], old_rows: list[list[Any]], force: dict[str, Any]
) -> None:
    """Set the monthly cap above every category limit and above what anyone else is paid this month
    (the log's rows dated this month and their claims paid in the batch), and the earlier claims'
    amounts (each within its limit) so that they and `c` together are above it: `c` goes for
    approval (where `force["capped"]` is False, they were paid last month and `c` is paid)."""
    today, month0 = r.today, r.today.replace(day=1)
    mine = {id(x) for x in earlier}
    month: dict[str, int] = {}
    for x in old_rows:
        if id(x) not in mine and x[-1] == "paid" and _payday(x, today) >= month0:
            month[x[2]] = month.get(x[2], 0) + round(float(x[6]) * 100)
    batch: dict[str, int] = {}
    for x in r.claims:
        if (x.outcome == "pay" or x.late) and x is not c:  # the late claim as paid (a flip pays it)
            batch[x.person.name] = batch.get(x.person.name, 0) + x.cents
    top = max([month.get(n, 0) + batch.get(n, 0) for n in {*month, *batch} if n != c.person.name] or [0])
    base = month.get(c.person.name, 0)
    limits = r.current.limits
    floor = max(top, base + c.cents, max(limits.values()) * 100)
    cap = (floor // 5000 + 1) * 5000 + r.b.rng.randrange(0, 3) * 5000
    amount = cap - base - c.cents // 2  # what the earlier claims total
    lims = [limits[x[4]] * 100 for x in earlier]
    parts = [amount * lim // sum(lims) // 25 * 25 for lim in lims]
    parts[0] += (amount - sum(parts)) // 25 * 25
    if base + c.cents > cap or any(
        not 1000 <= a <= lim * 95 // 100 for a, lim in zip(parts, lims, strict=True)
    ):
        raise PlantError("no monthly cap between the claimants' months")
    for x, a in zip(earlier, parts, strict=True):
        x[6] = float(dollars(a))
    if _payday(earlier[0], today) >= month0:
        month[c.person.name] = base + sum(parts)
    r.cap, r.month = cap, month
    c.capped = month.get(c.person.name, 0) + c.cents > cap
    assert c.capped == (force.get("capped", True) is not False), (c, cap, month)
    if c.capped:
        c.outcome = "approval"


def _payee(r: Run, c: Claim, earlier: list[list[Any]], pool: list[Person], force: dict[str, Any]) -> None:
    """Hard: the largest of the capped employee's earlier payouts this month is keyed by their work
    email in the payouts log, and without it the claim would be within the cap (a sum over their
    name alone pays it). `force["payee"]` False flips the evidence with the same draws: that earlier
    claim (its claims-list row and its payout, keyed by email) is another employee's (one who stays
    below the cap), so the capped employee's month holds less and the claim is paid. Not in
    play (`r.payee` None) where no such payout or colleague fits in both worlds."""
    if not r.cap or not earlier:
        return
    row = max(earlier, key=lambda x: (float(x[6]), x[0]))
    part = round(float(row[6]) * 100)
    if part <= c.cents // 2 + 100:  # missing it still leaves the claim above the cap
        return
    month0 = r.today.replace(day=1)
    this = _payday(row, r.today) >= month0
    # with what the batch pays them (the late claim too: a flip pays it), still below the cap
    batch = {
        p.id: sum(x.cents for x in r.claims if x.person.id == p.id and (x.outcome == "pay" or x.late))
        for p in pool
    }
    fits = [p for p in pool if r.month.get(p.name, 0) + batch[p.id] + part < r.cap]
    if not fits:
        return
    # someone without a claim in the batch where the team allows
    other = min(fits, key=lambda p: (batch[p.id] > 0, r.month.get(p.name, 0), p.id))
    r.payee = force.get("payee", True) is not False
    who = c.person if r.payee else other
    row[2], row[3] = who.name, who.email
    r.keyed[str(row[0])] = who.email
    if not r.payee and this:  # the month's payouts move from the capped employee to the other
        r.month[c.person.name] = r.month.get(c.person.name, 0) - part
        r.month[other.name] = r.month.get(other.name, 0) + part
        c.capped = r.month[c.person.name] + c.cents > r.cap
        assert not c.capped, (c, r.cap, r.month)
        c.outcome = "pay"


def _limits(b: Builder) -> dict[str, int]:
    base = {"meals": (75, 150), "travel": (400, 900), "lodging": (250, 450), "software": (100, 300)}
    return {c: b.rng.randrange(lo // 25, hi // 25 + 1) * 25 for c, (lo, hi) in base.items()}


def compose(
    b: Builder, plan: ExpensePlan, tier: dict[str, Any], tier_name: str, force: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Plant, solve and describe one expense-claims run on `b`. `force` flips evidence for tests with
    every random draw unchanged: `duplicate` False (the first duplicate's earlier payout is not in the
    log: it is paid like any claim within its limit) and `over` False (the first claim over its limit
    is within a raised limit of the version in force); at the hard tier also `split`, `capped`,
    `late` False (the claim past the submission window is as far inside it: paid) and `payee` False
    (the email-keyed payout that fills the capped employee's month is another employee's)."""
    force = dict(force or {})
    rng = b.rng
    today = b.now.date()
    staff = [p for p in b.company.employees if p.id != b.me.id]
    nver = tier["versions"]
    # the approver the policy owner's change names (the owner: the requester, who runs the batch)
    more = 1 if tier.get("amend") else 0
    # who runs the batch and who approves sit in Finance, Operations or People Ops as far as the
    # company has them, the one who runs it in Finance first (from play: a Recruiter approving
    # expenses, a Sales Development Rep owning the policy); anyone once those are used up
    need = 1 + nver + more
    office = b.unused(
        [p for p in staff if p.team in ("Finance", "Operations", "People Ops")], key=lambda p: p.id
    )
    picked = b.fresh(office, min(need, len(office)), key=lambda p: p.id)
    picked.sort(key=lambda p: p.team != "Finance")  # stable: the draw's order otherwise
    picked += b.fresh(
        [p for p in staff if p.id not in {x.id for x in picked}], need - len(picked), key=lambda p: p.id
    )
    requester, approvers = picked[0], picked[1 : 1 + nver]
    rest = [p for p in staff if p.id not in {x.id for x in picked}]
    # a claim past the submission window where the tier has one (else it is paid like the others)
    plan_out = [("pay" if o == "late" and not tier.get("windows") else o) for o in outcomes(tier["cases"])]
    if len(rest) < 4:
        raise PlantError("too few employees for an expense run")
    limits = _limits(b)
    # one claim each while people last (a small team files two)
    claimants = rng.sample(rest, min(len(rest), len(plan_out)))
    claimants += [rng.choice(rest) for _ in range(len(plan_out) - len(claimants))]
    # the receipts paid before are two people's (each is told once, a visit each); a small team's
    # repeat claimant swaps with a claim paid
    dups = [i for i, o in enumerate(plan_out) if o == "duplicate"]
    if len(dups) == 2 and claimants[dups[0]].id == claimants[dups[1]].id:
        j = next(
            (j for j, o in enumerate(plan_out) if o == "pay" and claimants[j].id != claimants[dups[0]].id),
            None,
        )
        if j is None:
            raise PlantError("one person holds every claim")
        claimants[dups[1]], claimants[j] = claimants[j], claimants[dups[1]]
    base_no = rng.randrange(4100, 8800)
    claims: list[Claim] = []
    for i, (p, o) in enumerate(zip(claimants, plan_out, strict=True)):
        cat = rng.choice(CATEGORIES)
        lim = limits[cat] * 100
        if o == "split":  # each within the limit, the two together over it
            cat = claims[-1].category if claims[-1].split else cat
            lim = limits[cat] * 100
            cents = rng.randrange(lim * 55 // 100, lim * 95 // 100)
        elif o == "approval":
            cents = rng.randrange(lim + 500, lim * 2)
        else:
            cents = rng.randrange(lim // 5, lim - 200)
        cents = cents // 100 * 100 + rng.choice((0, 25, 50, 75, 99))
        claims.append(
            Claim(
                f"EXP-{base_no + 40 + i}",
                p,
                cat,
                rng.choice(MERCHANTS[cat]),
                cents,
                f"R-{rng.randrange(100000, 999999)}",
                today - timedelta(days=rng.randrange(1, 9)),
                "approval" if o == "split" else o,
                split=o == "split",
                late=o == "late",
            )
        )
        if o == "split" and claims[-2].split:  # the pair's second claim: the same expense
            one, two = claims[-2], claims[-1]
            two.person, two.merchant, two.submitted = one.person, one.merchant, one.submitted
            if force.get("split") is False:  # tests: filed the day before, a separate expense
                two.submitted = one.submitted - timedelta(days=1)
                one.outcome = two.outcome = "pay"
    rates = _convert(b, claims, limits) if tier["cases"] >= 2 else []
    keys = [(c.person.id, c.merchant, c.submitted) for c in claims]
    pairs = 1 if any(c.split for c in claims) and force.get("split") is not False else 0
    if len(keys) - len(set(keys)) != pairs:  # only the split pair is one expense
        raise PlantError("two claims of one person at one merchant on one day")
    at = None
    if tier["cases"] >= 2:  # hard: the second claim paid is exactly at its limit (not above it: paid)
        at = [c for c in claims if c.outcome == "pay" and not c.split][1]
        at.cents = limits[at.category] * 100
    window = rng.choice(WINDOWS) if tier.get("windows") else 0
    if window:
        _spend(b, claims, window, force)
        spent = [(c.person.id, c.merchant, c.spent) for c in claims]
        if len(spent) - len(set(spent)) != pairs:  # by its expense date too, only the split pair
            raise PlantError("two claims of one person at one merchant on one expense date")
    if any(c.wrong and c.wrong in {x.cents for x in claims} for c in claims):
        raise PlantError("a claim's latest-rate value is another claim's amount")  # its guard would trip
    # tests flip one piece of evidence; the draws above are the same either way
    drawn = dict(limits)
    dup = next(c for c in claims if c.outcome == "duplicate")
    over = next(c for c in claims if c.outcome == "approval")
    if force.get("duplicate") is False:
        dup.outcome = "pay" if dup.cents <= limits[dup.category] * 100 else "approval"
    if force.get("over") is False:
        limits = {**limits, over.category: (over.cents // 100 // 25 + 1) * 25}  # just above it
        for c in claims:
            if c.outcome in ("pay", "approval"):
                c.outcome = "approval" if held(claims, c) > limits[c.category] * 100 else "pay"
    # the policy versions: the in force one, an older one and one announced for later, each flipping
    # a claim (acting on them is wrong, not merely different)
    # every draw is made whatever the evidence, so a test's flip changes nothing else
    eff = today - timedelta(days=rng.randrange(20, 120))
    back, up, ahead = rng.randrange(200, 500), rng.randrange(1, 4), rng.randrange(10, 40)
    versions = [Version(eff, limits, approvers[0], window)]
    pay0 = next((c for c in claims if c.outcome == "pay"), None)
    if nver >= 2 and pay0 is not None:
        older = {**limits, pay0.category: max(25, (pay0.cents // 100 // 25 - 1) * 25)}
        # the older version gave longer to submit: the claim past today's window was within it
        versions.append(Version(eff - timedelta(days=back), older, approvers[1], window and window + 15))
    ap0 = next((c for c in claims if c.outcome == "approval"), None)
    if nver >= 3 and ap0 is not None:
        later = {**limits, ap0.category: (ap0.cents // 100 // 25 + 1 + up) * 25}
        versions.append(Version(today + timedelta(days=ahead), later, approvers[2], window))
    for v in versions[1:]:
        if all(
            (held(claims, c) > v.limits[c.category] * 100) == (held(claims, c) > limits[c.category] * 100)
            for c in claims
            if c.outcome != "duplicate"
        ):
            raise PlantError("a stale policy version agrees with the one in force")
    r = Run(b, plan, tier, requester, claims, versions=versions, ask=rng.randrange(len(ASKS)), rates=rates)
    # the claims list: the last weeks' claims (paid, a few rejected) and the submitted batch
    lo, hi = tier["rows"]
    n_old = max(0, rng.randrange(lo, hi + 1) - len(claims))
    others = [p for p in rest if p.id not in {c.person.id for c in claims}] + [c.person for c in claims]
    old_rows: list[list[Any]] = []
    # with a monthly cap, claims processed in the last days were paid this month too (so its month's
    # payouts are not the capped employee's alone: from play, "the only March payouts" gave it away)
    recent = 3 if tier.get("caps") else 10
    one_expense = {(c.person.id, c.merchant, c.spent or c.submitted) for c in claims}
    for j in range(n_old):
        p = rng.choice(others)
        cat = rng.choice(CATEGORIES)
        cents = rng.randrange(drawn[cat] * 20, drawn[cat] * 90) + rng.choice((0, 25, 50))
        day = today - timedelta(days=rng.randrange(recent, 60))
        status = "paid" if rng.random() < 0.9 else "rejected"
        spent = day - timedelta(days=_old_gap(rng, window, status)) if window else None
        merchant = rng.choice(MERCHANTS[cat])
        # never one expense with a claim of the run (same person, merchant and expense day): the
        # policy would hold them together (from play: an earlier claim of that day read as its pair)
        while (p.id, merchant, spent or day) in one_expense:
            day, spent = day - timedelta(days=1), spent - timedelta(days=1) if spent else None
        old_rows.append(
            [
                f"EXP-{base_no - n_old + j}",
                _day(day),
                p.name,
                p.email,
                cat,
                merchant,
                float(dollars(cents)),
                *(["USD"] if r.rates else []),
                *([_day(spent)] if spent else []),
                f"R-{rng.randrange(100000, 999999)}",
                status,
            ]
        )
    capped = _capped(claims, at) if tier.get("caps") and today.day > 1 else None
    earlier = _earlier_claims(r, capped, force) if capped is not None else []
    old_rows += earlier
    old_rows.sort(key=lambda x: x[1])
    for j, x in enumerate(old_rows):  # claim numbers follow submission order
        x[0] = f"EXP-{base_no - len(old_rows) + j}"
    if capped is not None:
        _cap(r, capped, earlier, old_rows, force)
    if tier.get("payees"):
        # payouts keyed by hand name some employees by their work email (a look-alike in every log)
        for x in old_rows:
            if x[-1] == "paid" and rng.random() < 0.2:
                r.keyed[x[0]] = str(x[3])
        # this month's too, someone else's (the month's email-keyed payouts are not the capped one's alone)
        mine = {id(x) for x in earlier}
        who = capped.person.name if capped is not None else ""
        now = [
            x
            for x in old_rows
            if x[-1] == "paid"
            and x[2] != who
            and id(x) not in mine
            and _payday(x, today) >= today.replace(day=1)
        ]
        if now and not any(x[0] in r.keyed for x in now):
            pick = rng.choice(now)
            r.keyed[pick[0]] = str(pick[3])
        if capped is not None:
            _payee(r, capped, earlier, [p for p in rest if p.id != capped.person.id], force)
    if tier.get("withdrawals"):  # hard: a claimant writes about their claim (drawn either way)
        # by the drawn outcomes: a test's flip of other evidence leaves the draw as it was
        drawn_pay = [c for c, o in zip(claims, plan_out, strict=True) if o == "pay"]
        pool = [c for c in _notable(claims, at, pay0, capped, window) if c in drawn_pay]
        # by email, someone told anyway (a receipt paid before, a claim past the window): a word back
        # about the withdrawal then goes to someone the work writes to (a new recipient would be
        # collateral); in the channel, where everyone is told, anyone
        told = {c.person.id for c, o in zip(claims, plan_out, strict=True) if o in ("duplicate", "late")}
        if plan.notify == "email":
            pool = [c for c in pool if c.person.id in told]
        withdraw = rng.random() < 0.5
        if pool:
            r.noted = rng.choice(pool)
            if force.get("withdrawn", withdraw) and r.noted.outcome == "pay":
                r.noted.outcome = "withdrawn"
    new_rows = [
        [
            c.cid,
            _day(c.submitted),
            c.person.name,
            c.person.email,
            c.category,
            c.merchant,
            float(dollars(c.foreign or c.cents)),
            *([c.currency] if r.rates else []),
            *([_day(c.spent)] if c.spent else []),
            c.receipt,
            "submitted",
        ]
        for c in claims
    ]
    r.rows = old_rows + new_rows
    if len({x[-2] for x in r.rows}) != len(r.rows):
        raise PlantError("two claims drew the same receipt")
    # the payouts log: every paid claim of the list, and older payouts (months back) that include the
    # duplicates' receipts under earlier claim numbers
    # a payout is dated the day it was paid, some days after the claim came in (never today): the
    # log's date column is the payment date, as the rows the work appends are
    hist = [
        [_day(_payday(x, today)), x[0], r.keyed.get(x[0], x[2]), x[6], x[-2]]
        for x in old_rows
        if x[-1] == "paid"
    ]
    for j in range(rng.randrange(8, 16)):
        p = rng.choice(others)
        cat = rng.choice(CATEGORIES)
        day = today - timedelta(days=rng.randrange(70, 160))
        number = f"{rng.randrange(100000, 999999)}"
        # months ago receipts were keyed by hand, in whatever form the clerk wrote (a duplicate's
        # receipt written another way is then no odd one out)
        form = rng.choice(RECEIPT_FORMS) if tier["cases"] >= 2 and rng.random() < 0.4 else "R-{}"
        alias = tier.get("payees") and rng.random() < 0.2
        hist.append(
            [
                _day(day),
                f"EXP-{base_no - n_old - 200 + j * 7}",
                p.email if alias else p.name,
                float(dollars(rng.randrange(2000, 30000))),
                form.format(number),
            ]
        )
    for k, c in enumerate(x for x, o in zip(claims, plan_out, strict=True) if o == "duplicate"):
        day = today - timedelta(days=rng.randrange(70, 160))
        old = f"EXP-{base_no - n_old - 150 + k * 11}"
        c.paid_before = (old, day)
        # the payouts of months ago keyed receipts by hand: the second one's number is written another
        # way (same digits, employee and amount), so a lookup of the exact string misses it
        form = rng.choice(RECEIPT_FORMS)
        keyed = form.format(c.receipt[2:]) if k and tier["cases"] >= 2 else c.receipt
        hist.append([_day(day), old, c.person.name, float(dollars(c.cents)), keyed])
    if force.get("duplicate") is False:  # that earlier payout never happened
        hist = [x for x in hist if not same_receipt(str(x[4]), dup.receipt)]
        dup.paid_before = None
    hist.sort(key=lambda x: (x[0], x[1]))
    keyed = [_digits(str(x[4])) for x in hist]
    # each receipt is keyed once at most (so a claim's count of `same_receipt` payouts is 0 or 1)
    seen = set(keyed)
    if len(seen) != len(keyed) or any(
        (_digits(c.receipt) in seen) != (c.paid_before is not None) for c in claims
    ):
        raise PlantError("two receipts drew the same number")
    r.hist = hist
    if plan.notify == "chat":
        from compoworld.tasks.families._common import chat_channel

        r.channel = chat_channel(
            b, CHANNEL, members=list(b.company.employees), topic="Expense claims and approvals"
        )
    if more:  # the owner changed who approves: from a day before today it holds, after today not yet
        new = picked[1 + nver]
        r.amend = draw_amend(b, requester, new, lambda up: approvers[0], plan.notify, force)
        r.amend.channel = r.channel
        if not r.amend.holds(today) and len(versions) >= 3:
            # the change still to come is the version announced for later (from play: two changes to
            # come, of other dates and approvers, read as contradicting each other)
            v = versions[2]
            versions[2] = Version(r.amend.effective, v.limits, r.amend.value, v.window)
    if tier.get("away"):
        # the cover may have a claim paid in this run (nothing is sent to them), never one told
        # (by the drawn outcomes: a test's flip of the evidence leaves the cover as it was)
        told = {c.person.id for c, o in zip(claims, plan_out, strict=True) if o != "pay"}
        if r.noted is not None:  # who wrote about their claim may be written back to: never the cover
            told.add(r.noted.person.id)
        if capped is not None:  # drawn to be paid, held by the cap: the reply may list them with it
            told.add(capped.person.id)  # (from play: a cover's cover named beside their own claim)
        # someone with no claim in the run when the team allows (a claimant's row is no hint)
        others = {p.id for p in staff} - {p.id for p in picked} - {c.person.id for c in claims}
        exclude = {p.id for p in picked} | ({c.person.id for c in claims} if others else told)
        # with the owner's change, the absence is of the approver it names (who acts only once it
        # holds): each piece of evidence then decides who is asked in some world
        who = r.amend.value if r.amend is not None else approvers[0]
        r.away = draw_away(b, who, exclude, plan.notify, force)
        r.away.channel = r.channel
    st = stages(plan, away=r.away is not None, amend=r.amend is not None, window=bool(r.window))
    edges = wire(st)
    for s in st:
        s.plant(r)
    if r.amend is not None:
        a = r.amend
        # a change still to come is the new version's (announced beside the one in force)
        later = not a.holds(b.now.date()) and len(r.versions) >= 3
        rest = amend_rest(later)
        text = (
            # (from play: "claims ... go to X" left open whether claims submitted before the day do)
            f"Change to the expense policy: from {_long(a.effective)}, {a.value.name} ({a.value.email}) "
            f"approves the claims above their limit, whenever they were submitted, not {a.was.name}. "
            f"{rest} {a.owner.first}"
        )
        plant_amend(b, a, "expense policy", text)
    if r.noted is not None:
        plant_note(r)
    b.fact(*sorted({c.cid for c in claims if c.outcome != "pay"}), dollars(r.total()))
    b.begin()
    for s in st:
        if s.kind != "write":
            s.solve(r)
    for c in claims:  # each claim in turn: pay it, or tell who must know
        r.only = c
        for s in st:
            if s.name in ("pay", "notify"):
                s.solve(r)
    r.only = None
    next(s for s in st if s.name == "reply").solve(r)
    add_checks(r)
    describe(r, st)
    return {
        "theme": "expense_claims",
        "stages": [s.name for s in st],
        "plan": dict(plan.__dict__),
        "edges": [{"from": a, "to": z, "fact": f} for a, z, f in edges],
        "branches": [c.outcome for c in claims],
        "cases": 1,
        "claims_rows": len(r.rows),
        "aggregated_rows": len(r.rows),
        "policy_versions": len(versions),
        # the approver's out-of-office: None (not in play), or whether it holds today
        "away": None if r.away is None else r.away.on(r.today),
        # the cover's own absence (who is next named): None (not planted), or whether it holds today
        "cover_away": None if r.away is None or r.away.second is None else r.away.cover_on(r.today),
        # the policy owner's change of approver: None (not in play), or whether it holds today
        "amended": None if r.amend is None else r.amend.holds(r.today),
        # the monthly cap: None (not in play), or whether it holds a claim back
        "capped": None if not r.cap else any(c.capped for c in claims),
        # the capped employee's payout keyed by email: None (not in play), or whether it is theirs
        "payee": r.payee,
        # the submission window: None (not in play), or whether a claim is past it
        "late": None if not r.window else any(c.outcome == "late" for c in claims),
        # a claimant's message about their claim: None (not in play), or whether it withdraws it;
        # only where the tier has it
        **(
            {"withdrawn": None if r.noted is None else r.noted.outcome == "withdrawn"}
            if tier.get("withdrawals")
            else {}
        ),
    }


def describe(r: Run, st: list[Stage]) -> None:
    b = r.b
    ask = ASKS[r.ask].format(who=r.requester.name)
    policy = ("expense policy", "expense policy", r.plan.policy)
    ctx = where_context(b, r.tier["where"], policy, ("claims", r.plan.claims))
    b.write(
        frame(b.rng, ask, context=ctx), hint=" ".join(s.step + "." for s in st), subtasks=[s.step for s in st]
    )
