"""Scheduling workflows: calendars, video meetings and Calendly bookings worked against team rules."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.core.company import Person
from compoworld.tasks.families._common import bases_row as _bases_row
from compoworld.tasks.families._common import bases_table as _bases_table
from compoworld.tasks.families._common import next_business_day as _next_business_day
from compoworld.tasks.families._common import rows
from compoworld.tasks.families._common import team_space as _team_space
from compoworld.tasks.families._common import wiki_page as _wiki_page
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family


def _at(day: datetime, hour: int, minute: int = 0) -> datetime:
    return day.replace(hour=hour, minute=minute, second=0, microsecond=0)


def _cal_event(
    b: Builder,
    summary: str,
    start: datetime,
    minutes: int,
    attendees: list[Person],
    organizer: str,
    **extra: Any,
) -> dict[str, Any]:
    svc = b.svc("calendar")
    rec = {
        "id": svc.next_id("ev", 16),
        "calendar_id": b.me.email,
        "summary": summary,
        "description": "",
        "location": "",
        "start": format_time(start),
        "end": format_time(start + timedelta(minutes=minutes)),
        "attendees": [{"email": p.email, "responseStatus": "accepted"} for p in attendees],
        "organizer": organizer,
        "visibility": "default",
        "recurrence": [],
        "hangoutLink": None,
        "status": "confirmed",
    }
    rec.update(extra)
    svc.insert("events", rec)
    return rec


def _start_of(ev: dict[str, Any]) -> str:
    s = ev.get("start")
    return s.get("dateTime") if isinstance(s, dict) else s


def _parse(s: str) -> datetime:
    return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=None)


PROJECTS = ("roadmap review", "pricing workshop", "launch readiness", "quarterly planning", "design critique")


@family("scheduling.allhands_conflict", "scheduling", ("calendar", "wiki"))
def allhands_conflict(b: Builder) -> None:
    """A new all-hands overlaps a meeting I organise: move it by the wiki's rescheduling rule and log it."""
    colleagues = [p for p in b.company.employees if p.id != b.me.id]
    if len(colleagues) < 6:
        raise PlantError("too few colleagues")
    guests = b.fresh(colleagues, 3, key=lambda p: p.id)
    host = b.fresh(colleagues, 1, key=lambda p: p.id)[0]
    other_org = b.fresh(colleagues, 1, key=lambda p: p.id)[0]
    now = b.now.replace(tzinfo=None) if b.now.tzinfo else b.now
    day = now + timedelta(days=b.rng.randrange(2, 6))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    ah_hour = b.rng.choice((14, 15))
    project = b.pick(PROJECTS)
    mine_summary = f"{project.title()} sync"
    allhands = _cal_event(
        b, "Company all-hands", _at(day, ah_hour), 60, colleagues[:8], host.email, location="HQ Boardroom"
    )
    minutes = b.rng.choice((30, 45))
    offset = b.rng.choice((0, 30))
    mine = _cal_event(
        b, mine_summary, _at(day, ah_hour, offset), minutes, guests[:2], b.me.email, location="Room 4A"
    )
    # a clashing meeting somebody else organises: the policy moves only my own
    theirs = _cal_event(
        b,
        f"{other_org.first}'s {b.pick(('vendor call', 'hiring sync', 'budget check-in'))}",
        _at(day, ah_hour, 30 - offset),
        30,
        [other_org],
        other_org.email,
    )
    later = _cal_event(b, f"{project.title()} follow-up", _at(day, 17), 30, [guests[2]], b.me.email)
    space = _team_space(b)
    log_title = "Schedule changes"
    policy = _wiki_page(
        b,
        space,
        "Meeting rescheduling policy",
        "<p>When a company-wide event (all-hands, town hall) overlaps a meeting, only the organiser moves it. "
        "Move it to the same time of day on the next business day (Monday to Friday), keep its length, and send "
        f"the update to every attendee.</p><p>Log each move on the page '{log_title}' with the meeting name and its new date.</p>",
        days_ago=60,
    )
    log = _wiki_page(
        b, space, log_title, "<ul><li>Town hall: moved 'Vendor review' to the next day.</li></ul>", days_ago=9
    )
    b.begin()
    # the reference: find the all-hands and what clashes with it, read the rule, move, log
    lo, hi = now.replace(hour=0, minute=0, second=0, microsecond=0), now + timedelta(days=14)
    evs = rows(
        b.call(
            "calendar__google_calendar_list_events",
            {"min_end_datetime": format_time(lo), "max_start_datetime": format_time(hi), "max_results": 250},
        )
    )
    ah = next(e for e in evs if e["summary"] == "Company all-hands")
    a0, a1 = (
        _parse(_start_of(ah)),
        _parse(ah["end"]["dateTime"] if isinstance(ah["end"], dict) else ah["end"]),
    )
    clash = [
        e
        for e in evs
        if e["id"] != ah["id"]
        and _parse(_start_of(e)) < a1
        and _parse(e["end"]["dateTime"] if isinstance(e["end"], dict) else e["end"]) > a0
    ]
    target = next(e for e in clash if e["organizer"] == b.me.email)
    assert target["id"] == mine["id"]
    b.decide()
    hits = rows(
        b.call("wiki__confluence_search_content", {"must_contain_all": ["rescheduling"], "limit": 10})
    )
    pid = next(p["id"] for p in hits if p["title"] == "Meeting rescheduling policy")
    assert pid == policy["id"]
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    s0 = _parse(_start_of(target))
    new_day = _next_business_day(s0)
    new_start = new_day
    new_end = new_start + timedelta(minutes=minutes)
    b.decide()
    b.call(
        "calendar__google_calendar_update_event",
        {
            "event_id": target["id"],
            "updated_start_datetime": format_time(new_start),
            "updated_end_datetime": format_time(new_end),
            "send_updates": "all",
        },
    )
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": log_title,
            "content": f"<p>All-hands: moved '{mine_summary}' to {new_start.date().isoformat()}.</p>",
            "update_mode": "append",
        },
    )
    b.expect_record(
        "calendar",
        "events",
        {"id": mine["id"], "start": {"at": format_time(new_start)}, "end": {"at": format_time(new_end)}},
        f"'{mine_summary}' starts {format_time(new_start)}, same length",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": [mine_summary, new_start.date().isoformat()]}},
        "the move is logged with the meeting and its new date",
    )
    b.keep("calendar", "events", allhands["id"], "the all-hands itself stays put")
    b.keep("calendar", "events", theirs["id"], "the clashing meeting someone else organises is not moved")
    b.keep("calendar", "events", later["id"], "the later follow-up that does not clash stays put")
    b.keep("wiki", "pages", policy["id"], "the policy page is not edited")
    b.trap(
        "policy_exception", "a clashing meeting organised by someone else", swap={mine["id"]: theirs["id"]}
    )
    b.trap(
        "near_duplicate", "the follow-up of the same project later that day", swap={mine["id"]: later["id"]}
    )
    b.fact(mine_summary, new_start.date().isoformat())
    ask = b.say(
        "sort out whatever of mine clashes with the new all-hands, following our rescheduling policy on the wiki",
        "deal with my meeting that the new company all-hands collides with, the way our wiki policy says",
        "move my meeting out of the way of the all-hands that was just announced, per the team's rescheduling rules",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                "The all-hands was added to my calendar this morning",
                "",
                "Leadership just scheduled an all-hands",
            ),
        ),
        hint="List my upcoming events, find the all-hands and the meeting I organise that overlaps it, read the rescheduling policy in the wiki, move the meeting to the same time next business day with updates sent, and log it on the page the policy names.",
        subtasks=[
            "Find the all-hands and the meetings overlapping it",
            "Pick the one I organise",
            "Read the rescheduling policy on the wiki",
            "Move it to the same time on the next business day, notifying attendees",
            "Log the move on the schedule-changes page",
        ],
    )


@family("scheduling.rebook_cancelled_demo", "scheduling", ("booking", "bases", "meet"))
def rebook_cancelled_demo(b: Builder) -> None:
    """A contact cancelled a Calendly demo asking for another time: book a Meet with them and the SE, update the pipeline."""
    cust = b.customer()
    person = b.contact_of(cust)
    sales = [p for p in b.company.employees if p.id != b.me.id]
    se, old_se, other_se = b.fresh(sales, 3, key=lambda p: p.id)
    bk = b.svc("booking")
    demo = next(t for t in bk.types.all() if t["name"] == "Product demo")
    now = b.now.replace(tzinfo=None) if b.now.tzinfo else b.now
    old_day = now + timedelta(days=b.rng.randrange(1, 4))
    old_start = _at(old_day, b.rng.choice((10, 11)))
    new_day = _next_business_day(old_day + timedelta(days=b.rng.randrange(2, 5)))
    new_start = _at(new_day, b.rng.choice((13, 14, 15)), b.rng.choice((0, 30)))
    ev = bk.events.create(
        {
            "name": demo["name"],
            "event_type": demo["id"],
            "status": "canceled",
            "start_time": format_time(old_start),
            "end_time": format_time(old_start + timedelta(minutes=demo["duration"])),
            "location": "Google Meet",
            "cancel_reason": f"Something came up. Could we do {new_start.strftime('%A %d %B')} at {new_start.strftime('%H:%M')} UTC instead?",
        }
    )
    bk.invitees.create(
        {
            "event": ev["id"],
            "name": person.name,
            "email": person.email,
            "status": "canceled",
            "questions_and_answers": [
                {"question": "What would you like to discuss?", "answer": f"Rollout for {cust.name}"}
            ],
        }
    )
    # an active later booking of the same person: not the one to rebook
    other_start = _at(now + timedelta(days=b.rng.randrange(8, 12)), 16)
    active = bk.events.create(
        {
            "name": "Quarterly review",
            "event_type": next(t["id"] for t in bk.types.all() if t["name"] == "Quarterly review"),
            "status": "active",
            "start_time": format_time(other_start),
            "end_time": format_time(other_start + timedelta(minutes=60)),
            "location": "Google Meet",
        }
    )
    bk.invitees.create(
        {"event": active["id"], "name": person.name, "email": person.email, "status": "active"}
    )
    t, fid = _bases_table(
        b,
        "Partner CRM",
        "Demo pipeline",
        "One row per demo request; the SE joins every demo",
        [
            {"name": "Contact", "type": "singleLineText"},
            {"name": "Company", "type": "singleLineText"},
            {"name": "SE email", "type": "email"},
            {"name": "Stage", "type": "singleLineText"},
            {"name": "Demo date", "type": "date"},
            {"name": "Notes", "type": "singleLineText"},
        ],
    )
    others = [c for c in b.company.customers if c.id != cust.id]
    for k, oc in enumerate(b.rng.sample(others, min(4, len(others)))):
        _bases_row(
            b,
            t,
            fid,
            {
                "Contact": b.contact_of(oc).name,
                "Company": oc.name,
                "SE email": other_se.email,
                "Stage": "Demo booked",
                "Demo date": (now + timedelta(days=k + 3)).date().isoformat(),
                "Notes": "",
            },
            days_ago=20 + k,
        )
    old_row = _bases_row(
        b,
        t,
        fid,
        {
            "Contact": person.name,
            "Company": cust.name,
            "SE email": old_se.email,
            "Stage": "Lost",
            "Demo date": (now - timedelta(days=300)).date().isoformat(),
            "Notes": f"Demo cancelled last year; {person.first} went quiet, rebook later",
        },
        days_ago=320,
    )
    row = _bases_row(
        b,
        t,
        fid,
        {
            "Contact": person.name,
            "Company": cust.name,
            "SE email": se.email,
            "Stage": "Demo booked",
            "Demo date": old_start.date().isoformat(),
            "Notes": "",
        },
        days_ago=12,
    )
    newest = _bases_row(
        b,
        t,
        fid,
        {
            "Contact": b.contact_of(others[0]).name,
            "Company": others[0].name,
            "SE email": old_se.email,
            "Stage": "Demo booked",
            "Demo date": (now + timedelta(days=9)).date().isoformat(),
            "Notes": "Asked to rebook a cancelled demo",
        },
        days_ago=1,
    )
    b.begin()
    evs = b.call("booking__calendly_list_events", {"status": "canceled", "count": 100})
    found = None
    for e in evs:
        if e["start_time"] < format_time(now):
            continue
        inv = rows(b.call("booking__calendly_list_event_invitees", {"event_uuid": e["uuid"]}))
        if any(i["name"] == person.name for i in inv):
            found = e
            break
    assert found and found["id"] == ev["id"]
    email = next(i["email"] for i in inv if i["name"] == person.name)
    b.decide()
    bases = rows(b.call("bases__airtable_list_bases_info", {}))
    base_id = next(x["id"] for x in bases if x["name"] == "Partner CRM")
    tables = rows(b.call("bases__airtable_list_tables_info", {"base_id": base_id}))
    tid = next(x["id"] for x in tables if x["name"] == "Demo pipeline")
    recs = rows(b.call("bases__airtable_list_records", {"base_id": base_id, "table_id": tid}))
    mine = next(
        r
        for r in recs
        if r["fields"].get("Contact") == person.name and r["fields"].get("Stage") == "Demo booked"
    )
    assert mine["id"] == row["id"]
    se_email = mine["fields"]["SE email"]
    b.decide()
    minutes = demo["duration"]
    b.call(
        "meet__google_meet_create_meet",
        {
            "summary": f"Product demo: {cust.name}",
            "start_time": format_time(new_start),
            "end_time": format_time(new_start + timedelta(minutes=minutes)),
            "attendees": [email, se_email],
            "notify_attendees": True,
        },
    )
    b.call(
        "bases__airtable_update_records",
        {
            "base_id": base_id,
            "table_id": tid,
            "records": [
                {
                    "id": mine["id"],
                    "fields": {"Demo date": new_start.date().isoformat(), "Stage": "Demo rescheduled"},
                }
            ],
        },
    )
    b.goal(
        f"a {minutes}-minute Meet with {person.name} and the SE starts {format_time(new_start)}",
        {
            "predicate": "event_scheduled",
            "service": "meet",
            "attendees": [person.email, se.email],
            "names": [person.name, se.name],
            "start": format_time(new_start),
            "duration_minutes": minutes,
            "exclusive": True,
        },
    )
    b.expect_record(
        "bases",
        "records",
        {"id": row["id"], "fields." + fid["Demo date"]: {"at": new_start.date().isoformat()}},
        "the pipeline row carries the new demo date",
    )
    b.expect_change(
        "bases",
        "records",
        row["id"],
        "fields." + fid["Stage"],
        "Demo rescheduled",
        "the pipeline row is at stage Demo rescheduled",
    )
    b.keep("bases", "records", old_row["id"], "last year's lost row of the same contact is untouched")
    b.keep("bases", "records", newest["id"], "the newest row (another company) is untouched")
    b.trap(
        "stale",
        "last year's lost pipeline row of the same contact, with another SE",
        swap={se.email: old_se.email, row["id"]: old_row["id"]},
    )
    b.trap(
        "near_duplicate",
        "the newest pipeline row, another company's rebooking",
        swap={row["id"]: newest["id"], se.email: old_se.email},
    )
    b.fact(person.email, se.email)
    ask = b.say(
        f"rebook {person.name}'s cancelled demo as a Google Meet at the time they asked for, with the SE on the pipeline, and update the pipeline row",
        f"{person.first} from {cust.name} cancelled the demo in Calendly and proposed another time: set up a Google Meet then with them and the assigned SE, and fix the demo pipeline",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                "Stage should read 'Demo rescheduled' afterwards, with the new date",
                "The pipeline stage becomes 'Demo rescheduled'",
            ),
        ),
        hint="Find the cancelled upcoming Calendly demo of the person and the time they proposed in the cancel reason, look up their live row in the Airtable demo pipeline for the SE, create the Meet with both, then update the row's date and stage.",
        subtasks=[
            "Find the cancelled Calendly demo and the proposed time",
            "Find the current pipeline row in Airtable and its SE",
            "Create the Google Meet with the contact and the SE",
            "Update the row's demo date and stage",
        ],
    )


IN_PERSON = "Asked for quarterly business reviews in person at their {city} office, not by video."
OTHER_NOTES = (
    "Prefers phone calls before 10am; escalations go to the VP of Operations.",
    "Budget owner changed last quarter; confirm every order over 5k in writing.",
    "Pilot extended twice; renewal depends on the analytics module.",
    "Legal requires purchase orders to quote the contract number.",
    "Happy with video calls; send the deck a day ahead.",
)


def _meeting(
    b: Builder, summary: str, start: datetime, minutes: int, guests: list[Person], description: str = ""
) -> dict[str, Any]:
    svc = b.svc("meet")
    space = svc._new_space(format_time(start - timedelta(days=3)))
    return svc.meetings.create(
        {
            "summary": summary,
            "description": description,
            "start": format_time(start),
            "end": format_time(start + timedelta(minutes=minutes)),
            "attendees": [{"email": g.email, "responseStatus": "needsAction"} for g in guests],
            "organizer": b.me.email,
            "hangoutLink": space["meetingUri"],
            "space_id": space["id"],
        }
    )


@family("scheduling.qbr_in_person", "scheduling", ("meet", "browser", "calendar"))
def qbr_in_person(b: Builder) -> None:
    """Upcoming QBR Meets checked against the account notes: the one asked in person becomes an office event."""
    names = set(b.svc("browser").table("facts"))
    custs = [b.customer(where=lambda c: c.name in names) for _ in range(3)]
    target, others = custs[1], [custs[0], custs[2]]
    colleague = b.person(external=False)
    now = b.now.replace(tzinfo=None) if b.now.tzinfo else b.now
    days = sorted(b.rng.sample(range(2, 13), 3))
    order = [custs[0], target, custs[2]]
    b.rng.shuffle(order)
    # the target is neither the soonest nor the latest QBR
    order = [x for x in order if x is not target]
    order.insert(1, target)
    minutes = b.rng.choice((45, 60))
    made = {}
    for c, d in zip(order, days, strict=True):
        day = now + timedelta(days=d)
        while day.weekday() >= 5:
            day += timedelta(days=1)
        start = _at(day, b.rng.choice((10, 11, 14, 15)))
        guests = [b.contact_of(c), colleague]
        made[c.id] = (
            _meeting(
                b,
                f"Quarterly business review: {c.name}",
                start,
                minutes,
                guests,
                "Agenda: usage, renewal and roadmap."
                + (
                    ""
                    if c is target
                    else " The customer is happy to keep the same slot as a video call on Meet."
                ),
            ),
            start,
            guests,
        )
    past = _meeting(
        b,
        f"Quarterly business review: {target.name}",
        _at(now - timedelta(days=b.rng.randrange(80, 100)), 10),
        60,
        [b.contact_of(target)],
    )
    facts = b.svc("browser").facts
    facts.update(target.name, {"text": IN_PERSON.format(city=target.city)})
    for c in others:
        facts.update(c.name, {"text": b.pick(OTHER_NOTES)})
    tm, tstart, tguests = made[target.id]
    b.begin()
    meets = rows(b.call("meet__google_meet_list_meetings", {"max_results": 100}))
    qbrs = [m for m in meets if m["summary"].startswith("Quarterly business review")]
    home = b.call("browser__open", {"url": "/"})["page"]
    assert "-> /accounts" in home
    page = b.call("browser__open", {"url": "/accounts"})["page"]
    links = {}
    for line in page.splitlines():
        if "-> /accounts/" in line:
            links[line.split("'")[1]] = line.split("-> ")[1].strip()
    notes = {}
    for m in qbrs:
        name = m["summary"].split(": ", 1)[1]
        notes[name] = b.call("browser__open", {"url": links[name]})["page"]
    hit = [m for m in qbrs if "in person" in notes[m["summary"].split(": ", 1)[1]]]
    assert len(hit) == 1 and hit[0]["id"] == tm["id"]
    m = hit[0]
    b.decide()
    emails = [a["email"] for a in m["attendees"]]
    b.call("meet__google_meet_delete_meeting", {"event_id": m["id"]})
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": m["summary"],
            "start_datetime": m["start"] if isinstance(m["start"], str) else m["start"]["dateTime"],
            "end_datetime": m["end"] if isinstance(m["end"], str) else m["end"]["dateTime"],
            "location": f"{target.name} office, {target.city}",
            "attendees": emails,
            "send_updates": "all",
        },
    )
    b.composed(f"{target.name} office, {target.city}")
    b.goal(
        f"the QBR Meet of {target.name} is removed",
        {
            "predicate": "record_absent",
            "service": "meet",
            "table": "meetings",
            "new": False,
            "where": {"id": tm["id"]},
        },
    )
    b.goal(
        f"an in-person QBR event with {target.name}'s contact and the colleague at the same time",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [g.email for g in tguests],
            "names": [g.name for g in tguests],
            "start": format_time(tstart),
            "duration_minutes": minutes,
            "exclusive": True,
        },
    )
    b.expect_record(
        "calendar",
        "events",
        {"summary": {"contains": target.name}, "location": {"contains": target.city}},
        f"the event is at {target.name}'s {target.city} office",
    )
    for c in others:
        b.keep("meet", "meetings", made[c.id][0]["id"], f"{c.name}'s QBR stays a Meet")
    b.keep("meet", "meetings", past["id"], "last quarter's QBR is history")
    b.trap("near_duplicate", "the soonest QBR, another customer", swap={tm["id"]: made[order[0].id][0]["id"]})
    b.trap("recent", "the latest QBR, another customer", swap={tm["id"]: made[order[2].id][0]["id"]})
    b.fact(target.name, target.city)
    ask = b.say(
        "go through my upcoming quarterly business reviews, and where the account notes say the customer wants them in person, swap the Meet for a calendar event at their office with the same time and guests",
        "check each upcoming QBR against the customer's internal account notes; any customer who asked for in-person QBRs should get an office meeting instead of the video call, same slot and attendees",
    )
    b.write(
        frame(
            b.rng, ask, context=b.say("The notes are in the accounts app", "", "Send the invites when you do")
        ),
        hint="List upcoming Meet meetings, pick the QBRs, open each customer's page in the accounts web app for the internal notes, delete the Meet of the customer who wants in-person reviews, and create a calendar event with the same time and attendees at their office.",
        subtasks=[
            "List my upcoming QBR Meets",
            "Read each customer's internal account notes in the web app",
            "Find the customer who wants QBRs in person",
            "Delete that Meet",
            "Create the in-person calendar event at their office",
        ],
    )


@family("scheduling.maintenance_window", "scheduling", ("wiki", "kv", "calendar"))
def maintenance_window(b: Builder) -> None:
    """Book the next production maintenance window by the wiki's rules and announce it in Redis."""
    kv = b.svc("kv")
    if kv.keys.get("maintenance:next_window"):
        raise PlantError("key exists")
    staff = [p for p in b.company.employees if p.id != b.me.id]
    if len(staff) < 5:
        raise PlantError("too few colleagues")
    oncall = b.fresh(staff, 2, key=lambda p: p.id)
    old_oncall = b.fresh(staff, 2, key=lambda p: p.id)
    now = b.now.replace(tzinfo=None) if b.now.tzinfo else b.now
    lead = b.pick((2, 3))
    earliest = (now + timedelta(days=lead)).replace(hour=0, minute=0, second=0, microsecond=0)
    cands = []
    d = earliest
    while len(cands) < 3:
        if d.weekday() in (1, 3):
            cands.append(d)
        d += timedelta(days=1)
    # the first eligible Tuesday/Thursday is frozen; a Tuesday/Thursday before the lead time is too soon
    freeze = cands[0]
    target = cands[1]
    _cal_event(b, "Release freeze", _at(freeze, 0), 24 * 60 - 1, [], b.me.email)
    _cal_event(b, "Release freeze", _at(target + timedelta(days=1), 0), 24 * 60 - 1, [], b.me.email)
    last = _at(now - timedelta(days=b.rng.randrange(20, 40)), 6)
    kv.keys.create({"value": format_time(last)}, id="maintenance:next_window")
    kv.keys.create(
        {"value": format_time(_at(now + timedelta(days=1), 22))}, id="maintenance:next_window:staging"
    )
    space = _team_space(b)
    roster = "".join(f"<li>{p.name} ({p.email})</li>" for p in oncall)
    policy = _wiki_page(
        b,
        space,
        "Production maintenance windows",
        f"<p>Maintenance runs 06:00-08:00 UTC on a Tuesday or Thursday, at least {lead} days after it is requested, "
        "and never on a day with a 'Release freeze' event in the calendar. Take the first day that qualifies.</p>"
        f"<p>Invite the current on-call engineers:</p><ul>{roster}</ul><p>Announce the window by setting the Redis "
        "key maintenance:next_window to its start time (the status page reads it; the :staging key belongs to QA).</p>",
        days_ago=15,
    )
    old_roster = "".join(f"<li>{p.name} ({p.email})</li>" for p in old_oncall)
    stale = _wiki_page(
        b,
        space,
        "Maintenance on-call (last year)",
        f"<p>Archived. Maintenance on-call engineers last year:</p><ul>{old_roster}</ul>",
        days_ago=1,
    )
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["maintenance"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "Production maintenance windows")
    pg = b.call("wiki__confluence_get_page", {"page_identifier": pid})
    assert pg["id"] == policy["id"]
    cur = b.call("kv__get", {"key": "maintenance:next_window"})["value"]
    assert _parse(cur) < now
    b.decide()
    lo, hi = earliest, earliest + timedelta(days=21)
    evs = rows(
        b.call(
            "calendar__google_calendar_list_events",
            {"min_end_datetime": format_time(lo), "max_start_datetime": format_time(hi), "max_results": 250},
        )
    )
    frozen = {_start_of(e)[:10] for e in evs if e["summary"] == "Release freeze"}
    day = earliest
    while day.weekday() not in (1, 3) or day.date().isoformat() in frozen:
        day += timedelta(days=1)
    assert day == target
    b.decide()
    s = format_time(_at(day, 6))
    e = format_time(_at(day, 8))
    b.composed(s, e)
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": "Production maintenance",
            "start_datetime": s,
            "end_datetime": e,
            "attendees": [p.email for p in oncall],
            "send_updates": "all",
        },
    )
    b.call("kv__set", {"key": "maintenance:next_window", "value": s})
    b.goal(
        f"a 2-hour maintenance event with the on-call engineers starts {s}",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [p.email for p in oncall],
            "names": [p.name for p in oncall],
            "start": s,
            "duration_minutes": 120,
            "exclusive": True,
        },
    )
    b.expect_change("kv", "keys", "maintenance:next_window", "value", s, f"maintenance:next_window is {s}")
    b.keep("kv", "keys", "maintenance:next_window:staging", "the staging key belongs to QA")
    b.keep("wiki", "pages", stale["id"], "last year's on-call page is not edited")
    for p in old_oncall:
        b.guard(
            f"{p.name} (last year's on-call) is not invited",
            {
                "predicate": "record_absent",
                "service": "calendar",
                "table": "events",
                "new": True,
                "where": {"attendees.email": p.email},
            },
        )
    frozen_s = format_time(_at(freeze, 6))
    b.not_written("kv", frozen_s, "the frozen day is not announced")
    b.trap(
        "policy_exception",
        "the first Tuesday/Thursday, which has a release freeze",
        swap={s: frozen_s, e: format_time(_at(freeze, 8))},
    )
    b.trap(
        "stale",
        "last year's on-call engineers (the newest page)",
        swap={oncall[0].email: old_oncall[0].email},
    )
    b.trap(
        "near_duplicate",
        "the staging maintenance key",
        swap={"maintenance:next_window": "maintenance:next_window:staging"},
    )
    b.fact(s)
    ask = b.say(
        "book the next production maintenance window by our wiki rules, invite the on-call engineers, and announce it for the status page",
        "schedule the upcoming prod maintenance window following the maintenance rules on the wiki, with the on-call people invited and the status page announcement updated",
        "set up the next production maintenance slot as the wiki page describes, including the invite and the status-page key",
    )
    b.write(
        frame(b.rng, ask, context=b.say("The database upgrade needs it", "", "Requested today")),
        hint="Read the maintenance rules on the wiki (days, hours, lead time, freezes, on-call list, Redis key), check the current announced window in Redis, list calendar events to find release freezes, take the first qualifying Tuesday/Thursday, create the 06:00-08:00 UTC event with the on-call engineers and set the Redis key to its start.",
        subtasks=[
            "Read the maintenance window rules",
            "Check the currently announced window in Redis",
            "Find release freezes in the calendar",
            "Pick the first qualifying day",
            "Create the maintenance event with the on-call engineers",
            "Set maintenance:next_window to the start time",
        ],
    )
