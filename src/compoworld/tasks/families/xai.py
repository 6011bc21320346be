"""Cross-interface workflows (XAI): each walk uses the web app (GUI, `browser`), the local shell
(CLI, `workspace`) and an MCP service, and comes back to one of them.

The web app shows facts no MCP tool returns (internal account notes) and acts through the same tools
as MCP (a ticket's Close button, a channel's Post box, an email's Reply box); the workspace holds the
files a colleague keeps (an SLA matrix, a price book, an on-call rota, meeting prep notes). In a
persona world the customer comes from one of the persona's running story lines, which is given as
the reason for the work.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.core.company import Customer, Person
from compoworld.tasks.families._common import (
    chat_user,
    crm_company,
    hd_contact,
    hd_ticket,
    in_crm,
    rows,
)
from compoworld.tasks.families._common import inbox_mail as _mail
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

HOME = "/home/user"
_LINK = re.compile(r"^\[(e\d+)\] link (['\"])(.*)\2 -> (\S+)$")
_BOX = re.compile(r"^\[(e\d+)\] (textbox|button) (['\"])(.*?)\3( value=|$)")

STORY_REASON = {
    "customer_escalation": "the {c} escalation",
    "renewal": "the {c} renewal",
    "onboarding": "the {c} onboarding",
    "quarterly_review": "the {c} quarterly review",
    "vendor_order": "the {c} order",
    "hiring_loop": "the {c} account",
}

ISSUES = (
    ("Checkout fails with a 502", "Our checkout page fails with a 502 since this morning."),
    ("SSO login loop", "Our users are stuck in a login loop with SSO."),
    ("Invoices missing from portal", "We cannot see last month's invoices in the portal."),
    ("API rate limit errors", "Our integration keeps hitting rate limit errors."),
    ("Dashboard exports are empty", "Every CSV export from the dashboard comes out empty."),
)
OTHER = (
    ("Add two more seats", "Could you add two more seats to our plan?"),
    ("Change billing contact", "Please send future invoices to our new finance inbox."),
    ("Question about the roadmap", "Is the new reporting module coming this quarter?"),
    ("Update company address", "We moved offices; please update our address on file."),
)


# ---- helpers ---------------------------------------------------------------------------------
def _links(page: str) -> list[tuple[str, str, str]]:
    """(element id, label, href) of each link on a rendered page."""
    out = []
    for line in page.splitlines():
        m = _LINK.match(line)
        if m:
            out.append((m.group(1), m.group(3), m.group(4)))
    return out


def _element(page: str, role: str, label: str) -> str:
    for line in page.splitlines():
        m = _BOX.match(line)
        if m and m.group(2) == role and m.group(4) == label:
            return m.group(1)
    raise PlantError(f"no {role} {label!r} on the page")


def _href(page: str, pred) -> str:
    hits = [h for _e, lab, h in _links(page) if pred(lab)]
    if len(hits) != 1:
        raise PlantError(f"expected one matching link, found {len(hits)}")
    return hits[0]


def _note(b: Builder, name: str, text: str) -> None:
    facts = b.svc("browser").facts
    if facts.get(name) is None:
        facts.create({"text": text}, id=name)
    else:
        facts.update(name, {"text": text})


def _file(b: Builder, rel: str, text: str) -> None:
    b.svc("workspace").write_file(f"{HOME}/{rel}", text)


def _who(b: Builder, cust: Customer, story: dict[str, Any] | None) -> Person:
    if story:
        for pid in cust.contact_ids:
            p = b.company.person(pid)
            if p.email.lower() == str(story.get("contact", "")).lower():
                return p
    return b.contact_of(cust)


def _reason(story: dict[str, Any] | None, cust: Customer) -> str:
    if not story:
        return ""
    return STORY_REASON.get(story["kind"], "the {c} account").format(c=cust.name)


def _slug(name: str) -> str:
    from compoworld.interfaces.web import slug

    return slug(name)


def _when(s: str) -> datetime:
    return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")


def _naive(dt: datetime) -> datetime:
    return dt.replace(tzinfo=None) if dt.tzinfo else dt


# ---- 1. support: triage a ticket by the plan in the account notes and the SLA matrix ---------
PLANS = {  # plan: (freshdesk priority, tag, first response hours)
    "Platinum": (4, "platinum-sla", 2),
    "Gold": (3, "gold-sla", 8),
    "Bronze": (2, "bronze-sla", 24),
}
OLD_PLANS = {"Platinum": (3, "tier1-sla"), "Gold": (2, "tier2-sla"), "Bronze": (1, "tier3-sla")}


@family("xai.ticket_sla_from_plan", "support", ("browser", "workspace", "helpdesk"))
def ticket_sla_from_plan(b: Builder) -> None:
    """Find the customer's open ticket in the web app, read their support plan on the company page,
    look the plan up in the SLA matrix file, set priority and tag in Freshdesk, log it in the shell."""
    cust, story = b.story(kinds=("customer_escalation", "onboarding"))
    person = _who(b, cust, story)
    contact = hd_contact(b, person)
    if contact.get("company_id") is None:
        raise PlantError("contact without company")
    other = b.customer(exclude=(cust.id,))
    operson = b.contact_of(other)
    ocontact = hd_contact(b, operson)
    if ocontact.get("company_id") in (None, contact["company_id"]):
        raise PlantError("twin without its own company")
    subject, text = b.pick(ISSUES)
    os_, ot = b.pick(OTHER)
    plan = b.pick(sorted(PLANS))
    oplan = b.pick([p for p in sorted(PLANS) if p != plan])
    prio, tag, hours = PLANS[plan]
    old_prio, old_tag = OLD_PLANS[plan]
    old = hd_ticket(b, contact, subject, f"{text} Regards, {person.name}", status=5, days_ago=80)
    t = hd_ticket(b, contact, subject, f"{text} Regards, {person.name}", status=2, days_ago=0.4, priority=1)
    twin = hd_ticket(b, ocontact, subject, f"{text} Regards, {operson.name}", status=2, days_ago=0.2)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.05, priority=1)
    _note(b, cust.name, f"Support plan: {plan}. Primary contact {person.name}.")
    _note(b, other.name, f"Support plan: {oplan}. Primary contact {operson.name}.")
    _file(
        b,
        "Documents/support/sla_matrix.csv",
        "plan,freshdesk_priority,tag,first_response_hours\n"
        + "".join(f"{p},{v[0]},{v[1]},{v[2]}\n" for p, v in PLANS.items()),
    )
    _file(
        b,
        "Documents/archive/sla_matrix_2023.csv",
        "plan,freshdesk_priority,tag\n" + "".join(f"{p},{v[0]},{v[1]}\n" for p, v in OLD_PLANS.items()),
    )
    _file(
        b,
        "Documents/support/triage_log.csv",
        "ticket,customer,plan,priority\n" + f"{old['id']},{cust.name},{plan},{old_prio}\n",
    )
    b.fact(tag)
    b.begin()

    home = b.call("browser__open", {"url": "/"})["page"]
    page = b.call("browser__open", {"url": _href(home, lambda x: x == "Tickets")})["page"]
    cands = [h for _e, lab, h in _links(page) if lab.endswith(f"{subject} [open]")]
    mine = None
    for h in cands:
        tp = b.call("browser__open", {"url": h})["page"]
        if person.name in tp:
            mine = (h, tp)
    assert mine is not None and mine[0] == f"/tickets/{t['id']}"
    tid = int(mine[0].rsplit("/", 1)[1])
    comp = b.call("browser__open", {"url": _href(mine[1], lambda x: x == "Company")})["page"]
    assert f"Support plan: {plan}." in comp
    b.decide()
    b.call("workspace__shell", {"command": "ls Documents/support Documents/archive"})
    out = b.call("workspace__shell", {"command": f"grep {plan} Documents/support/sla_matrix.csv"})["stdout"]
    _p, fprio, ftag, _h = out.strip().split(",")
    assert (int(fprio), ftag) == (prio, tag)
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "priority": prio, "tags": [ftag]})
    b.call(
        "workspace__shell",
        {"command": f"echo '{tid},{cust.name},{plan},{prio}' >> Documents/support/triage_log.csv"},
    )
    b.expect_change("helpdesk", "tickets", tid, "priority", prio, f"ticket #{tid} is at the plan's priority")
    b.expect_change("helpdesk", "tickets", tid, "tags", tag, f"ticket #{tid} carries the plan's SLA tag")
    b.goal(
        "the triage log has a row for the ticket with the customer, plan and priority",
        {
            "predicate": "record_exists",
            "service": "workspace",
            "table": "entries",
            "new": True,
            "where": {
                "id": f"{HOME}/Documents/support/triage_log.csv",
                "content": {"contains": f"{tid},{cust.name},{plan},{prio}"},
            },
        },
    )
    b.keep(
        "helpdesk", "tickets", old["id"], "last quarter's closed ticket on the same problem was left alone"
    )
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.keep("helpdesk", "tickets", twin["id"], f"{other.name}'s ticket with the same subject was left alone")
    b.not_written("helpdesk", old_tag, "the superseded 2023 matrix was not used", tables=["tickets"])
    b.trap("closed", "last quarter's closed ticket with the same subject", swap={tid: old["id"]})
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.trap(
        "near_duplicate", f"an open ticket with the same subject from {other.name}", swap={tid: twin["id"]}
    )
    b.trap("stale", "the 2023 SLA matrix in the archive folder", swap={tag: old_tag})
    why = _reason(story, cust)
    lead = (
        b.say(
            f"This is for {why} you've been running this week",
            f"It's part of {why}",
            f"It's for {why} on your plate",
        )
        if why
        else b.say(f"{person.first} at {cust.name} just opened a ticket", f"{cust.name} has a new ticket in")
    )
    b.write(
        frame(
            b.rng,
            b.say(
                f'give {person.name}\'s open ticket about "{subject.lower()}" the priority and tag their support plan calls for, and log it in the triage log',
                f'triage {person.name}\'s open "{subject.lower()}" ticket by their support plan (priority and tag) and add it to the triage log',
            ),
            context=f"{lead}. "
            + b.say(
                "The plan is in the internal account notes in our web app; the current SLA matrix and the triage log are in Documents/support",
                "Their plan is only in the web app's account notes; the SLA matrix and the triage log are in Documents/support",
            ),
        ),
        hint="Open the ticket list in the web app, find the requester's open ticket on that subject, open its company page for the plan, grep the plan in Documents/support/sla_matrix.csv, update the ticket in Freshdesk, append a row to the triage log.",
        subtasks=[
            f"Find {person.name}'s open ticket on that subject in the web app",
            "Read the support plan on the ticket's company page",
            "Look the plan up in the current SLA matrix file",
            "Set the ticket's priority and tag in Freshdesk",
            "Append ticket,customer,plan,priority to the triage log",
        ],
    )


# ---- 2. sales: price this year's renewal from the notes and the price book -------------------
PRICE_BOOK = {"Starter": 180, "Growth": 320, "Scale": 540}
OLD_PRICES = {"Starter": 150, "Growth": 280, "Scale": 480}


@family("xai.renewal_quote_from_notes", "sales", ("browser", "workspace", "crm"))
def renewal_quote_from_notes(b: Builder) -> None:
    """The web app's account notes hold the agreed renewal (seats and plan): price it with the price
    book file, set the open renewal deal's amount in HubSpot and save the quote in the workspace."""
    cust, story = b.story(kinds=("renewal", "quarterly_review"))
    crm_company(b, cust.name)
    person = _who(b, cust, story)
    other = b.customer(exclude=(cust.id,), where=in_crm(b))
    year = b.now.year
    plan = b.pick(sorted(PRICE_BOOK))
    seats = b.pick((15, 25, 40, 60, 80, 120))
    total = seats * PRICE_BOOK[plan]
    stale_total = seats * OLD_PRICES[plan]
    oseats = b.pick([s for s in (20, 35, 50, 90) if s != seats])
    close = b.days(b.rng.randrange(20, 50)).replace(hour=9, minute=0, second=0, microsecond=0)

    def deal(name: str, stage: str, amount: int, when: datetime) -> dict[str, Any]:
        return b.plant(
            "crm__hubspot_create_deal",
            {
                "properties": {
                    "dealname": name,
                    "amount": f"{amount}.00",
                    "dealstage": stage,
                    "closedate": b.iso(when),
                    "dealtype": "existingbusiness",
                }
            },
        )

    last = deal(
        f"{cust.name} renewal {year - 1}", "closedwon", stale_total - 1000, close.replace(year=year - 1)
    )
    target = deal(f"{cust.name} renewal {year}", "contractsent", stale_total, close)
    theirs = deal(f"{other.name} renewal {year}", "contractsent", oseats * PRICE_BOOK[plan], close)
    _note(
        b,
        cust.name,
        f"Renewal {year}: {person.name} agreed {seats} seats on the {plan} plan on our last call. "
        "Price it from the current price book.",
    )
    _note(b, other.name, f"Renewal {year}: {b.contact_of(other).name} asked for {oseats} seats.")
    _file(
        b,
        "Documents/pricing/price_book.csv",
        "plan,price_per_seat_year,valid_from\n"
        + "".join(f"{p},{v},{year}-01-01\n" for p, v in PRICE_BOOK.items()),
    )
    _file(
        b,
        f"Documents/pricing/archive/price_book_{year - 1}.csv",
        "plan,price_per_seat_year,valid_from\n"
        + "".join(f"{p},{v},{year - 1}-01-01\n" for p, v in OLD_PRICES.items()),
    )
    _file(
        b,
        f"Documents/quotes/{_slug(other.name)}-renewal-{year - 1}.txt",
        f"{other.name} renewal {year - 1}: 20 seats, total 5600\n",
    )
    b.fact(seats, total)
    b.begin()

    home = b.call("browser__open", {"url": "/"})["page"]
    crm = b.call("browser__open", {"url": _href(home, lambda x: x == "CRM")})["page"]
    href = _href(crm, lambda x: x == f"deals: {cust.name} renewal {year}")
    dp = b.call("browser__open", {"url": href})["page"]
    assert "dealstage: contractsent" in dp
    did = href.rsplit("/", 1)[1]
    assert did == str(target["id"])
    acc = b.call("browser__open", {"url": _href(home, lambda x: x == "Accounts")})["page"]
    note = b.call("browser__open", {"url": _href(acc, lambda x: x == cust.name)})["page"]
    assert f"{seats} seats on the {plan} plan" in note
    b.call("workspace__shell", {"command": "ls -R Documents/pricing"})
    out = b.call("workspace__shell", {"command": f"grep {plan} Documents/pricing/price_book.csv"})["stdout"]
    price = int(out.split(",")[1])
    b.aggregate()
    b.decide()
    amount = seats * price
    assert amount == total
    b.composed(amount, f"{amount}.00")
    b.call("crm__hubspot_update_deal_by_id", {"deal_id": did, "updates": {"amount": f"{amount}.00"}})
    b.call(
        "crm__hubspot_create_note",
        {
            "note_body": f"Renewal priced: {seats} seats on {plan} at {price}/seat = {amount}.",
            "deal_ids": [did],
        },
    )
    fname = f"Documents/quotes/{_slug(cust.name)}-renewal-{year}.txt"
    b.call(
        "workspace__shell",
        {"command": f"echo '{cust.name} renewal {year}: {seats} seats on {plan}, total {amount}' > {fname}"},
    )
    b.expect_change(
        "crm", "objects", did, "properties.amount", amount, "the renewal deal carries the priced total"
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "notes", "to_object_type": "deals", "to_object_id": str(did)},
        "a note on the renewal deal records the pricing",
    )
    b.goal(
        "a quote file in Documents/quotes gives the customer, the seats and the total",
        {
            "predicate": "record_exists",
            "service": "workspace",
            "table": "entries",
            "new": True,
            "where": {
                "id": {"startswith": f"{HOME}/Documents/quotes/"},
                "content": {"contains_all": [cust.name, str(seats), str(amount)]},
            },
        },
    )
    b.keep("crm", "objects", last["id"], "last year's closed-won renewal was left alone")
    b.keep("crm", "objects", theirs["id"], f"{other.name}'s renewal deal was left alone")
    b.not_written("crm", f"{stale_total}.00", "last year's price book was not used", tables=["objects"])
    b.trap("closed", "last year's closed-won renewal of the same customer", swap={did: last["id"]})
    b.trap("near_duplicate", f"{other.name}'s open renewal deal", swap={did: theirs["id"]})
    b.trap("stale", "last year's price book in the archive", swap={f"{amount}.00": f"{stale_total}.00"})
    why = _reason(story, cust)
    lead = (
        b.say(f"This is for {why} you've been running this week", f"This is for {why} you're handling")
        if why
        else b.say(f"{cust.name}'s renewal is coming up", f"We agreed {cust.name}'s renewal on a call")
    )
    b.write(
        frame(
            b.rng,
            b.say(
                f"price {cust.name}'s {year} renewal, put the amount on the open renewal deal in HubSpot with a note, and save the quote in Documents/quotes",
                f"work out what {cust.name}'s {year} renewal comes to, update the open HubSpot renewal deal (amount plus a note) and drop a quote file in Documents/quotes",
            ),
            context=f"{lead}. "
            + b.say(
                "The agreed seats and plan are in the web app's account notes; prices are in the current price book under Documents/pricing",
                "What we agreed is in the internal account notes (web app); the price book is under Documents/pricing",
            ),
        ),
        hint="Find the open renewal deal in the web app's CRM pages, read the account notes for seats and plan, grep the plan's price in Documents/pricing/price_book.csv, set the deal amount and add a note in HubSpot, then write a quote file.",
        subtasks=[
            f"Find {cust.name}'s open {year} renewal deal in the web app",
            "Read the agreed seats and plan in the account notes",
            "Look up the plan's per-seat price in the current price book",
            "Set the deal amount and add a note in HubSpot",
            "Save the quote in Documents/quotes",
        ],
    )


# ---- 3. scheduling: book the QBR on the customer's standing slot, avoiding my conflicts ------
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _cal_event(b: Builder, summary: str, start: datetime, minutes: int, guests: list[str]) -> dict[str, Any]:
    svc = b.svc("calendar")
    rec = {
        "id": svc.next_id("ev", 16),
        "calendar_id": b.me.email,
        "summary": summary,
        "description": "",
        "location": "",
        "start": format_time(start),
        "end": format_time(start + timedelta(minutes=minutes)),
        "attendees": [{"email": e, "responseStatus": "accepted"} for e in guests],
        "organizer": b.me.email,
        "visibility": "default",
        "recurrence": [],
        "hangoutLink": None,
        "status": "confirmed",
    }
    svc.insert("events", rec)
    return rec


@family("xai.qbr_on_standing_slot", "scheduling", ("browser", "workspace", "calendar"))
def qbr_on_standing_slot(b: Builder) -> None:
    """The prep file names the QBR's attendees and length, the web app's account notes the customer's
    standing slot; my calendar page shows the next one is taken, so book the one after and log it."""
    cust, story = b.story(kinds=("quarterly_review", "renewal", "onboarding"))
    person = _who(b, cust, story)
    colleague = b.person(external=False)
    former = next(
        (b.company.person(p) for p in cust.contact_ids if b.company.person(p).email != person.email), None
    ) or b.person(external=True)
    minutes = b.pick((45, 60, 90))
    now = _naive(b.now)
    spans = []
    for ev in b.svc("calendar").store.tables.get("events", {}).values():
        st, en = ev.get("start"), ev.get("end")
        st = st.get("dateTime") if isinstance(st, dict) else st
        en = en.get("dateTime") if isinstance(en, dict) else en
        if st and en and ev.get("status") != "cancelled":
            spans.append((_naive(_when(st)), _naive(_when(en))))
    options = [(w, h) for w in (1, 2, 3) for h in (10, 11, 14, 15)]
    b.rng.shuffle(options)
    for wd, hour in options:
        day = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        while day.weekday() != wd:
            day += timedelta(days=1)
        busy = day.replace(hour=hour)
        slot = busy + timedelta(days=7)
        if not any(a < slot + timedelta(minutes=minutes) and e > slot for a, e in spans):
            break
    else:
        raise PlantError("no free standing slot next week")
    slug = _slug(cust.name)
    _note(
        b,
        cust.name,
        f"QBRs: {_WEEKDAYS[wd]}s at {hour}:00, in person at their {cust.city} office.",
    )
    _file(
        b,
        f"Documents/meetings/qbr-{slug}.md",
        f"# QBR prep: {cust.name}\nAttendees: {person.name} <{person.email}>, {colleague.name} <{colleague.email}>\n"
        f"Length: {minutes} minutes\nAgenda: usage, renewal, roadmap\n",
    )
    _file(
        b,
        f"Documents/meetings/archive/qbr-{slug}-{now.year - 1}.md",
        f"# QBR prep: {cust.name} ({now.year - 1})\nAttendees: {former.name} <{former.email}>\nLength: 30 minutes\n",
    )
    clash = _cal_event(
        b,
        b.pick(("Board prep", "Budget review", "Hiring committee", "Quarter close sync")),
        busy - timedelta(minutes=30),
        90,
        [colleague.email],
    )
    other_day = slot + timedelta(days=b.pick((1, -1)), hours=b.pick((-2, 2)))
    later = _cal_event(b, "Team offsite planning", other_day, 60, [colleague.email])
    b.fact(person.email, colleague.email)
    b.begin()

    b.call("workspace__shell", {"command": "ls -R Documents/meetings"})
    prep = b.call("workspace__shell", {"command": f"cat Documents/meetings/qbr-{slug}.md"})["stdout"]
    emails = re.findall(r"<([^>]+)>", prep)
    assert emails == [person.email, colleague.email]
    mins = int(re.search(r"Length: (\d+)", prep).group(1))
    home = b.call("browser__open", {"url": "/"})["page"]
    acc = b.call("browser__open", {"url": _href(home, lambda x: x == "Accounts")})["page"]
    note = b.call("browser__open", {"url": _href(acc, lambda x: x == cust.name)})["page"]
    assert f"{_WEEKDAYS[wd]}s at {hour}:00" in note
    cal = b.call("browser__open", {"url": _href(home, lambda x: x == "Calendar")})["page"]
    assert format_time(busy - timedelta(minutes=30)) in cal
    b.decide(2)
    start, end = slot, slot + timedelta(minutes=mins)
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": f"Quarterly business review: {cust.name}",
            "start_datetime": format_time(start),
            "end_datetime": format_time(end),
            "location": f"{cust.name} office, {cust.city}",
            "attendees": emails,
            "send_updates": "all",
        },
    )
    b.composed(f"{cust.name} office, {cust.city}")
    b.call(
        "workspace__shell",
        {
            "command": f"echo 'Booked: {start.date().isoformat()} {hour}:00' >> Documents/meetings/qbr-{slug}.md"
        },
    )
    b.goal(
        f"a {minutes}-minute QBR with {person.name} and {colleague.name} on the first free standing slot",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [person.email, colleague.email],
            "names": [person.name, colleague.name],
            "start": format_time(start),
            "duration_minutes": minutes,
            "exclusive": True,
        },
    )
    b.goal(
        "the prep file notes the booked date",
        {
            "predicate": "record_exists",
            "service": "workspace",
            "table": "entries",
            "new": True,
            "where": {
                "id": f"{HOME}/Documents/meetings/qbr-{slug}.md",
                "content": {"contains_all": ["QBR prep", start.date().isoformat()]},
            },
        },
    )
    b.not_written("calendar", former.email, "last year's attendee was not invited", tables=["events"])
    b.keep("calendar", "events", clash["id"], "the meeting on the first slot was not moved")
    b.keep("calendar", "events", later["id"], "the other meeting that week stays put")
    b.trap("stale", "last year's prep file with the former contact", swap={person.email: former.email})
    b.trap(
        "policy_exception",
        "the next standing slot, already taken",
        swap={
            format_time(start): format_time(busy),
            format_time(end): format_time(busy + timedelta(minutes=mins)),
        },
    )
    why = _reason(story, cust)
    lead = (
        b.say(
            f"This is for {why} you've been running this week",
            f"This is the next step in {why} you're running",
        )
        if why
        else b.say(f"{cust.name}'s quarterly review is due", f"We owe {cust.name} their QBR")
    )
    b.write(
        frame(
            b.rng,
            b.say(
                f"book {cust.name}'s QBR in my calendar on their usual slot, the first one I'm free, and note the date in the prep file",
                f"schedule the {cust.name} QBR at their standing time on the first such day my calendar is free, then write the booked date into the prep file",
            ),
            context=f"{lead}. "
            + b.say(
                "Attendees and length are in the prep file under Documents/meetings; their standing slot is in the web app's account notes",
                "The current prep file in Documents/meetings has who comes and how long; the account notes in our web app say when they like it",
            ),
        ),
        hint="Read the prep file in Documents/meetings (not the archive), the standing weekday and hour in the web app's account notes, check the calendar page for the next such slot, book the first free one with the attendees and location, then append the date to the prep file.",
        subtasks=[
            "Read attendees and length in the current QBR prep file",
            "Read the customer's standing QBR slot in the account notes",
            "Check the calendar for the next such slot and skip it if taken",
            "Create the event with both attendees at the customer's office",
            "Append the booked date to the prep file",
        ],
    )


# ---- 4. support: bring this week's on-call into #escalations with the account's contact ------
@family("xai.escalation_oncall_heads_up", "support", ("browser", "workspace", "chat"))
def escalation_oncall_heads_up(b: Builder) -> None:
    """This week's on-call from the rota file joins #escalations over Slack's API; the heads-up, with the
    customer's escalation contact from the web app's account notes, is posted from the channel page."""
    cust, story = b.story(kinds=("customer_escalation", "onboarding"))
    person = _who(b, cust, story)
    esc = _channel(b, "escalations", "Customer escalations: on-call joins, heads-up with the contact")
    arch = _channel(b, "escalations-archive", "Archived escalations (read only)")
    members = set(b.svc("chat").store.tables["channels"][esc]["members"])
    users = b.svc("chat").store.tables.get("users", {})
    pool = [
        p
        for p in b.company.employees
        if p.id != b.me.id and chat_user(p) in users and chat_user(p) not in members
    ]
    prev, cur, nxt = b.fresh(pool, 3, key=lambda p: p.id)
    if len({prev.name, cur.name, nxt.name}) < 3:
        raise PlantError("rota names collide")
    now = _naive(b.now)
    monday = (now - timedelta(days=now.weekday())).date()
    weeks = [(monday - timedelta(days=7), prev), (monday, cur), (monday + timedelta(days=7), nxt)]
    _file(
        b,
        "Documents/oncall/rota.csv",
        "week_of,on_call\n" + "".join(f"{d.isoformat()},{p.name}\n" for d, p in weeks),
    )
    _file(
        b,
        "Documents/oncall/paged.log",
        f"{(monday - timedelta(days=5)).isoformat()},{b.customer(exclude=(cust.id,)).name},{prev.name}\n",
    )
    _note(
        b,
        cust.name,
        f"Escalation contact: {person.name} ({person.title or 'main contact'}). Call them before anyone else.",
    )
    other = b.customer(exclude=(cust.id,))
    _note(b, other.name, f"Escalation contact: {b.contact_of(other).name}.")
    b.fact(person.name, cur.name)
    b.begin()

    rota = b.call("workspace__shell", {"command": "cat Documents/oncall/rota.csv"})["stdout"]
    row = next(line for line in rota.splitlines() if line.startswith(monday.isoformat()))
    oncall = row.split(",", 1)[1]
    assert oncall == cur.name
    b.decide()
    home = b.call("browser__open", {"url": "/"})["page"]
    acc = b.call("browser__open", {"url": _href(home, lambda x: x == "Accounts")})["page"]
    note = b.call("browser__open", {"url": _href(acc, lambda x: x == cust.name)})["page"]
    assert person.name in note
    chans = b.call("browser__open", {"url": _href(home, lambda x: x == "Channels")})["page"]
    href = _href(chans, lambda x: x == "#escalations")
    cid = href.rsplit("/", 1)[1]
    assert cid == esc
    found = b.call("chat__slack_list_users", {"name": oncall})
    uid = next(u["id"] for u in rows(found) if u.get("real_name") == oncall)
    b.call("chat__slack_invite_users_to_channel", {"channel_id": cid, "user_ids": [uid]})
    page = b.call("browser__open", {"url": href})["page"]
    box = _element(page, "textbox", "Message")
    text = (
        f"Heads-up: {cust.name} escalation. {oncall} is on call this week and now in here; "
        f"their escalation contact is {person.name}."
    )
    page = b.call("browser__type", {"element_id": box, "text": text})["page"]
    b.call("browser__click", {"element_id": _element(page, "button", "Post")})
    b.call(
        "workspace__shell",
        {"command": f"echo '{b.now.date().isoformat()},{cust.name},{oncall}' >> Documents/oncall/paged.log"},
    )
    b.expect_change(
        "chat", "channels", cid, "members", uid, f"{cur.name} (on call this week) joined #escalations"
    )
    b.expect_message(
        "chat",
        cid,
        contains=[cust.name, person.name],
        description="#escalations got the heads-up with the customer and their escalation contact",
    )
    for p, when in ((prev, "last"), (nxt, "next")):
        b.guard(
            f"{when} week's on-call was not added",
            {
                "predicate": "record_absent",
                "service": "chat",
                "table": "channels",
                "new": True,
                "where": {"id": cid, "members": chat_user(p)},
            },
        )
    b.no_message("chat", arch, "nothing was posted in the archive channel")
    b.goal(
        "the paging log has a line with today's date, the customer and the on-call",
        {
            "predicate": "record_exists",
            "service": "workspace",
            "table": "entries",
            "new": True,
            "where": {
                "id": f"{HOME}/Documents/oncall/paged.log",
                "content": {"contains": f"{b.now.date().isoformat()},{cust.name},{cur.name}"},
            },
        },
    )
    b.trap("stale", "last week's on-call on the rota", swap={uid: chat_user(prev)})
    b.trap("near_duplicate", "the archived escalations channel", swap={cid: arch})
    why = _reason(story, cust)
    lead = (
        b.say(
            f"On {why} you've been running this week, the customer has escalated",
            f"Things heated up on {why}",
        )
        if why
        else b.say(f"{cust.name} has escalated", f"We have an escalation from {cust.name}")
    )
    b.write(
        frame(
            b.rng,
            b.say(
                "add this week's on-call to #escalations, post a heads-up there naming the customer and their escalation contact, and log the page",
                "get whoever is on call this week into #escalations, post a heads-up in the channel with the customer and who to call on their side, then log it",
            ),
            context=f"{lead}. "
            + b.say(
                "The rota and the paging log (date,customer,on-call lines) are in Documents/oncall; the escalation contact is in the web app's internal account notes",
                "Rota weeks in Documents/oncall start on Monday; the paging log there takes date,customer,on-call lines; their escalation contact is only in our web app's account notes",
            ),
        ),
        hint="Read this week's row of Documents/oncall/rota.csv, read the customer's account notes in the web app, find the on-call's Slack user and invite them to #escalations, then post the heads-up from the channel page and append a line to Documents/oncall/paged.log.",
        subtasks=[
            "Find this week's on-call in the rota file",
            "Read the customer's escalation contact in the account notes",
            "Invite the on-call to #escalations in Slack",
            "Post the heads-up with the customer and the contact in #escalations",
            "Append date,customer,on-call to the paging log",
        ],
    )


def _channel(b: Builder, name: str, topic: str) -> str:
    from compoworld.tasks.families._common import chat_channel

    return chat_channel(b, name, topic=topic)


# ---- 5. ecommerce: confirm a purchase order at the contract discount -------------------------
@family("xai.po_confirm_contract_price", "ecommerce", ("browser", "workspace", "email"))
def po_confirm_contract_price(b: Builder) -> None:
    """A customer's (revised) purchase order is in the inbox: price it from the price list file with the
    contract discount in the web app's account notes, save it as an order file, reply with the total."""
    cust, story = b.story(kinds=("vendor_order", "renewal", "onboarding"))
    person = _who(b, cust, story)
    other = b.customer(exclude=(cust.id,))
    operson = b.contact_of(other)
    code = story["code"] if story and str(story.get("code", "")).startswith("PO-") else b.code("PO")
    ocode = b.code("PO")
    prods = b.pick([p for p in b.company.products if p.price], 3)
    if len({p.name for p in prods}) < 3:
        raise PlantError("product names collide")
    qty = [b.rng.randrange(2, 12) for _ in prods]
    first_qty = [q + b.rng.randrange(1, 4) for q in qty]
    pct = b.pick((5, 10, 12, 15, 20))
    list_prices = {p.sku: round(float(p.price), 2) for p in prods}

    def total_of(qs: list[int]) -> str:
        gross = sum(q * list_prices[p.sku] for q, p in zip(qs, prods, strict=True))
        return f"{round(gross * (100 - pct) / 100, 2):.2f}"

    total, stale_total = total_of(qty), total_of(first_qty)
    if total == stale_total:
        raise PlantError("revision changes nothing")
    gross_total = f"{sum(q * list_prices[p.sku] for q, p in zip(qty, prods, strict=True)):.2f}"
    lines = lambda qs: "\n".join(f"{q} x {p.name}" for q, p in zip(qs, prods, strict=True))  # noqa: E731
    now = _naive(b.now)
    first = _mail(
        b,
        person.email,
        b.me.email,
        f"Purchase order {code}",
        f"Hi {b.me.first},\n\nplease confirm our order:\n{lines(first_qty)}\n\nThanks, {person.first}",
        now - timedelta(days=1, hours=3),
    )
    rev = _mail(
        b,
        person.email,
        b.me.email,
        f"Purchase order {code} (revised)",
        f"Hi {b.me.first},\n\nsorry, this replaces yesterday's version:\n{lines(qty)}\n\nPlease confirm the total. {person.first}",
        now - timedelta(hours=2),
    )
    theirs = _mail(
        b,
        operson.email,
        b.me.email,
        f"Purchase order {ocode}",
        f"Hi,\n\nplease confirm:\n{lines(qty[::-1])}\n\n{operson.first}",
        now - timedelta(minutes=40),
    )
    _note(
        b, cust.name, f"Contract pricing: {pct}% off list price on every order. Quote totals after discount."
    )
    _note(
        b, other.name, f"Contract pricing: {b.pick([x for x in (5, 10, 12, 15, 20) if x != pct])}% off list."
    )
    _file(
        b,
        "Documents/orders/price_list.csv",
        "sku,product,list_price\n"
        + "".join(f"{p.sku},{p.name},{float(p.price):.2f}\n" for p in b.company.products if p.price),
    )
    b.fact(total, pct, gross_total)
    b.begin()

    home = b.call("browser__open", {"url": "/"})["page"]
    acc = b.call("browser__open", {"url": _href(home, lambda x: x == "Accounts")})["page"]
    note = b.call("browser__open", {"url": _href(acc, lambda x: x == cust.name)})["page"]
    got = int(re.search(r"Contract pricing: (\d+)% off", note).group(1))
    assert got == pct
    found = b.call("email__gmail_search_emails", {"query": f'"{code}"', "maxResults": 10})
    hits = [m for m in rows(found) if "revised" in (m.get("subject") or "")]
    assert len(hits) == 1 and hits[0]["id"] == rev["id"]
    msg = b.call("email__gmail_read_email", {"messageId": hits[0]["id"]})
    body = next(m["body"] for m in rows(msg) if m["id"] == rev["id"])
    assert lines(qty) in body
    b.decide()
    prices = b.call("workspace__shell", {"command": "cat Documents/orders/price_list.csv"})["stdout"]
    by_name = {ln.split(",")[1]: float(ln.split(",")[2]) for ln in prices.strip().splitlines()[1:]}
    gross = sum(q * by_name[p.name] for q, p in zip(qty, prods, strict=True))
    amount = f"{round(gross * (100 - got) / 100, 2):.2f}"
    assert amount == total
    b.aggregate()
    b.composed(amount)
    fname = f"Documents/orders/{code}.csv"
    rows_ = ["product,qty", *(f"{p.name},{q}" for q, p in zip(qty, prods, strict=True)), f"total,{amount}"]
    cmd = f"echo '{rows_[0]}' > {fname}" + "".join(f" && echo '{r}' >> {fname}" for r in rows_[1:])
    b.call("workspace__shell", {"command": cmd + f" && cat {fname}"})
    inbox = b.call("browser__open", {"url": _href(home, lambda x: x == "Inbox")})["page"]
    href = _href(inbox, lambda x: x.startswith(f"Purchase order {code} (revised)"))
    page = b.call("browser__open", {"url": href})["page"]
    box = _element(page, "textbox", "Reply")
    page = b.call(
        "browser__type",
        {
            "element_id": box,
            "text": f"Hi {person.first}, confirming purchase order {code} (revised): total {amount} after your contract discount.",
        },
    )["page"]
    b.call("browser__click", {"element_id": _element(page, "button", "Send reply")})
    b.expect_message(
        "email",
        person,
        contains=[amount],
        description=f"{person.name} got the confirmation with the discounted total",
    )
    b.no_message("email", operson, f"{other.name}'s contact got nothing")
    b.goal(
        "an order file for the PO with the discounted total",
        {
            "predicate": "record_exists",
            "service": "workspace",
            "table": "entries",
            "new": True,
            "where": {"id": {"startswith": f"{HOME}/Documents/orders/"}, "content": {"contains": amount}},
        },
    )
    b.not_written("email", stale_total, "the superseded first version was not priced", tables=["messages"])
    b.not_written("email", gross_total, "the total is after the contract discount", tables=["messages"])
    b.keep("email", "messages", first["id"], "the superseded first version was left alone")
    b.keep("email", "messages", theirs["id"], "the other customer's purchase order was left alone")
    b.trap("stale", "yesterday's first version of the same purchase order", swap={amount: stale_total})
    b.trap(
        "policy_exception", "the list-price total without the contract discount", swap={amount: gross_total}
    )
    why = _reason(story, cust)
    lead = (
        b.say(
            f"This is for {why} you've been running this week",
            f"This is the next step in {why} you're handling",
        )
        if why
        else b.say(
            f"{cust.name} sent purchase order {code}", f"{person.first} at {cust.name} is waiting on {code}"
        )
    )
    b.write(
        frame(
            b.rng,
            b.say(
                f"price {cust.name}'s latest version of purchase order {code}, save it as an order file in Documents/orders and reply to {person.first} with the total",
                f"confirm purchase order {code} from {cust.name}: work out the total of its current version, keep it in Documents/orders and answer {person.first} in the inbox with it",
            ),
            context=f"{lead}. "
            + b.say(
                "List prices are in Documents/orders/price_list.csv; their contract discount is in the web app's account notes",
                "Use the price list in Documents/orders and the contract discount from the internal account notes in our web app",
            ),
        ),
        hint="Read the contract discount in the web app's account notes, find the revised PO email, price its lines from Documents/orders/price_list.csv less the discount, save an order file, then reply to the PO email from the web inbox.",
        subtasks=[
            "Read the contract discount in the account notes",
            f"Find the current (revised) version of {code} in the inbox",
            "Price its lines from the price list less the discount",
            "Save the order file in Documents/orders",
            f"Reply to {person.first} with the total",
        ],
    )
