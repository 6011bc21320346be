"""Composed work, second theme: a quarterly access review (`composed.access_review`).

Someone in security asks for the review of one tool's access. The work crosses the request
(a Freshdesk ticket or an email), the tool's access list (a sheet, a SQL table or a CSV export:
the aggregate, one row per person and tool), BambooHR (who still works here, in which team), the
access policy (Confluence, a sheet or files in the workspace: the version in force today names the
tool's team, how long an unused login may stay, and the tool owner), the access keys in Redis
(revoked by deleting them), the review log, the owner's channel, and back to the request.

Built from the same vocabulary and machinery as the downtime-credit theme (`tasks.compose`):
`Stage`s with needs/gives, `wire`, plan variants per stage, the tier knobs and `Builder` checks.

Evidence, not labels: a person who left is missing from the HR directory; a person who moved has
another department in HR than the team the access list shows (it records the team at grant time);
an unused login is a last-login date compared with today's clock and the policy's limit; the
policy versions differ only in their effective dates; the earlier review's ticket is closed. At the
hard tier one kept holder's row shows the name and email they had when access was granted (a name
changed since): neither is in BambooHR, only the row's employee_id is, and the policy says people
are matched by it (a lookup by email revokes a person who is still here). Also at the hard tier,
days on approved time off in BambooHR are not unused (the policy says so in every version): the
holder kept today under the stricter older version last logged in longer ago than the limit, but
approved time off since covers enough of the gap (one request or two, or leave still running, whose
days after today do not count); the inactive holder has approved time off too, covering too little
(at times only because the days after today do not count), and at times a longer request of theirs
was denied; two others have time off that changes nothing (before their last login, inside a gap
within the limit, or still ahead). And the policy owner may keep someone's access for a while in
writing where they announce changes (the policy says so in every version), the time running from
the day they wrote: the mover's keep (ten days, two or three weeks) still runs today, or has run out
(revoked); the inactive holder's has always run out; at times a holder kept anyway has one running.
Each runs out at least two days from today, so a day's slip either way decides nothing. And one
key may have been set up by hand, so it is on no export: only the requester's follow-up on the
request (a reply on the ticket, or in the email thread) names it and its last login. It is the
leaver's, or at times a holder's who keeps access, and BambooHR, the login and the limit decide it
like the rest, so being named there decides nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from compoworld.core.clock import format_time, parse_time
from compoworld.core.company import TITLES, Person
from compoworld.services.hr.seed import emp_id
from compoworld.tasks.compose import (
    DISPLAY,
    HOME,
    Amend,
    Away,
    Log,
    Stage,
    amend_rest,
    amend_rule,
    away_checks,
    away_rule,
    draw_amend,
    draw_away,
    find_open_ticket,
    follow_up,
    plant_amend,
    plant_away,
    plant_versions,
    quiet_since,
    read_amend,
    read_away,
    read_versions,
    where_context,
    wire,
)
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError

TOOLS = ("aws", "github", "figma", "netsuite", "salesforce", "datadog", "vpn", "jira", "looker", "tableau")
REASONS = ("left", "moved", "inactive")
CHANNEL = "access-reviews"


def revocations(cases: int) -> int:
    """How many grants a review revokes at a tier (its `cases` knob): one, or one of each reason."""
    return 3 if cases >= 2 else 1


@dataclass(frozen=True)
class AccessPlan:
    family: ClassVar[str] = "composed.access_review"
    category: ClassVar[str] = "it_admin"
    request: str  # helpdesk | email (the reply goes back the same way)
    roster: str  # sheets | sql | workspace: the tool access list (aggregated)
    policy: str  # wiki | sheets | workspace
    log: str  # sheets | workspace | sql
    notify: str  # chat | email: the tool owner

    def services(self) -> set[str]:
        return {self.request, self.roster, "hr", self.policy, "kv", self.log, self.notify}

    def write_services(self) -> set[str]:
        return {self.request, "kv", self.log, self.notify}

    def reply_service(self) -> str:
        return self.request

    def walk(self, cases: int = 1) -> list[str]:
        seq = [self.request, self.roster, self.policy, "hr"]
        for _ in range(revocations(cases)):  # each grant in turn: revoke it, log it
            seq += ["kv", self.log]
        seq += [self.notify, self.request]
        return [s for i, s in enumerate(seq) if i == 0 or seq[i - 1] != s]


def all_plans() -> list[AccessPlan]:
    return [
        AccessPlan(*x)
        for x in itertools.product(
            ("helpdesk", "email"),
            ("sheets", "sql", "workspace"),
            ("wiki", "sheets", "workspace"),
            ("sheets", "workspace", "sql"),
            ("chat", "email"),
        )
    ]


PLANS = all_plans()


@dataclass
class Holder:
    person: Person
    reason: str = ""  # left | moved | inactive: revoked; "" kept
    near: bool = False  # kept, but revoked under a policy version not in force
    dept: str = ""  # the department HR shows
    login: date | None = None
    # hard: a login granted under the name and email the person had then (a name changed since): only
    # the list's employee_id ties it to BambooHR, which lists them under today's name and email
    alias: str = ""  # the row's email ("" : the person's own)
    shown: str = ""  # the row's name
    eid: str = ""  # the row's employee_id ("": the person's own BambooHR id)
    # hard: a key set up by hand, never through the console, so not on the export: only the
    # requester's follow-up on the request names it (with its last login); BambooHR decides it
    unlisted: bool = False
    granted: date | None = None

    @property
    def mail(self) -> str:
        return self.alias or self.person.email

    @property
    def user(self) -> str:
        return self.mail.split("@")[0]

    @property
    def label(self) -> str:
        """The name the list shows (and the log and the messages use)."""
        return self.shown or self.person.name

    @property
    def hr_id(self) -> str:
        return self.eid or emp_id(self.person.id)


@dataclass
class Version:
    effective: date
    idle: int  # days an unused login may stay
    owner: Person


@dataclass
class Review:
    b: Builder
    plan: AccessPlan
    tier: dict[str, Any]
    tool: str
    team: str
    requester: Person
    holders: list[Holder]
    versions: list[Version] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    ticket: int | None = None
    old_ticket: int | None = None
    last_done: date | None = None  # the day last quarter's review of the tool was done and logged
    newer: Any = None
    email_id: str = ""
    thread: str = ""
    subject: str = ""
    log_id: str = ""
    channel: str = ""
    ask: int = 0
    only: Holder | None = None
    seen: set[str] = field(default_factory=set)
    away: Away | None = None  # hard: the tool owner's out-of-office, naming who covers
    leaves: list[Leave] = field(default_factory=list)  # hard: holders' time off in BambooHR
    grants: list[Grant] = field(default_factory=list)  # hard: the policy owner's keeps, for a time
    amend: Amend | None = None  # hard: the policy owner's later change of tool owner, in their thread

    @property
    def today(self) -> date:
        return self.b.now.date()

    @property
    def current(self) -> Version:
        return self.versions[0]

    @property
    def owner(self) -> Person:
        """Who is told today: the tool owner in force, or whoever covers for them."""
        o = self.named
        return self.away.approver(o, self.today) if self.away else o

    @property
    def named(self) -> Person:
        """The tool owner the policy names today: its version in force's, unless its owner changed it."""
        if self.amend is not None and self.amend.holds(self.today):
            return self.amend.value
        return self.current.owner

    def key(self, h: Holder) -> str:
        return f"access:{self.tool}:{h.user}"

    def revoked(self) -> list[Holder]:
        return [h for h in self.holders if h.reason]


def _day(d: date) -> str:
    return d.isoformat()


# ---- time off: days on approved leave are not unused days (hard) --------------------------------------
LEAVE_NOTES = ("", "", "Parental leave", "Medical leave", "Family leave", "Sabbatical")


@dataclass
class Leave:
    """A holder's time off in BambooHR (`at`: their index in `Review.holders`)."""

    at: int
    start: date
    end: date
    status: str = "approved"
    kind: str = "77"  # Vacation | 78: Sick
    note: str = ""
    kept: bool = False  # the holder keeps access because of it (in the world where it is approved)


def _covered(lv: Leave, login: date, today: date) -> int:
    """Days of `lv` after the last login and up to today (the days it takes off the unused gap)."""
    lo, hi = max(lv.start, login + timedelta(days=1)), min(lv.end, today)
    return max(0, (hi - lo).days + 1)


def unused(r: Review, h: Holder) -> int:
    """Days since the last login, less those on approved time off between it and today."""
    assert h.login is not None
    i = next(k for k, x in enumerate(r.holders) if x is h)
    off = sum(_covered(lv, h.login, r.today) for lv in r.leaves if lv.at == i and lv.status == "approved")
    return (r.today - h.login).days - off


def draw_leaves(
    b: Builder,
    holders: list[Holder],
    keep: Holder | None,
    idle: int,
    force: dict[str, Any],
    floor: int = 0,
) -> list[Leave]:
    """Time off for the review's holders, every draw made whichever way `force["leave"]` goes.
    `keep` last logged in more than `idle` days ago, but approved time off since covers enough of
    the gap (at most `idle` days unused, exactly `idle` at times): kept. With `force["leave"]` False
    the same requests were denied: revoked (inactive). The inactive holder's approved time off
    covers too little (one day over at times; or they are on leave now and only the days up to
    today count, though the request's amount would cover it), and at times a longer request of
    theirs was denied. Two others have time off that changes nothing: before their last login,
    inside a gap within the limit, or still ahead."""
    if keep is None:
        return []
    rng, today = b.rng, b.now.date()
    out: list[Leave] = []

    def index(h: Holder) -> int:
        return next(k for k, x in enumerate(holders) if x is h)

    def note(days: int) -> tuple[str, str]:
        kind = rng.choice(("77", "77", "78"))
        text = rng.choice(LEAVE_NOTES)
        return kind, text if days >= 10 else ""

    k = index(keep)
    gap = idle + rng.randrange(4, 31)
    keep.login = today - timedelta(days=gap)
    # days left unused after the time off: idle - slack, more than `floor`
    slack = rng.choice([x for x in (0, 0, 1, 2, 4, 7) if idle - x > floor])
    mode = rng.choice(("past", "past", "split", "now"))
    status = "denied" if force.get("leave") is False else "approved"
    need = gap - idle + slack  # days of time off between the login and today
    x1, x2, x3 = rng.randrange(0, 1000), rng.randrange(0, 1000), rng.randrange(2, 12)
    free = gap - need - 2  # days of the gap (after the login's next day, before today) left free
    if mode == "split" and need < 2 * slack + 2:
        mode = "past"
    if mode == "now":  # on leave today: only the days up to today count
        need = gap - idle + max(slack, 2)  # off by a day either way still keeps it
        spans = [(today - timedelta(days=need - 1), today + timedelta(days=x3))]
    elif mode == "split":  # two requests, neither enough alone
        d1 = slack + 1 + x1 % (need - 2 * slack - 1)
        s1 = keep.login + timedelta(days=2 + x2 % max(1, free // 2))
        e1 = s1 + timedelta(days=d1 - 1)
        s2 = e1 + timedelta(days=2 + x3 % max(1, free // 2))
        spans = [(s1, e1), (s2, s2 + timedelta(days=need - d1 - 1))]
    else:
        s0 = today - timedelta(days=need + x1 % max(1, free))
        spans = [(s0, s0 + timedelta(days=need - 1))]
    for lo, hi in spans:
        kind, text = note((hi - lo).days + 1)
        out.append(Leave(k, lo, hi, status, kind, text, kept=True))
    gone = next((h for h in holders if h.reason == "inactive"), None)
    if gone is not None and gone.login is not None:
        i, g = index(gone), (today - gone.login).days
        over = g - idle  # >= 2
        d = max(1, over - 1 - rng.choice((0, 0, 1, 3)))
        now = rng.random() < 0.5 and over >= 3
        y1, y2 = rng.randrange(0, 1000), rng.randrange(0, 6)
        if now:  # on leave today: the request's whole amount would cover the excess, its days so far do not
            d = min(d, over - 2)
            lo = today - timedelta(days=d - 1)
            spans = [(lo, today + timedelta(days=over - d + y2))]
        else:
            lo = today - timedelta(days=d + y1 % max(1, g - d - 1))
            spans = [(lo, lo + timedelta(days=d - 1))]
        kind, text = note(d)
        out.append(Leave(i, *spans[0], "approved", kind, text))
        if rng.random() < 0.5:  # a longer request of theirs was denied
            dd = over + rng.randrange(0, 10)
            lo = gone.login + timedelta(days=2 + rng.randrange(0, max(1, g - dd - 3)))
            hi = min(lo + timedelta(days=dd - 1), today - timedelta(days=1))
            out.append(Leave(i, lo, hi, "denied", "77", ""))
    # time off that changes nothing: before a last login, inside a gap within the limit, or ahead
    others = [
        h for h in holders if h is not keep and h is not gone and h.reason != "left" and h is not holders[-1]
    ]
    for h in rng.sample(others, min(2, len(others))):
        assert h.login is not None
        g = (today - h.login).days
        span = rng.randrange(2, 9)
        how = rng.choice(("before", "inside", "ahead", "ahead"))
        lead = rng.randrange(0, 1000)
        if how == "inside" and g < span + 3:
            how = "before"
        if how == "before":
            hi = h.login - timedelta(days=1 + lead % 40)
            lo = hi - timedelta(days=span - 1)
        elif how == "inside":
            lo = h.login + timedelta(days=2 + lead % (g - span - 2))
            hi = lo + timedelta(days=span - 1)
        else:
            lo = today + timedelta(days=2 + lead % 20)
            hi = lo + timedelta(days=span - 1)
        kind, text = note(span)
        out.append(Leave(index(h), lo, hi, rng.choice(("approved", "approved", "requested")), kind, text))
    return out


def plant_leaves(r: Review) -> None:
    """BambooHR shows the holders' time off as planted (the seed's own of theirs dropped)."""
    from compoworld.tasks.compose import clear_time_off

    b = r.b
    hr = b.svc("hr")
    clear_time_off(b, [h.person for h in r.holders], keep=r.away)
    for lv in r.leaves:
        h = r.holders[lv.at]
        ago = max(0, (r.today - lv.start).days) + b.rng.randrange(3, 20)
        hr.requests.create(
            {
                "employee_id": h.hr_id,
                "type_id": lv.kind,
                "start": lv.start.isoformat(),
                "end": lv.end.isoformat(),
                "amount": float((lv.end - lv.start).days + 1),
                "status": lv.status,
                "notes": lv.note,
                "created": format_time(b.now - timedelta(days=ago)),
            },
            id=str(1000 + hr.next_seq("request")),
        )


# ---- a keep for a time: the policy owner's word in their thread (hard) ------------------------------
@dataclass
class Grant:
    """The policy owner's word, where they announce changes, keeping a holder's access for `days`
    from the day they wrote it (`at`: the holder's index in `Review.holders`). Only the day it runs
    out against today says whether it still holds."""

    at: int
    posted: datetime
    days: int
    why: str  # moved | inactive | keep: the rule it holds off (keep: one that would not apply anyway)

    @property
    def until(self) -> date:
        return self.posted.date() + timedelta(days=self.days)

    def holds(self, today: date) -> bool:
        return today <= self.until


SPANS = {10: "the next 10 days", 14: "two more weeks", 21: "three more weeks"}


def draw_grants(b: Builder, holders: list[Holder], force: dict[str, Any], spare: int | None) -> list[Grant]:
    """Keeps for a time, every draw made whichever way `force["granted"]` goes: the mover's (running
    today, or run out; True: running; run out where a test flips `moved` alone), the inactive
    holder's (run out), and at times one for `spare`, a holder who keeps access in every world
    (running). Each runs out at least two days from today either way."""
    rng, now = b.rng, b.now
    today = now.date()

    def one(i: int, why: str, running: bool) -> Grant:
        days = rng.choice((10, 14, 21) if running else (10, 14))
        off, hour = rng.randrange(2, 5), rng.randrange(1, 7)
        until = today + timedelta(days=off) if running else today - timedelta(days=off)
        posted = datetime(until.year, until.month, until.day, 10, tzinfo=now.tzinfo) - timedelta(
            days=days, hours=hour
        )
        return Grant(i, posted, days, why)

    out = []
    idx = {why: next((k for k, h in enumerate(holders) if h.reason == why), None) for why in REASONS}
    running = rng.random() < 0.5
    if "granted" in force:
        running = bool(force["granted"])
    elif "moved" in force:
        running = False
    if idx["moved"] is not None:
        out.append(one(idx["moved"], "moved", running))
    if idx["inactive"] is not None:
        out.append(one(idx["inactive"], "inactive", False))
    other = rng.random() < 0.5
    if spare is not None and other:
        out.append(one(spare, "keep", True))
    return out


def grant_rule() -> str:
    return (
        "The policy owner may keep someone's access for a while past a review, in writing where they "
        "announce changes to this policy; the time runs from the day they wrote, and once it has run "
        "out the rules above apply again."
    )


def _grant_text(r: Review, g: Grant) -> str:
    h = r.holders[g.at]
    span = SPANS[g.days]
    first = r.amend.owner.first if r.amend is not None else r.requester.first
    if g.why == "moved":
        return (
            f"{h.label} is changing teams but is still handing over their {r.tool} work: please keep "
            f"their {r.tool} access for {span}. {first}"
        )
    if g.why == "inactive":
        return (
            f"{h.label} is on a project away from {r.tool} for a while: please keep their {r.tool} access "
            f"for {span}. {first}"
        )
    return f"{h.label} is covering the {r.tool} reports while the team is short: keep their access for {span}. {first}"


def plant_grants(r: Review) -> None:
    """Each keep where the policy owner announces changes: a reply in their thread for the policy
    (after the thread's first post), or an email to me."""
    from compoworld.tasks.families._common import chat_user, inbox_mail

    b, a = r.b, r.amend
    assert a is not None
    if a.where == "chat":
        chat = b.svc("chat")
        parent = next(
            m
            for m in chat.table("messages").values()
            if m["channel"] == a.channel and not m.get("thread_ts") and "access policy go in" in m["text"]
        )
        for g in sorted(r.grants, key=lambda g: g.posted):
            if int(g.posted.timestamp()) <= int(float(parent["ts"])):
                raise PlantError("a keep posted before its thread opened")
            chat.insert(
                "messages",
                {
                    "ts": f"{int(g.posted.timestamp())}.{chat.next_seq('ts'):06d}",
                    "channel": a.channel,
                    "user": chat_user(a.owner),
                    "text": _grant_text(r, g),
                    "thread_ts": parent["ts"],
                    "reply_count": 0,
                    "reactions": {},
                },
                key="ts",
            )
        chat.update("messages", parent["ts"], reply_count=parent["reply_count"] + len(r.grants))
    else:
        for g in r.grants:
            h = r.holders[g.at]
            inbox_mail(
                b,
                a.owner.email,
                b.me.email,
                f"Keeping {h.label}'s {r.tool} access",
                _grant_text(r, g),
                g.posted,
                labels=("INBOX",),
            )


def read_grants(r: Review) -> None:
    """Before deciding: what the policy owner wrote where they announce changes (the thread's
    replies, or their emails)."""
    from compoworld.tasks.families._common import rows

    b, a = r.b, r.amend
    assert a is not None
    if a.where == "chat":
        chans = b.call("chat__slack_user_list_channels", {"channel_name": CHANNEL})
        assert next(c["id"] for c in rows(chans) if c["name"] == CHANNEL) == a.channel
        hist = b.call("chat__slack_get_channel_history", {"channel_id": a.channel, "limit": 50})
        for m in hist["messages"]:
            if m.get("reply_count") and "to the access policy go in this thread" in m["text"]:
                b.call("chat__slack_get_thread_replies", {"channel_id": a.channel, "thread_ts": m["ts"]})
    else:
        found = b.call("email__gmail_search_emails", {"query": f"from:{a.owner.email}", "maxResults": 20})
        for m in rows(found):
            if str(m.get("subject", "")).startswith("Keeping "):
                b.call("email__gmail_read_email", {"messageId": m["id"]})


def kept_by_grant(r: Review, h: Holder, why: str = "") -> bool:
    """A keep still running (holding off `why`, if given): the holder keeps access, whatever the
    rules above would say."""
    i = next(k for k, x in enumerate(r.holders) if x is h)
    return any(g.at == i and g.holds(r.today) and why in ("", g.why) for g in r.grants)


# ---- the request ---------------------------------------------------------------------------------
ASKS = (
    "run the {tool} access review {who} asked for, the way our access policy says",
    "do the quarterly {tool} access review for {who} by the book",
    "work through {who}'s {tool} access review per our access policy",
)


# how the earlier request asked: the one that best matches the instruction's words is last quarter's
# the ask's key words without repeating it (from play: an old request that opened with the
# instruction's own wording read as planted)
ECHOES = (
    "The {tool} access review is due again; please run it the way the access policy says.",
    "Time for the quarterly {tool} access review, by the book as usual.",
    "Could you work through the {tool} access review again, per the access policy?",
)


def _request_text(r: Review, quarter: str, echo: bool = False) -> str:
    if echo:
        ask = ECHOES[r.ask].format(tool=r.tool)
        return f"Hi, {ask} It is time for the {quarter} one. Thanks, {r.requester.first}"
    return (
        f"Hi, {quarter} is here: please go through everyone on the list for {r.tool} and handle it. "
        f"Thanks, {r.requester.first}"
    )


def plant_request(r: Review) -> None:
    from compoworld.tasks.families._common import hd_ticket, inbox_mail
    from compoworld.tasks.families.it_admin import _employee_contact

    b = r.b
    r.subject = f"{r.tool} access review"
    q = (r.today.month - 1) // 3 + 1
    now_q, last_q = f"Q{q}", f"Q{q - 1 if q > 1 else 4}"
    if r.plan.request == "helpdesk":
        contact = _employee_contact(b, r.requester)
        back = b.rng.randrange(85, 100)
        r.last_done = r.today - timedelta(days=back - 2)  # closed two days after it came in
        r.old_ticket = hd_ticket(
            b,
            contact,
            r.subject,
            _request_text(r, last_q, echo=True),
            status=5,
            days_ago=back,
        )["id"]
        r.ticket = hd_ticket(b, contact, r.subject, _request_text(r, now_q), days_ago=b.rng.randrange(1, 4))[
            "id"
        ]
        if (h := _unlisted(r)) is not None:  # the requester's follow-up on the ticket names it
            opened = parse_time(b.svc("helpdesk").tickets.get(r.ticket)["created_at"])
            when = min(opened + timedelta(hours=14), b.now - timedelta(hours=5))
            follow_up(b, r.ticket, contact, r.requester, _unlisted_text(r, h), when)
        r.newer = hd_ticket(
            b,
            contact,
            "Laptop replacement",
            f"My laptop battery is failing; could IT order a replacement? {r.requester.first}",
            days_ago=0.2,
            priority=1,
        )["id"]
    else:
        me = b.me.email
        first = inbox_mail(
            b,
            r.requester.email,
            me,
            r.subject,
            _request_text(r, last_q, echo=True),
            b.now - timedelta(days=b.rng.randrange(85, 100)),
            labels=("INBOX",),
        )
        r.last_done = (b.now - timedelta(days=84)).date()
        inbox_mail(  # my answer in that thread: the earlier review was done
            b,
            me,
            r.requester.email,
            "Re: " + r.subject,
            f"Hi {r.requester.first}, done: the {last_q} review is logged. Best, {b.me.first}",
            b.now - timedelta(days=84),
            thread=first["threadId"],
            labels=("SENT",),
        )
        m = inbox_mail(
            b,
            r.requester.email,
            me,
            r.subject,
            _request_text(r, now_q),
            b.now - timedelta(days=b.rng.randrange(1, 4), hours=b.rng.randrange(1, 9)),
        )
        r.email_id, r.thread = m["id"], m["threadId"]
        if (h := _unlisted(r)) is not None:  # the requester's follow-up in the same thread names it
            inbox_mail(
                b,
                r.requester.email,
                me,
                "Re: " + r.subject,
                _unlisted_text(r, h),
                min(parse_time(m["date"]) + timedelta(hours=14), b.now - timedelta(hours=5)),
                thread=m["threadId"],
            )
        r.newer = inbox_mail(
            b,
            r.requester.email,
            me,
            "Laptop replacement",
            f"My laptop battery is failing; could IT order a replacement? {r.requester.first}",
            b.now - timedelta(hours=3),
        )["id"]


HANDMADE = ("during the migration last year", "for a vendor pilot", "during an outage in the spring")


def _unlisted(r: Review) -> Holder | None:
    return next((h for h in r.holders if h.unlisted), None)


def _unlisted_text(r: Review, h: Holder) -> str:
    assert h.login is not None
    return (
        f"One more for this review: {h.label} ({h.mail}) has a {r.tool} key that was set up by hand "
        f"{r.b.pick(HANDMADE)}, so it is not on the export. Its last login was {h.login:%B} {h.login.day}. "
        f"Please review it with the rest. {r.requester.first}"
    )


def solve_request(r: Review) -> None:
    b = r.b
    if r.plan.request == "helpdesk":
        assert find_open_ticket(b, r.requester, r.subject) == r.ticket
        if r.tier.get("unlisted"):  # the ticket's conversation: a follow-up may add to the list
            b.call(
                "helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": r.ticket, "include": "conversations"}
            )
    else:
        found = b.call("email__gmail_search_emails", {"query": r.requester.name, "maxResults": 20})
        msgs = [m for m in found["messages"] if m["subject"] in (r.subject, "Re: " + r.subject)]
        for m in sorted(msgs, key=lambda m: m["date"]):
            b.call("email__gmail_read_email", {"messageId": m["id"]})
        assert (
            max((m for m in msgs if m["subject"] == r.subject), key=lambda m: m["date"])["id"] == r.email_id
        )
    b.decide()  # which request is this quarter's: the open ticket / the unanswered email


# ---- the access list (the aggregate) and the keys ---------------------------------------------------
def _roster(r: Review, staff: list[Person]) -> list[list[Any]]:
    """One row per person and tool: email, name, tool, team (at grant time), granted, last_login."""
    b = r.b
    lo, hi = r.tier["rows"]
    target = min(b.rng.randrange(lo, hi + 1), len(staff) * len(TOOLS))
    mine = {h.person.id for h in r.holders}
    out = []
    for h in r.holders:
        h.granted = r.today - timedelta(days=b.rng.randrange(200, 700))
        if not h.unlisted:
            out.append(_row(r, h))
    pairs = [(p, t) for p in staff for t in TOOLS if t != r.tool or False]
    pairs = [(p, t) for p, t in pairs if not (t == r.tool and p.id not in mine)]
    b.rng.shuffle(pairs)
    # a holder's other tools were granted in the review's team too (HR shows it, but for the mover,
    # whose rows keep the team they moved from: stale only where the evidence needs it; from play,
    # a holder's rows named two teams)
    team = {h.person.id: r.team for h in r.holders}
    for p, t in pairs[: max(0, target - len(out))]:
        granted = r.today - timedelta(days=b.rng.randrange(30, 700))
        login = r.today - timedelta(days=b.rng.randrange(0, 30))
        out.append([p.email, p.name, t, team.get(p.id, p.team), _day(granted), _day(login), emp_id(p.id)])
    out.sort(key=lambda x: (x[1], x[2]))  # by person, as the console exports: a tool spans the pages
    return out


def _row(r: Review, h: Holder) -> list[Any]:
    assert h.granted is not None and h.login is not None
    return [h.mail, h.label, r.tool, r.team, _day(h.granted), _day(h.login), h.hr_id]


def _paging_matters(r: Review, force: dict[str, Any]) -> None:
    """A revoked holder is past the export's first page. Where only the key set up by hand would
    have been, that key is on the export after all (unless a test forces it off)."""
    gone = {h.mail for h in r.holders if h.reason}

    def matters() -> bool:
        return any(x[2] == r.tool and x[0] in gone for x in r.rows[PAGE:])

    h = next((h for h in r.holders if h.unlisted and h.reason), None)
    if not matters() and h is not None and "unlisted" not in force:
        h.unlisted = False
        r.rows = sorted([*r.rows, _row(r, h)], key=lambda x: (x[1], x[2]))
    if not matters():
        raise PlantError("every revoked holder is on the export's first page")


ROSTER_HEAD = ["email", "name", "tool", "team", "granted", "last_login", "employee_id"]
PAGE = 40  # rows per page of the access-list export


def _pages(rows: list[list[Any]]) -> list[list[list[Any]]]:
    return [rows[i : i + PAGE] for i in range(0, len(rows), PAGE)] or [[]]


def _csv_page(n: int) -> str:
    return f"Documents/security/access_list_p{n}.csv"


def plant_roster(r: Review) -> None:
    from compoworld.tasks.families._common import sheet

    b = r.b
    if r.plan.roster == "sheets":  # the console's export: a spreadsheet per page, as its API pages
        pages = _pages(r.rows)
        for i, page in enumerate(pages):
            sheet(
                b, f"Tool access list ({i + 1} of {len(pages)})", "Access", [ROSTER_HEAD, *page], days_ago=1
            )
    elif r.plan.roster == "workspace":  # the same export as files, a page each (a tool spans them)
        pages = _pages(r.rows)
        for i, page in enumerate(pages):
            b.svc("workspace").write_file(
                f"{HOME}/{_csv_page(i + 1)}",
                ",".join(ROSTER_HEAD) + "\n" + "".join(",".join(x) + "\n" for x in page),
            )
    else:
        b.plant(
            "sql__create_table",
            {
                "query": "CREATE TABLE access_list (id INTEGER PRIMARY KEY, email TEXT, name TEXT, tool TEXT, "
                "team TEXT, granted TEXT, last_login TEXT, employee_id TEXT)"
            },
        )
        q = chr(39)
        vals = ", ".join(
            f"({i + 1}, " + ", ".join(f"'{str(v).replace(q, q * 2)}'" for v in x) + ")"
            for i, x in enumerate(r.rows)
        )
        b.plant("sql__write_query", {"query": f"INSERT INTO access_list VALUES {vals}"})
    kv = b.svc("kv")
    for x in r.rows:  # the access keys themselves: one per row of the list
        b.plant("kv__set", {"key": f"access:{x[2]}:{x[0].split('@')[0]}", "value": f"granted {x[4]}"})
    for h in r.holders:  # and the keys set up by hand, on no export
        if h.unlisted:
            assert h.granted is not None
            b.plant("kv__set", {"key": r.key(h), "value": f"granted {_day(h.granted)}"})
    del kv


def solve_roster(r: Review) -> None:
    from compoworld.tasks.families._common import rows, sheet_rows

    b = r.b
    if r.plan.roster == "sheets":
        books = rows(b.call("sheets__google_sheets_list_spreadsheets", {}))
        pages = sorted(
            (x for x in books if str(x.get("title", "")).startswith("Tool access list (")),
            key=lambda x: int(x["title"].split("(")[1].split()[0]),
        )
        assert len(pages) == len(_pages(r.rows)), pages
        got = set()
        for pg in pages:  # every page: the tool's rows are wherever the export put them
            table = sheet_rows(b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": pg["id"]}))
            got |= {str(x[0]) for x in table[1:] if x[2] == r.tool}
    elif r.plan.roster == "workspace":
        files = b.call("workspace__shell", {"command": "ls Documents/security"})["stdout"].split()
        assert len([f for f in files if f.startswith("access_list_p")]) == len(_pages(r.rows)), files
        b.call("workspace__shell", {"command": f"head -2 {_csv_page(1)}"})  # the columns
        # every page: the tool's rows are wherever the export put them
        out = b.call(
            "workspace__shell", {"command": f"cat Documents/security/access_list_p*.csv | grep ',{r.tool},'"}
        )
        got = {ln.split(",")[0] for ln in out["stdout"].splitlines() if ln.strip()}
    else:
        b.call("sql__list_tables", {})
        b.call("sql__describe_table", {"table_name": "access_list"})
        res = b.call("sql__read_query", {"query": f"SELECT * FROM access_list WHERE tool = '{r.tool}'"})
        got = {x["email"] for x in rows(res)}
    assert got == {h.mail for h in r.holders if not h.unlisted}, got
    b.aggregate()


def solve_people(r: Review) -> None:
    b = r.b
    d = b.call("hr__bamboohr_get_employee_directory", {"response_format": "json"})
    # matched by the list's employee_id (the policy's rule: a name or an email on the list may be older)
    dept = {str(e["id"]): e["department"] for e in d["employees"]}
    for h in r.holders:
        e = h.hr_id
        assert (e not in dept) == (h.reason == "left"), h
        if e in dept:
            assert (dept[e] != r.team) == (h.reason == "moved" or kept_by_grant(r, h, "moved")), h
    if not r.tier.get("leave"):
        return
    for h in r.holders:  # a login older than the limit: the holder's time off since it (the policy's rule)
        assert h.login is not None
        if h.hr_id in dept and (r.today - h.login).days > r.current.idle:
            got = b.call(
                "hr__bamboohr_get_time_off_requests",
                {
                    "employee_id": h.hr_id,
                    "start_date": _day(h.login),
                    "end_date": _day(r.today),
                    "response_format": "json",
                },
            )
            off = sum(
                _covered(
                    Leave(0, date.fromisoformat(x["start"]), date.fromisoformat(x["end"])), h.login, r.today
                )
                for x in got["requests"]
                if x["status"] == "approved"
            )
            assert (r.today - h.login).days - off == unused(r, h), (h, got)


# ---- the policy ------------------------------------------------------------------------------------
def _log_where(r: Review) -> str:
    return {
        "sheets": 'the Google Sheet "Access review log"',
        "workspace": "Documents/security/access_review_log.csv in the workspace",
        "sql": "the access_review_log table of the SQL database",
    }[r.plan.log]


def _roster_where(r: Review) -> str:
    return {
        "sheets": f'the Google Sheets export "Tool access list (1 of N)" to "(N of N)", {PAGE} rows a page',
        "workspace": f"the CSV export {_csv_page(1)} to _pN.csv in the workspace, {PAGE} rows a file",
        "sql": "the access_list table of the SQL database",
    }[r.plan.roster]


def policy_text(r: Review, v: Version) -> list[str]:
    # where both are told leads the sentence (from play: "tell the owner ... in the channel, and tell
    # each person ..." read as a channel post for the owner and an email for each person)
    tell = "In the #access-reviews channel on Slack, tell" if r.plan.notify == "chat" else "By email, tell"
    back = (
        "reply on the review ticket naming who lost access, and resolve it"
        if r.plan.request == "helpdesk"
        else "reply to the review email naming who lost access"
    )
    return [
        f"Access review policy: {r.tool}. Effective {_day(v.effective)}.",
        f"{r.tool} access is for the {r.team} team. The people with access are in {_roster_where(r)}; "
        f"their access keys are in Redis under access:{r.tool}:<user> (delete the key to revoke).",
        "At each review revoke the access of anyone who is no longer in the BambooHR directory (reason: left), "
        f"whose department in BambooHR is not {r.team} (reason: moved), or whose last login is more than "
        f"{v.idle} days before the day the review is done (reason: inactive). Everyone else keeps access.",
        *(
            [
                "The access list's employee_id is the person's BambooHR id, and people are matched to "
                "BambooHR by it: a name or an email on the list may be one the person had when access "
                "was granted."
            ]
            if r.tier.get("aliases")
            else []
        ),
        *(
            [
                "Days on approved time off in BambooHR do not count as unused: a login's unused days are "
                "the days from its last login to the day the review is done, less the days of its holder's "
                "approved time off between the two."
            ]
            if r.tier.get("leave")
            else []
        ),
        f"Log each revocation in {_log_where(r)}: date, name, tool and reason.",
        f"Tool owner: {v.owner.name} ({v.owner.email}). {tell} the owner who lost access, naming them, and "
        "tell each person who lost access and still works here, with the reason.",
        *([away_rule("the tool owner")] if r.tier.get("away") else []),
        *([amend_rule(r.amend, f"#{CHANNEL}")] if r.amend else []),
        *([grant_rule()] if r.amend and r.tier.get("grants") else []),
        f"Then {back}.",
    ]


def plant_policy(r: Review) -> None:
    head = ["effective_from", "max_idle_days", "tool_owner", "rules"]
    texts = [(v.effective, [v.idle, v.owner.email], policy_text(r, v)) for v in r.versions]
    owner = r.amend.owner if r.amend else None  # the policy owner's, where it names one
    plant_versions(
        r.b, r.plan.policy, f"Access policy: {r.tool}", f"access_{r.tool}", head, texts, "Operations", owner
    )


def solve_policy(r: Review) -> None:
    read_versions(
        r.b,
        r.plan.policy,
        f"Access policy: {r.tool}",
        f"access_{r.tool}",
        len(r.versions),
        ["access", r.tool],
    )


def solve_decide(r: Review) -> None:
    if r.grants:  # has the policy owner kept anyone's access for a while? (where they announce changes)
        read_grants(r)
    for h in r.holders:
        if kept_by_grant(r, h):
            assert not h.reason, h
            continue
        idle = (unused(r, h) if r.tier.get("leave") else (r.today - h.login).days) > r.current.idle
        assert (h.reason == "inactive") == (idle and h.reason not in ("left", "moved")), h
    r.b.decide(len(r.holders))  # each person on the list: keep, or revoke and why


# ---- the writes --------------------------------------------------------------------------------------
def solve_revoke(r: Review) -> None:
    b = r.b
    if "keys" not in r.seen:
        r.seen.add("keys")
        keys = b.call("kv__list", {"pattern": f"access:{r.tool}:*"})
        assert {r.key(h) for h in r.holders} <= set(
            keys.get("keys", keys) if isinstance(keys, dict) else keys
        )
    for h in r.todo():
        b.call("kv__delete", {"key": r.key(h)})


def _log(r: Review) -> Log:
    return Log(
        r.plan.log,
        "Access review log",
        "Documents/security/access_review_log.csv",
        "access_review_log",
        ("date", "name", "tool", "reason"),
    )


def plant_log(r: Review) -> None:
    b = r.b
    hist = []
    # earlier rows name others: a row here is this review's (a former employee's login, drawn in a
    # test's flip, stands in for the holder it replaces: the draw is the same either way)
    mine = {h.person.id.removesuffix("-former") for h in r.holders}
    staff = [p for p in b.company.employees if p.id != b.me.id and p.id not in mine]
    picked = b.rng.sample(staff, 3 + (r.last_done is not None))
    for p in picked[:3]:  # earlier reviews' revocations, of other tools
        t = b.rng.choice([x for x in TOOLS if x != r.tool])
        # they still work here (HR lists them): never "left", which would contradict the directory
        why = b.rng.choice(("moved", "inactive", "inactive"))
        hist.append([_day(r.today - timedelta(days=b.rng.randrange(80, 200))), p.name, t, why])
    if r.last_done is not None:  # last quarter's review of this tool, logged the day it was done (the
        # request's earlier thread says so); the person it revoked holds no access to the tool today
        hist.append([_day(r.last_done), picked[3].name, r.tool, b.rng.choice(("moved", "inactive"))])
    hist.sort()
    r.log_id = _log(r).plant(b, hist, days_ago=80)


def solve_log(r: Review) -> None:
    lines = [[_day(r.today), h.label, r.tool, h.reason] for h in r.todo()]
    if "log" not in r.seen:  # the log's columns, before adding rows
        r.seen.add("log")
        _log(r).read(r.b, r.log_id)
    _log(r).append(r.b, r.log_id, lines)


def _names(r: Review) -> str:
    names = [h.label for h in r.revoked()]
    return ", ".join(names) if names else "nobody"


def solve_notify(r: Review) -> None:
    from compoworld.tasks.families._common import rows

    b = r.b
    owner = r.owner
    text = f"{owner.name}: the {r.tool} access review is done. Access revoked for {_names(r)}."
    if r.plan.notify == "chat":
        chans = b.call("chat__slack_user_list_channels", {"channel_name": CHANNEL})
        cid = next(c["id"] for c in rows(chans) if c["name"] == CHANNEL)
        assert cid == r.channel
    if r.amend is not None:  # has the policy's owner named another tool owner since? (same place)
        read_amend(b, r.amend, "", "Access policy")
    if r.away is not None:  # is the owner in today? (where they are told)
        read_away(b, r.away)
    if r.plan.notify == "chat":
        b.call("chat__slack_user_post_message", {"channel_id": r.channel, "text": text})
    else:
        b.call(
            "email__gmail_send_email",
            {"to": [owner.email], "subject": f"{r.tool} access review", "body": text},
        )
    for h in r.revoked():
        if h.reason == "left":
            continue  # no longer here to tell
        text = f"Hi {h.person.first}, your {r.tool} access was revoked in today's access review ({h.reason})."
        if r.plan.notify == "chat":
            b.call("chat__slack_user_post_message", {"channel_id": r.channel, "text": f"{h.label}: {text}"})
        else:
            b.call(
                "email__gmail_send_email",
                {"to": [h.person.email], "subject": f"Your {r.tool} access", "body": text},
            )


def solve_reply(r: Review) -> None:
    b = r.b
    text = (
        f"Hi {r.requester.first}, the {r.tool} access review is done: access revoked for {_names(r)}, "
        "logged per the policy."
    )
    if r.plan.request == "helpdesk":
        b.call("helpdesk__freshdesk_reply_to_a_ticket", {"ticket_id": r.ticket, "body": text})
        b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": r.ticket, "status": 4})
    else:
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


def _todo(self: Review) -> list[Holder]:
    return [self.only] if self.only is not None else self.revoked()


Review.todo = _todo  # type: ignore[attr-defined]


# ---- checks ----------------------------------------------------------------------------------------
def add_checks(r: Review) -> None:
    b, p = r.b, r.plan
    gone = r.revoked()
    kept = [h for h in r.holders if not h.reason]
    for h in gone:
        b.goal(
            f"{h.label}'s {r.tool} access is revoked ({h.reason})",
            {"predicate": "record_absent", "service": "kv", "table": "keys", "where": {"id": r.key(h)}},
        )
        where = {"name": h.label, "tool": r.tool, "reason": h.reason}
        _log(r).expect_row(b, r.log_id, [h.label, r.tool, h.reason], where, f"{h.label}, {h.reason}")
    for h in kept:
        b.keep("kv", "keys", r.key(h), f"{h.label} keeps {r.tool} access")
        if p.log != p.roster:  # the list itself holds every name: only a separate log can be checked
            b.not_written(p.log, h.label, f"{h.label} is not logged as revoked")
    names = [h.label for h in gone]
    owner = r.owner
    told = {owner.id} | {h.person.id for h in gone}
    if r.away is not None:  # the away owner and the cover: by who is told today
        told |= {p.id for p in r.away.people()}
        away_checks(b, r.away, r.today, p.notify, r.channel, [r.tool], acting=owner)
    stale = [v.owner for v in r.versions[1:] if v.owner.id not in told]
    if r.amend is not None:  # the tool owner before the change, or the one it names from later
        other = r.amend.was if r.amend.holds(r.today) else r.amend.value
        # a holder who keeps access may be named in the channel (who keeps it): no rival there
        holder = any(h.person.id == other.id for h in r.holders) and p.notify == "chat"
        if other.id not in told and all(other.id != o.id for o in stale) and not holder:
            stale.append(other)
    if p.request == "helpdesk":
        for n in names or [r.tool]:
            b.expect_record(
                "helpdesk",
                "conversations",
                {"ticket_id": r.ticket, "kind": "reply", "body": {"contains": n}},
                f"ticket #{r.ticket} got a reply naming {n}",
            )
        b.expect_change("helpdesk", "tickets", r.ticket, "status", 4, f"ticket #{r.ticket} is resolved")
        b.keep("helpdesk", "tickets", r.old_ticket, "last quarter's closed review ticket was left alone")
        b.keep("helpdesk", "tickets", r.newer, f"{r.requester.name}'s newer ticket on another subject")
        b.trap("closed", "last quarter's closed review", swap={r.ticket: r.old_ticket})
        b.trap("recent", "a newer open ticket on another subject", swap={r.ticket: r.newer})
    else:
        b.expect_record(
            "email",
            "messages",
            {"threadId": r.thread, "labelIds": "SENT", "to": r.requester.email},
            f"the reply is in {r.requester.name}'s review thread",
        )
        b.expect_message(
            "email",
            r.requester,
            contains=names or [r.tool],
            description=f"{r.requester.name} was told who lost access",
        )
        b.trap("recent", "a newer email on another subject", swap={r.email_id: r.newer})
    if p.notify == "email":
        b.expect_message(
            "email",
            owner,
            contains=[r.tool, *names],
            description=f"{owner.name}, the tool owner, was told who lost access",
        )
        for o in stale:
            b.no_message("email", o, f"{o.name} was not told (not the tool owner in force)")
    else:
        check: dict[str, Any] = {
            "predicate": "message_sent",
            "service": "chat",
            "to": [r.channel],
            "contains": [owner.name, *names],
        }
        if stale:  # naming a kept person is fair (who keeps access); naming a stale owner is not
            check["exclude"] = [o.name for o in stale]
        b.goal(f"#{CHANNEL} was told who lost {r.tool} access, naming {owner.name}", check)
    for h in gone:
        if h.reason == "left":
            if p.notify == "email":
                b.no_message("email", h.person, f"{h.label} left: nobody writes to them")
            continue
        if p.notify == "email":
            b.expect_message(
                "email",
                h.person,
                contains=[r.tool, h.reason],
                description=f"{h.label} was told their {r.tool} access was revoked ({h.reason})",
            )
        else:
            b.goal(
                f"#{CHANNEL} told {h.label} their {r.tool} access was revoked ({h.reason})",
                {
                    "predicate": "message_sent",
                    "service": "chat",
                    "to": [r.channel],
                    "contains": [h.label, h.reason],
                },
            )
    for o in stale:
        b.trap(
            "wrong_person",
            f"{o.name} owned {r.tool} under another policy version",
            swap={owner.email: o.email},
        )
    for h, k in zip(gone, kept, strict=False):  # another person on the same list
        b.trap("near_duplicate", f"{k.label} still qualifies for access", swap={r.key(h): r.key(k)})
    for k in kept:
        if k.alias and gone:  # the login under a name they had then: still them, still here
            b.trap(
                "near_duplicate",
                f"{k.label}'s login is {k.person.name}'s, who is still in BambooHR",
                swap={r.key(gone[0]): r.key(k)},
            )
    for k in [r.holders[lv.at] for lv in r.leaves[:1] if lv.kept]:
        # a login older than the limit, its gap covered by approved time off
        if gone and not k.reason:
            b.trap(
                "near_duplicate",
                f"{k.label}'s approved time off covers the days since their last login",
                swap={r.key(gone[-1]): r.key(k)},
            )
    for g in r.grants:
        k = r.holders[g.at]
        if g.why == "moved" and g.holds(r.today) and gone:
            b.trap(
                "near_duplicate",
                f"the policy owner keeps {k.label}'s access for a while yet",
                swap={r.key(gone[0]): r.key(k)},
            )
    if len(r.versions) > 1:
        b.trap("stale", "a policy version that is not in force today")


# ---- composition -----------------------------------------------------------------------------------
# surnames people had when a login was granted (none is a seed company's: a row is nobody else's)
FORMER = ("Okafor", "Lindqvist", "Marchetti", "Haddad", "Novak", "Castellano", "Brennan", "Sato", "Petrov")


def _renamed(b: Builder, p: Person, team: str, login: date, force: dict[str, Any]) -> Holder:
    """A login granted under the surname `p` had then: the row's name and email are not the ones
    BambooHR lists, its employee_id is `p`'s, so `p` keeps access. `force["renamed"]` False flips the
    evidence (draws unchanged): the id is nobody's in BambooHR, a former employee's (left)."""
    import re
    from dataclasses import replace

    taken = {e.last for e in b.company.employees} | {e.first for e in b.company.employees}
    old = b.rng.choice([x for x in FORMER if x not in taken] or [None]) or ""
    if not old:
        raise PlantError("no former surname free for a renamed holder")
    local = re.sub(r"[^a-z]", "", p.first.lower())
    mail = f"{local}.{old.lower()}@{p.email.split('@')[1]}"
    ids = [int(emp_id(e.id)) for e in b.company.employees]
    ghost_id = str(max(ids) + b.rng.randrange(40, 400))
    if mail.split("@")[0] in {e.email.split("@")[0] for e in b.company.employees}:
        raise PlantError("a former email is someone's login")
    if force.get("renamed") is False:
        ghost = replace(p, id=f"{p.id}-former", last=old, email=mail)
        return Holder(ghost, reason="left", dept="", login=login, eid=ghost_id)
    return Holder(p, dept=team, login=login, alias=mail, shown=f"{p.first} {old}")


def stages(plan: AccessPlan, away: bool = False, amend: bool = False) -> list[Stage]:
    def nothing(r: Any) -> None:
        return None

    change = Stage(
        "amend",
        "policy",
        ("owner",),
        ("owner_today",),
        nothing,  # planted once the channel exists (`compose`)
        nothing,  # read where the owner is told, in that visit (solve_notify)
        f"Check the policy owner's thread for a later change of tool owner ({DISPLAY[plan.notify]})",
    )
    cover = Stage(
        "away",
        "evidence",
        ("owner_today" if amend else "owner",),
        ("acting",),
        lambda r: plant_away(r.b, r.away),
        nothing,  # read where the owner is told, in that visit (solve_notify)
        f"Check whether the tool owner is in today ({DISPLAY[plan.notify]})",
    )
    return [
        Stage(
            "request",
            "target",
            (),
            ("tool",),
            plant_request,
            solve_request,
            "Find this quarter's review request",
        ),
        Stage(
            "roster",
            "aggregate",
            ("tool",),
            ("holders",),
            plant_roster,
            solve_roster,
            f"List who has access to the tool ({DISPLAY[plan.roster]})",
        ),
        Stage(
            "policy",
            "policy",
            ("tool",),
            ("team", "idle", "owner", "log_spec"),
            plant_policy,
            solve_policy,
            f"Read the access policy in force today ({DISPLAY[plan.policy]})",
        ),
        Stage(
            "people",
            "evidence",
            ("holders", "team", "idle"),
            ("left", "moved"),
            nothing,
            solve_people,
            "Check each of them in BambooHR: still here, still in the team",
        ),
        *([change] if amend else []),
        *([cover] if away else []),
        Stage(
            "decide",
            "decide",
            ("holders", "left", "moved", "team", "idle"),
            ("revoke",),
            nothing,
            solve_decide,
            "Decide for each person: keep, or revoke and why",
        ),
        Stage(
            "revoke",
            "write",
            ("revoke",),
            (),
            nothing,
            solve_revoke,
            "Delete the revoked access keys in Redis",
        ),
        Stage(
            "log",
            "write",
            ("revoke", "log_spec"),
            (),
            plant_log,
            solve_log,
            f"Log each revocation ({DISPLAY[plan.log]})",
        ),
        Stage(
            "notify",
            "write",
            ("revoke", "acting" if away else "owner_today" if amend else "owner"),
            (),
            nothing,
            solve_notify,
            f"Tell the tool owner ({DISPLAY[plan.notify]})",
        ),
        Stage("reply", "write", ("tool", "revoke"), (), nothing, solve_reply, "Answer the request"),
    ]


def compose(
    b: Builder, plan: AccessPlan, tier: dict[str, Any], tier_name: str, force: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Plant, solve and describe one access review on `b`. `force` flips evidence for tests with
    every random draw unchanged: `left` (the leaver left, or is still in the team, per HR), `moved`
    and `inactive` (likewise for the mover and the idle login)."""
    force = dict(force or {})
    rng = b.rng
    staff = [p for p in b.company.employees if p.id != b.me.id]
    teams = sorted({p.team for p in staff})
    team = rng.choice(teams)
    tool = rng.choice(TOOLS)
    nver = tier["versions"]
    # the tool owner the policy owner's change names (the requester, in security, owns the policy):
    # someone outside the review where the team can spare one, else a holder who keeps access
    nrev, nkeep = revocations(tier["cases"]), 2 if nver == 1 else 3
    spare = len(staff) - (1 + nver + nrev + nkeep + (1 if tier.get("away") else 0))  # the cover too
    more = 1 if tier.get("amend") and spare >= 1 else 0
    picked = b.fresh(staff, 1 + nver + more, key=lambda p: p.id)
    requester, owners = picked[0], picked[1 : 1 + nver]
    rest = [p for p in staff if p.id not in {x.id for x in picked}]
    nrev = revocations(tier["cases"])
    reasons = list(REASONS) if nrev == 3 else [rng.choice(REASONS)]
    nkeep = 2 if nver == 1 else 3
    if len(rest) < nrev + nkeep:
        raise PlantError("too few employees for an access review")
    people = rng.sample(rest, nrev + nkeep)
    today = b.now.date()
    idle = rng.choice((30, 45, 60, 90))
    holders: list[Holder] = []
    for p, why in zip(people, reasons + [""] * nkeep, strict=True):
        holders.append(
            Holder(p, reason=why, dept=team, login=today - timedelta(days=rng.randrange(0, idle // 2)))
        )
    near = holders[nrev] if nver >= 2 else None  # kept today, revoked under the older, stricter version
    if near is not None:
        near.near = True
    old_idle = rng.randrange(max(7, idle // 3), idle - 5)
    new_idle = idle + rng.randrange(30, 90)
    for h in holders:
        if h.reason == "inactive":
            h.login = today - timedelta(days=rng.randrange(idle + 2, idle + 25))
            if nver >= 3:  # the announced, laxer version would keep it
                new_idle = max(new_idle, (today - h.login).days + rng.randrange(3, 20))
        if h.reason == "moved":
            h.dept = rng.choice([t for t in teams if t != team])
    if near is not None:
        near.login = today - timedelta(days=rng.randrange(old_idle + 1, idle + 1))
    if nkeep >= 3:  # hard: one last login exactly at the limit (not more than it: kept), counted to the day
        holders[nrev + 1].login = today - timedelta(days=idle)
    # hard: one kept holder's last login is older than the limit, but approved time off in BambooHR
    # covers enough of the gap; the inactive one's time off covers too little (drawn either way)
    # (the holder kept today and revoked under the older, stricter version: what stays unused is
    # more than its limit)
    keep = near if tier.get("leave") else None
    leaves = draw_leaves(b, holders, keep, idle, force, floor=old_idle)
    if leaves and leaves[0].status != "approved":  # the flip: that time off was never approved
        holders[leaves[0].at].reason = "inactive"
    # hard: one key was set up by hand, so only the requester's follow-up names it: the leaver's, or
    # as often a holder's who keeps access (the one kept under the older version's limit, or the
    # one at the limit), so being named there decides nothing; and the leaver's login named there is
    # the one that kept holder has (from an attack: a recent login meant revoke, an old one keep);
    # drawn by position, either way (a test's flip of `left` keeps the leaver's unlisted, on the
    # team in BambooHR: kept)
    if tier.get("unlisted"):
        # in every hard review (from play: with half the reviews holding none, few players met it);
        # the draw of whether there is one is kept, so the later draws stay where they were
        rng.random()
        hand, theirs = True, rng.random() < 0.5
        # kept holders whose last login is within the limit (time off does not cover theirs)
        ends = nrev + nkeep - (1 if tier.get("aliases") and nkeep >= 3 else 0)
        ok = [k for k in range(nrev, ends) if (today - (holders[k].login or today)).days <= idle]
        kept_at = rng.choice(ok) if ok else None
        leaver = next((h for h in holders if h.reason == "left"), None)
        pick = leaver if force.get("unlisted_left", theirs) or kept_at is None else holders[kept_at]
        if pick is not None and force.get("unlisted", hand):
            pick.unlisted = True
            if pick is leaver and kept_at is not None:  # the login the kept one would have
                pick.login = holders[kept_at].login
    last_kept = holders[-1].person
    if tier.get("aliases") and nkeep >= 3:  # hard: the last one kept holds it under the name they had then
        holders[-1] = _renamed(b, last_kept, team, holders[-1].login or today, force)
    spare = nrev + 1 if nkeep >= 3 else None  # the login exactly at the limit: kept in every world
    grants = draw_grants(b, holders, force, spare) if tier.get("grants") and tier.get("amend") else []
    # tests flip one piece of evidence; the draws above are the same either way
    for why in REASONS:
        h = next((x for x in holders if x.reason == why), None)
        if h is not None and why in force and not force[why]:
            h.reason, h.dept = "", team
            if why == "inactive":
                h.login = today - timedelta(days=min(idle // 2, old_idle - 1))
    eff = today - timedelta(days=rng.randrange(20, 120))
    versions = [Version(eff, idle, owners[0])]
    if nver >= 2:
        versions.append(Version(eff - timedelta(days=rng.randrange(200, 500)), old_idle, owners[1]))
    if nver >= 3:
        versions.append(Version(today + timedelta(days=rng.randrange(10, 40)), new_idle, owners[2]))
    r = Review(b, plan, tier, tool, team, requester, holders, versions=versions, ask=rng.randrange(len(ASKS)))
    r.leaves = leaves
    r.grants = grants
    for g in grants:  # a keep still running: the holder keeps access (HR still shows the move)
        if g.holds(today):
            holders[g.at].reason = ""
    r.rows = _roster(r, staff)
    _paging_matters(r, force)
    # HR: the team each person is in today, and who left
    hr = b.svc("hr")
    by_mail = {e["workEmail"].lower(): e for e in hr.employees.all()}
    for h in holders:
        changed = format_time(b.now - timedelta(days=rng.randrange(5, 40)))  # drawn either way
        if h.eid:  # a former employee's login (no HR record: the id is nobody's)
            continue
        e = by_mail.get(h.person.email.lower())
        if e is None:
            raise PlantError(f"{h.person.name} is not in HR")
        upd = {"department": h.dept}
        if e.get("department") != h.dept and h.dept in TITLES:  # a title of the team they are in now
            # (from play: "an Office Manager in Engineering"); by the id, so no draw shifts
            roles = TITLES[h.dept]
            upd["jobTitle"] = roles[sum(map(ord, str(e["id"]))) % len(roles)]
        if h.reason == "left" or h.dept != team:  # a move (kept for a while, or not)
            upd["lastChanged"] = changed
        if h.reason == "left":
            upd["status"] = "Inactive"
        hr.employees.update(e["id"], upd)
        if h.reason == "left":
            quiet_since(b, h.person, changed)
    if plan.notify == "chat":
        from compoworld.tasks.families._common import chat_channel

        r.channel = chat_channel(
            b, CHANNEL, members=list(b.company.employees), topic="Access reviews and revocations"
        )
    if tier.get("amend"):  # the policy's owner changed the tool owner: before today it holds, after not yet
        new = picked[1 + nver] if more else last_kept
        r.amend = draw_amend(b, requester, new, lambda up: owners[0], plan.notify, force)
        r.amend.channel = r.channel
        if not r.amend.holds(today) and len(versions) >= 3:
            # the change still to come is the version announced for later (from play: two changes to
            # come, of other dates and owners, read as contradicting each other)
            versions[2] = Version(r.amend.effective, versions[2].idle, r.amend.value)
    if tier.get("away"):
        r.away = draw_away(
            b,
            # with the change, the absence is of the owner it names: it decides once that holds
            r.amend.value if r.amend is not None else owners[0],
            {p.id for p in picked} | {h.person.id for h in holders} | {last_kept.id},
            plan.notify,
            force,
            quiet={h.person.id for h in holders if h.reason == "left"},
            next_from=owners[1:2],  # the former tool owner, where the team has nobody else
        )
        r.away.channel = r.channel
    st = stages(plan, away=r.away is not None, amend=r.amend is not None)
    edges = wire(st)
    for s in st:
        s.plant(r)
    if tier.get("leave"):
        plant_leaves(r)
    if r.amend is not None:
        a = r.amend
        # a change still to come is the new version's (announced beside the one in force)
        later = not a.holds(b.now.date()) and len(r.versions) >= 3
        rest = amend_rest(later)
        when = f"{a.effective:%B} {a.effective.day}"
        text = (
            f"Change to the access policy: from {when}, the tool owner for {tool} is {a.value.name} "
            f"({a.value.email}), not {a.was.name}. {rest} {a.owner.first}"
        )
        plant_amend(b, a, "access policy", text)
        if r.grants:
            plant_grants(r)
    b.fact(*sorted(h.label for h in r.revoked()), str(idle))
    b.begin()
    writes = {"revoke", "log"}
    for s in st:
        if s.name not in writes and s.kind != "write":
            s.solve(r)
    for h in r.revoked():  # each grant in turn: revoke it, log it
        r.only = h
        for s in st:
            if s.name in writes:
                s.solve(r)
    r.only = None
    for s in st:
        if s.kind == "write" and s.name not in writes:
            s.solve(r)
    add_checks(r)
    describe(r, st)
    return {
        "theme": "access_review",
        "stages": [s.name for s in st],
        "plan": dict(plan.__dict__),
        "edges": [{"from": a, "to": z, "fact": f} for a, z, f in edges],
        "branches": [h.reason or "keep" for h in holders],
        "cases": 1,
        "roster_rows": len(r.rows),
        "policy_versions": len(versions),
        # the approver's out-of-office: None (not in play), or whether it holds today
        "away": None if r.away is None else r.away.on(r.today),
        # the cover's own absence (who is next named): None (not planted), or whether it holds today
        "cover_away": None if r.away is None or r.away.second is None else r.away.cover_on(r.today),
        # the policy owner's change of tool owner: None (not in play), or whether it holds today
        "amended": None if r.amend is None else r.amend.holds(r.today),
        # approved time off that keeps a login older than the limit: None (not in play), or whether
        # it covers enough of the gap (the holder keeps access)
        "leave": None if not r.leaves else not r.holders[r.leaves[0].at].reason,
        # the policy owner's keep of the mover's access: None (not in play), or whether it still runs
        "granted": next((g.holds(r.today) for g in r.grants if g.why == "moved"), None),
        # a key set up by hand, named only in the requester's follow-up: None (not in play), or
        # whether it is revoked (its holder left); only where the tier has it
        **(
            {"unlisted": next((bool(h.reason) for h in holders if h.unlisted), None)}
            if tier.get("unlisted")
            else {}
        ),
    }


def describe(r: Review, st: list[Stage]) -> None:
    b = r.b
    ask = ASKS[r.ask].format(tool=r.tool, who=r.requester.name)
    policy = ("access policy", "access policy", r.plan.policy)
    ctx = where_context(b, r.tier["where"], policy, ("access list", r.plan.roster))
    b.write(
        frame(b.rng, ask, context=ctx),
        hint=" ".join(s.step + "." for s in st),
        subtasks=[s.step for s in st],
    )
