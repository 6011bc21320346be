"""Recruiting workflows: BambooHR's hiring pipeline worked against calendars, files, boards and mail."""

from __future__ import annotations

from datetime import datetime, timedelta

from compoworld.core.company import Person
from compoworld.services.hr.seed import emp_id
from compoworld.tasks.families._common import ago, rows
from compoworld.tasks.families.hr import J, _by_id, _staff, _workdays, datetime_at
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

ROLES = ("Data Analyst", "Account Executive", "Backend Engineer", "Support Specialist", "Product Designer", "Payroll Specialist")
FIRST = ("Mira", "Jonas", "Priya", "Elif", "Mateo", "Hana", "Oskar", "Lucia", "Ravi", "Greta", "Tariq", "Sofia")
LAST = ("Lindgren", "Abara", "Castell", "Dufresne", "Moreau", "Kowalski", "Tanvir", "Esposito", "Halloran", "Varela")


def _names(b: Builder, n: int) -> list[tuple[str, str]]:
    hr = b.svc("hr")
    taken = {(a["first_name"], a["last_name"]) for a in hr.apps.all()} | {(p.first, p.last) for p in b.company.people}
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


def _app(b: Builder, job: dict, name: tuple[str, str], status: str, days_ago: float, resume: str = "", **extra) -> dict:
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
    cal.insert("busy", {"id": cal.next_id("fb", 12), "calendar_id": who.email, "start": b.iso(start), "end": b.iso(start + timedelta(hours=hours))})


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
        b, job, n[3], "7", 2, resume=f"Applied for {title}; asked for an interview with the hiring lead on the next business day."
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
        {"items": [ld["workEmail"]], "time_min": f"{day.isoformat()}T09:00:00Z", "time_max": f"{day.isoformat()}T17:00:00Z", "min_slot_duration_minutes": 60},
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
    b.trap("recent", "a newer applicant who has not had a phone screen", swap={pick["email"]: newest["email"], pick["id"]: newest["id"]})
    b.trap("keyword", "a rejected applicant whose notes echo the request", swap={pick["email"]: bait["email"], pick["id"]: bait["id"]})
    b.trap("near_duplicate", "a filled opening with the same title", swap={pick["email"]: dup["email"], pick["id"]: dup["id"]})
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
    target = _app(b, job, n[0], "4", 12, comments=[_comment(b, lead, "Final interview went well. Approved for offer.", 1)])
    held = _app(b, job, n[1], "4", 8, comments=[_comment(b, lead, "Solid, but not approved for an offer yet; keep warm.", 0.5)])
    newest = _app(b, job, n[2], "3", 0.3)
    _app(b, job, n[3], "2", 5)
    cand = f"{n[0][0]} {n[0][1]}"
    for folder in ("/Recruiting", "/Recruiting/Offers"):
        if fs.entries.get(folder.lower()) is None:
            fs._put_folder(folder)
    final = f"/Recruiting/Offers/{cand} - offer letter (final).txt"
    draft = f"/Recruiting/Offers/{cand} - {title} offer letter (superseded draft).txt"
    salary = b.rng.randrange(60, 120) * 1000
    fs._put_file(draft, f"DRAFT offer for {cand}, {title}. Salary: TBD.\n", ago(b, days=6))
    fs._put_file(final, f"Offer of employment: {cand}, {title}. Salary: {salary} per year. Start: to be agreed.\n", ago(b, days=1))
    if fs.entries.get("/recruiting/interviews") is None:
        fs._put_folder("/Recruiting/Interviews")
    fs._put_file(f"/Recruiting/Interviews/{cand} - interview notes.txt", f"Panel notes for {cand}: strong.\n", ago(b, days=2))
    fs._put_file(f"/Recruiting/Interviews/{cand} - references.txt", f"Two references for {cand}, both positive.\n", ago(b, days=3))
    held_name = f"{n[1][0]} {n[1][1]}"
    fs._put_file(f"/Recruiting/Offers/{held_name} - offer letter (final).txt", f"Offer of employment: {held_name}, {title}. On hold.\n", ago(b, days=2))
    b.begin()
    jobs = b.call("hr__bamboohr_get_job_summaries", {"status": "Open", **J})
    jid = next(j["id"] for j in rows(jobs) if j["title"] == title)
    apps = b.call("hr__bamboohr_get_job_applications", {"job_id": jid, "status": "Interview", **J})
    ok = [a for a in rows(apps) if any("approved for offer" in c["text"].lower() and "not approved" not in c["text"].lower() for c in a["comments"])]
    assert len(ok) == 1 and ok[0]["id"] == target["id"]
    a = ok[0]
    b.decide()
    name = f"{a['first_name']} {a['last_name']}"
    found = b.call("files__dropbox_search_files", {"query": a["last_name"]})
    path = next(m["path_display"] for m in rows(found) if "final" in m["name"].lower() and m["name"].startswith(name))
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
    b.expect_record("files", "shared_links", {"path_lower": final.lower()}, "the final offer letter has a shared link")
    b.expect_message("email", [a["email"], name], contains=[url], description=f"{name} was emailed the link to the final offer letter")
    b.expect_change("hr", "applications", a["id"], "status_id", "5", f"{name} is at Offer in BambooHR")
    b.not_written("files", draft.lower(), "the draft letter was not shared", tables=["shared_links"])
    b.keep("hr", "applications", held["id"], "the candidate not yet approved was left alone")
    b.keep("hr", "applications", newest["id"], "the newest applicant was left alone")
    b.no_message("email", [held["email"], held_name], "nothing went to the candidate kept warm")
    b.trap("keyword", "an interviewed candidate whose comment says not approved yet", swap={a["id"]: held["id"], a["email"]: held["email"]})
    b.trap("recent", "a newer applicant still in phone screen", swap={a["id"]: newest["id"], a["email"]: newest["email"]})
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
