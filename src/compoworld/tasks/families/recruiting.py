"""Recruiting workflows: BambooHR's hiring pipeline worked against calendars, files, boards and mail."""

from __future__ import annotations

from datetime import datetime, timedelta

from compoworld.core.company import Person
from compoworld.services.hr.seed import emp_id
from compoworld.tasks.families._common import ago, rows
from compoworld.tasks.families.hr import J, _by_id, _staff, _workdays, datetime_at
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

ROLES = (
    "Data Analyst",
    "Account Executive",
    "Backend Engineer",
    "Support Specialist",
    "Product Designer",
    "Payroll Specialist",
)
FIRST = (
    "Mira",
    "Jonas",
    "Priya",
    "Elif",
    "Mateo",
    "Hana",
    "Oskar",
    "Lucia",
    "Ravi",
    "Greta",
    "Tariq",
    "Sofia",
)
LAST = (
    "Lindgren",
    "Abara",
    "Castell",
    "Dufresne",
    "Moreau",
    "Kowalski",
    "Tanvir",
    "Esposito",
    "Halloran",
    "Varela",
)


def _names(b: Builder, n: int) -> list[tuple[str, str]]:
    hr = b.svc("hr")
    taken = {(a["first_name"], a["last_name"]) for a in hr.apps.all()} | {
        (p.first, p.last) for p in b.company.people
    }
    pool = [(f, la) for f in FIRST for la in LAST if (f, la) not in taken]
    # distinct first and last names, so no two planted candidates look alike by accident
    out: list[tuple[str, str]] = []
    for f, la in b.rng.sample(pool, len(pool)):
        if all(f != x and la != y for x, y in out):
            out.append((f, la))
        if len(out) == n:
            return out
    raise PlantError("not enough candidate names")


def _job(b: Builder, title: str, team: str, lead: Person, status: str = "Open", days_ago: float = 20) -> dict:
    hr = b.svc("hr")
    return hr.jobs.create(
        {
            "title": title,
            "department": team,
            "location": b.pick(("Berlin", "London", "Remote")),
            "status": status,
            "hiring_lead_id": emp_id(lead.id),
            "created": ago(b, days=days_ago),
        },
        id=str(40 + hr.next_seq("job")),
    )


def _app(
    b: Builder, job: dict, name: tuple[str, str], status: str, days_ago: float, resume: str = "", **extra
) -> dict:
    hr = b.svc("hr")
    first, last = name
    return hr.apps.create(
        {
            "job_id": job["id"],
            "first_name": first,
            "last_name": last,
            "email": f"{first}.{last}@mail.example".lower(),
            "source": b.pick(("LinkedIn", "Referral", "Website")),
            "status_id": status,
            "resume_text": resume,
            "applied": ago(b, days=days_ago),
            **extra,
        },
        id=str(900 + hr.next_seq("app")),
    )


def _opening(b: Builder) -> tuple[str, Person, str]:
    """A role title, its hiring lead (an employee, not me) and the lead's team."""
    lead = _staff(b, need_manager=False)
    role = b.pick(ROLES)
    return f"{role} ({lead.team})", lead, lead.team


def _clear_morning(b: Builder, day, who: Person) -> None:
    cal = b.svc("calendar")
    for e in list(cal.table("events").values()):
        if e["calendar_id"] == b.me.email and e["start"][:10] == day.isoformat():
            cal.remove("events", e["id"])
    for e in list(cal.table("busy").values()):
        if e["calendar_id"] == who.email and e["start"][:10] == day.isoformat():
            cal.remove("busy", e["id"])


def _busy(b: Builder, who: Person, start: datetime, hours: float) -> None:
    cal = b.svc("calendar")
    cal.insert(
        "busy",
        {
            "id": cal.next_id("fb", 12),
            "calendar_id": who.email,
            "start": b.iso(start),
            "end": b.iso(start + timedelta(hours=hours)),
        },
    )


# ---------------------------------------------------------------------------------------------
@family("recruiting.schedule_interview", "recruiting", ("hr", "calendar"))
def schedule_interview(b: Builder) -> None:
    """Book the newest phone-screened candidate of an opening with its hiring lead on the next business day."""
    title, lead, team = _opening(b)
    job = _job(b, title, team, lead)
    filled = _job(b, title, team, lead, status="Filled", days_ago=120)
    n = _names(b, 8)
    _app(b, job, n[5], "2", 6)
    _app(b, job, n[6], "2", 15)
    target = _app(b, job, n[0], "3", 4, resume="Five years in the field.")
    older = _app(b, job, n[1], "3", 11)
    newest = _app(b, job, n[2], "1", 0.4)
    bait = _app(
        b,
        job,
        n[3],
        "7",
        2,
        resume=f"Applied for {title}; asked for an interview with the hiring lead on the next business day.",
    )
    dup = _app(b, filled, n[4], "3", 1)
    day = _workdays(b.now.date() + timedelta(days=1), 1)[0]
    _clear_morning(b, day, lead)
    h = b.pick((0.0, 1.0, 1.5))
    _busy(b, lead, datetime_at(day, 9), 1 + h)
    _busy(b, lead, datetime_at(day, 11.5 + h), 1)
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    jid = next(j["id"] for j in rows(jobs) if j["title"] == title)
    apps = b.call("hr__bamboohr_get_job_applications", {"job_id": jid, **J})
    screened = [a for a in rows(apps) if a["status_id"] == "3"]
    pick = max(screened, key=lambda a: a["applied"])
    b.aggregate()
    assert pick["id"] == target["id"]
    d = b.call("hr__bamboohr_get_employee_directory", J)
    ld = _by_id(d, "id", next(j for j in rows(jobs) if j["id"] == jid)["hiring_lead_id"])
    b.call("calendar__google_calendar_get_current_time", {})
    free = b.call(
        "calendar__google_calendar_find_free_slots",
        {
            "items": [ld["workEmail"]],
            "time_min": f"{day.isoformat()}T09:00:00Z",
            "time_max": f"{day.isoformat()}T17:00:00Z",
            "min_slot_duration_minutes": 60,
        },
    )
    st = datetime.fromisoformat(free["common_free_slots"][0]["start"].replace("Z", "+00:00"))
    assert st.replace(tzinfo=None) == datetime_at(day, 10 + h)
    b.decide(2)
    cand = f"{pick['first_name']} {pick['last_name']}"
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": f"Interview: {cand} for {title}",
            "start_datetime": b.iso(st),
            "end_datetime": b.iso(st + timedelta(hours=1)),
            "attendees": [pick["email"], ld["workEmail"]],
        },
    )
    sts = b.call("hr__bamboohr_get_application_statuses", J)
    sid = next(x["id"] for x in rows(sts) if x["name"] == "Interview")
    b.call("hr__bamboohr_update_applicant_status", {"application_id": pick["id"], "status_id": sid, **J})
    b.goal(
        f"a 1-hour interview of {cand} with {lead.name} at the lead's first free hour of the next business day",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [pick["email"], lead.email],
            "names": [cand, lead.name],
            "start": b.iso(st),
            "duration_minutes": 60,
            "exclusive": True,
        },
    )
    b.expect_change("hr", "applications", pick["id"], "status_id", "4", f"{cand} is at Interview in BambooHR")
    for a, why in (
        (older, "the older phone-screened candidate"),
        (newest, "the newest applicant, not yet screened"),
        (bait, "the rejected applicant"),
        (dup, "the candidate of the filled opening"),
    ):
        b.keep("hr", "applications", a["id"], f"{why} was left alone")
    b.trap(
        "recent",
        "a newer applicant who has not had a phone screen",
        swap={pick["email"]: newest["email"], pick["id"]: newest["id"]},
    )
    b.trap(
        "keyword",
        "a rejected applicant whose notes echo the request",
        swap={pick["email"]: bait["email"], pick["id"]: bait["id"]},
    )
    b.trap(
        "near_duplicate",
        "a filled opening with the same title",
        swap={pick["email"]: dup["email"], pick["id"]: dup["id"]},
    )
    b.fact(cand, pick["email"], lead.email, b.iso(st))
    ask = b.say(
        f"book the next interview for our {title} opening and move the candidate to Interview in BambooHR",
        f"set up an interview for the {title} opening, then mark that candidate as Interview in BambooHR",
    )
    ctx = b.say(
        "Take the most recent applicant who has passed the phone screen; one hour with the opening's hiring lead on "
        "the next business day, at the first hour from 9:00 the lead is free",
        "It's for the newest candidate past phone screen. One hour, hiring lead of the opening plus the candidate, next "
        "business day, earliest free hour of the lead from 9am",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Find the open job in BambooHR, pick the newest application in Phone screen, look up the job's hiring lead, "
        "find the lead's first free hour from 9:00 on the next business day, book it, then set the application to Interview.",
        subtasks=[
            f"Find the open {title} job and its applications",
            "Pick the most recent candidate in Phone screen",
            "Look up the hiring lead's email",
            "Find the lead's first free hour on the next business day and book the interview",
            "Move the application to Interview",
        ],
    )


def _comment(b: Builder, who: Person, text: str, days_ago: float) -> dict:
    return {"author": emp_id(who.id), "text": text, "created": ago(b, days=days_ago)}


@family("recruiting.send_offer", "recruiting", ("hr", "files", "email"))
def send_offer(b: Builder) -> None:
    """Share the final offer letter with the candidate the hiring lead approved, then move them to Offer."""
    fs = b.svc("files")
    title, lead, team = _opening(b)
    job = _job(b, title, team, lead)
    n = _names(b, 5)
    target = _app(
        b,
        job,
        n[0],
        "4",
        12,
        comments=[_comment(b, lead, "Final interview went well. Approved for offer.", 1)],
    )
    held = _app(
        b,
        job,
        n[1],
        "4",
        8,
        comments=[_comment(b, lead, "Solid, but not approved for an offer yet; keep warm.", 0.5)],
    )
    newest = _app(b, job, n[2], "3", 0.3)
    _app(b, job, n[3], "2", 5)
    cand = f"{n[0][0]} {n[0][1]}"
    for folder in ("/Recruiting", "/Recruiting/Offers"):
        if fs.entries.get(folder.lower()) is None:
            fs._put_folder(folder)
    final = f"/Recruiting/Offers/{cand} - offer letter (final).txt"
    draft = f"/Recruiting/Offers/{cand} - {title} offer letter v1.txt"
    salary = b.rng.randrange(60, 120) * 1000
    fs._put_file(draft, f"DRAFT offer for {cand}, {title}. Salary: TBD.\n", ago(b, days=6))
    fs._put_file(
        final,
        f"Offer of employment: {cand}, {title}. Salary: {salary} per year. Start: to be agreed.\n",
        ago(b, days=1),
    )
    if fs.entries.get("/recruiting/interviews") is None:
        fs._put_folder("/Recruiting/Interviews")
    fs._put_file(
        f"/Recruiting/Interviews/{cand} - interview notes.txt",
        f"Panel notes for {cand}: strong.\n",
        ago(b, days=2),
    )
    fs._put_file(
        f"/Recruiting/Interviews/{cand} - references.txt",
        f"Two references for {cand}, both positive.\n",
        ago(b, days=3),
    )
    held_name = f"{n[1][0]} {n[1][1]}"
    fs._put_file(
        f"/Recruiting/Offers/{held_name} - offer letter (final).txt",
        f"Offer of employment: {held_name}, {title}. On hold.\n",
        ago(b, days=2),
    )
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    jid = next(j["id"] for j in rows(jobs) if j["title"] == title)
    apps = b.call("hr__bamboohr_get_job_applications", {"job_id": jid, "status": "Interview", **J})
    ok = [
        a
        for a in rows(apps)
        if any(
            "approved for offer" in c["text"].lower() and "not approved" not in c["text"].lower()
            for c in a["comments"]
        )
    ]
    assert len(ok) == 1 and ok[0]["id"] == target["id"]
    a = ok[0]
    b.decide()
    name = f"{a['first_name']} {a['last_name']}"
    found = b.call("files__dropbox_search_files", {"query": a["last_name"]})
    path = next(
        m["path_display"] for m in rows(found) if "final" in m["name"].lower() and m["name"].startswith(name)
    )
    b.decide()
    link = b.call("files__dropbox_share_file", {"path": path})
    url = link["id"]
    b.call(
        "email__gmail_send_email",
        {
            "to": [a["email"]],
            "subject": f"Your offer: {title}",
            "body": f"Hi {a['first_name']},\n\nwe are delighted to offer you the {title} role. Your offer letter: {url}\n\n{b.me.name}",
        },
    )
    sts = b.call("hr__bamboohr_get_application_statuses", J)
    sid = next(x["id"] for x in rows(sts) if x["name"] == "Offer")
    b.call("hr__bamboohr_update_applicant_status", {"application_id": a["id"], "status_id": sid, **J})
    b.expect_record(
        "files", "shared_links", {"path_lower": final.lower()}, "the final offer letter has a shared link"
    )
    b.expect_message(
        "email",
        [a["email"], name],
        contains=[url],
        description=f"{name} was emailed the link to the final offer letter",
    )
    b.expect_change("hr", "applications", a["id"], "status_id", "5", f"{name} is at Offer in BambooHR")
    b.not_written("files", draft.lower(), "the draft letter was not shared", tables=["shared_links"])
    b.keep("hr", "applications", held["id"], "the candidate not yet approved was left alone")
    b.keep("hr", "applications", newest["id"], "the newest applicant was left alone")
    b.no_message("email", [held["email"], held_name], "nothing went to the candidate kept warm")
    b.trap(
        "keyword",
        "an interviewed candidate whose comment says not approved yet",
        swap={a["id"]: held["id"], a["email"]: held["email"]},
    )
    b.trap(
        "recent",
        "a newer applicant still in phone screen",
        swap={a["id"]: newest["id"], a["email"]: newest["email"]},
    )
    b.trap("stale", "the draft offer letter of the same candidate", swap={path: draft})
    b.fact(name, a["email"], url)
    ask = b.say(
        f"send the offer for our {title} opening",
        f"get the offer out for the {title} role",
    )
    ctx = b.say(
        "It goes to the interviewed candidate the hiring lead approved for an offer in BambooHR: email them a shared "
        "Dropbox link to their final offer letter, then move them to Offer",
        "The hiring lead approved one interviewed candidate in the BambooHR comments. Share that person's final offer "
        "letter from Dropbox, email them the link and set their application to Offer",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Find the open job's interview-stage applications and the one approved in the comments, find the final "
        "offer letter in Dropbox, share it, email the link to the candidate and set the application to Offer.",
        subtasks=[
            f"Find the candidate approved for an offer on the {title} opening",
            "Find their final offer letter in Dropbox and create a shared link",
            "Email the candidate the link",
            "Move the application to Offer",
        ],
    )


def _cal_event(
    b: Builder, name: str, status: str, days: float, who: tuple[str, str, str], reason: str | None = None
) -> dict:
    bk = b.svc("booking")
    start = datetime_at((b.now + timedelta(days=days)).date(), 10 + b.rng.randrange(0, 6))
    ev = bk.events.create(
        {
            "name": name,
            "event_type": next(t["id"] for t in bk.types.all() if t["name"] == "Candidate interview"),
            "status": status,
            "start_time": b.iso(start),
            "end_time": b.iso(start + timedelta(hours=1)),
            "location": "Google Meet",
            "cancel_reason": reason,
        }
    )
    bk.invitees.create({"event": ev["id"], "name": who[0] + " " + who[1], "email": who[2], "status": status})
    return ev


@family("recruiting.cancelled_interviews", "recruiting", ("hr", "booking"))
def cancelled_interviews(b: Builder) -> None:
    """Candidates whose Calendly interview was cancelled (and not rebooked) go back to Phone screen, with a comment."""
    bk = b.svc("booking")
    title, lead, team = _opening(b)
    job = _job(b, title, team, lead)
    n = _names(b, 6)
    if not bk.types.find(name="Candidate interview"):
        bk.types.create(
            {"name": "Candidate interview", "slug": "candidate-interview", "duration": 60, "active": True}
        )
    apps = [
        _app(b, job, n[i], s, d)
        for i, (s, d) in enumerate((("4", 9), ("4", 7), ("4", 5), ("4", 3), ("5", 14)))
    ]
    cancel, cancel2, ok, rebooked, offer = apps
    who = [(a["first_name"], a["last_name"], a["email"]) for a in apps]
    ev_name = f"Interview: {title}"
    _cal_event(b, ev_name, "canceled", b.rng.randrange(1, 5), who[0], "Candidate cancelled")
    two = b.rng.random() < 0.5
    if two:
        _cal_event(b, ev_name, "canceled", b.rng.randrange(1, 5), who[1], "Candidate cancelled")
    else:
        _cal_event(b, ev_name, "active", b.rng.randrange(1, 5), who[1])
    _cal_event(b, ev_name, "active", b.rng.randrange(2, 6), who[2])
    _cal_event(b, ev_name, "canceled", 1, who[3], "Candidate asked to move it")
    _cal_event(b, ev_name, "active", b.rng.randrange(6, 9), who[3])  # rebooked: stays at Interview
    _cal_event(
        b, ev_name, "canceled", -6, who[4], "Moved to offer"
    )  # already at Offer: not an Interview-stage candidate
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    jid = next(j["id"] for j in rows(jobs) if j["title"] == title)
    inter = b.call("hr__bamboohr_get_job_applications", {"job_id": jid, "status": "Interview", **J})
    stage = {a["email"]: a for a in rows(inter)}
    canc = b.call("booking__calendly_list_events", {"status": "canceled", "count": 100})
    act = b.call("booking__calendly_list_events", {"status": "active", "count": 100})
    gone: set[str] = set()
    for ev in rows(canc):
        if ev["name"] == ev_name:
            inv = b.call("booking__calendly_list_event_invitees", {"event_uuid": ev["uuid"]})
            gone |= {i["email"] for i in rows(inv)}
    booked: set[str] = set()
    for ev in rows(act):
        if ev["name"] == ev_name and ev["start_time"] >= b.iso(b.now):
            inv = b.call("booking__calendly_list_event_invitees", {"event_uuid": ev["uuid"]})
            booked |= {i["email"] for i in rows(inv)}
    move = [stage[e] for e in sorted(gone - booked) if e in stage]
    b.decide(2)
    assert {a["id"] for a in move} == {cancel["id"]} | ({cancel2["id"]} if two else set())
    sts = b.call("hr__bamboohr_get_application_statuses", J)
    sid = next(x["id"] for x in rows(sts) if x["name"] == "Phone screen")
    for a in move:
        b.call("hr__bamboohr_update_applicant_status", {"application_id": a["id"], "status_id": sid, **J})
        b.call(
            "hr__bamboohr_add_application_comment",
            {
                "application_id": a["id"],
                "comment": "Interview was cancelled in Calendly; back to phone screen to rebook.",
            },
        )
    for a in move:
        nm = f"{a['first_name']} {a['last_name']}"
        b.expect_change("hr", "applications", a["id"], "status_id", sid, f"{nm} is back at Phone screen")
        b.expect_record(
            "hr",
            "applications",
            {"id": a["id"], "comments.text": {"contains": "cancel"}},
            f"{nm}'s application notes the cancellation",
        )
    b.keep("hr", "applications", rebooked["id"], "the candidate who rebooked stays at Interview")
    b.keep("hr", "applications", offer["id"], "the candidate already at Offer was left alone")
    b.keep("hr", "applications", ok["id"], "the candidate with an active interview was left alone")
    if not two:
        b.keep("hr", "applications", cancel2["id"], "the candidate with an active interview was left alone")
    b.trap("stale", "a cancelled interview that was rebooked later", swap={cancel["id"]: rebooked["id"]})
    b.trap(
        "closed", "a cancelled interview of a candidate already at Offer", swap={cancel["id"]: offer["id"]}
    )
    b.fact(*(a["email"] for a in move))
    ask = b.say(
        f"tidy up the {title} pipeline after the cancelled interviews",
        f"sort out the {title} candidates whose interviews fell through",
    )
    ctx = b.say(
        "Anyone at Interview in BambooHR whose Calendly interview was cancelled and who has not rebooked goes back to "
        "Phone screen, with a comment saying why",
        "Rule: an Interview-stage candidate with a cancelled Calendly interview and no new one booked moves back to "
        "Phone screen; leave a comment on the application explaining it",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="List the opening's Interview-stage applications, check cancelled and active Calendly interviews and their "
        "invitees, then move the cancelled-and-not-rebooked candidates back to Phone screen with a comment.",
        subtasks=[
            f"List the {title} candidates at Interview",
            "Find the cancelled Calendly interviews and who they were with",
            "Drop the candidates who have rebooked",
            "Move the rest back to Phone screen and comment why",
        ],
    )


@family("recruiting.final_round_meet", "recruiting", ("hr", "meet"))
def final_round_meet(b: Builder) -> None:
    """Set up a Google Meet final round for the candidate the hiring lead flagged, and log the link on the application."""
    title, lead, team = _opening(b)
    job = _job(b, title, team, lead)
    n = _names(b, 6)
    target = _app(
        b,
        job,
        n[0],
        "4",
        10,
        comments=[_comment(b, lead, "Great technical round. Ready for the final round.", 1)],
    )
    held = _app(
        b,
        job,
        n[1],
        "4",
        6,
        comments=[_comment(b, lead, "Not ready for the final round yet; one more technical interview.", 0.5)],
    )
    rej = _app(
        b, job, n[2], "7", 4, comments=[_comment(b, lead, "Was ready for the final round, then withdrew.", 2)]
    )
    newest = _app(b, job, n[3], "2", 0.2)
    day = _workdays(b.now.date() + timedelta(days=1), 2)[1]
    hour = b.pick((11, 14, 15, 16))
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    j = next(x for x in rows(jobs) if x["title"] == title)
    apps = b.call("hr__bamboohr_get_job_applications", {"job_id": j["id"], "status": "Interview", **J})
    ready = [
        a
        for a in rows(apps)
        if any(
            "ready for the final round" in c["text"].lower() and "not ready" not in c["text"].lower()
            for c in a["comments"]
        )
    ]
    assert len(ready) == 1 and ready[0]["id"] == target["id"]
    a = ready[0]
    b.decide()
    d = b.call("hr__bamboohr_get_employee_directory", J)
    ld = _by_id(d, "id", j["hiring_lead_id"])
    st = datetime_at(day, hour)
    m = b.call(
        "meet__google_meet_create_meet",
        {
            "summary": f"Final round: {a['first_name']} {a['last_name']}",
            "start_time": b.iso(st),
            "end_time": b.iso(st + timedelta(minutes=45)),
            "attendees": [a["email"], ld["workEmail"]],
        },
    )
    link = m["hangoutLink"]
    b.call(
        "hr__bamboohr_add_application_comment",
        {"application_id": a["id"], "comment": f"Final round on Google Meet: {link}", **J},
    )
    nm = f"{a['first_name']} {a['last_name']}"
    b.goal(
        f"a 45-minute Google Meet final round with {nm} and {lead.name} at {b.iso(st)}",
        {
            "predicate": "event_scheduled",
            "service": "meet",
            "attendees": [a["email"], lead.email],
            "names": [nm, lead.name],
            "start": b.iso(st),
            "duration_minutes": 45,
            "exclusive": True,
        },
    )
    b.expect_record(
        "hr",
        "applications",
        {"id": a["id"], "comments.text": {"contains": link}},
        f"{nm}'s application carries the Meet link",
    )
    for x, why in (
        (held, "the candidate not ready yet"),
        (rej, "the withdrawn candidate"),
        (newest, "the newest applicant"),
    ):
        b.keep("hr", "applications", x["id"], f"{why} was left alone")
    b.trap(
        "keyword",
        "an interviewed candidate marked not ready for the final round",
        swap={a["email"]: held["email"], a["id"]: held["id"]},
    )
    b.trap(
        "closed",
        "a withdrawn candidate once marked ready",
        swap={a["email"]: rej["email"], a["id"]: rej["id"]},
    )
    b.trap("recent", "the newest applicant", swap={a["email"]: newest["email"], a["id"]: newest["id"]})
    b.fact(nm, a["email"], lead.email, link)
    when = f"{day.strftime('%A')} {day.isoformat()} at {hour}:00 UTC"
    ask = b.say(
        f"set up the final round for our {title} opening on {when}",
        f"book the {title} final-round call for {when}",
    )
    ctx = b.say(
        "It's for the interviewed candidate the hiring lead marked ready for the final round in BambooHR: 45 minutes on "
        "Google Meet with the candidate and the opening's hiring lead, and put the Meet link in a comment on the application",
        "The hiring lead flagged one Interview-stage candidate as ready in the BambooHR comments. A 45-minute Google Meet "
        "with the two of them, then comment the Meet link on that application",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Find the open job's Interview-stage application the lead marked ready, look up the hiring lead's email, "
        "create the Meet at the given time with both, then comment the Meet link on the application.",
        subtasks=[
            f"Find the {title} candidate marked ready for the final round",
            "Look up the opening's hiring lead",
            "Create the 45-minute Google Meet with both of them",
            "Comment the Meet link on the application",
        ],
    )


@family("recruiting.thin_pipelines", "recruiting", ("hr", "files", "boards"))
def thin_pipelines(b: Builder) -> None:
    """Flag each open opening with too few late-stage candidates (per the hiring plan) as a card on the Recruiting board."""
    fs, bs = b.svc("files"), b.svc("boards")
    need = b.pick((2, 3))
    t1, l1, team1 = _opening(b)
    t2, l2, team2 = _opening(b)
    if t1 == t2:
        raise PlantError("same title twice")
    full = _job(b, t1, team1, l1)
    thin = _job(b, t2, team2, l2)
    filled = _job(b, f"{b.pick(ROLES)} ({team1})", team1, l1, status="Filled", days_ago=90)
    n = _names(b, 9)
    for i in range(need):
        _app(b, full, n[i], b.pick(("4", "5")), 5 + i)
    _app(b, thin, n[need], "4", 3)
    _app(b, thin, n[need + 1], "7", 2, resume="Interviewed, not a fit.")
    _app(b, thin, n[need + 2], "6", 20)
    _app(b, thin, n[need + 3], "3", 1)
    _app(b, filled, n[need + 4], "3", 30)
    for folder in ("/Recruiting",):
        if fs.entries.get(folder.lower()) is None:
            fs._put_folder(folder)
    fs._put_file(
        "/Recruiting/hiring-plan.md",
        f"# Hiring plan\n\nEvery open opening should have at least {need} active candidates at Interview or Offer. "
        "Hired and rejected candidates do not count. Flag any opening below that on the Recruiting board (To Do), one card per opening, named after it.\n",
        ago(b, days=20),
    )
    board = bs._board("Recruiting", "Hiring pipeline follow-ups")
    lists = {x["name"]: x for x in bs.lists.find(idBoard=board["id"])}
    old_flag = bs._card(lists["Done"], f"{t2}: source more candidates", "Flagged last quarter")
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    found = b.call("files__dropbox_search_files", {"query": "hiring plan"})
    path = next(m["path_display"] for m in rows(found) if m["name"] == "hiring-plan.md")
    b.call("files__dropbox_download_file", {"path": path})
    low = []
    for j in rows(jobs):
        apps = b.call("hr__bamboohr_get_job_applications", {"job_id": j["id"], **J})
        late = [a for a in rows(apps) if a["status_id"] in ("4", "5")]
        if len(late) < need:
            low.append(j)
    b.aggregate(len(rows(jobs)))
    b.decide()
    assert thin["id"] in {j["id"] for j in low} and full["id"] not in {j["id"] for j in low}
    boards = b.call("boards__trello_get_my_boards", {})
    bid = next(x["id"] for x in rows(boards) if x["name"] == "Recruiting")
    ls = b.call("boards__trello_get_board_lists", {"board_id": bid})
    todo = next(x["id"] for x in rows(ls) if x["name"] == "To Do")
    for j in low:
        b.call("boards__trello_create_card", {"idList": todo, "name": j["title"]})
    for j in low:
        b.expect_record(
            "boards",
            "cards",
            {"name": {"contains": j["title"]}, "idList": todo},
            f"'{j['title']}' is flagged in To Do",
        )
    b.ask(
        len(low), kind="number", exclude=(len(low) + 1, len(low) - 1), what="how many openings were flagged"
    )
    b.keep("boards", "cards", old_flag["id"], "last quarter's flag card stays in Done")
    b.keep("hr", "jobs", filled["id"], "the filled opening was left alone")
    b.trap("closed", "a filled opening with a thin pipeline (not open)")
    b.trap("policy_exception", "hired and rejected candidates do not count toward the minimum")
    b.trap("stale", "last quarter's flag card for the same opening in Done")
    b.fact(need, len(low))
    ask = b.say(
        "flag the open roles whose pipelines are too thin on the Recruiting board and tell me how many there are",
        "check every open opening against our hiring plan, put a card on the Recruiting board for each one that falls short, and give me the count",
    )
    ctx = b.say(
        "The minimum number of late-stage candidates is in the hiring plan in Dropbox",
        "Our hiring plan file in Dropbox says how many candidates at Interview or later each opening needs",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Read the hiring plan in Dropbox, count each open job's applications at Interview or Offer in BambooHR, "
        "create a To Do card named after each opening below the minimum, and report the number.",
        subtasks=[
            "Read the minimum from the hiring plan in Dropbox",
            "Count each open opening's candidates at Interview or Offer",
            "Create a To Do card on the Recruiting board for each opening below it",
            "Report how many openings were flagged",
        ],
    )
