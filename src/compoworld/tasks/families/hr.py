"""HR workflows: BambooHR records worked against team policies, boards, calendars and chat."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from compoworld.core.company import Person
from compoworld.services.hr.seed import emp_id
from compoworld.tasks.families._common import ago, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

J = {"response_format": "json"}


def _staff(b: Builder, need_manager: bool = True, exclude: tuple = ()) -> Person:
    """An employee (not me) with a manager who is not me either."""
    pool = [
        p
        for p in b.company.employees
        if p.id != b.me.id
        and p.id not in exclude
        and p.id not in b._used
        and (not need_manager or (p.manager_id and p.manager_id != b.me.id))
    ]
    if not pool:
        raise PlantError("no suitable employee")
    p = b.rng.choice(pool)
    b._used.add(p.id)
    return p


def _workdays(start: date, n: int) -> list[date]:
    out, d = [], start
    while len(out) < n:
        if d.weekday() < 5:
            out.append(d)
        d += timedelta(days=1)
    return out


def _req(
    b: Builder,
    eid: str,
    start: date,
    end: date,
    status: str,
    type_id: str = "77",
    notes: str = "",
    days_ago: float = 3,
) -> dict:
    svc = b.svc("hr")
    return svc.requests.create(
        {
            "employee_id": eid,
            "type_id": type_id,
            "start": start.isoformat(),
            "end": end.isoformat(),
            "amount": float((end - start).days + 1) if type_id != "79" else 8.0,
            "status": status,
            "notes": notes,
            "created": ago(b, days=days_ago),
        },
        id=str(1000 + svc.next_seq("request")),
    )


def _overlaps(r: dict, lo: str, hi: str) -> bool:
    return r["end"] >= lo and r["start"] <= hi


def _by_id(data, key: str, value) -> dict:
    hit = [r for r in rows(data) if str(r.get(key)) == str(value)]
    if len(hit) != 1:
        raise PlantError(f"expected one record with {key}={value}, got {len(hit)}")
    return hit[0]


# ---------------------------------------------------------------------------------------------
@family("hr.time_off_coverage", "hr", ("hr", "files", "email"))
def time_off_coverage(b: Builder) -> None:
    """Decide a pending vacation request by the team's coverage rule in Dropbox, then tell the manager."""
    hr = b.svc("hr")
    emp = _staff(b)
    team = emp.team
    mates = [p for p in b.company.employees if p.team == team and p.id != emp.id]
    if not mates:
        raise PlantError("no teammates")
    mgr = b.manager_of(emp)
    eid = emp_id(emp.id)
    # the employee's own requests: only the planted ones
    for r in hr.requests.find(employee_id=eid):
        hr.requests.delete(r["id"])
    conflict = b.rng.random() < 0.5
    today = b.now.date()
    mate_ids = {emp_id(p.id) for p in mates}
    for _ in range(40):
        days = _workdays(today + timedelta(days=b.rng.randrange(5, 25)), b.rng.randrange(2, 4))
        lo, hi = days[0].isoformat(), days[-1].isoformat()
        busy = [
            r
            for r in hr.requests.find(status="approved")
            if r["employee_id"] in mate_ids and _overlaps(r, lo, hi)
        ]
        if not busy:
            break
    else:
        raise PlantError("no free window for the team")
    start, end = days[0], days[-1]
    amount = float((end - start).days + 1)
    bal = hr.balances.get(f"{eid}:77")
    hr.balances.update(bal["id"], {"balance": max(bal["balance"], amount + 3)})
    target = _req(
        b, eid, start, end, "requested", notes=b.pick(("Family trip", "Away", "Holiday abroad")), days_ago=2
    )
    # trap: a newer pending request of another type; trap: an older cancelled vacation request for the same days
    other_day = _workdays(end + timedelta(days=b.rng.randrange(10, 20)), 1)[0]
    newer = _req(b, eid, other_day, other_day, "requested", type_id="79", notes="Appointment", days_ago=0.2)
    stale = _req(
        b,
        eid,
        start,
        end,
        "canceled",
        notes=f"Vacation for {emp.first}; pending coverage check with {mgr.first}",
        days_ago=12,
    )
    outsider = b.pick([p for p in b.company.employees if p.team != team and p.id not in (b.me.id, emp.id)])
    _req(
        b, emp_id(outsider.id), start, end, "approved", days_ago=6
    )  # someone in another team is out: no matter
    mate = b.pick(mates)
    if conflict:
        _req(b, emp_id(mate.id), end, end + timedelta(days=1), "approved", days_ago=5)
    else:  # a teammate's denied request for those days does not count
        _req(b, emp_id(mate.id), start, start, "denied", days_ago=5)
    path = f"/Teams/{team}/time-off-coverage.md"
    b.svc("files")._put_file(
        path,
        f"# {team}: time off coverage\n\nA vacation request is approved only if nobody else in {team} has approved "
        "time off on any of the requested days. If someone does, deny it with a note asking for other dates.\n"
        "Either way, email the requester's manager with the decision and the dates.\n",
        ago(b, days=30),
    )
    b.begin()
    d = b.call("hr__bamboohr_get_employee_directory", J)
    me_row = _by_id(d, "workEmail", emp.email)
    assert me_row["id"] == eid
    reqs = b.call("hr__bamboohr_get_time_off_requests", {"employee_id": me_row["id"], **J})
    pend = [r for r in rows(reqs) if r["status"] == "requested" and r["type_id"] == "77"]
    assert len(pend) == 1 and pend[0]["id"] == target["id"]
    rq = pend[0]
    found = b.call("files__dropbox_search_files", {"query": "coverage"})
    fpath = next(m["path_display"] for m in rows(found) if m["path_display"].startswith(f"/Teams/{team}/"))
    b.call("files__dropbox_download_file", {"path": fpath})
    out = b.call("hr__bamboohr_get_whos_out", {"start_date": rq["start"], "end_date": rq["end"], **J})
    team_ids = {
        r["id"] for r in rows(d) if r["department"] == me_row["department"] and r["id"] != me_row["id"]
    }
    clash = [o for o in rows(out) if o["employeeId"] in team_ids]
    assert bool(clash) == conflict
    b.decide(2)
    person = b.call(
        "hr__bamboohr_get_employee", {"employee_id": me_row["id"], "fields": ["supervisorId"], **J}
    )
    sup = _by_id(d, "id", person["supervisorId"])
    assert sup["workEmail"] == mgr.email
    if conflict:
        status = "denied"
        b.call(
            "hr__bamboohr_change_time_off_request_status",
            {
                "request_id": rq["id"],
                "status": "denied",
                "note": f"{clash[0]['name']} is already out then; please pick other dates.",
                **J,
            },
        )
    else:
        status = "approved"
        b.call(
            "hr__bamboohr_change_time_off_request_status", {"request_id": rq["id"], "status": "approved", **J}
        )
    b.call(
        "email__gmail_send_email",
        {
            "to": [sup["workEmail"]],
            "subject": f"Time off for {emp.name}: {status}",
            "body": f"Hi {mgr.first}, {emp.first}'s vacation request for {rq['start']} to {rq['end']} was {status}"
            + (f" because {clash[0]['name']} is already out." if conflict else ".")
            + f"\n\n{b.me.first}",
        },
    )
    b.expect_change(
        "hr", "time_off_requests", rq["id"], "status", status, f"the vacation request is {status}"
    )
    b.expect_message(
        "email",
        mgr,
        contains=[status, rq["start"]],
        description=f"{mgr.name} was emailed the decision and the dates",
    )
    b.no_message("email", emp, "the decision went to the manager, not straight to the employee")
    b.keep("hr", "time_off_requests", newer["id"], "the newer personal-time request was left alone")
    b.keep("hr", "time_off_requests", stale["id"], "the cancelled older request was left alone")
    b.trap(
        "recent", "a newer pending personal-time request of the same employee", swap={rq["id"]: newer["id"]}
    )
    b.trap("stale", "a cancelled vacation request for the same days", swap={rq["id"]: stale["id"]})
    b.trap("policy_exception", "someone outside the team is out on those days (does not count)")
    b.fact(rq["id"], rq["start"], mgr.email)
    ask = b.say(
        f"deal with {emp.name}'s pending vacation request",
        f"approve or deny {emp.name}'s pending vacation request",
        f"make the call on {emp.first} {emp.last}'s open vacation request in BambooHR",
    )
    ctx = b.say(
        f"Go by the {team} coverage rule in Dropbox and let {emp.first}'s manager know by email",
        f"The {team} time-off coverage note in our Dropbox has the rule; the manager gets an email with the outcome",
        f"Use the coverage policy saved in the {team} team folder, and email the outcome to whoever {emp.first} reports to",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Find the employee's pending vacation request in BambooHR, read the team's coverage file in Dropbox, "
        "check who on the same team is out on those days, approve or deny, then email the employee's supervisor.",
        subtasks=[
            f"Find {emp.name}'s pending vacation request in BambooHR",
            f"Read the {team} time off coverage rule in Dropbox",
            "Check whether a teammate has approved time off on those days",
            "Approve or deny the request by the rule",
            f"Email {emp.first}'s manager the decision and dates",
        ],
    )


NEW_FIRST = ("Nora", "Idris", "Maren", "Tobias", "Selin", "Kofi", "Anouk", "Rafael", "Yuki", "Dalia")
NEW_LAST = (
    "Quinlan",
    "Okafor",
    "Lindqvist",
    "Marchetti",
    "Haddad",
    "Brennan",
    "Sato",
    "Ferreira",
    "Novak",
    "Ahlberg",
)
CHECKLIST = (
    "Laptop ordered",
    "Accounts created",
    "Buddy assigned",
    "Security training booked",
    "30-day check-in set",
)


def _new_name(b: Builder) -> tuple[str, str]:
    taken = {(p.first, p.last) for p in b.company.people}
    pool = [
        (f, last)
        for f in NEW_FIRST
        for last in NEW_LAST
        if (f, last) not in taken and f"{f} {last}" not in b._used
    ]
    f, last = b.pick(pool)
    b._used.add(f"{f} {last}")
    return f, last


def _hire(b: Builder, first: str, last: str, team: str, title: str, sup: Person, start: date) -> dict:
    hr = b.svc("hr")
    return hr.employees.create(
        {
            "firstName": first,
            "lastName": last,
            "workEmail": f"{first}.{last}@{b.company.domain}".lower(),
            "jobTitle": title,
            "department": team,
            "location": sup.location,
            "supervisorId": emp_id(sup.id),
            "hireDate": start.isoformat(),
            "lastChanged": ago(b, days=2),
        },
        id=str(900 + hr.next_seq("employee")),
    )


def _onboarding_board(b: Builder) -> dict:
    bs = b.svc("boards")
    board = bs._board("People onboarding", "New hires, one card each")
    lists = {x["name"]: x for x in bs.lists.find(idBoard=board["id"])}
    tpl_list = bs.lists.create({"idBoard": board["id"], "name": "Templates", "pos": 4 * 16384})
    return {"board": board, "lists": lists, "templates": tpl_list}


@family("hr.onboard_new_hire", "hr", ("hr", "boards", "calendar"))
def onboard_new_hire(b: Builder) -> None:
    """Set up a new hire: onboarding card from the board's template, welcome meeting with their HR manager."""
    bs, cal = b.svc("boards"), b.svc("calendar")
    teams = [t for t in b.company.teams if [m for m in t.member_ids if m not in (t.lead_id, b.me.id)]]
    team = b.pick(teams)
    lead = b.company.person(team.lead_id)
    seniors = [b.company.person(m) for m in team.member_ids if m not in (team.lead_id, b.me.id)]
    mgr = b.pick(seniors)  # the hire reports to a senior teammate, not the team lead
    b._used.update({mgr.id, lead.id})
    today = b.now.date()
    start = _workdays(today + timedelta(days=b.rng.randrange(3, 9)), 1)[0]
    first, last = _new_name(b)
    title = b.pick(("Analyst", "Specialist", "Associate", "Engineer"))
    hire = _hire(b, first, last, team.name, title, mgr, start)
    other_team = b.pick([t for t in b.company.teams if t.id != team.id])
    of, ol = _new_name(b)
    decoy = _hire(b, of, ol, other_team.name, title, b.company.person(other_team.lead_id), start)
    ob = _onboarding_board(b)
    tpl = bs._card(
        ob["templates"],
        "Onboarding template",
        "Checklist for every new hire:\n" + "\n".join(f"- {x}" for x in CHECKLIST),
    )
    pf, pl = _new_name(b)
    done = bs._card(
        ob["lists"]["Done"], f"Onboarding: {pf} {pl}", f"Team: {team.name}. Welcome meeting held."
    )
    # the manager is busy first thing; my own morning is clear
    day0 = datetime_at(start, 9)
    for e in list(cal.store.tables.get("events", {}).values()):
        if e["calendar_id"] == b.me.email and e["start"][:10] == start.isoformat():
            cal.remove("events", e["id"])
    for e in list(cal.store.tables.get("busy", {}).values()):
        if e["calendar_id"] == mgr.email and e["start"][:10] == start.isoformat():
            cal.remove("busy", e["id"])
    busy_h = b.pick((0.0, 0.5, 1.0))
    cal.insert(
        "busy",
        {
            "id": cal.next_id("fb", 12),
            "calendar_id": mgr.email,
            "start": b.iso(day0),
            "end": b.iso(day0 + timedelta(hours=1 + busy_h)),
        },
    )
    cal.insert(
        "busy",
        {
            "id": cal.next_id("fb", 12),
            "calendar_id": mgr.email,
            "start": b.iso(day0 + timedelta(hours=1.5 + busy_h)),
            "end": b.iso(day0 + timedelta(hours=3)),
        },
    )
    b.begin()
    boards = b.call("boards__trello_get_my_boards", {})
    bid = next(x["id"] for x in rows(boards) if x["name"] == "People onboarding")
    lists = b.call("boards__trello_get_board_lists", {"board_id": bid})
    tl = next(x["id"] for x in rows(lists) if x["name"] == "Templates")
    todo = next(x["id"] for x in rows(lists) if x["name"] == "To Do")
    cards = b.call("boards__trello_get_list_cards", {"list_id": tl})
    tcard = next(c for c in rows(cards) if "template" in c["name"].lower())
    items = [ln[2:].strip() for ln in tcard["desc"].splitlines() if ln.startswith("- ")]
    assert tuple(items) == CHECKLIST
    d = b.call("hr__bamboohr_get_employee_directory", J)
    h = _by_id(d, "displayName", f"{first} {last}")
    assert h["id"] == hire["id"]
    rec = b.call(
        "hr__bamboohr_get_employee", {"employee_id": h["id"], "fields": ["supervisorId", "hireDate"], **J}
    )
    sup = _by_id(d, "id", rec["supervisorId"])
    assert sup["workEmail"] == mgr.email
    first_day = rec["hireDate"]
    free = b.call(
        "calendar__google_calendar_find_free_slots",
        {
            "items": [sup["workEmail"]],
            "time_min": f"{first_day}T09:00:00Z",
            "time_max": f"{first_day}T17:00:00Z",
            "min_slot_duration_minutes": 30,
        },
    )
    slot = free["common_free_slots"][0]["start"]
    b.decide()
    st = datetime.fromisoformat(slot.replace("Z", "+00:00"))
    assert st == (day0 + timedelta(hours=1 + busy_h)).replace(tzinfo=st.tzinfo)
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": f"Welcome {first} {last}",
            "start_datetime": b.iso(st),
            "end_datetime": b.iso(st + timedelta(minutes=30)),
            "attendees": [sup["workEmail"], h["workEmail"]],
        },
    )
    card = b.call(
        "boards__trello_create_card",
        {
            "idList": todo,
            "name": h["displayName"],
            "desc": f"Team: {h['department']}. Manager: {sup['displayName']}.",
        },
    )
    chk = b.call("boards__trello_create_checklist", {"idCard": card["id"], "name": "Onboarding"})
    with b.together():
        for it in items:
            b.call("boards__trello_add_item_to_checklist", {"idChecklist": chk["id"], "name": it})
    b.goal(
        f"a 30-minute welcome meeting with {first} and {mgr.name} at the first free slot of the first day",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [mgr.email, h["workEmail"]],
            "names": [mgr.name, f"{first} {last}"],
            "start": b.iso(st),
            "duration_minutes": 30,
            "exclusive": True,
        },
    )
    b.expect_record(
        "boards",
        "cards",
        {"name": {"contains": f"{first} {last}"}, "idList": todo},
        f"an onboarding card for {first} {last} is in To Do",
    )
    for it in items:
        b.expect_record("boards", "checklists", {"checkItems.name": it}, f"the checklist has '{it}'")
    b.keep("boards", "cards", tpl["id"], "the template card itself was left as it was")
    b.keep("boards", "cards", done["id"], "the previous hire's finished card was left alone")
    b.trap(
        "policy_exception",
        "the team lead is not the new hire's manager in BambooHR",
        swap={mgr.email: lead.email},
    )
    b.trap(
        "near_duplicate",
        "another new hire starting the same day in another team",
        swap={h["workEmail"]: decoy["workEmail"]},
    )
    b.trap("stale", "a previous hire's onboarding card in Done")
    b.fact(mgr.email, first_day, b.iso(st))
    ask = b.say(
        f"get {first} {last}'s onboarding set up",
        f"set up onboarding for {first} {last}, who just joined {team.name}",
        f"sort out the onboarding for our new {team.name} hire {first} {last}",
    )
    ctx = b.say(
        "As usual: a card in To Do on the People onboarding board with the template's checklist, and a 30-minute "
        "welcome with their manager (as in BambooHR) at the first free slot from 9:00 on their first day",
        "Standard routine: welcome meeting of 30 minutes with the manager BambooHR lists, first open slot from 9 on day one, "
        "plus a To Do card on People onboarding carrying the template checklist",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Read the template card on the People onboarding board, find the hire's manager and start date in BambooHR, "
        "find the manager's first free half hour from 9:00 that day, book it, then create the card with the checklist.",
        subtasks=[
            "Read the onboarding template's checklist on the People onboarding board",
            f"Find {first} {last}'s manager and start date in BambooHR",
            "Find the manager's first free 30 minutes from 9:00 on the start day",
            "Book the welcome meeting with both of them",
            "Create the To Do card with the template checklist",
        ],
    )


def datetime_at(d: date, hour: float):
    from datetime import datetime as _dt

    return _dt(d.year, d.month, d.day) + timedelta(hours=hour)


def _team_board(b: Builder, team: str) -> tuple[dict, dict[str, dict]]:
    bs = b.svc("boards")
    name = f"{team} team"
    board = next((x for x in bs.boards.all() if x["name"] == name), None) or bs._board(
        name, f"Board for {name.lower()}"
    )
    return board, {x["name"]: x for x in bs.lists.find(idBoard=board["id"])}


CARD_TASKS = (
    "Quarterly access review",
    "Update runbook",
    "Vendor renewal prep",
    "Draft team OKRs",
    "Clean up shared drive",
    "Prepare demo script",
)


@family("hr.manager_change", "hr", ("hr", "boards"))
def manager_change(b: Builder) -> None:
    """A transfer to another team: hand the person's open cards to their outgoing manager, then update BambooHR."""
    bs = b.svc("boards")
    emp = _staff(b)
    old = b.manager_of(emp)
    teams = [t for t in b.company.teams if t.name != emp.team and t.lead_id not in (b.me.id, old.id, emp.id)]
    new_team = b.pick(teams)
    new = b.company.person(new_team.lead_id)
    b._used.update({old.id, new.id})
    board, lists = _team_board(b, emp.team)
    tasks = b.rng.sample(CARD_TASKS, 5)
    mine = [
        bs._card(lists["To Do"], tasks[0], f"Owner: {emp.name}"),
        bs._card(lists["Doing"], tasks[1], f"Owner: {emp.name}"),
    ]
    done = bs._card(lists["Done"], tasks[2], f"Owner: {emp.name}")
    other = _staff(b, need_manager=False, exclude=(emp.id,))
    bait = bs._card(
        lists["To Do"],
        f"{emp.name} move to {new_team.name}: handover notes",
        f"Owner: {other.name}\nPrepare {emp.first}'s transfer to {new.name}.",
    )
    filler = bs._card(lists["To Do"], tasks[3], f"Owner: {other.name}")
    for t in tasks[4:]:
        bs._card(lists["To Do"], t, f"Owner: {other.name}")
    for t in ("Book team offsite", "Refresh onboarding doc", "Plan hiring sprint"):
        bs._card(lists["To Do"], t, f"Owner: {old.name}")
    b.begin()
    d = b.call("hr__bamboohr_get_employee_directory", J)
    e = _by_id(d, "displayName", emp.name)
    n = _by_id(d, "displayName", new.name)
    rec = b.call(
        "hr__bamboohr_get_employee", {"employee_id": e["id"], "fields": ["supervisorId", "department"], **J}
    )
    o = _by_id(d, "id", rec["supervisorId"])
    assert o["displayName"] == old.name
    boards = b.call("boards__trello_get_my_boards", {})
    bid = next(x["id"] for x in rows(boards) if x["name"] == f"{e['department']} team")
    ls = b.call("boards__trello_get_board_lists", {"board_id": bid})
    todo = []
    for lst in rows(ls):
        if lst["name"] == "Done":
            continue
        cards = b.call("boards__trello_get_list_cards", {"list_id": lst["id"]})
        todo += [c for c in rows(cards) if c["desc"].splitlines()[0].strip() == f"Owner: {e['displayName']}"]
    b.decide()
    assert {c["id"] for c in mine} <= {c["id"] for c in todo}
    for c in todo:
        b.call(
            "boards__trello_update_card",
            {"card_id": c["id"], "desc": c["desc"].replace(e["displayName"], o["displayName"])},
        )
    b.call(
        "hr__bamboohr_update_employee",
        {
            "employee_id": e["id"],
            "update_data": {"supervisorId": n["id"], "department": n["department"]},
            **J,
        },
    )
    b.expect_change(
        "hr", "employees", e["id"], "supervisorId", n["id"], f"{emp.name} reports to {new.name} in BambooHR"
    )
    b.expect_change(
        "hr",
        "employees",
        e["id"],
        "department",
        new_team.name,
        f"{emp.name} is in {new_team.name} in BambooHR",
    )
    for c in todo:
        b.expect_record(
            "boards",
            "cards",
            {"id": c["id"], "desc": {"contains": old.name}},
            f"card '{c['name']}' is now owned by {old.name}",
        )
    b.keep("boards", "cards", done["id"], "the finished card in Done was left alone")
    b.keep("boards", "cards", bait["id"], "the handover-notes card owned by someone else was left alone")
    b.keep("boards", "cards", filler["id"], "other people's cards were left alone")
    b.trap("closed", "a finished card of the same person in Done", swap={mine[0]["id"]: done["id"]})
    b.trap(
        "keyword", "a card naming the transfer but owned by someone else", swap={mine[1]["id"]: bait["id"]}
    )
    b.trap(
        "policy_exception", "the cards go to the outgoing manager, not the new one", swap={old.name: new.name}
    )
    b.fact(old.name, e["id"], n["id"])
    ask = b.say(
        f"move {emp.name} to {new_team.name} under {new.name} in BambooHR and hand the cards {emp.first} still owns on "
        f"the {emp.team} team board to the manager they had until now",
        f"process {emp.name}'s transfer to {new_team.name}, reporting to {new.name}, and give {emp.first}'s unfinished "
        f"cards on the {emp.team} team board to their outgoing manager",
    )
    ctx = b.say(
        "It is effective today; cards already in Done stay as they are",
        "Done cards are history, leave them; the change applies from today",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Look up the employee and their current supervisor in BambooHR, reassign their open cards (To Do, Doing) on "
        "the team board to that supervisor, then set the new supervisor and department in BambooHR.",
        subtasks=[
            f"Find {emp.name}'s current manager in BambooHR",
            f"Find {emp.first}'s cards outside Done on the {emp.team} team board",
            "Make the outgoing manager the owner of each",
            f"Set {new.name} as supervisor and {new_team.name} as department in BambooHR",
        ],
    )


@family("hr.training_refresh", "hr", ("hr", "files"))
def training_refresh(b: Builder) -> None:
    """Everyone whose latest required training is older than the policy allows gets a goal to redo it; say how many."""
    hr, fs = b.svc("hr"), b.svc("files")
    tt = b.pick([t for t in hr.ttypes.all() if t["required"]])
    days_valid = b.pick((180, 270, 365))
    today = b.now.date()
    staff = [e for e in hr.employees.all() if e["status"] == "Active"]
    # one person renewed recently after a lapsed record (latest counts); one is just inside the window
    renewed, edge, never = b.rng.sample([e for e in staff if e["id"] != emp_id(b.me.id)], 3)
    for e in (renewed, edge, never):
        for r in hr.trainings.find(employee_id=e["id"], type_id=tt["id"]):
            hr.trainings.delete(r["id"])
    planted = []
    for e, age in ((renewed, days_valid + 60), (renewed, 20), (edge, days_valid - 5)):
        planted.append(
            hr.trainings.create(
                {
                    "employee_id": e["id"],
                    "type_id": tt["id"],
                    "completed": (today - timedelta(days=age)).isoformat(),
                },
                id=str(3000 + hr.next_seq("training")),
            )
        )
    for folder in ("/Teams/People Ops",):
        if fs.entries.get(folder.lower()) is None:
            fs._put_folder(folder)
    fs._put_file(
        "/Teams/People Ops/training-policy.md",
        f"# Required training\n\n{tt['name']} must have been completed within the last {days_valid} days "
        "(the latest completion counts). Anyone outside that window gets a BambooHR goal to redo it, due 14 days from today.\n",
        ago(b, days=40),
    )
    b.begin()
    types = b.call("hr__bamboohr_get_training_types", J)
    tid = next(t["id"] for t in rows(types) if t["name"] == tt["name"])
    recs = b.call("hr__bamboohr_get_training_records", {"training_type_id": tid, **J})
    found = b.call("files__dropbox_search_files", {"query": "training"})
    path = next(m["path_display"] for m in rows(found) if m["name"] == "training-policy.md")
    b.call("files__dropbox_download_file", {"path": path})
    d = b.call("hr__bamboohr_get_employee_directory", J)
    latest: dict[str, str] = {}
    for r in rows(recs):
        latest[r["employee_id"]] = max(latest.get(r["employee_id"], ""), r["completed"])
    cutoff = (today - timedelta(days=days_valid)).isoformat()
    lapsed = [e for e in rows(d) if latest.get(e["id"], "") < cutoff]
    b.aggregate()
    b.decide()
    assert renewed["id"] not in {e["id"] for e in lapsed} and edge["id"] not in {e["id"] for e in lapsed}
    if not lapsed:
        raise PlantError("nobody lapsed")
    due = (today + timedelta(days=14)).isoformat()
    with b.together():
        for e in lapsed:
            b.call(
                "hr__bamboohr_create_goal",
                {"employee_id": e["id"], "title": f"Redo {tt['name']} training", "due_date": due, **J},
            )
    for e in lapsed:
        b.expect_record(
            "hr",
            "goals",
            {"employee_id": e["id"], "title": {"contains": tt["name"]}, "due_date": {"at": due}},
            f"{e['displayName']} has a goal to redo {tt['name']} by {due}",
        )
    b.ask(
        len(lapsed),
        kind="number",
        exclude=(len(lapsed) + 1, len(lapsed) - 1),
        what="how many people were out of date",
    )
    for r in planted:
        b.keep("hr", "training_records", r["id"], "existing training records were left as they were")
    b.trap("stale", "an employee with an old lapsed record and a newer valid one (the latest counts)")
    b.trap("policy_exception", "an employee just inside the policy window")
    b.fact(days_valid, len(lapsed))
    ask = b.say(
        f"give everyone who is out of date on {tt['name']} training a BambooHR goal to redo it, and tell me how many that was",
        f"chase the lapsed {tt['name']} trainings: a goal in BambooHR for each person affected, plus the head count back to me",
    )
    ctx = b.say(
        "The validity window and the deadline are in the training policy in the People Ops folder on Dropbox",
        "Go by our training policy file in Dropbox (People Ops) for how long a completion stays valid and the due date",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="List the training records of that type, read the policy file for the validity window, work out each "
        "employee's latest completion, create a goal due in 14 days for everyone outside the window, and report the count.",
        subtasks=[
            f"Read the {tt['name']} validity window in the Dropbox training policy",
            f"List {tt['name']} training records in BambooHR",
            "Find each employee's latest completion and who is outside the window",
            "Create a goal to redo it, due in 14 days, for each of them",
            "Report how many people that was",
        ],
    )


def _my_event(b: Builder, summary: str, start: datetime, minutes: int, guests: list[str]) -> dict:
    cal = b.svc("calendar")
    return cal.insert(
        "events",
        {
            "id": cal.next_id("ev", 16),
            "calendar_id": b.me.email,
            "summary": summary,
            "description": "",
            "location": "",
            "start": b.iso(start),
            "end": b.iso(start + timedelta(minutes=minutes)),
            "attendees": [{"email": g, "responseStatus": "accepted"} for g in guests],
            "organizer": b.me.email,
            "visibility": "default",
            "recurrence": [],
            "hangoutLink": None,
            "status": "confirmed",
        },
    )


@family("hr.offboard_leaver", "hr", ("hr", "calendar"))
def offboard_leaver(b: Builder) -> None:
    """A leaver: cancel my upcoming 1:1s with them, cancel their booked time off, mark them inactive."""
    hr = b.svc("hr")
    emp = _staff(b, need_manager=False)
    eid = emp_id(emp.id)
    for r in hr.requests.find(employee_id=eid):
        hr.requests.delete(r["id"])
    today = b.now.date()
    cal = b.svc("calendar")
    for x in list(cal.table("events").values()):
        if x["summary"].startswith("1:1") or any(g["email"] == emp.email for g in x["attendees"]):
            cal.remove("events", x["id"])
    ones = [
        _my_event(b, f"1:1 with {emp.first}", datetime_at(today + timedelta(days=k), 15), 30, [emp.email])
        for k in sorted(b.rng.sample(range(2, 20), 2))
    ]
    past = _my_event(b, f"1:1 with {emp.first}", datetime_at(today - timedelta(days=5), 15), 30, [emp.email])
    other = _staff(b, need_manager=False, exclude=(emp.id,))
    lunch = _my_event(
        b,
        f"Farewell lunch: 1:1 goodbye with {emp.name}",
        datetime_at(today + timedelta(days=1), 12),
        60,
        [emp.email, other.email],
    )
    o11 = _my_event(
        b, f"1:1 with {other.first}", datetime_at(today + timedelta(days=3), 10), 30, [other.email]
    )
    fut = _workdays(today + timedelta(days=b.rng.randrange(8, 20)), 2)
    booked = _req(b, eid, fut[0], fut[-1], "approved", days_ago=10)
    pend = _req(b, eid, fut[-1] + timedelta(days=14), fut[-1] + timedelta(days=14), "requested", days_ago=3)
    old = _req(b, eid, today - timedelta(days=30), today - timedelta(days=29), "approved", days_ago=50)
    b.begin()
    d = b.call("hr__bamboohr_get_employee_directory", J)
    e = _by_id(d, "displayName", emp.name)
    evs = b.call(
        "calendar__google_calendar_list_events",
        {
            "min_end_datetime": b.iso(b.now),
            "max_start_datetime": b.iso(b.now + timedelta(days=30)),
            "max_results": 250,
        },
    )
    mine = [
        x
        for x in rows(evs)
        if x["summary"].lower().startswith("1:1") and [g["email"] for g in x["attendees"]] == [e["workEmail"]]
    ]
    b.decide()
    assert {x["id"] for x in mine} == {x["id"] for x in ones}
    for x in mine:
        b.call("calendar__google_calendar_delete_event", {"event_id": x["id"]})
    reqs = b.call(
        "hr__bamboohr_get_time_off_requests", {"employee_id": e["id"], "start_date": today.isoformat(), **J}
    )
    live = [
        r for r in rows(reqs) if r["status"] in ("approved", "requested") and r["start"] >= today.isoformat()
    ]
    assert {r["id"] for r in live} == {booked["id"], pend["id"]}
    for r in live:
        b.call(
            "hr__bamboohr_change_time_off_request_status", {"request_id": r["id"], "status": "canceled", **J}
        )
    b.call(
        "hr__bamboohr_update_employee", {"employee_id": e["id"], "update_data": {"status": "Inactive"}, **J}
    )
    for x in ones:
        b.goal(
            f"the upcoming 1:1 on {x['start'][:10]} is gone",
            {
                "predicate": "record_absent",
                "service": "calendar",
                "table": "events",
                "where": {"id": x["id"], "status": {"ne": "cancelled"}},
            },
        )
    for r in live:
        b.expect_change(
            "hr",
            "time_off_requests",
            r["id"],
            "status",
            "canceled",
            f"time off from {r['start']} is cancelled",
        )
    b.expect_change("hr", "employees", e["id"], "status", "Inactive", f"{emp.name} is inactive in BambooHR")
    b.keep("calendar", "events", past["id"], "the past 1:1 stays on the calendar")
    b.keep("calendar", "events", lunch["id"], "the farewell lunch stays")
    b.keep("calendar", "events", o11["id"], "1:1s with other people stay")
    b.keep("hr", "time_off_requests", old["id"], "past time off is history")
    b.trap("keyword", "a farewell lunch that names the leaver", swap={ones[0]["id"]: lunch["id"]})
    b.trap("stale", "a past 1:1 with the leaver", swap={ones[0]["id"]: past["id"]})
    b.trap("near_duplicate", "a 1:1 with someone else", swap={ones[0]["id"]: o11["id"]})
    b.fact(e["workEmail"], booked["id"])
    ask = b.say(
        f"offboard {emp.name}, who leaves today",
        f"wrap up {emp.name}'s departure; today is their last day",
    )
    ctx = b.say(
        f"Cancel my upcoming 1:1s with {emp.first} (keep the farewell lunch and anything in the past), cancel the time off "
        "they still have booked or pending in BambooHR, and mark them inactive there",
        f"That means: my future 1:1s with {emp.first} come off the calendar (farewell lunch stays), their upcoming time "
        "off in BambooHR is cancelled, and their record goes inactive",
    )
    b.write(
        frame(b.rng, ask, context=ctx),
        hint="Find the employee in BambooHR, delete the upcoming 1:1 events with them from the calendar, cancel their "
        "future approved or pending time off, then set their status to Inactive.",
        subtasks=[
            f"Find {emp.name}'s work email in BambooHR",
            f"Delete my upcoming 1:1s with {emp.first}",
            "Cancel their future time off requests",
            "Mark them inactive in BambooHR",
        ],
    )
