"""Composed work: workflow *stages* with declared inputs and outputs, wired into one piece of work.

A stage is one part of a job ("read the request", "find who owns the account", "check that they
still work here", "look up the policy in force", "total the billed usage", "decide", "reply",
"log it", "tell the approver"). Each stage is built from one shared vocabulary, the `Builder`'s
(plant a target, plant evidence elsewhere, plant a trap the evidence rules out, decide,
aggregate, write), and declares what it `needs` (facts an earlier stage must find) and what it
`gives`. Each stage also has *variants*, one per service that can hold its part (the request is a
Freshdesk ticket, an email or a ticket page in the web app; the policy is a Confluence page, a
sheet or files in the workspace; the usage is Stripe charges, a sheet, a SQL table or a CSV).

`compose` picks one variant per stage so that the services used are exactly K (and, in a persona
world, the persona's; with interfaces, crossing them), checks that every need is given by an
earlier stage, then runs each stage's `plant` (before s0), `begin()`, and each stage's `solve` in
order. What one stage finds decides what the next does: the request's outage window decides
which charges the usage stage totals; the total against the policy in force decides the branch
(credit now, or send for approval); the account manager in the CRM, checked against HR, decides
who is told; the policy decides where and how it is logged. The walk, the information edges and
the checks then follow from the calls, exactly as for hand-built families (`tasks.generator`).

Evidence, not labels: no planted text says a record is wrong. A closed ticket is closed (its
status) and already logged (the credits log); an old policy version has an older effective date
and a new one a date after today; a day credited before is in the credits log (billing applies
credits to the next invoice, so no payment shows a refund; at the hard tier one request's
earlier credit is a single adjustment over a run of days, named as a range, so a lookup of a day's
date misses it);
a departed account manager is missing from the HR directory. The instruction gives the goal only.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from compoworld.core.clock import format_time
from compoworld.core.company import Customer, Person
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError

# ---- difficulty tiers -------------------------------------------------------------------------
TIERS: dict[str, dict[str, Any]] = {
    # k: services; walk: L range; cases: requests worked in one task; versions: policy versions
    # planted (1: only the one in force; 2: + an older one; 3: + one announced for later);
    # rows: usage records per list (aggregated); people: the HR check; history: old ledger rows;
    # where: how much the instruction says about where things are (evidence distance)
    "easy": {"k": (2, 3), "walk": (3, 7), "cases": 1, "versions": 1, "rows": (20, 40), "where": 2},
    "medium": {"k": (4, 5), "walk": (5, 9), "cases": 1, "versions": 2, "rows": (40, 100), "where": 1},
    "hard": {
        "k": (5, 7),
        "walk": (7, 12),
        "cases": 3,  # requests worked: each decision compounds (their writes grouped by service)
        "versions": 3,
        "rows": (80, 200),
        "where": 0,
        "writes": 3,  # services written that must agree (reply, log, approver, CRM note)
        "away": True,  # the approver may be out of office today: who covers is named elsewhere
        "corrections": True,  # a requester may correct their window later in the ticket or thread
        # the policy's owner changes the limit later in their thread (Slack or Gmail): from a date
        # before today it holds, from one after today not yet
        "amend": True,
        # the customer's service tier, on their account record, doubles the limit for Enterprise
        "tiers": True,
        # a request corrected on the ticket may be corrected once more by the customer's later email
        "recorrect": True,
        # the same thing under another key: a credit given before as one adjustment over a run of days
        # (the credits log names the range, not each day); an access-list row under the name and
        # email a person had when access was granted (only its employee_id is BambooHR's)
        "ranges": True,
        "aliases": True,
        # an aggregate over the payouts log: an employee's monthly cap counts what was paid them this month
        "caps": True,
        # the expense policy's submission window: a claim filed more than its days after the expense
        # is rejected (the claims list's two dates show it; others sit just inside, one exactly at it)
        "windows": True,
        # the payouts log keys some payouts by the employee's work email: the cap's month counts them
        "payees": True,
        # approved time off in BambooHR between a last login and today does not count as unused
        "leave": True,
        # the policy owner keeps someone's access for a while in their thread: until it runs out
        "grants": True,
        # an access key set up by hand, on no export: only the requester's follow-up names it
        "unlisted": True,
        # a claimant's own message about their claim, where they would write: at times withdrawing it
        "withdrawals": True,
        # the billing export keys a customer by its legal name from a day inside one request's
        # window (a system's change, for every customer): the days after it are under another name
        "legal_names": True,
        # finance logs some credits under the customer's billing account number (on its CRM
        # record) rather than its name: one request's earlier credit is among them
        "billing_keys": True,
        # the requests are not named: they wait in the queue (Freshdesk's open tickets, or the
        # inbox) among the customers' other messages, and one is in the customer's own words, with
        # none of the policy's (no "credit", "outage" or "downtime": a keyword search misses it)
        "queue": True,
        # the credits log holds a year and a half of earlier credits (rows beside the requests'),
        # keyed the ways finance keys them: too long to read for one customer, so a lookup by the
        # customer's name alone misses what is logged under its account number or as a range of days
        "log_rows": (100, 220),
        # the usage export bills each day by product (two or three lines a day, the export's rows
        # counted as before), and an outage runs 5 to 9 days: a window's total is a sum of 10 to 27
        # lines, less the days credited before
        "lines": True,
        "days": (4, 9),
        # finance logs some credits under the customer's legal name, as on its invoices (the name the
        # usage export switches to): one request's credited days among them, by neither the name
        # nor the billing account number
        "log_legal": True,
        # older rows of the credits log were keyed by hand: a customer typed in capitals, in lower
        # case or with its account number beside the name; one request's credited days among them,
        # so a lookup of the exact name misses them (the same customer, by its letters)
        "hand_keyed": True,
    },
}
PRODUCTS = ("API calls", "Storage", "Seats")
TIER_NAMES = tuple(TIERS)

HOME = "/home/user"
DISPLAY = {
    "helpdesk": "Freshdesk",
    "email": "Gmail",
    "browser": "the web app",
    "crm": "HubSpot",
    "hr": "BambooHR",
    "wiki": "Confluence",
    "sheets": "Google Sheets",
    "workspace": "the workspace",
    "payments": "Stripe",
    "sql": "the SQL database",
    "chat": "Slack",
}
SUBJECTS = (
    "Credit for the outage days",
    "Billed while the service was down",
    "Refund for downtime",
    "Outage billing question",
)


# ---- the plan: one variant per stage ------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    family: ClassVar[str] = "composed.service_credit"
    category: ClassVar[str] = "support"
    request: str  # helpdesk | email | browser (ticket pages in the web app; replies via Freshdesk)
    account: str  # crm | browser (account notes) | "" (no account manager: the policy's approver)
    people: bool  # the account manager is checked against the HR directory
    policy: str  # wiki | sheets | workspace
    usage: str  # payments | sheets | sql | workspace
    ledger: str  # sheets | workspace | sql
    notify: str  # email | chat | helpdesk (a private note that notifies the approver)
    note: bool  # the outcome is also logged on the HubSpot company

    def services(self) -> set[str]:
        out = {self.policy, self.usage, self.ledger, self.notify}
        out |= {"browser", "helpdesk"} if self.request == "browser" else {self.request}
        if self.account:
            out.add(self.account)
        if self.people:
            out.add("hr")
        if self.note:
            out.add("crm")
        return out

    def write_services(self) -> set[str]:
        return {self.reply_service(), self.ledger, self.notify} | ({"crm"} if self.note else set())

    def reply_service(self) -> str:
        return "email" if self.request == "email" else "helpdesk"

    def recorrect_service(self) -> bool:
        """A ticket's request may be corrected again by the customer's email (Gmail is in the work)."""
        return self.request != "email" and self.notify == "email"

    def amend_service(self) -> str:
        """Where the policy's owner posts a change to it: the approvals channel, else Gmail."""
        if self.notify == "chat":
            return "chat"
        return "email" if "email" in (self.request, self.notify) else ""

    def walk(self, cases: int = 1) -> list[str]:
        """The services of the reference's calls in order, consecutive repeats merged (the walk):
        the reads for every request, then each write for every request in turn. At the hard tier's
        requests the policy owner's thread is read after the policy (`_has_amend`)."""
        seq = [self.request]
        hard = cases >= TIERS["hard"]["cases"]
        if hard and self.recorrect_service():  # the customers' later emails, after their tickets
            seq.append("email")
        if self.account:
            seq.append(self.account)
        if self.people:
            seq.append("hr")
        seq.append(self.policy)
        if hard and self.amend_service():
            seq.append(self.amend_service())
        seq.append(self.ledger)  # a day credited before is in the credits log (never a Stripe refund)
        seq.append(self.usage)
        # each write for every request in turn: the replies, the log rows, the approver, the notes
        seq.append(self.reply_service())
        if self.notify == self.reply_service():
            seq.append(self.notify)
        seq.append(self.ledger)
        if self.notify != self.reply_service():
            seq.append(self.notify)
        if self.note:
            seq.append("crm")
        return [s for i, s in enumerate(seq) if i == 0 or seq[i - 1] != s]


def all_plans() -> list[Plan]:
    out = []
    for request, account, people, policy, usage, ledger, notify, note in itertools.product(
        ("helpdesk", "email", "browser"),
        ("crm", "browser", ""),
        (False, True),
        ("wiki", "sheets", "workspace"),
        ("payments", "sheets", "sql", "workspace"),
        ("sheets", "workspace", "sql"),
        ("email", "chat", "helpdesk"),
        (False, True),
    ):
        if account == "browser" and request != "browser":
            continue  # the account notes are read on the ticket's company page
        if people and not account:
            continue
        if notify == "helpdesk" and request == "email":
            continue  # a ticket note needs a ticket
        if note and account != "crm":
            continue
        out.append(Plan(request, account, people, policy, usage, ledger, notify, note))
    return out


PLANS = all_plans()


# ---- stages -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stage:
    """One part of the work. `kind` is from the shared vocabulary; `needs`/`gives` are the facts
    it consumes and finds; `plant` runs before s0, `solve` after, in the composed order."""

    name: str
    kind: str  # target | evidence | policy | aggregate | decide | write
    needs: tuple[str, ...]
    gives: tuple[str, ...]
    plant: Callable[[Work], None]
    solve: Callable[[Work], None]
    step: str  # the subtask, in a colleague's words


VOCABULARY = ("target", "evidence", "policy", "aggregate", "decide", "write")


@dataclass
class Case:
    """One request worked in the task, with what the world holds about it (known at plant time)."""

    cust: Customer
    person: Person
    start: date
    end: date
    amount: int = 0  # cents: the billed usage inside the window, less what was credited already
    naive: int = 0  # cents: the same, counting credited rows too (a careless total)
    stale: int = 0  # cents: the total for the window of the closed earlier request
    owner: Person | None = None
    owner_left: bool = False
    approver: Person | None = None
    enterprise: bool = (
        False  # hard: on the Enterprise service tier (its account record says): twice the limit
    )
    branch: str = ""  # approve | review
    ticket: int | None = None
    old_ticket: int | None = None
    email_id: str = ""
    subject: str = ""
    stripe: str = ""
    crm_id: str = ""
    found: dict[str, Any] = field(default_factory=dict)

    @property
    def times(self) -> int:
        """How many times the base limit this request may be credited up to (its service tier)."""
        return 2 if self.enterprise else 1

    def within(self, limit: int) -> bool:
        return self.amount <= limit * 100 * self.times

    @property
    def held(self) -> int:
        """Cents held against the base limit: the total, over the tier's multiple (rounded up)."""
        return -(-self.amount // self.times)


def tier_name(c: Case) -> str:
    # not "support plan": the seed's quotes sell products named "Support Plan Gold/Silver"
    return "Enterprise" if c.enterprise else "Standard"


@dataclass
class Version:
    effective: date
    limit: int  # dollars
    fallback: Person


@dataclass
class Work:
    b: Builder
    plan: Plan
    tier: dict[str, Any]
    cases: list[Case]
    versions: list[Version] = field(default_factory=list)  # [in force, older, announced]
    twin: Case | None = None
    force: dict[str, Any] = field(default_factory=dict)  # tests: flip the evidence (within, owner_left)
    ledger_rows: int = 0
    ledger_id: str = ""
    usage_id: str = ""
    channel: str = ""
    decoy_ticket: int | None = None
    ask: int = 0  # which of ASKS the instruction uses
    found: dict[str, Any] = field(default_factory=dict)  # planted records the checks name
    only: Case | None = None  # the request whose writes are being done (each request's in turn)
    seen: set[str] = field(default_factory=set)  # lookups done once (the log's id, the channel)
    away: Away | None = None  # hard: the first request's approver's out-of-office, naming a cover
    amend: Amend | None = None  # hard: the policy owner's later change to the limit, in their thread
    # hard: the usage export names customers by their legal name from this day on (`billed_name`)
    legal: dict[str, str] = field(default_factory=dict)
    legal_from: date | None = None
    # hard: every CRM company's billing account number, and the request whose earlier credit the
    # credits log names by it (`plant_accounts`)
    accounts: dict[str, str] = field(default_factory=dict)
    keyed: Case | None = None
    # hard: the instruction names no requester (`queue_mode`); `plain` is the request written in the
    # customer's own words, `queued` the ids of the other messages planted in the queue
    queue: bool = False
    plain: Case | None = None
    queued: list[Any] = field(default_factory=list)

    def todo(self) -> list[Case]:
        return [self.only] if self.only is not None else self.cases

    @property
    def limit(self) -> int:
        """The limit in force today (dollars): the policy's, unless its owner changed it since."""
        if self.amend is not None and self.amend.holds(self.today):
            return self.amend.value
        return self.current.limit

    @property
    def today(self) -> date:
        return self.b.now.date()

    @property
    def current(self) -> Version:
        return self.versions[0]


def dollars(cents: int) -> str:
    return f"{cents / 100:.2f}"


def _day(d: date) -> str:
    return d.isoformat()


def _long(d: date) -> str:
    return f"{d:%B} {d.day}"


# ---- plant helpers (the shared vocabulary's "plant" verbs, per service) --------------------------
def _hd_contact(b: Builder, p: Person) -> dict[str, Any]:
    from compoworld.tasks.families._common import hd_contact

    return hd_contact(b, p)


# how the instruction asks (chosen before planting), and how the earlier request echoed it: the
# request that best matches the instruction's words is the closed one, not the live one
ASKS = (
    "work the downtime credit request{s} from {who} through our service credit policy",
    "handle the outage credit request{s} from {who} the way our credit policy says",
    "sort out the downtime credit{s} {who} asked for, by the book",
)
# a customer's words, sharing the ask's key words without repeating it (from play: a closed ticket
# that opened with the instruction's own wording read as planted)
ECHOES = (
    "Under your service credit policy we would like a downtime credit.",
    "We would like an outage credit, as your credit policy provides.",
    "Could you sort out a downtime credit for us? Your policy allows it, as we read it.",
)


# hard (`queue`): the ask names nobody; the requests are whatever waits, unanswered, in the queue
QUEUE_ASKS = (
    "work the downtime credit requests still waiting for us through our service credit policy",
    "handle the outage credit requests customers are waiting on, the way our credit policy says",
    "sort out the downtime credits customers have asked for and are still waiting on, by the book",
)
# a request in the customer's own words: what happened and what they want, none of the policy's
# terms (from play: every request worded alike was found by a search for "credit")
PLAIN = (
    (
        "Our {month} invoice",
        "Our team could not get into the platform at all from {a} to {z}, yet those days are on "
        "our {month} invoice. Could you take them off? {name}, {cust}",
    ),
    (
        "Charges for days we could not work",
        "Nobody here could sign in from {a} to {z}, but we were charged for those days as usual. "
        "Can you take them off our bill? {name}, {cust}",
    ),
    (
        "Question about our bill",
        "The platform was unreachable for us from {a} to {z} and our bill still counts those days. "
        "We would like them taken off. {name}, {cust}",
    ),
)
# the rest of the queue: the customers' other open messages, some about billing or the service
# being unavailable without asking for anything back (the work is the credit requests only)
QUEUE_OTHER = (
    ("Charged twice for seats", "Our latest invoice lists the five new seats twice. Could you correct it?"),
    ("Copy of an invoice", "Could you send us a copy of the January invoice for our records?"),
    ("VAT number on invoices", "Our VAT number has changed; please use the new one on future invoices."),
    (
        "Planned maintenance",
        "Will next week's maintenance take the service down? We would like to warn our staff.",
    ),
    ("Errors yesterday", "A few of us saw errors yesterday afternoon. Is everything fine now?"),
    ("Annual renewal quote", "Could you send the quote for our annual renewal?"),
    ("Password reset link", "The password reset link we were sent has expired. Could you send a new one?"),
    ("Single sign-on setup", "We would like to turn on single sign-on. Where do we start?"),
    ("New admin", "Please make our new team lead an admin on our account."),
    ("Data export", "Could you export all our project data as CSV?"),
    ("Webhook documentation", "Where is the documentation for your webhooks?"),
    ("Training session", "Could we book a training session for our new hires?"),
    ("Cancel an add-on", "Please cancel the reporting add-on at the end of this billing period."),
    ("Payment method", "We would like to pay by bank transfer from now on. What do you need from us?"),
    ("Slow dashboard", "The dashboard takes a long time to load this week. Is something going on?"),
    ("Invoice due date", "Could our invoices be due in 45 days instead of 30?"),
    ("Status page", "Is there a status page we can subscribe to?"),
    ("Usage report", "Could you send us a report of our usage for last quarter?"),
)


def _plain_text(c: Case, start: date, end: date) -> tuple[str, str]:
    """The subject and words of a request in the customer's own words (`PLAIN`, drawn per case)."""
    subject, text = PLAIN[c.found["plain"]]
    month = f"{end:%B}"
    fill = {"month": month, "a": _long(start), "z": _long(end), "name": c.person.name, "cust": c.cust.name}
    return subject.format(**fill), text.format(**fill)


def _ticket_text(c: Case, start: date, end: date, echo: str = "") -> str:
    if "plain" in c.found and not echo:
        return _plain_text(c, start, end)[1]
    return (
        f"{echo + ' ' if echo else ''}We could not use the service from {_long(start)} to {_long(end)} and "
        f"were still billed for those days. Please credit them. Regards, {c.person.name}, {c.cust.name}"
    )


def _reported(c: Case) -> tuple[date, date]:
    """The window the request first names (longer than the outage when a correction follows)."""
    return c.found.get("reported", (c.start, c.end))


def _correction(c: Case) -> str:
    start = c.found["interim"][0] if "interim" in c.found else c.start  # a second correction follows
    if "plain" in c.found:  # in the customer's own words still (a search for "credit" misses it too)
        return (
            f"Sorry, I got the dates wrong: we could sign in again on {_long(c.end + timedelta(days=1))}, "
            f"so the days to take off are {_long(start)} to {_long(c.end)}. {c.person.first}"
        )
    return (
        f"A correction to my request: our service was back on {_long(c.end + timedelta(days=1))}, so the "
        f"days to credit are {_long(start)} to {_long(c.end)}. {c.person.first}"
    )


def _recorrection(c: Case) -> str:
    before = c.found["interim"][0]
    if "plain" in c.found:
        return (
            f"Sorry, one more fix to the dates: the trouble began on {_long(c.start)}, not {_long(before)}, "
            f"so the days to take off are {_long(c.start)} to {_long(c.end)}. {c.person.first}"
        )
    return (
        f"One more correction to my request, sorry: the outage began on {_long(c.start)}, not "
        f"{_long(before)}, so the days to credit are {_long(c.start)} to {_long(c.end)}. {c.person.first}"
    )


OTHER = (
    ("Two more seats", "Could we add two more seats to our plan from next month?"),
    ("New billing contact", "Please send future invoices to our new finance inbox."),
    ("Roadmap question", "Is the new reporting module coming this quarter?"),
    ("Office move", "We moved offices; please update our address on file."),
)


def plant_request(w: Work) -> None:
    from compoworld.tasks.families._common import hd_ticket, inbox_mail

    b = w.b
    for c in w.cases + ([w.twin] if w.twin else []):
        c.subject = earlier = c.found["earlier_subject"] = b.pick(SUBJECTS)
        if "plain" in c.found:  # the live request in the customer's own words, under its own subject
            c.subject = _plain_text(c, *_reported(c))[0]
        old_start, old_end = c.found["old_window"]
        if w.plan.request in ("helpdesk", "browser"):
            contact = _hd_contact(b, c.person)
            if c is not w.twin:
                old = hd_ticket(
                    b,
                    contact,
                    earlier,
                    _ticket_text(c, old_start, old_end, ECHOES[w.ask]),
                    status=5,
                    days_ago=(w.today - old_end).days - 1,
                )
                c.old_ticket = old["id"]
            dago = b.rng.randrange(1, 4)
            t = hd_ticket(b, contact, c.subject, _ticket_text(c, *_reported(c)), status=2, days_ago=dago)
            if "reported" in c.found:  # the customer's own follow-up on the ticket puts the window right
                follow_up(b, t["id"], contact, c.person, _correction(c), b.now - timedelta(days=dago - 0.6))
            if "interim" in c.found:  # and later, by email, once more: the latest word holds
                inbox_mail(
                    b,
                    c.person.email,
                    b.me.email,
                    f"{c.subject}: one more correction",
                    _recorrection(c),
                    # each customer writes at their own time (from play: three at the same minute)
                    b.now - timedelta(days=(dago - 0.6) / 2, minutes=41 * w.cases.index(c)),
                )
            if c is w.twin:
                w.decoy_ticket = t["id"]
            else:
                c.ticket = t["id"]
                osub, otext = b.pick(OTHER)  # a newer request on another subject: the latest is not it
                c.found["newer"] = hd_ticket(
                    b,
                    contact,
                    osub,
                    f"{otext} {c.person.name}",
                    status=2,
                    days_ago=0.2 + (0.03 * w.cases.index(c) if w.queue else 0),  # side by side in a queue
                    priority=1,
                )["id"]
        else:
            me = b.me.email
            if c is not w.twin:
                first = inbox_mail(
                    b,
                    c.person.email,
                    me,
                    earlier,
                    _ticket_text(c, old_start, old_end, ECHOES[w.ask]),
                    b.now - timedelta(days=(w.today - old_end).days - 1),
                    labels=("INBOX",),
                )
                inbox_mail(  # my answer in the same thread: that request was dealt with
                    b,
                    me,
                    c.person.email,
                    "Re: " + earlier,
                    f"Hi {c.person.first}, we have credited those days. Best, {b.me.first}",
                    b.now - timedelta(days=(w.today - old_end).days - 3),
                    thread=first["threadId"],
                    labels=("SENT",),
                )
            sent = b.now - timedelta(days=b.rng.randrange(1, 4), hours=b.rng.randrange(1, 9))
            m = inbox_mail(b, c.person.email, me, c.subject, _ticket_text(c, *_reported(c)), sent)
            c.email_id = m["id"]
            c.found["thread"] = m["threadId"]
            if "reported" in c.found:  # their follow-up in the same thread puts the window right
                inbox_mail(
                    b,
                    c.person.email,
                    me,
                    "Re: " + c.subject,
                    _correction(c),
                    min(sent + timedelta(hours=14), b.now - timedelta(hours=5)),
                    thread=m["threadId"],
                )
            osub, otext = b.pick(OTHER)
            c.found["newer"] = inbox_mail(
                b,
                c.person.email,
                me,
                osub,
                f"{otext} {c.person.name}",
                b.now - timedelta(hours=3, minutes=43 * w.cases.index(c) if w.queue else 0),
            )["id"]
    if w.queue:
        plant_queue(w)


def plant_queue(w: Work) -> None:
    """The rest of the queue (`queue`): the customers' other open messages, most of them newer than
    the requests, so the requests sit among them (some past a first page of results)."""
    from compoworld.tasks.families._common import hd_ticket, inbox_mail

    b = w.b
    texts = b.rng.sample(QUEUE_OTHER, b.rng.randrange(8, 15))  # each asked once
    custs = list(b.company.customers)
    for subject, text in texts:
        cust = b.rng.choice(custs)
        person = b.company.person(b.rng.choice(cust.contact_ids))
        days = b.rng.uniform(0.05, 3.5) if b.rng.random() < 0.7 else b.rng.uniform(3.5, 20)
        words = f"{text} {person.first}, {cust.name}"
        if w.plan.request == "email":
            m = inbox_mail(b, person.email, b.me.email, subject, words, b.now - timedelta(days=days))
            w.queued.append(m["id"])
        else:
            try:
                contact = _hd_contact(b, person)
            except PlantError:  # a contact Freshdesk does not know writes nothing there
                continue
            t = hd_ticket(b, contact, subject, words, status=2, days_ago=days, priority=1)
            w.queued.append(t["id"])


def follow_up(
    b: Builder, ticket: int, contact: dict[str, Any], person: Person, body: str, when: datetime
) -> None:
    """The requester's own reply on their Freshdesk ticket, later: it touches the ticket, as
    Freshdesk's replies do (from play: a ticket updated before its correction hid that anything
    came later)."""
    replied = format_time(when)
    b.svc("helpdesk").conversations.create(
        {
            "ticket_id": ticket,
            "kind": "reply",
            "body": body,
            "private": False,
            "incoming": True,
            "user_id": contact["id"],
            "from_email": person.email,
            "created_at": replied,
        }
    )
    b.svc("helpdesk").tickets.update(ticket, {"updated_at": replied})


def find_open_ticket(b: Builder, person: Any, subject: str) -> Any:
    """The requester's open ticket with this subject, found as an agent would: their contact by name,
    then their tickets (the theme's request stage on Freshdesk)."""
    from compoworld.tasks.families._common import rows

    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    cid = next(x["id"] for x in rows(found) if x["email"].lower() == person.email.lower())
    tickets = rows(b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid}))
    return next(t["id"] for t in tickets if t["status"] == 2 and t["subject"] == subject)


def open_ticket_page(b: Builder, subject: str, match: Callable[[str], bool]) -> tuple[str, str] | None:
    """The web app's open ticket with this subject whose page `match`es, as (href, page): the ticket
    list, then each open ticket of that subject opened in turn."""
    from compoworld.tasks.families.xai import _href, _links

    home = b.call("browser__open", {"url": "/"})["page"]
    page = b.call("browser__open", {"url": _href(home, lambda x: x == "Tickets")})["page"]
    for h in [h for _e, lab, h in _links(page) if lab.endswith(f"{subject} [open]")]:
        tp = b.call("browser__open", {"url": h})["page"]
        if match(tp):
            return h, tp
    return None


def read_queue(w: Work) -> None:
    """The requests found as an agent would with no names to go on (`queue`): every open ticket,
    page by page, or the inbox; then each request read whole (its ticket's conversation, or its
    thread, where a correction may follow)."""
    from compoworld.tasks.families._common import rows

    b = w.b
    if w.plan.request == "helpdesk":
        seen: set[Any] = set()
        page = 1
        while True:
            got = b.call("helpdesk__freshdesk_list_tickets", {"status": 2, "page": page})
            seen |= {t["id"] for t in rows(got)}
            if page * got["per_page"] >= got["total"]:
                break
            page += 1
        assert all(c.ticket in seen for c in w.cases)
        for c in w.cases:
            b.call(
                "helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": c.ticket, "include": "conversations"}
            )
    else:
        found = b.call("email__gmail_search_emails", {"query": "in:inbox", "maxResults": 200})
        if found["resultSizeEstimate"] > 200:
            raise PlantError("the inbox is longer than one search shows")
        ids = {m["id"] for m in found["messages"]}
        assert all(c.email_id in ids for c in w.cases)
        for c in w.cases:  # the thread: a correction may follow in it
            b.call("email__gmail_read_email", {"messageId": c.email_id})


def solve_request(w: Work) -> None:
    b = w.b
    if w.queue:
        read_queue(w)
    for c in w.cases if not w.queue else ():
        if w.plan.request == "helpdesk":
            assert find_open_ticket(b, c.person, c.subject) == c.ticket
            if w.tier.get("corrections"):  # the ticket's conversation: a follow-up may correct it
                b.call(
                    "helpdesk__freshdesk_get_ticket_by_id",
                    {"ticket_id": c.ticket, "include": "conversations"},
                )
        elif w.plan.request == "browser":
            mine = open_ticket_page(b, c.subject, lambda tp, c=c: c.person.name in tp and c.cust.name in tp)
            assert mine is not None and mine[0] == f"/tickets/{c.ticket}"
            c.found["page"] = mine[1]
        else:
            found = b.call("email__gmail_search_emails", {"query": c.person.name, "maxResults": 20})
            msgs = [m for m in found["messages"] if m["subject"] == c.subject]
            latest = max(msgs, key=lambda m: m["date"])
            assert latest["id"] == c.email_id
            for m in sorted(msgs, key=lambda m: m["date"]):
                b.call("email__gmail_read_email", {"messageId": m["id"]})
    if w.tier.get("recorrect") and w.plan.recorrect_service():  # a later word by email, after the tickets
        for c in w.cases:
            found = b.call("email__gmail_search_emails", {"query": c.person.name, "maxResults": 20})
            for m in found["messages"]:
                if str(m["subject"]).startswith(c.subject):
                    b.call("email__gmail_read_email", {"messageId": m["id"]})
    # which request is the live one (the open ticket, the unanswered email); in a queue, which
    # messages are credit requests still waiting, one of them in other words
    b.decide(len(w.cases))


# ---- account and people ----------------------------------------------------------------------
def plant_account(w: Work) -> None:
    from compoworld.tasks.families._common import crm_company

    b = w.b
    staff = [p for p in b.company.employees if p.id != b.me.id]
    tiers = _has_tiers(w.plan, w.tier)
    if w.plan.account == "crm":
        b.plant(
            "crm__hubspot_create_property",
            {
                "name": "account_manager",
                "label": "Account manager",
                "description": "Work email of the account manager",
                "object_type": "companies",
            },
        )
        if tiers:
            b.plant(
                "crm__hubspot_create_property",
                {
                    "name": "service_tier",
                    "label": "Service tier",
                    "description": "The customer's service tier: Standard or Enterprise",
                    "object_type": "companies",
                },
            )
    if w.plan.account == "crm" and w.tier.get("billing_keys"):
        plant_accounts(w)
    if w.plan.account == "crm" and tiers:  # every company has its tier (from play: only the requests' had)
        from compoworld.tasks.families._common import crm_objects

        segment = {x.name: x.tier for x in b.company.customers}
        crm = b.svc("crm")
        for rec in crm_objects(b, "companies"):
            name = (rec.get("properties") or {}).get("name")
            if name in segment:
                props = {
                    **rec["properties"],
                    "service_tier": "Enterprise" if segment[name] == "enterprise" else "Standard",
                }
                crm.objects.update(rec["id"], {"properties": props})
    # account managers sit in Sales or Customer Success (from play: a Software Engineer managing an
    # account), from anyone once those are used up
    facing = [p for p in staff if p.team in ("Sales", "Customer Success")]
    for c in w.cases:
        try:
            c.owner = b.fresh(facing, 1, key=lambda p: p.id)[0]
        except PlantError:
            c.owner = b.fresh(staff, 1, key=lambda p: p.id)[0]
        c.owner_left = w.plan.people and b.rng.random() < 0.5
        if w.plan.people and "owner_left" in w.force:
            c.owner_left = bool(w.force["owner_left"])
        if w.plan.account == "crm":
            rec = crm_company(b, c.cust.name)
            c.crm_id = str(rec["id"])
            crm = b.svc("crm")
            props = {**rec["properties"], "account_manager": c.owner.email}
            if tiers:
                props["service_tier"] = tier_name(c)
            crm.objects.update(rec["id"], {"properties": props})
        elif w.plan.account == "browser":
            from compoworld.tasks.families.xai import _note

            # the note gives the address too: the approver may be written to by email
            tier_note = f" Service tier: {tier_name(c)}." if tiers else ""
            _note(
                b,
                c.cust.name,
                # no renewal season of its own (from play: "renewal in the autumn" beside the
                # account's renewal date in March)
                f"Account manager: {c.owner.name} ({c.owner.email}).{tier_note}",
            )
        if c.owner_left:
            hr = b.svc("hr")
            emp = next(e for e in hr.employees.all() if e["workEmail"].lower() == c.owner.email.lower())
            left = format_time(b.now - timedelta(days=12))
            hr.employees.update(emp["id"], {"status": "Inactive", "lastChanged": left})
            quiet_since(b, c.owner, left)


def plant_accounts(w: Work) -> None:
    """Hard: every CRM company carries its billing account number (BA- and five digits), and one
    request's earlier credit is logged under it (`plant_ledger`): a lookup of the log by the
    customer's name misses that credit. `force["billing_keys"]` False: logged by name (the same
    draws)."""
    from compoworld.tasks.families._common import crm_objects

    b = w.b
    b.plant(
        "crm__hubspot_create_property",
        {
            "name": "billing_account",
            "label": "Billing account",
            "description": "The customer's account number in billing",
            "object_type": "companies",
        },
    )
    crm, used = b.svc("crm"), set()
    for rec in sorted(crm_objects(b, "companies"), key=lambda r: int(r["id"])):
        n = b.rng.randrange(10000, 100000)
        while n in used:
            n = b.rng.randrange(10000, 100000)
        used.add(n)
        w.accounts[rec["properties"]["name"]] = f"BA-{n}"
        crm.objects.update(rec["id"], {"properties": {**rec["properties"], "billing_account": f"BA-{n}"}})
    pick = w.cases[int(b.rng.random() * len(w.cases))]
    if w.force.get("billing_keys") is not False and pick.cust.name in w.accounts:
        w.keyed = pick


def solve_account(w: Work) -> None:
    from compoworld.tasks.families._common import rows

    b = w.b
    for c in w.cases:
        if w.plan.account == "crm":
            found = b.call(
                "crm__hubspot_search_by_property",
                {
                    "object_type": "companies",
                    "property_name": "name",
                    "operator": "EQ",
                    "value": c.cust.name,
                    "properties": ["name", "account_manager"]
                    + (["service_tier"] if _has_tiers(w.plan, w.tier) else [])
                    + (["billing_account"] if w.accounts else []),
                },
            )
            rec = rows(found)[0]
            assert rec["properties"]["account_manager"] == c.owner.email
            if w.accounts:  # the key finance logs some credits under
                c.found["account_no"] = rec["properties"]["billing_account"]
                assert c.found["account_no"] == w.accounts[c.cust.name]
            if _has_tiers(w.plan, w.tier):
                assert rec["properties"]["service_tier"] == tier_name(c)
            c.crm_id = str(rec["id"])
        else:
            from compoworld.tasks.families.xai import _href

            page = b.call("browser__open", {"url": _href(c.found["page"], lambda x: x == "Company")})["page"]
            assert f"Account manager: {c.owner.name}" in page
            if _has_tiers(w.plan, w.tier):
                assert f"Service tier: {tier_name(c)}." in page
    if _has_tiers(w.plan, w.tier):
        b.decide(len(w.cases))  # each customer's service tier: the limit, or twice it


def solve_people(w: Work) -> None:
    b = w.b
    d = b.call("hr__bamboohr_get_employee_directory", {"response_format": "json"})
    listed = {e["workEmail"].lower() for e in d["employees"]} | {e["displayName"] for e in d["employees"]}
    for c in w.cases:
        assert (c.owner.email.lower() not in listed) == c.owner_left
    b.decide(len(w.cases))  # the account manager, or (they left) the policy's fallback approver
    if w.away is not None and w.away.where == "hr":  # while in BambooHR: is the approver in today?
        w.seen.add("away")
        read_away(b, w.away, directory=d)


# ---- the policy ----------------------------------------------------------------------------------
def _ledger_where(w: Work) -> str:
    return {
        "sheets": 'the Google Sheet "Service credits log"',
        "workspace": "Documents/finance/credits_log.csv in the workspace",
        "sql": "the credits_log table of the SQL database",
    }[w.plan.ledger]


def _usage_where(w: Work) -> str:
    return {
        "payments": "Stripe (one payment a day per customer, described as its daily usage)",
        "sheets": 'the Google Sheet "Usage billing"',
        "sql": "the usage_charges table of the SQL database",
        "workspace": "Documents/billing/usage_daily.csv in the workspace",
    }[w.plan.usage]


def _notify_how(w: Work) -> str:
    return {
        "email": "by email",
        "chat": "in the #billing-credits channel on Slack, naming them",
        "helpdesk": "with a private note on the ticket that notifies them",
    }[w.plan.notify]


def _who_approves(w: Work, v: Version) -> str:
    if w.plan.account == "crm":
        who = "the account manager on the customer's HubSpot company (account_manager)"
    elif w.plan.account == "browser":
        who = "the account manager named in the account notes of the web app"
    else:
        return f"{v.fallback.name} ({v.fallback.email})"
    if w.plan.people:
        who += f"; if they are no longer with the company, {v.fallback.name} ({v.fallback.email}) instead"
    return who


def _approver_cell(w: Work, v: Version) -> str:
    """Who approves, as a policy sheet's cell: the approver, or the account manager and (where the
    work checks people) who approves once they have left."""
    if not w.plan.account:
        return v.fallback.email
    return "account manager" + (f"; if they left, {v.fallback.email}" if w.plan.people else "")


def policy_text(w: Work, v: Version) -> list[str]:
    reply = (
        "reply to the customer's ticket with the credited amount and resolve the ticket"
        if w.plan.request != "email"
        else "reply to the customer's email with the credited amount"
    )
    review = (
        "reply to the customer that the request is under review (promise no amount before it is approved)"
    )
    if w.plan.request != "email":
        review += " and leave the ticket open"
    return (
        [
            f"Service credit policy: credits for downtime. Effective {_day(v.effective)}.",
            f"Support may credit a customer for the usage billed on the days of an outage they report, up to "
            f"${v.limit} per request. The daily usage charges are in {_usage_where(w)}.",
            # where a credit lands (from play): billing applies it, so support refunds no payment
            "Billing applies approved credits to the customer's next invoice; support refunds nothing.",
            *([_tier_rule(w)] if _has_tiers(w.plan, w.tier) else []),
            # stated, not left to infer (from play): where the days credited before are
            "A day credited before is not credited again (the credits log shows the days credited before).",
            f"Up to the limit: {reply}, then tell the approver the amount {_notify_how(w)}.",
            f"Above the limit: {review}, and send the amount to the approver for approval {_notify_how(w)}.",
            f"Approver: {_who_approves(w, v)}.",
            # what the reference is, stated (from play: a log of several kinds of rows left it open)
            f"Log every request in {_ledger_where(w)}: date, customer, reference "
            f"({'the subject of the customer' + chr(39) + 's email' if w.plan.request == 'email' else 'the ticket number'}), "
            "amount_usd and decision (approved or review).",
        ]
        + (  # the CRM note is a step of the policy, never an unstated expectation
            ["Record the outcome and the amount as a note on the customer's company in HubSpot."]
            if w.plan.note
            else []
        )
        + ([away_rule("the approver")] if _has_away(w.plan, w.tier) else [])
        + ([amend_rule(w.amend, "#billing-credits")] if w.amend is not None else [])
    )


def _has_away(plan: Plan, tier: dict[str, Any]) -> bool:
    """The approver's absence is in play: the tier has it, and it shows where they are told (Slack,
    Gmail) or, told by a ticket note, as their time off in BambooHR (where the work checks people)."""
    return bool(tier.get("away")) and (plan.notify in ("email", "chat") or plan.people)


def _away_where(plan: Plan) -> str:
    return plan.notify if plan.notify in ("email", "chat") else "hr"


def _has_tiers(plan: Plan, tier: dict[str, Any]) -> bool:
    """The customer's service tier is in play: the difficulty tier has it and the account record
    holds it."""
    return bool(tier.get("tiers")) and plan.account in ("crm", "browser")


def _tier_rule(w: Work) -> str:
    where = (
        "the service_tier property of their HubSpot company"
        if w.plan.account == "crm"
        else "the account notes of the web app"
    )
    return f"Customers on the Enterprise service tier may be credited up to twice that limit (their tier: {where})."


def _has_amend(plan: Plan, tier: dict[str, Any]) -> bool:
    """The policy owner's later change is in play: the tier has it and the owner has a thread."""
    return bool(tier.get("amend")) and bool(plan.amend_service())


def plant_policy(w: Work) -> None:
    # the approver column says what the rules say (from play: a bare "fallback_approver" beside an
    # account manager who approves explained nothing)
    head = ["effective_from", "credit_limit_usd", "approver", "rules"]
    texts = [(v.effective, [v.limit, _approver_cell(w, v)], policy_text(w, v)) for v in w.versions]
    owner = w.amend.owner if w.amend else None
    plant_versions(
        w.b, w.plan.policy, "Service credit policy", "service_credits", head, texts, "Customer Success", owner
    )


def solve_policy(w: Work) -> None:
    read_versions(
        w.b,
        w.plan.policy,
        "Service credit policy",
        "service_credits",
        len(w.versions),
        ["service credit policy"],
    )


# ---- usage: the aggregate ------------------------------------------------------------------------
def _usage_rows(w: Work) -> list[tuple[date, Case | Customer, int, str]]:
    """Daily usage charges (day, customer, cents, status) over the last weeks, for the cases, the
    twin and a few other customers, with some days already credited (inside a window too)."""
    b = w.b
    lo, hi = w.tier["rows"]
    total = b.rng.randrange(lo, hi + 1)
    # billed by product (not Stripe's one payment a day): the export's rows are `total`, 2-3 a day
    if w.tier.get("lines") and w.plan.usage != "payments":
        w.found["export_rows"] = total
        total = total * 2 // 5
    who: list[Any] = list(w.cases) + ([w.twin] if w.twin else [])
    used = {c.cust.id for c in who}
    others = [c for c in b.company.customers if c.id not in used]
    who += b.rng.sample(others, min(len(others), 2))
    earliest = min(c.found["old_window"][0] for c in w.cases)
    span = (w.today - earliest).days + 2
    per = max(4, total // len(who))
    out: list[tuple[date, Any, int, str]] = []
    for c in who:
        case = c if isinstance(c, Case) else None
        days: set[date] = set()
        if case is not None:  # every day of both windows is billed, so both totals are real
            windows = [(case.start, case.end), case.found.get("old_window", (case.start, case.end))]
            extra = [case.found[k] for k in ("reported", "interim") if k in case.found]
            for a, z in windows + extra:
                d = a
                while d <= z:
                    days.add(d)
                    d += timedelta(days=1)
        while len(days) < per:
            days.add(w.today - timedelta(days=b.rng.randrange(1, span)))
        credited_in = None
        run: tuple[date, date] | None = None
        if case is not None:
            inside = sorted(d for d in days if case.start <= d <= case.end)
            # one draw whatever the window's length (a test's flip of it shifts no later draw)
            credited_in = inside[int(b.rng.random() * len(inside))]
            if w.tier.get("ranges") and case is w.cases[0]:
                run = _credited_span(w, case, credited_in)
                d = run[0]
                while d <= run[1]:  # every day of the adjustment was billed (and is credited)
                    days.add(d)
                    d += timedelta(days=1)
        for d in sorted(days):
            cents = b.rng.randrange(40, 420) * 100 + b.rng.choice((0, 25, 50, 75, 90))
            # a day credited before: the credits log holds it (credits go on the next invoice)
            credited = d == credited_in if run is None else run[0] <= d <= run[1]
            status = "credited" if credited else "billed"
            out.append((d, c, cents, status))
        if case is not None and run is not None:
            case.found["span"] = run
    out.sort(key=lambda r: (r[0], _name(r[1])))
    for case in w.cases + ([w.twin] if w.twin else []):
        mine = [r for r in out if r[1] is case]
        case.amount = sum(r[2] for r in mine if case.start <= r[0] <= case.end and r[3] == "billed")
        case.found["credited_days"] = {r[0]: r[2] for r in mine if r[3] == "credited"}
        case.naive = sum(r[2] for r in mine if case.start <= r[0] <= case.end)
        if "span" in case.found:  # the adjustment's whole amount taken off, days outside the window too
            case.found["whole"] = case.naive - sum(case.found["credited_days"].values())
        a, z = case.found.get("old_window", (case.start, case.end))
        case.stale = sum(r[2] for r in mine if a <= r[0] <= z and r[3] == "billed")
        if "reported" in case.found:  # the window as first reported, before the correction
            a, z = case.found["reported"]
            case.found["wide"] = sum(r[2] for r in mine if a <= r[0] <= z and r[3] == "billed")
        if "interim" in case.found:  # the window after the first correction, before the second
            a, z = case.found["interim"]
            case.found["mid"] = sum(r[2] for r in mine if a <= r[0] <= z and r[3] == "billed")
    return out


def _credited_span(w: Work, case: Case, day: date) -> tuple[date, date]:
    """Hard: the days credited before are one adjustment over a run of 2-3 days around `day`, which
    the credits log names as a range (no row names each day: a lookup of a day's date misses it). It
    may run past the window's start, so its amount is not what the window loses. `force["span"]`
    False flips the evidence with the same draws: the run ends the day before the window starts."""
    before, after = int(w.b.rng.random() * 2), int(w.b.rng.random() * 2)
    if before + after == 0:
        after = 1 if day < case.end else 0
        before = 1 - after
    a, z = day - timedelta(days=before), day + timedelta(days=after)
    if w.force.get("span") is False:
        z = case.start - timedelta(days=1)
        a = z - timedelta(days=before + after)
    old = case.found.get("old_window")
    if old and a <= old[1] and z >= old[0]:
        raise PlantError("the adjustment overlaps the earlier request's window")
    return a, z


def span_ref(a: date, z: date) -> str:
    """How the credits log names an adjustment over days a..z (no ISO date a day's lookup finds)."""
    return f"usage adjustment {_long(a)} to {_long(z)}"


def _span_days(ref: str, logged: date) -> set[str]:
    """The days an adjustment's reference covers, as ISO dates (`span_ref`'s form), logged on `logged`
    (after its last day: a reference without a year is of the days just before)."""
    a_txt, z_txt = ref.removeprefix("usage adjustment ").split(" to ")

    def before(txt: str, limit: date) -> date:
        d = datetime.strptime(f"{txt} {limit.year}", "%B %d %Y").date()
        return d if d <= limit else d.replace(year=limit.year - 1)

    z = before(z_txt, logged - timedelta(days=1))
    a = before(a_txt, z)
    out, d = set(), a
    while d <= z:
        out.add(_day(d))
        d += timedelta(days=1)
    return out


def _name(c: Any) -> str:
    return c.cust.name if isinstance(c, Case) else c.name


LEGAL_FORMS = ("{} Inc.", "{} LLC", "{} Ltd", "{} Corp.")


def draw_legal(w: Work, usage: list[tuple[date, Any, int, str]]) -> None:
    """Hard: from a day inside one request's window the billing export names every customer by its
    legal name ("Stark Robotics Inc."), so that window's later days are under another name than its
    first ones (a sum over the exact name misses them; nothing says the export changed but the
    rows). `force["legal_names"]` False: no change (the same draws)."""
    rng = w.b.rng
    k, at = rng.randrange(len(w.cases)), rng.random()
    forms = {}
    for _d, c, _cents, _s in usage:  # one form each, in the order customers first appear
        if _name(c) not in forms:
            forms[_name(c)] = rng.choice(LEGAL_FORMS).format(_name(c))
    if w.plan.usage == "payments" or w.force.get("legal_names") is False:
        return  # Stripe keys its payments by customer id
    c = w.cases[k]
    billed = sorted(d for d, x, _c, st in usage if x is c and st == "billed" and c.start <= d <= c.end)
    if len(billed) < 2:
        return
    w.legal_from = billed[1 + int(at * (len(billed) - 1))]  # a billed day stays under each name
    w.legal = forms


def billed_name(w: Work, c: Any, d: date) -> str:
    """The customer as the usage export names it on day `d`."""
    name = _name(c)
    return w.legal.get(name, name) if w.legal_from is not None and d >= w.legal_from else name


def _lines(w: Work, usage: list[tuple[date, Any, int, str]]) -> list[tuple[date, Any, str, int]]:
    """The export's rows (day, customer, product, cents): a day's charge split over two or three
    products where the tier bills by product (`lines`), else one row a day (product "")."""
    if "export_rows" not in w.found:
        return [(d, c, "", cents) for d, c, cents, _s in usage]
    out = []
    # one draw seeds the split, however many rows (a test's flip of a window shifts no later draw)
    rng = random.Random(w.b.rng.getrandbits(64))
    # three products on as many days as make the export's rows the tier's draw (2 on the others)
    three = set(
        rng.sample(range(len(usage)), min(max(w.found["export_rows"] - 2 * len(usage), 0), len(usage)))
    )
    for i, (d, c, cents, _s) in enumerate(usage):
        products = sorted(rng.sample(PRODUCTS, 3 if i in three else 2), key=PRODUCTS.index)
        cuts = sorted(rng.sample(range(1, cents // 5), len(products) - 1))
        parts = [5 * (z - a) for a, z in zip([0, *cuts], [*cuts, cents // 5], strict=True)]
        parts[-1] += cents - 5 * (cents // 5)
        out += [(d, c, p, x) for p, x in zip(products, parts, strict=True)]
    return out


def plant_usage(w: Work, usage: list[tuple[date, Any, int, str]]) -> None:
    from compoworld.tasks.families._common import sheet

    b = w.b
    u = w.plan.usage
    lines = _lines(w, usage) if u != "payments" else []
    w.found["usage_rows"] = len(lines) if lines else len(usage)
    by = "export_rows" in w.found
    head = ["date", "customer", *(["product"] if by else []), "amount_usd"]
    if u == "sheets":
        table: list[list[Any]] = [head]
        table += [
            [_day(d), billed_name(w, c, d), *([p] if by else []), float(dollars(cents))]
            for d, c, p, cents in lines
        ]
        w.usage_id = sheet(b, "Usage billing", "Daily", table, days_ago=1)["id"]
    elif u == "workspace":
        text = (
            ",".join(head)
            + "\n"
            + "".join(
                f"{_day(d)},{billed_name(w, c, d)},{p + ',' if by else ''}{dollars(cents)}\n"
                for d, c, p, cents in lines
            )
        )
        b.svc("workspace").write_file(f"{HOME}/Documents/billing/usage_daily.csv", text)
    elif u == "sql":
        b.plant(
            "sql__create_table",
            {
                "query": "CREATE TABLE usage_charges (id INTEGER PRIMARY KEY, day TEXT, customer TEXT, "
                + ("product TEXT, " if by else "")
                + "amount_usd REAL)"
            },
        )
        vals = ", ".join(
            f"({i + 1}, '{_day(d)}', '{billed_name(w, c, d).replace(chr(39), chr(39) * 2)}', "
            + (f"'{p}', " if by else "")
            + f"{dollars(cents)})"
            for i, (d, c, p, cents) in enumerate(lines)
        )
        b.plant("sql__write_query", {"query": f"INSERT INTO usage_charges VALUES {vals}"})
    else:  # Stripe: one payment intent a day; a credited day went on an invoice, never refunded
        svc = b.svc("payments")
        stripe = {r["name"]: r["id"] for r in svc.store.tables.get("customers", {}).values()}
        for c in {id(r[1]): r[1] for r in usage}.values():
            if _name(c) not in stripe:
                raise PlantError(f"no Stripe customer {_name(c)}")
        # a request's customer may have paid an invoice inside its window: a payment, not usage (its
        # invoice says so); a total that counts it is a rival
        seeded = list(svc.store.tables.get("payment_intents", {}).values())
        for c in w.cases:
            lo = datetime(c.start.year, c.start.month, c.start.day, tzinfo=b.now.tzinfo).timestamp()
            hi = lo + 86400 * ((c.end - c.start).days + 1)
            c.found["invoiced"] = sum(
                r["amount"] - r.get("amount_refunded", 0)
                for r in seeded
                if r["customer"] == stripe.get(c.cust.name) and lo <= r["created"] < hi
            )
        mine = [r for r in usage if isinstance(r[1], Case)]
        theirs = {
            c.cust.name: sum(1 for r in seeded if r["customer"] == stripe.get(c.cust.name)) for c in w.cases
        }
        if any(sum(1 for r in mine if r[1] is c) + theirs[c.cust.name] > 100 for c in w.cases):
            raise PlantError("more payments than one Stripe page shows")
        for d, c, cents, _s in usage:
            when = datetime(d.year, d.month, d.day, 6, 0, tzinfo=b.now.tzinfo)
            svc.insert(
                "payment_intents",
                {
                    "id": f"pi_{svc.next_id('', 14)}",
                    "customer": stripe[_name(c)],
                    "amount": cents,
                    "currency": "usd",
                    "status": "succeeded",
                    "amount_refunded": 0,
                    "invoice": None,
                    "created": int(when.timestamp()),
                    "description": f"Daily usage {_day(d)}",
                },
            )
        for c in w.cases:
            c.stripe = stripe[c.cust.name]


def solve_credits(w: Work) -> None:
    """Read the credits log whole: a day of the window credited before does not count again."""
    from compoworld.tasks.families._common import rows, sheet_rows

    b = w.b
    w.seen.add("ledger")  # the log's columns are known: the writes need no second look
    if w.plan.ledger == "sheets":
        books = b.call("sheets__google_sheets_list_spreadsheets", {})
        sid = next(x["id"] for x in rows(books) if x.get("title") == "Service credits log")
        assert sid == w.ledger_id
        got = sheet_rows(b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid}))[1:]
    elif w.plan.ledger == "workspace":
        out = b.call("workspace__shell", {"command": "cat Documents/finance/credits_log.csv"})["stdout"]
        got = [ln.split(",") for ln in out.splitlines()[1:] if ln.strip()]
    else:
        res = b.call("sql__read_query", {"query": "SELECT * FROM credits_log"})
        got = [[x["date"], x["customer"], x["reference"]] for x in rows(res)]
    for c in w.cases:
        mine = log_keys(c)
        c.found["credited"] = {
            str(r[2]).split(" ", 1)[1]
            for r in got
            if logged_as(r[1], mine) and str(r[2]).startswith("usage ") and "adjustment" not in str(r[2])
        }
        for r in got:  # an adjustment over a run of days: every day it names was credited
            if logged_as(r[1], mine) and str(r[2]).startswith("usage adjustment "):
                c.found["credited"] |= _span_days(str(r[2]), date.fromisoformat(str(r[0])))
        assert c.found["credited"] == {_day(d) for d in c.found["credited_days"]}, c.found["credited"]
    b.decide(len(w.cases) + (w.keyed is not None))  # which billed days still count (whose rows they are)


def log_keys(c: Case) -> set[str]:
    """The customer's rows of the credits log: by name, or by its billing account number (on its
    CRM record) where finance logged them."""
    return {c.cust.name, c.found.get("account_no", c.cust.name), c.found.get("log_legal", c.cust.name)}


# how a customer was keyed by hand in the credits log's older rows (`hand_keyed`)
HAND_FORMS = ("upper", "lower", "account", "dash")


def hand_keyed(rng: random.Random, name: str, account: str | None) -> str:
    """`name` as finance typed it by hand: in capitals, in lower case, or beside its account number."""
    form = rng.choice(HAND_FORMS)
    if form in ("account", "dash") and account:
        return f"{name} ({account})" if form == "account" else f"{name} - {account}"
    return name.upper() if form != "lower" else name.lower()


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def logged_as(cell: Any, keys: set[str]) -> bool:
    """The log's customer cell is one of `keys`, however it was keyed: the same letters and digits
    (case and punctuation aside), or a key beside another in brackets or after a dash."""
    want = {_letters(k) for k in keys}
    parts = [str(cell), *re.split(r"\s*[()]\s*|\s+-\s+", str(cell))]
    return any(_letters(x) in want for x in parts if x.strip())


def _names(w: Work, c: Case) -> set[str]:
    """The names the usage export gives a request's customer (its legal one too, after the change)."""
    return {c.cust.name} | ({w.legal[c.cust.name]} if w.legal_from is not None else set())


def solve_usage(w: Work) -> None:
    from compoworld.tasks.families._common import rows, sheet_rows

    b = w.b
    u = w.plan.usage
    got: dict[str, int] = {}
    if u == "sheets":
        books = b.call("sheets__google_sheets_list_spreadsheets", {})
        sid = next(x["id"] for x in rows(books) if x.get("title") == "Usage billing")
        table = sheet_rows(b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid}))
        for c in w.cases:
            got[c.cust.name] = sum(
                round(float(r[-1]) * 100)
                for r in table[1:]
                if r[1] in _names(w, c)
                and c.start.isoformat() <= str(r[0]) <= c.end.isoformat()
                and str(r[0]) not in c.found["credited"]
            )
    elif u == "workspace":
        for c in w.cases:
            out = b.call(
                "workspace__shell", {"command": f"grep '{c.cust.name}' Documents/billing/usage_daily.csv"}
            )["stdout"]
            total = 0
            for line in out.splitlines():
                parts = line.split(",")
                d, amt = parts[0], parts[-1].strip()
                if c.start.isoformat() <= d <= c.end.isoformat() and d not in c.found["credited"]:
                    total += round(float(amt) * 100)
            got[c.cust.name] = total
    elif u == "sql":
        b.call("sql__list_tables", {})
        b.call("sql__describe_table", {"table_name": "usage_charges"})
        if w.legal_from is not None:  # who the export names: the customers' names change on a day
            b.call("sql__read_query", {"query": "SELECT DISTINCT customer FROM usage_charges"})
        for c in w.cases:
            names = sorted(x.replace("'", "''") for x in _names(w, c))
            who = f"= '{names[0]}'" if len(names) == 1 else "IN ('" + "', '".join(names) + "')"
            skip = ", ".join(f"'{d}'" for d in sorted(c.found["credited"])) or "''"
            res = b.call(
                "sql__read_query",
                {
                    "query": f"SELECT SUM(amount_usd) AS total FROM usage_charges WHERE customer {who} "
                    f"AND day BETWEEN '{_day(c.start)}' AND '{_day(c.end)}' AND day NOT IN ({skip})"
                },
            )
            got[c.cust.name] = round(float(rows(res)[0]["total"]) * 100)
    else:
        custs = rows(b.call("payments__list_customers", {"limit": 100}))
        for c in w.cases:
            cid = next(x["id"] for x in custs if x["name"] == c.cust.name)
            pis = rows(b.call("payments__list_payment_intents", {"customer": cid, "limit": 100}))
            lo = datetime(c.start.year, c.start.month, c.start.day, tzinfo=b.now.tzinfo).timestamp()
            hi = lo + 86400 * ((c.end - c.start).days + 1)
            got[c.cust.name] = sum(
                p["amount"] - p["amount_refunded"]
                for p in pis
                if lo <= p["created"] < hi
                and p.get("invoice") is None  # usage, not an invoice paid
                and _day(datetime.fromtimestamp(p["created"], b.now.tzinfo).date()) not in c.found["credited"]
            )
    for c in w.cases:
        assert got[c.cust.name] == c.amount, (got, c.amount)
        b.composed(dollars(c.amount))
    b.aggregate(len(w.cases))


# ---- the decision and the writes -------------------------------------------------------------
def solve_amend(w: Work) -> None:
    """Read the policy owner's thread: a change to the limit since the version in force."""
    if w.amend is not None:
        if w.amend.where == "chat":
            w.seen.add("channel")
        read_amend(w.b, w.amend, "billing-credits", "Service credit policy")


def solve_decide(w: Work) -> None:
    for c in w.cases:
        assert c.within(w.limit) == (c.branch == "approve")
    w.b.decide(len(w.cases))


def _reply_text(c: Case) -> str:
    if c.branch == "approve":
        return (
            f"Hi {c.person.first}, we have credited ${dollars(c.amount)} for the usage billed from "
            f"{_long(c.start)} to {_long(c.end)} that was not credited before; it will show on your next "
            "invoice. Sorry for the trouble."
        )
    return (
        f"Hi {c.person.first}, thanks for your patience: your credit request for {_long(c.start)} to "
        f"{_long(c.end)} is under review and we will come back to you shortly."
    )


def solve_reply(w: Work) -> None:
    b = w.b
    for c in w.todo():
        if w.plan.request == "email":
            b.call(
                "email__gmail_send_email",
                {
                    "to": [c.person.email],
                    "subject": "Re: " + c.subject,
                    "body": _reply_text(c),
                    "threadId": c.found["thread"],
                    "inReplyTo": c.email_id,
                },
            )
        else:
            b.call("helpdesk__freshdesk_reply_to_a_ticket", {"ticket_id": c.ticket, "body": _reply_text(c)})
            if c.branch == "approve":
                b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": c.ticket, "status": 4})


def _ref(w: Work, c: Case) -> str:
    return str(c.ticket) if w.plan.request != "email" else c.subject


def _decision(c: Case) -> str:
    return "approved" if c.branch == "approve" else "review"


def plant_ledger(w: Work) -> None:
    from compoworld.tasks.families._common import sheet

    b = w.b
    # the log already holds the earlier, closed requests (a status history) and others' rows
    hist: list[list[Any]] = []
    legal = _log_legal(w)
    hand = _hand_case(w, legal)
    for c in w.cases:
        a, z = c.found["old_window"]
        # the earlier request by its ticket, or its email's subject (from play: a request in the
        # customer's words is under another subject than their earlier one)
        ref = str(c.old_ticket) if c.old_ticket else c.found.get("earlier_subject", c.subject)
        hist.append([_day(z + timedelta(days=2)), c.cust.name, ref, dollars(c.stale), "approved"])
        # the earlier credit of days, where finance logged it under the billing account or the legal
        # name: the key
        who = w.accounts[c.cust.name] if c is w.keyed else c.cust.name
        if c is w.keyed:
            b.trap("alias", f"{c.cust.name}'s credit of days before, logged under its billing account")
        if c is legal:
            who = c.found["log_legal"] = w.legal[c.cust.name]
            b.trap("alias", f"{c.cust.name}'s credit of days before, logged under its legal name")
        if c is hand:
            who = c.found["hand_keyed"] = hand_keyed(b.rng, c.cust.name, w.accounts.get(c.cust.name))
            b.trap("alias", f"{c.cust.name}'s credit of days before, keyed by hand as {who!r}")
        if "span" in c.found:  # one adjustment over the run of days, logged the day after it
            a, z = c.found["span"]
            whole = sum(c.found["credited_days"].values())
            hist.append([_day(z + timedelta(days=1)), who, span_ref(a, z), dollars(whole), "approved"])
            continue
        for d, cents in sorted(c.found["credited_days"].items()):  # a goodwill credit of one day's usage
            hist.append([_day(d + timedelta(days=1)), who, f"usage {_day(d)}", dollars(cents), "approved"])
    others = [o for o in b.rng.sample(b.company.customers, 3) if not any(o.id == c.cust.id for c in w.cases)]
    # finance logs under the account number for others too (one at least): no odd one out
    by_no = [bool(w.accounts) and o.name in w.accounts and b.rng.random() < 0.5 for o in others]
    first = next((i for i, o in enumerate(others) if o.name in w.accounts), None)
    if w.keyed is not None and not any(by_no) and first is not None:
        by_no[first] = True
    for o, no in zip(others, by_no, strict=True):
        d = w.today - timedelta(days=b.rng.randrange(5, 90))
        hist.append(
            [
                _day(d),
                w.accounts[o.name] if no else o.name,
                str(b.rng.randrange(1100, 1900)),
                dollars(b.rng.randrange(80, 900) * 100),
                "approved",
            ]
        )
    if w.tier.get("log_rows"):
        hist += _log_history(w, b.rng.randrange(*w.tier["log_rows"]))
    hist.sort()
    w.found["logged"] = {str(r[3]) for r in hist}  # amounts the log holds already
    head = ["date", "customer", "reference", "amount_usd", "decision"]
    w.ledger_rows = len(hist) + 1
    if w.plan.ledger == "sheets":
        last = (w.today - date.fromisoformat(hist[-1][0])).days if hist else 30
        w.ledger_id = sheet(b, "Service credits log", "Log", [head, *hist], days_ago=max(2, last))["id"]
        # a sheet the team touched this morning: the log is not the latest one either
        sheet(b, "Support rota", "Rota", [["week", "on call"], [_day(w.today), b.me.name]], days_ago=0.2)
        # last year's log, named the way people asked for credits then: untouched since the year end
        year = w.today.year - 1
        w.found["old_log"] = sheet(
            b,
            f"Downtime and outage credits {year}: service credit request log",
            "Log",
            [head[:4], [f"{year}-11-0{b.rng.randrange(1, 9)}", w.cases[0].cust.name, "-", "120.00"]],
            days_ago=(w.today - date(year, 12, 31)).days + b.rng.randrange(1, 30),
        )["id"]
    elif w.plan.ledger == "workspace":
        b.svc("workspace").write_file(
            f"{HOME}/Documents/finance/credits_log.csv",
            ",".join(head) + "\n" + "".join(",".join(str(x) for x in r) + "\n" for r in hist),
        )
    else:
        b.plant(
            "sql__create_table",
            {
                "query": "CREATE TABLE credits_log (id INTEGER PRIMARY KEY, date TEXT, customer TEXT, "
                "reference TEXT, amount_usd REAL, decision TEXT)"
            },
        )
        vals = ", ".join(
            f"({i + 1}, '{r[0]}', '{r[1].replace(chr(39), chr(39) * 2)}', '{r[2]}', {r[3]}, '{r[4]}')"
            for i, r in enumerate(hist)
        )
        b.plant("sql__write_query", {"query": f"INSERT INTO credits_log VALUES {vals}"})


def _log_legal(w: Work) -> Case | None:
    """The request whose credited days finance logged under its legal name (`log_legal`): the last
    one logged day by day under its own name (not the billing account's, not a run of days), where
    the usage export has legal names."""
    if not w.tier.get("log_legal") or w.legal_from is None:
        return None
    free = [c for c in w.cases if c is not w.keyed and "span" not in c.found and c.cust.name in w.legal]
    return free[-1] if free else None


def _hand_case(w: Work, legal: Case | None) -> Case | None:
    """The request whose credited days were keyed by hand (`hand_keyed`): the first one finance
    logged by its plain name (neither by account number nor by legal name)."""
    if not w.tier.get("hand_keyed") or w.force.get("hand_keyed") is False:
        return None
    return next((c for c in w.cases if c is not w.keyed and c is not legal), None)


def _log_history(w: Work, n: int) -> list[list[Any]]:
    """`n` earlier credits over the last eighteen months (`log_rows`): other customers' requests,
    goodwill days and adjustments, by name, billing account number (where customers have one) or
    legal name (where the usage export has one);
    the requests' own customers' only as closed requests of before their earlier one, so no day of
    a window is among them."""
    b = w.b
    out: list[list[Any]] = []
    mine = {c.cust.id: c for c in w.cases}
    for _ in range(n):
        o = b.rng.choice(b.company.customers)
        c = mine.get(o.id)
        latest = (w.today - c.found["old_window"][0]).days + 3 if c else 2
        back = b.rng.randrange(latest, max(latest + 1, 540))
        when = w.today - timedelta(days=back)
        pick = b.rng.random()
        key = w.accounts[o.name] if o.name in w.accounts and pick < 0.5 else o.name
        if key == o.name and o.name in w.legal and c is None and pick > 0.75:  # others' legal names too
            key = w.legal[o.name]
        if w.tier.get("hand_keyed"):  # typed by hand (drawn either way: a test's flip moves nothing)
            typed, by_hand = hand_keyed(b.rng, o.name, w.accounts.get(o.name)), b.rng.random() < 0.35
            key = typed if key == o.name and by_hand else key
        kind = b.rng.random() if c is None else 0.0
        if (
            kind < 0.5
        ):  # a closed request, named by its ticket (or, where requests come by email, its subject)
            ref = str(b.rng.randrange(1100, 1900))
            if w.plan.request == "email":
                ref = SUBJECTS[int(ref) % len(SUBJECTS)]
        elif kind < 0.8:  # a goodwill day
            ref = f"usage {_day(when - timedelta(days=1))}"
        else:  # an adjustment over a run of days, ending the day before
            z = when - timedelta(days=1)
            ref = span_ref(z - timedelta(days=b.rng.randrange(1, 4)), z)
        out.append(
            [
                _day(when),
                key,
                ref,
                dollars(b.rng.randrange(40, 900) * 100 + 25 * b.rng.randrange(4)),
                "approved",
            ]
        )
    return out


def solve_ledger(w: Work) -> None:
    from compoworld.tasks.families._common import rows

    b = w.b
    today = _day(w.today)
    lines = [[today, c.cust.name, _ref(w, c), dollars(c.amount), _decision(c)] for c in w.todo()]
    first = "ledger" not in w.seen
    w.seen.add("ledger")
    if w.plan.ledger == "sheets":
        if first:
            books = b.call("sheets__google_sheets_list_spreadsheets", {})
            sid = next(x["id"] for x in rows(books) if x.get("title") == "Service credits log")
            assert sid == w.ledger_id
            b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
        b.call("sheets__google_sheets_append_rows", {"spreadsheet_id": w.ledger_id, "rows": lines})
    elif w.plan.ledger == "workspace":
        if first:
            b.call("workspace__shell", {"command": "head -3 Documents/finance/credits_log.csv"})
        for ln in lines:
            b.call(
                "workspace__shell",
                {"command": f"echo '{','.join(ln)}' >> Documents/finance/credits_log.csv"},
            )
    else:
        if first:
            b.call("sql__describe_table", {"table_name": "credits_log"})
        for ln in lines:
            name = ln[1].replace("'", "''")
            b.call(
                "sql__write_query",
                {
                    "query": "INSERT INTO credits_log (date, customer, reference, amount_usd, decision) VALUES "
                    f"('{ln[0]}', '{name}', '{ln[2]}', {ln[3]}, '{ln[4]}')"
                },
            )


def _notify_text(c: Case) -> str:
    if c.branch == "approve":
        return (
            f"FYI {c.approver.name}: we credited {c.cust.name} ${dollars(c.amount)} for the outage days "
            f"{_long(c.start)} to {_long(c.end)}, within the policy limit."
        )
    return (
        f"{c.approver.name}, {c.cust.name} asks for a downtime credit of ${dollars(c.amount)} "
        f"({_long(c.start)} to {_long(c.end)}), above the policy limit: can you approve it?"
    )


def solve_notify(w: Work) -> None:
    from compoworld.tasks.families._common import rows

    b = w.b
    if w.plan.notify == "chat" and "channel" not in w.seen:
        w.seen.add("channel")
        chans = b.call("chat__slack_user_list_channels", {"channel_name": "billing-credits"})
        cid = next(c["id"] for c in rows(chans) if c["name"] == "billing-credits")
        assert cid == w.channel
    if w.away is not None and "away" not in w.seen:  # is the approver in today? (where they are told)
        w.seen.add("away")
        read_away(b, w.away)
    for c in w.todo():
        text = _notify_text(c)
        if w.plan.notify == "email":
            b.call(
                "email__gmail_send_email",
                {"to": [c.approver.email], "subject": f"Downtime credit: {c.cust.name}", "body": text},
            )
        elif w.plan.notify == "chat":
            b.call("chat__slack_user_post_message", {"channel_id": w.channel, "text": text})
        else:
            b.call(
                "helpdesk__freshdesk_add_note_to_ticket",
                {"ticket_id": c.ticket, "body": text, "notify_emails": [c.approver.email]},
            )


def solve_note(w: Work) -> None:
    b = w.b
    for c in w.todo():
        outcome = (
            f"Downtime credit of ${dollars(c.amount)} approved"
            if c.branch == "approve"
            else f"Downtime credit of ${dollars(c.amount)} sent for approval"
        )
        b.call(
            "crm__hubspot_create_note",
            {"note_body": f"{outcome} ({_long(c.start)} to {_long(c.end)}).", "company_ids": [c.crm_id]},
        )


# ---- checks ------------------------------------------------------------------------------------
def add_checks(w: Work) -> None:
    b, p = w.b, w.plan
    for c in w.cases:
        amt = dollars(c.amount)
        wide = c.found.get("wide", c.amount)  # the first-reported window's total
        paid = c.amount + c.found.get("invoiced", 0)  # counting an invoice paid inside the window
        mid = c.found.get("mid", c.amount)  # the window after the first correction only
        rivals = sorted({dollars(x) for x in (c.naive, c.stale, wide, paid, mid) if x != c.amount})
        if p.request == "email":
            b.expect_record(
                "email",
                "messages",
                {"threadId": c.found["thread"], "labelIds": "SENT", "to": c.person.email},
                f"the reply is in {c.person.name}'s thread about this outage",
            )
            b.trap("recent", "a newer email on another subject", swap={c.email_id: c.found["newer"]})
            b.expect_message(
                "email",
                c.person,
                contains=[amt] if c.branch == "approve" else ["review"],
                description=f"{c.person.name} got a reply"
                + (f" crediting ${amt}" if c.branch == "approve" else " that the request is under review"),
                exclude=rivals if c.branch == "approve" else [],
            )
        else:
            b.expect_record(
                "helpdesk",
                "conversations",
                {
                    "ticket_id": c.ticket,
                    "kind": "reply",
                    "body": {"contains": amt if c.branch == "approve" else "review"},
                },
                f"ticket #{c.ticket} got a reply"
                + (f" crediting ${amt}" if c.branch == "approve" else " that the request is under review"),
            )
            if c.branch == "approve":
                b.expect_change(
                    "helpdesk", "tickets", c.ticket, "status", 4, f"ticket #{c.ticket} is resolved"
                )
            b.keep(
                "helpdesk", "tickets", c.found["newer"], f"{c.person.name}'s newer ticket on another subject"
            )
            b.trap("recent", "a newer open ticket on another subject", swap={c.ticket: c.found["newer"]})
            if c.old_ticket:
                b.keep("helpdesk", "tickets", c.old_ticket, "the earlier, closed request was left alone")
                b.trap(
                    "closed", "the closed earlier request for another outage", swap={c.ticket: c.old_ticket}
                )
        if c.stale != c.amount:
            b.not_written(
                p.reply_service(),
                dollars(c.stale),
                f"the earlier request's total was not used for {c.cust.name}",
            )
        if c.branch == "review":  # no amount is promised to the customer before approval
            if p.request == "email":
                b.guard(
                    f"{c.person.name} was not promised the amount before approval",
                    {
                        "predicate": "message_not_sent",
                        "service": "email",
                        "to": [c.person.email, c.person.name],
                        # quoting the request's amount as under review promises nothing
                        "contains": [{"kind": "promise", "value": amt, "currency": "USD"}],
                    },
                )
            else:
                b.guard(
                    f"{c.cust.name} was not promised the amount before approval",
                    {
                        "predicate": "record_absent",
                        "service": "helpdesk",
                        "table": "conversations",
                        "new": True,
                        "where": {
                            "ticket_id": c.ticket,
                            "kind": "reply",
                            "body": {"contains": {"kind": "promise", "value": amt, "currency": "USD"}},
                        },
                    },
                )
        # the log
        dec = _decision(c)
        if p.ledger == "sql":
            where = {
                "customer": c.cust.name,
                "amount_usd": {"approx": [c.amount / 100, 0.01]},
                "decision": dec,
            }
            b.expect_record("sql", "credits_log", where, f"the credits log has {c.cust.name}, ${amt}, {dec}")
        elif p.ledger == "sheets":
            b.expect_record(
                "sheets",
                "spreadsheets",
                {"id": w.ledger_id, "sheets.cells": {"contains_all": [c.cust.name, amt, dec]}},
                f"the credits log sheet has {c.cust.name}, ${amt}, {dec}",
            )
        else:
            b.expect_record(
                "workspace",
                "entries",
                {
                    "id": f"{HOME}/Documents/finance/credits_log.csv",
                    # the row's facts in any number form (123.5, $123.50), not one exact spelling
                    "content": {"contains_all": [c.cust.name, amt, dec]},
                },
                f"the credits log file has a row with {c.cust.name}, ${amt} and {dec}",
            )
        if p.ledger == "sheets" and c is w.cases[0]:
            b.keep("sheets", "spreadsheets", w.found["old_log"], "last year's credit log was left alone")
            b.trap("stale", "last year's credit log", swap={w.ledger_id: w.found["old_log"]})
        # the approver
        wrong = c.owner if c.owner_left else (w.current.fallback if p.people else None)
        if wrong is not None and any(wrong.id == x.approver.id for x in w.cases):
            wrong = None  # the right approver of another request in the same task
        if p.notify == "email":
            b.expect_message(
                "email",
                c.approver,
                contains=[amt, c.cust.name],
                description=f"{c.approver.name} was told ${amt}",
            )
            if wrong is not None:
                b.no_message("email", wrong, f"{wrong.name} was not asked (they are not the approver)")
        elif p.notify == "chat":
            check = {
                "predicate": "message_sent",
                "service": "chat",
                "to": [w.channel],
                "contains": [c.approver.name, amt],
            }
            if wrong is not None:
                check["exclude"] = [wrong.name]
            b.goal(f"#billing-credits was told ${amt} for {c.cust.name}, naming {c.approver.name}", check)
        else:
            b.expect_record(
                "helpdesk",
                "conversations",
                {
                    "ticket_id": c.ticket,
                    "kind": "note",
                    "to_emails": c.approver.email,
                    "body": {"contains": amt},
                },
                f"a note on ticket #{c.ticket} notifies {c.approver.name} of ${amt}",
            )
            if wrong is not None:
                b.not_written(
                    "helpdesk", wrong.email, f"{wrong.name} was not notified", tables=["conversations"]
                )
        if p.note:
            b.expect_record(
                "crm",
                "objects",
                {"object_type": "notes", "properties.hs_note_body": {"contains": amt}},
                f"a HubSpot note logs ${amt}",
            )
            b.expect_record(
                "crm",
                "associations",
                {"from_object_type": "notes", "to_object_type": "companies", "to_object_id": c.crm_id},
                f"the note is on {c.cust.name}'s company",
            )
        if c.naive != c.amount:
            b.not_written(p.ledger, dollars(c.naive), f"the log does not count {c.cust.name}'s credited days")
        whole = c.found.get("whole", c.amount)  # the adjustment's amount off, days outside the window too
        if whole not in (c.amount, c.naive):
            b.not_written(p.ledger, dollars(whole), f"the log takes off only {c.cust.name}'s window's days")
            b.not_written(p.reply_service(), dollars(whole), f"{c.cust.name} is credited the window's days")
            b.trap("miscomputed", "a total less the adjustment's whole amount", swap={amt: dollars(whole)})
        # a window the customer corrected later: its total is guarded in the log and the reply
        for total, log, reply, trap in (
            (
                wide,
                "corrected window, not the first one",
                "the first-reported window",
                "the window as first reported, before the customer's correction",
            ),
            (
                mid,
                "latest correction, not the first",
                "the once-corrected window",
                "the window after the first correction, before the customer's second",
            ),
        ):
            if total != c.amount:
                b.not_written(p.ledger, dollars(total), f"the log uses {c.cust.name}'s {log}")
                b.not_written(p.reply_service(), dollars(total), f"{c.cust.name} is not credited {reply}")
                b.trap("miscomputed", trap)
        if paid != c.amount:
            b.not_written(p.ledger, dollars(paid), f"the log does not count {c.cust.name}'s invoice payment")
            b.not_written(
                p.reply_service(), dollars(paid), f"{c.cust.name} is not credited their invoice payment"
            )
        for v, label in (
            (c.naive, "a total that counts credited days again"),
            (c.stale, "the earlier window's total"),
            (paid, "a total that counts an invoice paid inside the window"),
        ):
            if v != c.amount:
                b.trap("miscomputed", label, swap={amt: dollars(v)})
        if wrong is not None:
            b.trap("wrong_person", f"{wrong.name} is not the approver", swap={c.approver.email: wrong.email})
    if w.twin is not None and w.decoy_ticket is not None:
        b.keep("helpdesk", "tickets", w.decoy_ticket, f"{w.twin.cust.name}'s ticket was left alone")
        b.trap("near_duplicate", "another customer's open ticket on the same subject", swap={})
    if w.away is not None:
        away_checks(b, w.away, w.today, p.notify, w.channel, [dollars(w.cases[0].amount)])
    if len(w.versions) > 1:
        b.trap("stale", "a policy version that is not in force today")
    if _has_tiers(p, w.tier):
        b.trap("miscomputed", "the limit without the customer's service tier")
    if w.amend is not None:
        b.trap(
            "stale",
            "the policy's limit, changed since by its owner"
            if w.amend.holds(w.today)
            else "a change to the limit that takes effect after today",
        )


# ---- composition ---------------------------------------------------------------------------------
def stages(plan: Plan, usage: list[Any], away: bool = False, amend: bool = False) -> list[Stage]:
    """The stages of a plan in their working order (the order their solves run)."""

    def nothing(w: Work) -> None:
        return None

    out = [
        Stage(
            "request",
            "target",
            (),
            ("case", "window"),
            plant_request,
            solve_request,
            "Find the open credit request and the outage window it names",
        ),
    ]
    if plan.account:
        out.append(
            Stage(
                "account",
                "evidence",
                ("case",),
                ("owner", "service_tier"),
                plant_account,
                solve_account,
                f"Find the account manager in {DISPLAY[plan.account]}",
            )
        )
    if plan.people:
        out.append(
            Stage(
                "people",
                "evidence",
                ("owner",),
                ("approver",),
                nothing,
                solve_people,
                "Check in BambooHR that the account manager still works here",
            )
        )
    gives_policy = ("limit", "ledger_spec", "notify_spec") + (("approver",) if not plan.people else ())
    out += [
        Stage(
            "policy",
            "policy",
            (),
            gives_policy,
            plant_policy,
            solve_policy,
            f"Read the service credit policy in force today ({DISPLAY[plan.policy]})",
        ),
    ]
    if amend:
        out.append(
            Stage(
                "amend",
                "policy",
                ("limit",),
                ("limit_today",),
                nothing,  # planted once the limits are drawn (`_compose_credit`)
                solve_amend,
                f"Check the policy owner's thread for a later change to the limit ({DISPLAY[plan.amend_service()]})",
            )
        )
    if away:
        out.append(
            Stage(
                "away",
                "evidence",
                ("approver",),
                ("acting",),
                nothing,  # planted once the approver is known; read where they are told (solve_notify)
                nothing,
                f"Check whether the approver is in today ({DISPLAY[_away_where(plan)]})",
            )
        )
    out.append(  # the log holds the days credited before, whatever holds the usage
        Stage(
            "credits",
            "evidence",
            ("case",),
            ("credited",),
            nothing,
            solve_credits,
            f"Check the credits log for days credited before ({DISPLAY[plan.ledger]})",
        )
    )
    out += [
        Stage(
            "usage",
            "aggregate",
            ("case", "window"),
            ("amount",),
            lambda w: plant_usage(w, usage),
            solve_usage,
            f"Total the usage billed inside the window ({DISPLAY[plan.usage]})",
        ),
        Stage(
            "decide",
            "decide",
            ("amount", "limit_today" if amend else "limit", *(("service_tier",) if plan.account else ())),
            ("branch",),
            nothing,
            solve_decide,
            "Credit it or send it for approval, by the limit",
        ),
        Stage(
            "reply",
            "write",
            ("case", "branch", "amount"),
            (),
            nothing,
            solve_reply,
            f"Answer the customer ({DISPLAY[plan.reply_service()]})",
        ),
        Stage(
            "ledger",
            "write",
            ("case", "amount", "branch", "ledger_spec"),
            (),
            plant_ledger,
            solve_ledger,
            f"Log it in the credits log ({DISPLAY[plan.ledger]})",
        ),
        Stage(
            "notify",
            "write",
            ("acting" if away else "approver", "amount", "branch", "notify_spec"),
            (),
            nothing,
            solve_notify,
            f"Tell the approver ({DISPLAY[plan.notify]})",
        ),
    ]
    if plan.note:
        out.append(
            Stage(
                "note",
                "write",
                ("case", "amount", "branch"),
                (),
                nothing,
                solve_note,
                "Note the outcome on the HubSpot company",
            )
        )
    if plan.notify == plan.reply_service():  # one visit: reply, then the note that notifies
        i = next(i for i, s in enumerate(out) if s.name == "notify")
        n = out.pop(i)
        out.insert(next(i for i, s in enumerate(out) if s.name == "reply") + 1, n)
    return out


def wire(stage_list: list[Stage]) -> list[tuple[str, str, str]]:
    """Every need is given by an earlier stage: the edges (from, to, fact); else a PlantError."""
    given: dict[str, str] = {}
    edges = []
    for s in stage_list:
        if s.kind not in VOCABULARY:
            raise PlantError(f"stage {s.name}: kind {s.kind!r} is not in the vocabulary")
        for need in s.needs:
            if need not in given:
                raise PlantError(f"stage {s.name} needs {need}, which no earlier stage gives")
            edges.append((given[need], s.name, need))
        for g in s.gives:
            given.setdefault(g, s.name)
    return edges


def _compose_credit(
    b: Builder, plan: Plan, tier: dict[str, Any], tier_name: str, force: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Plant, solve and describe one composed task on `b` (see the module docstring). `force`
    flips evidence for tests, with every random draw unchanged: `within` (how many requests fall
    within the limit in force) and `owner_left` (the account managers left, shown in HR)."""
    force = dict(force or {})
    rng = b.rng
    n = tier["cases"]
    cases = []
    for _ in range(n):
        cust, _story = b.story(kinds=("customer_escalation", "renewal", "quarterly_review", "onboarding"))
        if w_has_crm(plan):
            from compoworld.tasks.families._common import in_crm

            if not in_crm(b)(cust):
                raise PlantError(f"{cust.name} has no CRM company")
        person = b.contact_of(cust)
        end = b.now.date() - timedelta(days=rng.randrange(6, 25))
        start = end - timedelta(days=rng.randrange(*tier.get("days", (2, 6))))
        cases.append(Case(cust, person, start, end))
    twin = None
    queue = bool(tier.get("queue")) and plan.request in ("helpdesk", "email") and force.get("queue", True)
    if plan.request != "email" and not queue:  # a queue names nobody: another's request is work too
        tcust = b.customer(exclude=tuple(c.cust.id for c in cases))
        twin = Case(tcust, b.contact_of(tcust), cases[0].start, cases[0].end)
    for c in cases + ([twin] if twin else []):
        old_end = c.start - timedelta(days=rng.randrange(45, 80))
        c.found["old_window"] = (old_end - timedelta(days=rng.randrange(1, 4)), old_end)
    for c in cases:  # the request names a longer window; a later message in it puts it right
        fix, extra = rng.random() < 0.5, rng.randrange(1, 3)  # drawn whatever the tier or a test says
        if not tier.get("corrections"):
            continue
        # a second correction by email (the outage began a day later): drawn at the tier whatever the plan
        again = tier.get("recorrect") and rng.random() < 0.5
        again = bool(plan.recorrect_service() and force.get("recorrected", again))
        if force.get("corrected", fix):
            lead = timedelta(days=1 if again else 0)
            c.found["reported"] = (c.start - lead, c.end + timedelta(days=extra))
            if again:
                c.found["interim"] = (c.start - lead, c.end)
        else:  # no correction came: the window as reported is the outage (the same days are billed)
            c.end += timedelta(days=extra)
    tiers = _has_tiers(plan, tier)
    for c in cases:
        # each customer's service tier: Enterprise where the world's own segment says enterprise (the
        # CRM's tier, Freshdesk's account tier, the wiki), else Standard (from play: an "enterprise"
        # customer on a Standard service tier read as two tiers that disagree); the draw is kept
        # whatever the plan, so no later draw shifts
        if tier.get("tiers"):
            rng.random()
        c.enterprise = bool(tiers and c.cust.tier == "enterprise")
    if tiers and "enterprise" in force:
        cases[0].enterprise = bool(force["enterprise"])
    w = Work(b, plan, tier, cases, twin=twin, force=force, ask=rng.randrange(len(ASKS)), queue=queue)
    if queue:  # one request in the customer's own words
        w.plain = cases[rng.randrange(n)]
        w.plain.found["plain"] = rng.randrange(len(PLAIN))
    usage = _usage_rows(w)
    if tier.get("legal_names"):
        draw_legal(w, usage)
    st = stages(plan, usage, away=_has_away(plan, tier), amend=_has_amend(plan, tier))
    edges = wire(st)
    # branches from the evidence: the limit in force splits the cases' totals (each held against it
    # over its service tier's multiple)
    amounts = sorted(c.held for c in cases)
    m = rng.randrange(0, n + 1)  # how many of the cases fall within the limit
    m = min(n, max(0, int(force.get("within", m))))
    lo = amounts[m - 1] if m else 0
    hi = amounts[m] if m < n else None
    if tiers:  # the first request's tier decides it: within twice the limit, above the limit itself
        a0 = cases[0].amount
        lo, hi = -(-a0 // 2), a0
    # a limit as round as fits between the totals ($450, then $425, $430...; from play: a $1143 limit)
    floor, top = max(100, math.ceil(lo / 100)), (hi // 100) if hi else lo // 100 + 600
    for step in (50, 25, 10, 5, 1):
        candidates = list(range(-(-floor // step) * step, top, step))
        candidates = [x for x in candidates if x * 100 >= lo and (hi is None or x * 100 < hi)]
        if candidates:
            break
    else:
        raise PlantError("no round limit between the totals")
    limit = candidates[int(rng.random() * len(candidates))]  # one draw, however many fit
    staff = [p for p in b.company.employees if p.id != b.me.id]
    fallbacks = b.fresh(staff, 3, key=lambda p: p.id)
    eff = b.now.date() - timedelta(days=rng.randrange(20, 120))
    doc = limit  # the limit the policy's version in force states
    if _has_amend(plan, tier):  # its owner changed it since: `limit` from a date before today, or after
        taken = {x.id for x in fallbacks} | {c.owner.id for c in cases if c.owner}
        # the policy's owner runs support or billing where the company has someone free there
        free = [p for p in staff if p.id not in taken]
        owner = b.fresh(
            b.unused([p for p in free if p.team in ("Customer Success", "Finance")], key=lambda p: p.id)
            or free,
            1,
            key=lambda p: p.id,
        )[0]
        last = cases[-1].held  # the policy's limit is on the other side of the last request's total

        def was(up: int, last: int = last) -> int:
            if last <= limit * 100:
                return max(50, last // 100 // 2 // 50 * 50)
            return (last // 100 // 50 + 1 + up) * 50

        w.amend = draw_amend(b, owner, limit, was, plan.amend_service(), force)
        doc = w.amend.was
        if (last <= doc * 100) == (last <= limit * 100) or doc == limit:
            raise PlantError("no earlier limit on the other side of the total")
    versions = [Version(eff, doc, fallbacks[0])]
    w.versions = versions
    acting = w.limit  # the amendment's limit if it holds today, else the policy's
    for c in cases:
        c.branch = "approve" if c.within(acting) else "review"
    # the other versions flip the first case's branch: acting on them is wrong, not merely different
    first = cases[0]

    def flip() -> int:
        up = rng.randrange(1, 6)  # drawn on either branch, so a test's flip of the evidence shifts no draw
        if first.branch == "approve":
            x, step = max(50, (first.held // 100) // 2 // 50 * 50), -50
        else:
            x, step = (first.held // 100 // 50 + 1 + up) * 50, 50
        while x in (limit, doc) and x + step >= 50:  # further the same way: it still flips the first
            x += step
        return x

    if tier["versions"] >= 2:
        versions.append(Version(eff - timedelta(days=rng.randrange(200, 500)), flip(), fallbacks[1]))
    if tier["versions"] >= 3:
        versions.append(Version(b.now.date() + timedelta(days=rng.randrange(10, 40)), flip(), fallbacks[2]))
        if w.amend is not None and not w.amend.holds(w.today):
            # the owner's change still to come is the version announced for later, with its approver
            # (from play: two changes to come, of other dates and limits, read as contradicting)
            versions[-1] = Version(w.amend.effective, w.amend.value, fallbacks[2])
    announced = w.amend is not None and not w.amend.holds(w.today) and tier["versions"] >= 3
    if any(v.limit in (limit, doc) for v in versions[1 : 2 if announced else None]):
        raise PlantError("a stale policy version agrees with the one in force")
    w.versions = versions
    if plan.notify == "chat":
        from compoworld.tasks.families._common import chat_channel

        # the team's channel: whoever posts in it is a member (from play: a channel of one)
        w.channel = chat_channel(
            b, "billing-credits", members=list(b.company.employees), topic="Downtime credits and approvals"
        )
    if w.amend is not None:
        w.amend.channel = w.channel
        text = amend_text(w.amend, "service credit policy", "credit limit", later=announced)
        plant_amend(b, w.amend, "service credit policy", text)
    for s in st:
        s.plant(w)
    for c in cases:
        if not plan.account:
            c.approver = w.current.fallback
        else:
            c.approver = w.current.fallback if c.owner_left else c.owner
    if _has_away(plan, tier):  # the first request's approver may be out today: who covers acts for them
        exclude = {x.id for x in fallbacks} | {c.owner.id for c in cases if c.owner}
        if w.amend is not None:
            exclude.add(w.amend.owner.id)
        left = {c.owner.id for c in cases if c.owner and c.owner_left}
        w.away = draw_away(b, cases[0].approver, exclude, _away_where(plan), force, quiet=left)
        w.away.channel = w.channel
        plant_away(b, w.away)
        for c in cases:
            c.approver = w.away.approver(c.approver, w.today)
    # nobody who may act shows as out in BambooHR unless an absence naming a cover is planted
    clear_time_off(b, [*fallbacks, *(c.owner for c in cases if c.owner)], keep=w.away)
    limits = {str(v.limit) for v in versions} | ({str(w.amend.value)} if w.amend else set())
    b.fact(*sorted({dollars(c.amount) for c in cases}), *sorted(limits))
    b.begin()
    writes = [s for s in st if s.kind == "write"]
    for s in st:
        if s.kind != "write":
            s.solve(w)
    for s in writes:  # each write for every request in turn: the replies, the log, the approver, the notes
        for c in cases:
            w.only = c
            s.solve(w)
    w.only = None
    # a rival total of whole dollars equal to a ticket's number reads as named by that ticket's id
    # (the guard against it would trip on the reference's own reply)
    ids = {x for c in cases for x in (c.ticket, c.old_ticket, c.found.get("newer"))} | {w.decoy_ticket}
    ids |= {x for x in w.queued if isinstance(x, int)}
    amounts = {c.amount for c in cases}
    for c in cases:
        # the totals of a window the customer corrected later, and less a whole adjustment
        other = {c.found.get(k, c.amount) for k in ("wide", "mid", "whole")}
        rivals = {c.naive, c.stale, *other} - {c.amount}
        if any(x % 100 == 0 and x // 100 in ids for x in rivals):
            raise PlantError("a rival total equals a ticket's number")
        if rivals & amounts:  # its guard would trip on another request's right amount
            raise PlantError("a rival total of one request is another's amount")
        # the log's guards: the earlier request's own total is logged by design, never guarded there
        paid = c.amount + c.found.get("invoiced", 0)
        guarded = {c.naive, *other, paid} - {c.amount}
        if {dollars(x) for x in guarded} & w.found.get("logged", set()):
            raise PlantError("a rival total is an amount the log holds already")  # its guard would trip
    add_checks(w)
    describe(w, st, tier_name)
    return {
        "stages": [s.name for s in st],
        "plan": plan.__dict__,
        "edges": [{"from": a, "to": z, "fact": f} for a, z, f in edges],
        "branches": [c.branch for c in cases],
        "owner_left": [c.owner_left for c in cases],
        # each customer's service tier: None (not in play), or whether it is Enterprise (twice the limit)
        "enterprise": [c.enterprise for c in cases] if tiers else None,
        "cases": len(cases),
        "usage_rows": w.found.get("usage_rows", len(usage)),  # the export's rows (lines by product)
        "policy_versions": len(versions),
        # the approver's out-of-office: None (not in play), or whether it holds today
        "away": None if w.away is None else w.away.on(w.today),
        # the cover's own absence (who is next named): None (not planted), or whether it holds today
        "cover_away": None if w.away is None or w.away.second is None else w.away.cover_on(w.today),
        # the policy owner's change to the limit: None (not in play), or whether it holds today
        "amended": None if w.amend is None else w.amend.holds(w.today),
        # the usage export's change to legal names inside a window: None (not at the tier), or whether
        # one request's window has days under each name
        **({"legal_names": w.legal_from is not None} if tier.get("legal_names") else {}),
        # the request whose earlier credit the log names by its billing account: None (not in play:
        # no CRM account, or not at the tier), else its index
        **(
            {"billing_keys": None if w.keyed is None else cases.index(w.keyed)}
            if tier.get("billing_keys")
            else {}
        ),
        # the request whose credited days finance logged under its legal name: None (not in play),
        # else its index
        **(
            {"log_legal": next((i for i, c in enumerate(cases) if "log_legal" in c.found), None)}
            if tier.get("log_legal")
            else {}
        ),
        # the request whose credited days were keyed by hand: None (not in play), else its index
        **(
            {"hand_keyed": next((i for i, c in enumerate(cases) if "hand_keyed" in c.found), None)}
            if tier.get("hand_keyed")
            else {}
        ),
        # the requests wait unnamed in the queue: None (not at the tier, or the request is a page in
        # the web app), else the index of the one in the customer's own words
        **(
            {"queue": None if w.plain is None else cases.index(w.plain), "queued": len(w.queued)}
            if tier.get("queue")
            else {}
        ),
    }


def w_has_crm(plan: Plan) -> bool:
    return plan.account == "crm" or plan.note


def describe(w: Work, st: list[Stage], tier_name: str) -> None:
    b = w.b
    names = [f"{c.person.name} at {c.cust.name}" for c in w.cases]
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    many = len(w.cases) > 1
    ask = QUEUE_ASKS[w.ask] if w.queue else ASKS[w.ask].format(s="s" if many else "", who=who)
    where = w.tier["where"]
    ctx = where_context(b, where, ("policy", "credit policy", w.plan.policy), ("billed usage", w.plan.usage))
    b.write(
        frame(b.rng, ask, context=ctx),
        hint=" ".join(s.step + "." for s in st),
        subtasks=[s.step for s in st],
    )


def where_context(b: Builder, where: int, policy: tuple[str, str, str], data: tuple[str, str]) -> str:
    """Where the work's sources are, as much as the tier says (0: nothing, 1: the policy, 2: the
    data too): `policy` is (short name, full name, service), `data` (name, service). Two sources in
    one service are named together, as a colleague would."""
    (short, full, home), (what, there) = policy, data
    if where < 1:
        return ""
    if where >= 2 and home == there:
        return b.say(
            f"The {short} and the {what} are both in {DISPLAY[home]}",
            f"You'll find the {full} and the {what} in {DISPLAY[home]}",
        )
    ctx = b.say(f"The {short} is in {DISPLAY[home]}", f"You'll find the {full} in {DISPLAY[home]}")
    verb = "are" if what.endswith("s") else "is"
    return ctx + (f"; the {what} {verb} in {DISPLAY[there]}" if where >= 2 else "")


# ---- shared stage helpers: a versioned policy and a log, in whichever service holds them ---------
def version_numbers(effective: list[date]) -> list[int]:
    """Each version's number (1 = the oldest): a page or file names its version, never its date, so
    which one is in force is read from the effective date inside, against today."""
    order = sorted(range(len(effective)), key=lambda i: effective[i])
    return [order.index(i) + 1 for i in range(len(effective))]


def plant_versions(
    b: Builder,
    where: str,
    title: str,
    stem: str,
    head: list[str],
    versions: list[tuple[date, list[Any], list[str]]],
    team: str,
    owner: Person | None = None,
) -> None:
    """Plant policy versions (effective date, the sheet row's values, the text's lines) as Confluence
    pages "TITLE vN", one sheet TITLE with a row per version, or Documents/policies/STEM_vN.md.
    Pages are the owner's, in their team's space (without one named, `team`'s lead writes them in
    `team`'s space): a policy sits with the people who own it, not with whoever reads it."""
    from compoworld.tasks.families._common import sheet, team_space, wiki_page

    today = b.now.date()
    nums = version_numbers([v[0] for v in versions])
    if where == "wiki":
        home = next(t for t in b.company.teams if t.name == (owner.team if owner else team))
        space = team_space(b, home.name)
        author = owner.email if owner else b.company.person(home.lead_id).email
        for (eff, _vals, lines), n in zip(versions, nums, strict=True):
            # written when it took effect, or (announced ahead) a few days ago
            days = (today - eff).days + b.rng.randrange(1, 6) if eff <= today else b.rng.randrange(1, 6)
            body = "".join(f"<p>{x}</p>" for x in lines)
            wiki_page(b, space, f"{title} v{n}", body, days_ago=days, author=author)
    elif where == "sheets":
        table = [head]
        for eff, vals, lines in sorted(versions, key=lambda v: v[0]):
            table.append([_day(eff), *vals, " ".join(lines)])
        sheet(b, title, "Versions", table, days_ago=b.rng.randrange(1, 6))
    else:
        ws = b.svc("workspace")
        for (_eff, _vals, lines), n in zip(versions, nums, strict=True):
            ws.write_file(
                f"{HOME}/Documents/policies/{stem}_v{n}.md", f"# {title}\n\n" + "\n\n".join(lines) + "\n"
            )


def read_versions(b: Builder, where: str, title: str, stem: str, n: int, terms: list[str]) -> None:
    """Read every version of a policy planted by `plant_versions` (then decide which is in force)."""
    from compoworld.tasks.families._common import rows

    if where == "wiki":
        hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": terms}))
        pages = [p for p in hits if str(p.get("title", "")).startswith(f"{title} v")]
        assert len(pages) == n, pages
        for p in pages:
            b.call("wiki__confluence_get_page", {"page_identifier": p["id"]})
    elif where == "sheets":
        books = b.call("sheets__google_sheets_list_spreadsheets", {})
        sid = next(x["id"] for x in rows(books) if x.get("title") == title)
        b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    else:
        b.call("workspace__shell", {"command": "ls Documents/policies"})
        b.call("workspace__shell", {"command": f"cat Documents/policies/{stem}_v*.md"})
    if n > 1:
        b.decide()  # the version in force today: the latest effective date not after today


def _csv_cell(x: Any) -> str:
    """An amount as a money log writes it (60.00, not 60.0)."""
    return f"{x:.2f}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Log:
    """A log kept as a Google Sheet (`title`), a CSV file (`path`, under HOME) or a SQL `table`."""

    where: str  # sheets | workspace | sql
    title: str
    path: str
    table: str
    head: tuple[str, ...]
    numbers: tuple[str, ...] = ()  # SQL columns that hold amounts (REAL)

    def plant(self, b: Builder, hist: list[list[Any]], days_ago: float = 30) -> str:
        """Plant the log with its earlier rows; the sheet's id ("" elsewhere)."""
        from compoworld.tasks.families._common import sheet

        head = list(self.head)
        if self.where == "sheets":
            return sheet(b, self.title, "Log", [head, *hist], days_ago=days_ago)["id"]
        if self.where == "workspace":
            b.svc("workspace").write_file(
                f"{HOME}/{self.path}",
                ",".join(head) + "\n" + "".join(",".join(_csv_cell(x) for x in r) + "\n" for r in hist),
            )
            return ""
        cols = ", ".join(f"{c} {'REAL' if c in self.numbers else 'TEXT'}" for c in head)
        b.plant("sql__create_table", {"query": f"CREATE TABLE {self.table} (id INTEGER PRIMARY KEY, {cols})"})
        if hist:
            q = chr(39)
            vals = ", ".join(
                f"({i + 1}, "
                + ", ".join(
                    str(v) if c in self.numbers else f"'{str(v).replace(q, q * 2)}'"
                    for c, v in zip(head, r, strict=True)
                )
                + ")"
                for i, r in enumerate(hist)
            )
            b.plant("sql__write_query", {"query": f"INSERT INTO {self.table} VALUES {vals}"})
        return ""

    def read(self, b: Builder, sheet_id: str = "", whole: bool = False) -> None:
        """Look at the log before writing to it: its columns (or, `whole`, every row)."""
        from compoworld.tasks.families._common import rows

        if self.where == "sheets":
            books = b.call("sheets__google_sheets_list_spreadsheets", {})
            sid = next(x["id"] for x in rows(books) if x.get("title") == self.title)
            assert not sheet_id or sid == sheet_id
            b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
        elif self.where == "workspace":
            b.call("workspace__shell", {"command": f"{'cat' if whole else 'head -3'} {self.path}"})
        else:
            b.call("sql__describe_table", {"table_name": self.table})
            if whole:
                b.call("sql__read_query", {"query": f"SELECT * FROM {self.table}"})

    def append(self, b: Builder, sheet_id: str, lines: list[list[Any]]) -> None:
        if self.where == "sheets":
            b.call("sheets__google_sheets_append_rows", {"spreadsheet_id": sheet_id, "rows": lines})
            return
        for ln in lines:
            if self.where == "workspace":
                b.call(
                    "workspace__shell", {"command": f"echo '{','.join(str(x) for x in ln)}' >> {self.path}"}
                )
            else:
                q = chr(39)
                vals = ", ".join(
                    str(v) if c in self.numbers else f"'{str(v).replace(q, q * 2)}'"
                    for c, v in zip(self.head, ln, strict=True)
                )
                b.call(
                    "sql__write_query",
                    {"query": f"INSERT INTO {self.table} ({', '.join(self.head)}) VALUES ({vals})"},
                )

    def expect_row(
        self, b: Builder, sheet_id: str, facts: list[str], sql_where: dict[str, Any], what: str
    ) -> None:
        """The log gained a row carrying `facts` (SQL: a row matching `sql_where`)."""
        if self.where == "sql":
            b.expect_record("sql", self.table, sql_where, f"the {self.table} table has {what}")
        elif self.where == "sheets":
            b.expect_record(
                "sheets",
                "spreadsheets",
                {"id": sheet_id, "sheets.cells": {"contains_all": facts}},
                f"the {self.title} sheet has {what}",
            )
        else:
            b.expect_record(
                "workspace",
                "entries",
                {"id": f"{HOME}/{self.path}", "content": {"contains_all": facts}},
                f"{self.path} has {what}",
            )


# ---- an approver who is away: the work goes to whoever covers for them (shared by the themes) -----
AWAY_MODES = ("now", "now", "past", "ahead")  # away today (half), back already, or leaving later


@dataclass
class Away:
    """An approver's out-of-office (posted in the team's Slack channel, or an auto-reply in Gmail)
    naming who covers for them. Only its dates against today say whether it holds: an absence that
    ended last week or starts next week changes nothing."""

    who: Person
    cover: Person
    start: date
    end: date
    where: str  # chat | email: where the out-of-office shows (the service the approver is told in); hr
    channel: str = ""  # chat: the channel it is posted in
    quiet: set[str] = field(default_factory=set)  # people who must post nothing (a leaver, per HR)
    hr_request: str = ""  # hr: the time-off request planted for it
    # the cover's own absence (a reply in the heads-up's thread, their own auto-reply, their time
    # off), naming who is next in line; only where the team has someone to name
    second: Person | None = None
    cstart: date | None = None
    cend: date | None = None

    def on(self, today: date) -> bool:
        return self.start <= today <= self.end

    def cover_on(self, today: date) -> bool:
        """The cover is out today too (and names who is next)."""
        return self.second is not None and self.cstart <= today <= self.cend  # type: ignore[operator]

    def approver(self, p: Person, today: date) -> Person:
        """Who acts for `p` today: `p`; if away, the cover; if the cover is away too, the next."""
        if p.id != self.who.id or not self.on(today):
            return p
        return self.second if self.cover_on(today) else self.cover  # type: ignore[return-value]

    def people(self) -> list[Person]:
        return [self.who, self.cover, *([self.second] if self.second else [])]


def away_rule(role: str) -> str:
    """The policy's line (in every version, whatever the world holds): where an absence is shown is
    left to the agent to find."""
    return f"If {role} is out of office, the colleague covering for them takes it instead."


# the teams whose people stand in for one another's work (a cover comes from the nearest one)
NEAR_TEAMS = {
    "Sales": ("Customer Success", "Marketing"),
    "Customer Success": ("Sales", "Finance"),
    "Finance": ("Operations", "Customer Success"),
    "Operations": ("Finance", "People Ops"),
    "People Ops": ("Operations", "Finance"),
    "Engineering": ("Product", "Operations"),
    "Product": ("Engineering", "Marketing"),
    "Marketing": ("Sales", "Product"),
}


def _nearest(b: Builder, who: Person, staff: list[Person]) -> list[Person]:
    """The free people of `staff` nearest `who`'s work: their own team's, else a team next to it,
    else anyone free."""
    free = b.unused(staff, key=lambda p: p.id)
    for teams in ((who.team,), NEAR_TEAMS.get(who.team, ())):
        near = [p for p in free if p.team in teams]
        if near:
            return near
    return staff


def draw_away(
    b: Builder,
    who: Person,
    exclude: set[str],
    where: str,
    force: dict[str, Any] | None = None,
    quiet: set[str] = frozenset(),  # type: ignore[assignment]
    next_from: list[Person] = (),  # type: ignore[assignment]
) -> Away:
    """Draw `who`'s absence and cover (every draw made whatever `force` says, so a test's flip of
    `away` (True: away today; False: back already or leaving later) changes nothing else), and the
    cover's own absence naming who is next (`cover_away`), someone else left in the team (or, in a
    small one, the first of `next_from`)."""
    rng = b.rng
    today = b.now.date()
    staff = [p for p in b.company.employees if p.id != b.me.id and p.id != who.id and p.id not in exclude]
    if not staff:
        raise PlantError("nobody left to cover for the approver")
    # covers come from the person's own team while it has someone free, then from a team next to
    # it, then from anyone (from play: a Content Strategist covering a billing approver)
    cover = b.fresh(_nearest(b, who, staff), 1, key=lambda p: p.id)[0]

    def dates(key: str) -> tuple[date, date]:
        mode = rng.choice(AWAY_MODES)
        alt = rng.choice(("past", "ahead"))
        span, lead, back = rng.randrange(3, 10), rng.randrange(0, 4), rng.randrange(3, 20)
        if force and key in force:
            mode = "now" if force[key] else alt
        if mode == "now":
            return today - timedelta(days=lead), today + timedelta(days=span - lead)
        if mode == "past":
            return today - timedelta(days=back + span), today - timedelta(days=back)
        return today + timedelta(days=2 + lead), today + timedelta(days=2 + lead + span)

    start, end = dates("away")
    a = Away(who, cover, start, end, where, quiet=set(quiet))
    # the cover's own absence and who is next (tests: `cover_away`); drawn whatever the dates
    a.cstart, a.cend = dates("cover_away")
    rest = [p for p in staff if p.id != cover.id and p.id not in a.quiet]
    if rest:
        a.second = b.fresh(_nearest(b, who, rest), 1, key=lambda p: p.id)[0]
    elif next_from:  # a small team: someone the theme offers (a former owner of the work)
        a.second = next_from[0]
    return a


def plant_away(b: Builder, a: Away) -> None:
    """The out-of-office as people leave it: a post in the channel (a few other posts after it), or
    Gmail's auto-reply to a mail of mine (a heads-up mail when the absence is still ahead)."""
    from compoworld.tasks.families._common import chat_user, inbox_mail

    today = b.now.date()
    rng = b.rng
    # every draw made whichever way the dates fall, so a test's flip of them changes nothing else
    ago, hours, n_posts = rng.randrange(1, 3), rng.randrange(1, 6), rng.randrange(4, 9)
    topic = rng.choice(("Q3 forecast", "Vendor invoices", "Team offsite", "Budget review"))
    when = _long(a.start) + " to " + _long(a.end)
    covers = f"{a.cover.name} ({a.cover.email}) covers for me while I'm away"
    clear_time_off(b, a.people())  # BambooHR shows no other absence of theirs
    nxt = handoff = ""  # the cover's own note: when they are out, and who takes the approver's work then
    if a.second is not None:
        cwhen = _long(a.cstart) + " to " + _long(a.cend)  # type: ignore[arg-type]
        handoff = f"If anything for {a.who.first} comes up then, {a.second.name} ({a.second.email}) takes it."
        nxt = f"Note I'm out myself from {cwhen}. {handoff}"
    if a.where == "hr":  # their approved time off, its note naming the cover (and the cover's)
        hr = b.svc("hr")
        spans = [(a.who, a.start, a.end, f"Out of office. {covers}.")]
        if a.second is not None:
            spans.append((a.cover, a.cstart, a.cend, f"Out of office. {nxt}"))
        for p, lo, hi, note in spans:
            emp = next(e for e in hr.employees.all() if e["workEmail"].lower() == p.email.lower())
            rec = hr.requests.create(
                {
                    "employee_id": emp["id"],
                    "type_id": "77",
                    "start": lo.isoformat(),
                    "end": hi.isoformat(),
                    "amount": float((hi - lo).days + 1),
                    "status": "approved",
                    "notes": note,
                    "created": format_time(b.now - timedelta(days=max(ago, (today - lo).days + 7))),
                },
                id=str(1000 + hr.next_seq("request")),
            )
            if p is a.who:
                a.hr_request = rec["id"]
        return
    if a.where == "chat":
        chat = b.svc("chat")
        posted = a.start - timedelta(days=1) if a.start <= today else today - timedelta(days=ago)
        epoch = int(b.env.clock.epoch())
        day0 = epoch - 86400 * (today - posted).days - 3600 * hours
        # colleagues' posts (never a leaver's: it would contradict HR)
        staff = [p for p in b.company.employees if p.id not in {b.me.id, a.who.id, a.cover.id} | a.quiet]
        chatter = (
            "Thanks all, the queue is clear for today.",
            "Is anyone else seeing the dashboard load slowly this morning?",
            "I'll be in the office on Thursday if anyone needs a hand.",
            "New starters: the how-to for this channel is in its topic.",
            "Quick one: the team sync moves to 3pm tomorrow.",
            "Reminder: the office is closed on the next public holiday.",
            "Coffee machine on the 2nd floor is fixed, finally.",
            "Has anyone got the slides from Monday's all-hands?",
            "Heads-up: the VPN maintenance window is Saturday night.",
        )
        posts = [(day0, a.who, f"Heads-up: I'm out of office from {when}. {covers}.")]
        if a.second is not None and a.cend is not None and a.cend < posted:
            # the cover's own absence was over before this heads-up (from play: a reply announcing
            # dates already past): their own heads-up came the day before it began, not as a reply
            nxt = ""
            early = epoch - 86400 * (today - a.cstart).days - 86400 - 3600 * hours  # type: ignore[operator]
            posts.insert(
                0,
                (
                    early,
                    a.cover,
                    f"Heads-up: I'm out of office from {cwhen}. {a.second.name} ({a.second.email}) covers for me.",
                ),
            )
        # a few posts since, so the heads-up is not the only thing in view
        gap = max(1, (epoch - day0) // 8)
        for k, line in enumerate(rng.sample(chatter, n_posts) if staff else []):
            posts.append((day0 + gap * (k + 1) - rng.randrange(0, 600), rng.choice(staff), line))
        parent = ""
        for ts, p, text in posts:
            row = chat.insert(
                "messages",
                {
                    "ts": f"{min(ts, epoch - 60)}.{chat.next_seq('ts'):06d}",
                    "channel": a.channel,
                    "user": chat_user(p),
                    "text": text,
                    "thread_ts": None,
                    "reply_count": 1 if (p is a.who and nxt) else 0,
                    "reactions": {},
                },
                key="ts",
            )
            parent = parent or row["ts"]
        if nxt:  # the cover answers in the heads-up's thread: the channel shows only its reply count
            chat.insert(
                "messages",
                {
                    "ts": f"{min(day0 + 1800, epoch - 60)}.{chat.next_seq('ts'):06d}",
                    "channel": a.channel,
                    "user": chat_user(a.cover),
                    "text": nxt,
                    "thread_ts": parent,
                    "reply_count": 0,
                    "reactions": {},
                },
                key="ts",
            )
        return
    me = b.me.email
    if a.start <= today:  # I wrote to them while they were away: the auto-reply came back
        sent = datetime(a.start.year, a.start.month, a.start.day, 10, tzinfo=b.now.tzinfo)
        sent = min(sent, b.now - timedelta(hours=2))
        mine = inbox_mail(
            b,
            me,
            a.who.email,
            topic,
            f"Hi {a.who.first}, a quick one on the {topic.lower()}.",
            sent,
            labels=("SENT",),
        )
        inbox_mail(
            b,
            a.who.email,
            me,
            "Automatic reply: " + topic,
            f"I'm out of office from {when} with no access to email. {covers}; please contact them "
            "for anything that can't wait.",
            sent + timedelta(minutes=1),
            thread=mine["threadId"],
            labels=("INBOX",),
        )
    else:
        inbox_mail(
            b,
            a.who.email,
            me,
            f"Out of office {when}",
            f"Hi {b.me.first}, heads-up: I'll be out of office from {when}. {covers}.",
            b.now - timedelta(days=ago, hours=hours),
            labels=("INBOX",),
        )
    if a.second is not None:  # the cover's own heads-up mail, days before their absence
        lo = datetime(a.cstart.year, a.cstart.month, a.cstart.day, 8, tzinfo=b.now.tzinfo)  # type: ignore[union-attr]
        inbox_mail(
            b,
            a.cover.email,
            me,
            "Out of office " + _long(a.cstart) + " to " + _long(a.cend),  # type: ignore[arg-type]
            # the dates once (from play: "I'll be out of office myself. Note I'm out myself from ...")
            f"Hi {b.me.first}, heads-up: I'll be out of office myself, from {cwhen}. {handoff}",
            min(lo - timedelta(days=2), b.now - timedelta(hours=hours + 1)),
            labels=("INBOX",),
        )


def read_away(b: Builder, a: Away, channel_name: str = "", directory: Any = None) -> None:
    """Look for the approver's out-of-office where it is kept (chat: the channel `channel_name`,
    found first unless already found; hr: who is out, then the approver's time off and its note,
    their id from the `directory` already read), then decide who acts today."""
    if a.where == "hr":
        d = directory or b.call("hr__bamboohr_get_employee_directory", {"response_format": "json"})
        b.call("hr__bamboohr_get_whos_out", {"response_format": "json"})
        for p in [a.who] + ([a.cover] if a.second is not None else []):  # and the cover's own note
            eid = next(e["id"] for e in d["employees"] if e["workEmail"].lower() == p.email.lower())
            b.call("hr__bamboohr_get_time_off_requests", {"employee_id": eid, "response_format": "json"})
    elif a.where == "chat":
        if channel_name:
            from compoworld.tasks.families._common import rows

            chans = b.call("chat__slack_user_list_channels", {"channel_name": channel_name})
            assert next(c["id"] for c in rows(chans) if c["name"] == channel_name) == a.channel
        hist = b.call("chat__slack_get_channel_history", {"channel_id": a.channel, "limit": 50})
        for m in hist["messages"]:  # a reply under the heads-up (the cover's own absence)
            if m.get("reply_count") and "out of office" in m["text"]:
                b.call("chat__slack_get_thread_replies", {"channel_id": a.channel, "thread_ts": m["ts"]})
    else:
        from compoworld.tasks.families._common import rows

        for p in [a.who] + ([a.cover] if a.second is not None else []):  # and the cover's own notice
            found = b.call("email__gmail_search_emails", {"query": f"from:{p.email}", "maxResults": 20})
            for m in rows(found):
                if (
                    "out of office" in str(m.get("subject", "")).lower()
                    or "automatic reply" in str(m.get("subject", "")).lower()
                ):
                    b.call("email__gmail_read_email", {"messageId": m["id"]})
    b.decide()  # the approver, or (away today) who covers for them, or (away too) who is next


def away_checks(
    b: Builder,
    a: Away,
    today: date,
    service: str,
    channel: str,
    facts: list[str],
    acting: Person | None = None,
) -> None:
    """Nobody but who acts today is asked: the other one gets nothing (chat: no post naming them
    with the facts unless it also names who acts, as 'X is out, so Y...' does); a spray to both fails."""
    # who acts today: the chain's, or (`acting`: the absence is of someone not in charge today, as
    # an approver named by a change that holds only later) someone outside it, and all of it is wrong
    right = acting or a.approver(a.who, today)
    for wrong in [p for p in a.people() if p.id != right.id]:
        _away_guard(b, a, today, service, channel, facts, right, wrong)


def _away_guard(
    b: Builder,
    a: Away,
    today: date,
    service: str,
    channel: str,
    facts: list[str],
    right: Person,
    wrong: Person,
) -> None:
    out = (wrong is a.who and a.on(today)) or (wrong is a.cover and a.cover_on(today))
    why = f"{wrong.name} was not asked ({'out of office today' if out else 'not the one to ask today'})"
    if service == "email":
        b.no_message("email", wrong, why)
    elif service == "helpdesk":  # told by a ticket note: the other one is notified on no note
        b.not_written("helpdesk", wrong.email, why, tables=["conversations"])
    else:
        b.guard(
            why,
            {
                "predicate": "message_not_sent",
                "service": "chat",
                "to": [channel],
                "contains": [wrong.name, *facts],
                "exclude": [right.name],
            },
        )
    if wrong is not a.who:  # naming an away approver is fair context ("X is out, so Y..."): no rival
        b.trap(
            "wrong_person",
            f"{wrong.name} is not covering today",
            swap={right.email: wrong.email, right.name: wrong.name},
        )


def clear_time_off(b: Builder, people: list[Person], keep: Away | None = None) -> None:
    """Drop the seed's time off of `people` from BambooHR (where the world has it): someone who may
    act shows as out only where an absence naming who covers is planted (`keep`'s)."""
    if "hr" not in b.env.services:
        return
    hr = b.svc("hr")
    mails = {p.email.lower() for p in people}
    ids = {e["id"] for e in hr.employees.all() if e["workEmail"].lower() in mails}
    for r in hr.requests.all():
        if r["employee_id"] in ids and (keep is None or r["id"] != keep.hr_request):
            hr.requests.delete(r["id"])


def quiet_since(b: Builder, p: Person, since: str) -> None:
    """Someone who left writes nothing after `since` (ISO time): the seed's emails and Slack posts of
    theirs dated later are dropped (from play: a departed account manager's email of last week read
    as them still at work). Run before the task plants anything of theirs."""
    if "email" in b.env.services:
        svc = b.svc("email")
        for m in list(svc.store.tables.get("messages", {}).values()):
            if str(m.get("from", "")).lower() == p.email.lower() and str(m.get("date", "")) > since:
                svc.remove("messages", m["id"])
    if "chat" in b.env.services:
        from compoworld.tasks.families._common import chat_user

        svc, who = b.svc("chat"), chat_user(p)
        cut = datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
        for m in list(svc.store.tables.get("messages", {}).values()):
            if m.get("user") == who and float(m["ts"]) > cut:
                svc.remove("messages", m["ts"])


# ---- a policy changed later in its owner's thread (shared by the themes) -------------------------
@dataclass
class Amend:
    """The policy owner's post (in the channel the policy names, or an email to me) changing one
    limit from a date: from `effective` it is `value`, not the `was` the policy states. Posted
    before today either way; only its effective date against today says whether it holds yet."""

    owner: Person
    value: Any  # the new limit (dollars) or approver (a Person)
    was: Any  # what the policy states
    effective: date
    posted: datetime
    where: str  # chat | email
    channel: str = ""

    def holds(self, today: date) -> bool:
        return self.effective <= today


def amend_rule(a: Amend, channel: str) -> str:
    """The policy's line naming its owner and where they announce changes (in every version)."""
    where = f"in {channel} on Slack" if a.where == "chat" else "by email"
    return f"Policy owner: {a.owner.name} ({a.owner.email}), who announces changes to this policy {where}."


def draw_amend(
    b: Builder, owner: Person, new: Any, was: Callable[[int], Any], where: str, force: dict[str, Any] | None
) -> Amend:
    """A change to `new` from what the policy states, `was(up)` (`up`: a draw of 1-5 it may use).
    Every draw is made whatever `force`'s `amended` says (True: effective before today; False:
    after), so a test's flip changes nothing else."""
    rng = b.rng
    holds = rng.random() < 0.5
    back, ahead, lag, up = (
        rng.randrange(1, 15),
        rng.randrange(2, 21),
        rng.randrange(0, 4),
        rng.randrange(1, 6),
    )
    if force and "amended" in force:
        holds = bool(force["amended"])
    today = b.now.date()
    if holds:
        eff = today - timedelta(days=back)
        posted = b.now - timedelta(days=back + lag, hours=3)
    else:
        eff = today + timedelta(days=ahead)
        posted = b.now - timedelta(days=lag + 1, hours=3)
    return Amend(owner, new, was(up), eff, posted, where)


def amend_rest(later: bool) -> str:
    """How a change's post ends: `later`, the change is the new version's, announced beside the one
    in force (that version has the rest); else the rest of the policy stays as it is."""
    return (
        "The new version of the policy has the rest." if later else "The rest of the policy stays as it is."
    )


def amend_text(a: Amend, title: str, what: str, later: bool = False) -> str:
    return (
        f"Change to the {title}: from {_long(a.effective)}, the {what} is ${a.value} per request "
        f"(it was ${a.was}). {amend_rest(later)} {a.owner.first}"
    )


def plant_amend(b: Builder, a: Amend, title: str, text: str) -> None:
    """Post the change to the `title` where its owner announces changes: a reply in the owner's
    thread for the policy in the channel (the channel shows the thread's first post and its reply
    count; from play: agents read a channel's history, not its threads), or an email."""
    from compoworld.tasks.families._common import chat_user, inbox_mail

    if a.where == "chat":
        chat = b.svc("chat")
        opened = int((a.posted - timedelta(days=25)).timestamp())  # the thread, weeks before
        parent = chat.insert(
            "messages",
            {
                "ts": f"{opened}.{chat.next_seq('ts'):06d}",
                "channel": a.channel,
                "user": chat_user(a.owner),
                "text": f"Questions and changes to the {title} go in this thread, please. {a.owner.first}",
                "thread_ts": None,
                "reply_count": 1,
                "reactions": {},
            },
            key="ts",
        )
        chat.insert(
            "messages",
            {
                "ts": f"{int(a.posted.timestamp())}.{chat.next_seq('ts'):06d}",
                "channel": a.channel,
                "user": chat_user(a.owner),
                "text": text,
                "thread_ts": parent["ts"],
                "reply_count": 0,
                "reactions": {},
            },
            key="ts",
        )
    else:
        inbox_mail(b, a.owner.email, b.me.email, f"Change to the {title}", text, a.posted, labels=("INBOX",))


def read_amend(b: Builder, a: Amend, channel_name: str, title: str) -> None:
    """Read the owner's thread (the channel `channel_name`, found by name unless found already, or
    their emails), then decide what holds today."""
    from compoworld.tasks.families._common import rows

    if a.where == "chat":
        if channel_name:  # found by name first (else found already)
            chans = b.call("chat__slack_user_list_channels", {"channel_name": channel_name})
            assert next(c["id"] for c in rows(chans) if c["name"] == channel_name) == a.channel
        hist = b.call("chat__slack_get_channel_history", {"channel_id": a.channel, "limit": 50})
        for m in hist["messages"]:  # the owner's thread for the policy
            if m.get("reply_count") and f"to the {title.lower()} go in this thread" in m["text"]:
                b.call("chat__slack_get_thread_replies", {"channel_id": a.channel, "thread_ts": m["ts"]})
    else:
        found = b.call("email__gmail_search_emails", {"query": f"from:{a.owner.email}", "maxResults": 20})
        for m in rows(found):
            if str(m.get("subject", "")).lower().startswith("change to the"):
                b.call("email__gmail_read_email", {"messageId": m["id"]})
    b.decide()  # the limit in force today: the policy's, or its owner's change once it took effect
