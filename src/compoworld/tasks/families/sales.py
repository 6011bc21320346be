"""Sales workflows: deals worked in HubSpot against the team's sheets, bookings and meetings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import ago, ahead, crm_company, in_crm, rows
from compoworld.tasks.families._common import crm_contact as _crm_contact
from compoworld.tasks.families._common import inbox_mail as _mail
from compoworld.tasks.families._common import next_business_day as _next_business_day
from compoworld.tasks.families._common import sheet as _sheet
from compoworld.tasks.families._common import sheet_rows as _sheet_rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

STAGE_LABEL = {
    "appointmentscheduled": "Appointment scheduled",
    "qualifiedtobuy": "Qualified to buy",
    "presentationscheduled": "Presentation scheduled",
    "decisionmakerboughtin": "Decision maker bought in",
    "contractsent": "Contract sent",
}


# ---- planting helpers (this module only) -----------------------------------------------------
def _owner_id(person_id: str) -> str:
    from compoworld.services.crm.seed import owner_id

    return owner_id(person_id)


def _crm_obj(b: Builder, otype: str, props: dict[str, Any], days_ago: float) -> dict[str, Any]:
    t = ago(b, days=days_ago)
    return b.svc("crm").objects.create(
        {"object_type": otype, "properties": props, "createdAt": t, "updatedAt": t}
    )


def _deal(
    b: Builder,
    comp: dict[str, Any],
    contact: dict[str, Any] | None,
    name: str,
    amount: float,
    stage: str,
    close_in: float,
    owner: str,
    days_ago: float,
    desc: str = "",
) -> dict[str, Any]:
    d = _crm_obj(
        b,
        "deals",
        {
            "dealname": name,
            "amount": f"{amount:.2f}",
            "dealstage": stage,
            "pipeline": "default",
            "closedate": ahead(b, days=close_in) if close_in >= 0 else ago(b, days=-close_in),
            "hubspot_owner_id": owner,
            "dealtype": "newbusiness",
            "description": desc,
        },
        days_ago,
    )
    b.svc("crm")._associate("deals", d["id"], "companies", comp["id"])
    if contact:
        b.svc("crm")._associate("deals", d["id"], "contacts", contact["id"])
    return d


def _staff(b: Builder, team: str) -> Any:
    """An unused employee of `team`, or of any team when that one is used up."""
    try:
        return b.person(external=False, team=team)
    except PlantError:
        return b.person(external=False)


# ---- families ----------------------------------------------------------------------------------
@family("sales.closed_won_handover", "sales", ("crm", "sheets", "meet"))
def closed_won_handover(b: Builder) -> None:
    """A customer signed: close the deal as won, hand it to the account's CSM, book the kickoff."""
    cust = b.customer(where=in_crm(b))
    comp = crm_company(b, cust.name)
    person = b.contact_of(cust)
    contact = _crm_contact(b, person.email)
    prod, other_prod = b.pick(b.company.products, 2)
    csm = _staff(b, "Customer Success")
    old_csm = _staff(b, "Customer Success")
    owner = comp["properties"].get("hubspot_owner_id") or _owner_id(b.me.id)
    seats = b.rng.randrange(5, 40)
    lost = _deal(
        b,
        comp,
        contact,
        f"{cust.name} - {prod.name}",
        prod.price * (seats + 10),
        "closedlost",
        -200,
        owner,
        260,
        "Customer never signed the order; lost on price.",
    )
    target = _deal(
        b,
        comp,
        contact,
        f"{cust.name} - {prod.name}",
        prod.price * seats,
        "contractsent",
        10,
        owner,
        30,
        f"{seats} x {prod.sku}",
    )
    pilot = _deal(
        b,
        comp,
        contact,
        f"{cust.name} - {prod.name} pilot",
        prod.price * 2,
        "closedwon",
        -320,
        owner,
        380,
        f"2 x {prod.sku}, pilot",
    )
    newer = _deal(
        b,
        comp,
        contact,
        f"{cust.name} - {other_prod.name}",
        other_prod.price * 3,
        "presentationscheduled",
        45,
        owner,
        2,
        f"3 x {other_prod.sku}",
    )
    others = [c for c in b.company.customers if c.id != cust.id][:6]
    table = [["Customer", "CSM", "CSM email", "Status"]]
    for c in others[:3]:
        p = b.pick([e for e in b.company.employees if e.team == "Customer Success"] or b.company.employees)
        table.append([c.name, p.name, p.email, "Active"])
    table.append([cust.name, old_csm.name, old_csm.email, "Former"])
    for c in others[3:]:
        p = b.pick([e for e in b.company.employees if e.team == "Customer Success"] or b.company.employees)
        table.append([c.name, p.name, p.email, "Active"])
    table.append([cust.name, csm.name, csm.email, "Active"])
    _sheet(b, "CS account assignments", "Assignments", table)
    b.begin()

    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "deals",
            "property_name": "dealname",
            "operator": "STARTS_WITH",
            "value": cust.name,
            "properties": ["dealname", "dealstage", "amount", "closedate", "description"],
        },
    )
    b.decide()
    deal = next(
        d
        for d in rows(found)
        if d["properties"]["dealname"] == f"{cust.name} - {prod.name}"
        and d["properties"]["dealstage"] not in ("closedwon", "closedlost")
    )
    did = deal["id"]
    assert did == target["id"]
    b.call("crm__hubspot_update_deal_by_id", {"deal_id": did, "updates": {"dealstage": "closedwon"}})
    assoc = b.call(
        "crm__hubspot_get_associations",
        {"from_object_type": "deals", "from_object_id": did, "to_object_type": "contacts"},
    )
    cid = rows(assoc)[0]["toObjectId"]
    ct = b.call("crm__hubspot_get_contact_by_id", {"contact_id": cid})
    cemail = ct["properties"]["email"]
    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    sid = next(s["id"] for s in rows(books) if s["title"] == "CS account assignments")
    hits = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    b.decide()
    row = next(r for r in _sheet_rows(hits) if r and r[0] == cust.name and r[3] == "Active")
    assert row[2] == csm.email
    b.call(
        "crm__hubspot_create_note",
        {"note_body": f"Closed won. Handed over to {row[1]} (CSM) for onboarding.", "deal_ids": [did]},
    )
    day = _next_business_day(b.now).replace(hour=15, minute=0, second=0, microsecond=0)
    b.call(
        "meet__google_meet_create_meet",
        {
            "summary": f"{cust.name} kickoff",
            "start_time": format_time(day),
            "end_time": format_time(day + timedelta(minutes=30)),
            "attendees": [row[2], cemail],
        },
    )

    b.expect_change(
        "crm", "objects", did, "properties.dealstage", "closedwon", "the signed deal is closed won"
    )
    b.expect_record(
        "crm",
        "objects",
        {"object_type": "notes", "properties.hs_note_body": {"contains": csm.name}},
        f"a note names {csm.name} as the CSM taking over",
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "notes", "to_object_type": "deals", "to_object_id": did},
        "the handover note is on the deal",
    )
    b.goal(
        "a 30-minute kickoff Meet with the CSM and the customer contact, next business day 15:00 UTC",
        {
            "predicate": "event_scheduled",
            "service": "meet",
            "attendees": [csm.email, person.email],
            "names": [csm.name, person.name],
            "start": b.iso(day),
            "duration_minutes": 30,
            "exclusive": True,
        },
    )
    b.keep("crm", "objects", lost["id"], "the old lost deal for the same product stays lost")
    b.keep("crm", "objects", newer["id"], "the other open deal of the customer is untouched")
    b.keep("crm", "objects", pilot["id"], "the old pilot deal stays as it was")
    b.trap("closed", "last year's lost deal for the same product", swap={did: lost["id"]})
    b.trap(
        "near_duplicate", "a newer open deal of the same customer on another product", swap={did: newer["id"]}
    )
    b.trap("stale", "the former CSM's row for the account", swap={csm.email: old_csm.email})
    b.fact(did, csm.name, csm.email, person.email)
    b.write(
        frame(
            b.rng,
            b.say(
                f"mark the {prod.name} deal with {cust.name} as closed won and hand it to their CSM",
                f"close out {cust.name}'s {prod.name} deal as won and get their CSM onboarding them",
            ),
            context=b.say(
                f"{cust.name} signed the {prod.name} order this morning. Handover means a note on the deal naming the "
                "current CSM from the CS assignments sheet, plus a 30-minute kickoff Meet with the CSM and the customer "
                "contact on the deal, next business day at 15:00 UTC",
                "They signed. Our handover: log a note on the deal with the account's current CSM (CS assignments sheet) "
                "and book a 30-minute Google Meet kickoff for the CSM and the deal's contact at 15:00 UTC the next "
                "business day",
            ),
        ),
        hint="Find the open deal in HubSpot, set it to closedwon, read its contact, look up the active CSM in the "
        "assignments sheet, note the handover on the deal and create the Meet.",
        subtasks=[
            f"Find {cust.name}'s open {prod.name} deal and set it to closed won",
            "Get the deal's contact",
            "Look up the account's current CSM in the CS assignments sheet",
            "Add a handover note naming the CSM on the deal",
            "Book the 30-minute kickoff Meet with the CSM and the contact",
        ],
    )


@family("sales.stage_total_logged", "sales", ("crm", "sheets"))
def stage_total_logged(b: Builder) -> None:
    """Total the open pipeline of one deal stage (live close dates only), reply and log it in the forecast sheet."""
    stage, old_stage = b.pick(
        ["qualifiedtobuy", "presentationscheduled", "decisionmakerboughtin", "contractsent"], 2
    )
    label = STAGE_LABEL[stage]
    custs = [b.customer(where=in_crm(b)) for _ in range(4)]
    owner = _owner_id(b.me.id)
    live, stale = [], []
    for i, c in enumerate(custs[:3]):
        prod = b.pick(b.company.products)
        qty = b.rng.randrange(2, 30)
        live.append(
            _deal(
                b,
                crm_company(b, c.name),
                None,
                f"{c.name} - {prod.name}",
                prod.price * qty,
                stage,
                b.rng.randrange(3, 60),
                owner,
                10 + i * 7,
                f"{qty} x {prod.sku}",
            )
        )
    c = custs[3]
    prod = b.pick(b.company.products)
    stale.append(
        _deal(
            b,
            crm_company(b, c.name),
            None,
            f"{c.name} - {prod.name}",
            prod.price * 12,
            stage,
            -b.rng.randrange(10, 40),
            owner,
            90,
            f"12 x {prod.sku}",
        )
    )
    old = _sheet(
        b,
        "Weekly forecast log FY25",
        "Log",
        [["Week of", "Stage", "Open deals"], ["2025-03-03", STAGE_LABEL[old_stage], 5]],
        300,
    )
    _sheet(
        b,
        "FY26 forecast",
        "Log",
        [["Week of", "Stage", "Open deals (close date today or later)"], [ago(b, days=7)[:10], label, 2]],
        7,
    )
    b.begin()

    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    sid = next(s["id"] for s in rows(books) if s["title"] == "FY26 forecast")
    got = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    tracked = _sheet_rows(got)[-1][1]
    assert tracked == label
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "deals",
            "property_name": "dealstage",
            "operator": "EQ",
            "value": stage,
            "properties": ["dealname", "amount", "closedate"],
            "limit": 200,
        },
    )
    today = b.iso(b.now)[:10]
    b.decide()
    keep = [d for d in rows(found) if (d["properties"].get("closedate") or "")[:10] >= today]
    gone = [d for d in rows(found) if (d["properties"].get("closedate") or "")[:10] < today]
    b.aggregate()
    total = round(sum(float(d["properties"]["amount"] or 0) for d in keep), 2)
    wrong = round(total + sum(float(d["properties"]["amount"] or 0) for d in gone), 2)
    assert {d["id"] for d in live} <= {d["id"] for d in keep} and stale[0]["id"] in {d["id"] for d in gone}
    b.call("sheets__google_sheets_append_rows", {"spreadsheet_id": sid, "rows": [[today, label, len(keep)]]})
    n = 3
    b.ask(f"{total:.2f}", kind="number", exclude=[f"{wrong:.2f}"], what="the open total of the tracked stage")
    b.expect_record(
        "sheets",
        "spreadsheets",
        {
            "id": sid,
            f"sheets.cells.B{n}": {"contains": label},
            f"sheets.cells.C{n}": {"approx": [len(keep), 0.01]},
        },
        f"the forecast log has a new row for {label} with the count of live deals ({len(keep)})",
    )
    b.keep("sheets", "spreadsheets", old["id"], "the archived forecast log is left alone")
    b.keep("crm", "objects", stale[0]["id"], "the deal past its close date is not touched")
    b.trap("stale", "a deal in the stage whose close date has already passed", answer=f"{wrong:.2f}")
    b.trap("near_duplicate", "last year's archived forecast log", swap={sid: old["id"]})
    b.fact(total, len(keep), label)
    b.write(
        frame(
            b.rng,
            b.say(
                "tell me the open amount in the stage our weekly FY26 forecast log tracks and add this week's row to that log",
                "work out what the stage tracked in our weekly FY26 forecast log is worth right now and log this week's line",
            ),
            context=b.say(
                "The log takes one row per week: today's date, the stage and the number of deals counted",
                "The log gets today's date, the stage and how many deals you counted, as its header says",
            ),
        ),
        hint="Read the stage from the last row of 'FY26 forecast', search HubSpot deals by that dealstage, drop those whose closedate is before today, sum the amounts, reply "
        "with the total and append a row to the log.",
        subtasks=[
            "Read the tracked stage from the 'FY26 forecast' sheet",
            "List the HubSpot deals in that stage",
            "Keep only the deals with a close date today or later",
            "Sum their amounts and reply with the total",
            "Append today's row (date, stage, deal count) to the FY26 forecast log",
        ],
    )


_PROSPECT_FIRST = (
    "Maren",
    "Tobias",
    "Ines",
    "Rafael",
    "Saoirse",
    "Kenji",
    "Lotte",
    "Dario",
    "Anouk",
    "Mateo",
)
_PROSPECT_LAST = ("Lindqvist", "Okafor", "Brandt", "Moreau", "Castellano", "Haddad", "Novak", "Varga")
_PROSPECT_CO = (
    ("Brightwell Foods", "brightwellfoods.com"),
    ("Kestrel Maritime", "kestrelmaritime.com"),
    ("Alder & Finch", "alderfinch.co"),
    ("Northgate Clinics", "northgateclinics.com"),
    ("Vantor Energy", "vantorenergy.com"),
    ("Pelican Logistics", "pelicanlogistics.io"),
)
_COUNTRIES = ("Germany", "Spain", "France", "Netherlands", "Sweden", "Italy", "Poland", "Ireland")


def _booking(
    b: Builder,
    type_name: str,
    status: str,
    start: datetime,
    who: tuple[str, str],
    answers: list[tuple[str, str]],
    reason: str | None = None,
) -> dict[str, Any]:
    bk = b.svc("booking")
    et = next(t for t in bk.types.all() if t["name"] == type_name)
    ev = bk.events.create(
        {
            "name": et["name"],
            "event_type": et["id"],
            "status": status,
            "start_time": format_time(start),
            "end_time": format_time(start + timedelta(minutes=et["duration"])),
            "location": "Google Meet",
            "cancel_reason": reason,
        }
    )
    bk.invitees.create(
        {
            "event": ev["id"],
            "name": who[0],
            "email": who[1],
            "status": status,
            "questions_and_answers": [{"question": q, "answer": a} for q, a in answers],
        }
    )
    return ev


@family("sales.booked_lead_to_deal", "sales", ("booking", "sheets", "crm"))
def booked_lead_to_deal(b: Builder) -> None:
    """A new prospect booked an intro call: create the HubSpot contact and deal for the territory rep, log the lead."""
    first, c_first = b.pick(_PROSPECT_FIRST, 2)
    last, c_last = b.pick(_PROSPECT_LAST, 2)
    co, dom = b.pick(_PROSPECT_CO)
    crm = b.svc("crm")
    if crm.objects.find(lambda r: r["object_type"] == "companies" and r["properties"].get("name") == co):
        raise PlantError("prospect company already in the CRM")
    name, email = f"{first} {last}", f"{first.lower()}.{last.lower()}@{dom}"
    colleague = (f"{c_first} {c_last}", f"{c_first.lower()}.{c_last.lower()}@{dom}")
    country, other_country = b.pick(_COUNTRIES, 2)
    prod = b.pick(b.company.products)
    rep, old_rep, rep2, rep3 = (_staff(b, "Sales") for _ in range(4))
    # someone of the same name at an existing customer: not the prospect
    twin_cust = b.customer(where=in_crm(b))
    twin = _crm_obj(
        b,
        "contacts",
        {
            "firstname": first,
            "lastname": last,
            "email": f"{first.lower()}.{last.lower()}@{twin_cust.domain}"
            if getattr(twin_cust, "domain", "")
            else f"{first.lower()}{last.lower()[:1]}@example.org",
            "company": twin_cust.name,
            "lifecyclestage": "customer",
        },
        200,
    )
    t0 = _next_business_day(b.now).replace(hour=b.rng.choice((10, 11, 14)), minute=0, second=0, microsecond=0)
    qa = [
        ("Company", co),
        ("Which country are you based in?", country),
        ("What would you like to discuss?", f"Evaluating {prod.name}"),
    ]
    _booking(b, "Intro call", "active", t0, (name, email), qa)
    _booking(
        b,
        "Intro call",
        "canceled",
        t0 + timedelta(days=2),
        colleague,
        [
            ("Company", co),
            ("Which country are you based in?", other_country),
            ("What would you like to discuss?", f"Evaluating {prod.name}"),
        ],
        "Colleague is taking the call instead",
    )
    table = [["Country", "Rep", "Rep email", "HubSpot owner ID", "Status"]]
    for ctry in _COUNTRIES:
        if ctry == country:
            table.append([ctry, rep.name, rep.email, _owner_id(rep.id), "Active"])
        else:
            p = rep2 if ctry == other_country else rep3
            table.append([ctry, p.name, p.email, _owner_id(p.id), "Active"])
    table.append([country, old_rep.name, old_rep.email, _owner_id(old_rep.id), "Until last quarter"])
    terr = _sheet(b, "Sales territories", "Territories", table, 30)
    _sheet(
        b,
        "Inbound lead log",
        "Leads",
        [
            ["Date", "Lead", "Company", "Country", "Owner"],
            [ago(b, days=3)[:10], "Previous lead", "Other Co", other_country, rep2.name],
        ],
        3,
    )
    partner = _sheet(
        b,
        "Partner referrals log",
        "Referrals",
        [["Date", "Lead", "Company", "Partner"], [ago(b, days=1)[:10], colleague[0], co, "Reseller"]],
        1,
    )
    b.begin()

    evs = b.call("booking__calendly_list_events", {"status": "active", "count": 100})
    found = None
    for e in rows(evs):
        if e["name"] != "Intro call" or e["start_time"] < b.iso(b.now):
            continue
        inv = rows(b.call("booking__calendly_list_event_invitees", {"event_uuid": e["uuid"]}))
        hit = next((i for i in inv if i["name"] == name), None)
        if hit:
            found = hit
            break
    assert found is not None and found["email"] == email
    answers = {q["question"]: q["answer"] for q in found.get("questions_and_answers") or []}
    where = answers["Which country are you based in?"]
    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    tid = next(s["id"] for s in rows(books) if s["title"] == "Sales territories")
    lid = next(s["id"] for s in rows(books) if s["title"] == "Inbound lead log")
    got = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": tid})
    b.decide()
    row = next(r for r in _sheet_rows(got) if r and r[0] == where and r[4] == "Active")
    oid = str(row[3])
    assert oid == _owner_id(rep.id)
    ct = b.call(
        "crm__hubspot_create_contact",
        {
            "properties": {
                "firstname": first,
                "lastname": last,
                "email": found["email"],
                "company": co,
                "lifecyclestage": "lead",
                "hubspot_owner_id": oid,
            }
        },
    )
    deal = b.call(
        "crm__hubspot_create_deal",
        {
            "properties": {
                "dealname": f"{co} - {prod.name}",
                "dealstage": "appointmentscheduled",
                "pipeline": "default",
                "hubspot_owner_id": oid,
            }
        },
    )
    b.call(
        "crm__hubspot_create_association",
        {
            "from_object_type": "deals",
            "from_object_id": deal["id"],
            "to_object_type": "contacts",
            "to_object_id": ct["id"],
        },
    )
    today = b.iso(b.now)[:10]
    b.call(
        "sheets__google_sheets_append_rows",
        {"spreadsheet_id": lid, "rows": [[today, name, co, where, row[1]]]},
    )

    b.expect_record(
        "crm",
        "objects",
        {"object_type": "contacts", "properties.email": email, "properties.hubspot_owner_id": oid},
        f"{name} is a HubSpot contact owned by {rep.name}",
    )
    b.expect_record(
        "crm",
        "objects",
        {
            "object_type": "deals",
            "properties.dealname": {"contains": co},
            "properties.hubspot_owner_id": oid,
        },
        f"an open deal for {co} owned by {rep.name}",
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "deals", "to_object_type": "contacts"},
        "the deal is linked to the new contact",
    )
    b.expect_record(
        "sheets",
        "spreadsheets",
        {"id": lid, "sheets.cells.B3": {"contains": name}, "sheets.cells.E3": {"contains": rep.name}},
        f"the lead log has a row for {name} with {rep.name} as owner",
    )
    b.keep("crm", "objects", twin["id"], f"the existing {name} at {twin_cust.name} is another person")
    b.not_written("crm", colleague[1], "the colleague cancelled their booking", tables=["objects"])
    b.keep("sheets", "spreadsheets", terr["id"], "the territory sheet is only read")
    b.keep(
        "sheets",
        "spreadsheets",
        partner["id"],
        "the partner referrals log is for partner leads, not this one",
    )
    b.trap("near_duplicate", "the newer partner referrals log", swap={lid: partner["id"]})
    b.trap(
        "stale",
        "the territory's former rep, listed last",
        swap={oid: _owner_id(old_rep.id), rep.name: old_rep.name},
    )
    b.trap(
        "near_duplicate", "a colleague's cancelled booking from the same company", swap={email: colleague[1]}
    )
    b.trap("near_duplicate", "an existing contact of the same name at a customer")
    b.fact(email, rep.name, oid, country)
    b.write(
        frame(
            b.rng,
            b.say(
                f"get {name} from {co}, who just booked an intro call in Calendly, into HubSpot with a deal for their territory's rep",
                f"{name} ({co}) booked an intro call with us: set them up in HubSpot as a lead with a deal, owned by the right territory rep",
            ),
            context=b.say(
                "Territory goes by the country they gave in the booking form; use the current rep in the Sales territories sheet. "
                "Deal name is '<company> - <product they asked about>', and add the lead to the Inbound lead log (date, lead, company, country, rep)",
                "Ownership follows the active rep for their country (Sales territories sheet). Name the deal '<company> - <product>' "
                "from their booking answers and log them in the Inbound lead log with date, name, company, country and rep",
            ),
        ),
        hint="Find the upcoming Calendly intro call whose invitee is the prospect, read their email, country and product from the "
        "booking answers, look up the active rep for that country in 'Sales territories', create the contact and the deal with "
        "that hubspot_owner_id, associate them, and append a row to 'Inbound lead log'.",
        subtasks=[
            "Find the prospect's upcoming intro call and booking answers in Calendly",
            "Look up the country's active rep in the Sales territories sheet",
            "Create the HubSpot contact owned by that rep",
            "Create the deal owned by the rep and link it to the contact",
            "Append the lead to the Inbound lead log",
        ],
    )


def _month_end(d: datetime) -> datetime:
    nxt = (d.replace(day=28) + timedelta(days=4)).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return nxt - timedelta(seconds=1)


@family("sales.renewals_to_cover_rep", "sales", ("crm", "sheets", "email"))
def renewals_to_cover_rep(b: Builder) -> None:
    """Renewals closing this month whose owner is on leave get a follow-up task for the covering rep, who is told by email."""
    away, cover, back, back_cover, later, later_cover = (_staff(b, "Sales") for _ in range(6))
    end = _month_end(b.now)
    left = (end - b.now).total_seconds() / 86400
    if left < 1.5:
        raise PlantError("too late in the month for renewals still to close")
    custs = [b.customer(where=in_crm(b)) for _ in range(6)]
    prods = [b.pick(b.company.products) for _ in custs]

    def renewal(i: int, owner: Any, stage: str, close_in: float, days_ago: float) -> dict[str, Any]:
        c = custs[i]
        d = _deal(
            b,
            crm_company(b, c.name),
            None,
            f"{c.name} renewal - {prods[i].name}",
            prods[i].price * b.rng.randrange(5, 40),
            stage,
            close_in,
            _owner_id(owner.id),
            days_ago,
            "Annual renewal",
        )
        b.svc("crm").objects.update(
            d["id"], {"properties": {**d["properties"], "dealtype": "existingbusiness"}}
        )
        return d

    n_target = b.rng.choice((2, 3))
    targets = [
        renewal(
            i,
            away,
            b.pick(["contractsent", "decisionmakerboughtin", "qualifiedtobuy"]),
            b.rng.uniform(0.3, left - 0.2),
            40 + 9 * i,
        )
        for i in range(n_target)
    ]
    won = renewal(3, away, "closedwon", b.rng.uniform(0.3, left - 0.2), 1)
    next_month = renewal(4, away, "contractsent", left + b.rng.uniform(3, 20), 2)
    backs = renewal(5, back, "contractsent", b.rng.uniform(0.3, left - 0.2), 25)

    def d(x: float) -> str:
        return (b.now + timedelta(days=x)).date().isoformat()

    table = [
        [
            "Rep",
            "HubSpot owner ID",
            "Leave from",
            "Leave until",
            "Covering rep",
            "Cover email",
            "Cover owner ID",
        ],
        [
            back.name,
            _owner_id(back.id),
            d(-40),
            d(-12),
            back_cover.name,
            back_cover.email,
            _owner_id(back_cover.id),
        ],
        [
            away.name,
            _owner_id(away.id),
            d(-3),
            d(b.rng.randrange(10, 25)),
            cover.name,
            cover.email,
            _owner_id(cover.id),
        ],
        [
            later.name,
            _owner_id(later.id),
            d(left + 5),
            d(left + 15),
            later_cover.name,
            later_cover.email,
            _owner_id(later_cover.id),
        ],
    ]
    for k in range(3):
        p, q = b.pick([e for e in b.company.employees if e.id not in (away.id, cover.id, b.me.id)], 2)
        start = -120 + 30 * k
        table.insert(1, [p.name, _owner_id(p.id), d(start), d(start + 9), q.name, q.email, _owner_id(q.id)])
    leave = _sheet(b, "Sales leave & cover", "Leave", table, 6)
    b.begin()

    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "deals",
            "property_name": "dealtype",
            "operator": "EQ",
            "value": "existingbusiness",
            "properties": ["dealname", "dealstage", "closedate", "hubspot_owner_id", "amount"],
            "limit": 200,
        },
    )
    today, last = b.iso(b.now)[:10], b.iso(end)[:10]
    b.decide()
    due = [
        x
        for x in rows(found)
        if today <= (x["properties"].get("closedate") or "")[:10] <= last
        and x["properties"].get("dealstage") not in ("closedwon", "closedlost")
    ]
    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    sid = next(s["id"] for s in rows(books) if s["title"] == "Sales leave & cover")
    got = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    b.decide()
    on_leave = {str(r[1]): r for r in _sheet_rows(got)[1:] if r[2] <= today <= r[3]}
    assert list(on_leave) == [_owner_id(away.id)]
    mine = [x for x in due if x["properties"].get("hubspot_owner_id") in on_leave]
    assert {x["id"] for x in targets} <= {x["id"] for x in mine}
    row = on_leave[_owner_id(away.id)]
    names = []
    for x in mine:
        nm = x["properties"]["dealname"]
        names.append(nm)
        b.call(
            "crm__hubspot_create_task",
            {
                "properties": {
                    "hs_timestamp": b.iso(b.days(1)),
                    "hs_task_subject": f"Renewal follow-up: {nm}",
                    "hs_task_body": f"Covering for {row[0]} while on leave.",
                    "hubspot_owner_id": str(row[6]),
                    "hs_task_type": "TODO",
                }
            },
        )
    b.call(
        "email__gmail_send_email",
        {
            "to": [row[5]],
            "subject": "Renewals to cover this month",
            "body": f"Hi {row[4].split()[0]}, while {row[0]} is on leave please follow up these renewals closing this month "
            f"(tasks are in HubSpot): " + "; ".join(names) + ".",
        },
    )

    for x in mine:
        nm = x["properties"]["dealname"]
        b.expect_record(
            "crm",
            "objects",
            {
                "object_type": "tasks",
                "properties.hs_task_subject": {"contains": nm},
                "properties.hubspot_owner_id": _owner_id(cover.id),
            },
            f"a follow-up task on {nm} is assigned to {cover.name}",
        )
    b.expect_message("email", cover, contains=names)
    for t in (won, next_month, backs):
        b.keep("crm", "objects", t["id"], "a renewal outside the rule stays untouched")
        b.not_written(
            "crm",
            t["properties"]["dealname"],
            "no follow-up task for a renewal outside the rule",
            tables=["objects"],
        )
    b.no_message("email", back_cover, f"{back.name} is back from leave; their old cover has nothing to do")
    b.no_message("email", later_cover, f"{later.name}'s leave has not started")
    b.keep("sheets", "spreadsheets", leave["id"], "the leave sheet is only read")
    b.trap(
        "closed",
        "a renewal of the same rep already closed won (the newest)",
        swap={targets[0]["properties"]["dealname"]: won["properties"]["dealname"]},
    )
    b.trap(
        "stale",
        "a renewal of the same rep closing next month",
        swap={targets[0]["properties"]["dealname"]: next_month["properties"]["dealname"]},
    )
    b.trap(
        "stale",
        "a rep whose leave already ended, with a cover listed",
        swap={cover.email: back_cover.email, _owner_id(cover.id): _owner_id(back_cover.id)},
    )
    b.trap(
        "policy_exception",
        "a rep whose leave starts next month",
        swap={cover.email: later_cover.email, _owner_id(cover.id): _owner_id(later_cover.id)},
    )
    b.fact(cover.name, cover.email, *names)
    b.write(
        frame(
            b.rng,
            b.say(
                "make sure the renewals closing this month don't stall while their owner is on leave",
                "hand this month's renewals of anyone currently on leave to their covering rep",
            ),
            context=b.say(
                "Rule: an open renewal closing by the end of this month whose owner is on leave today (Sales leave & cover sheet) "
                "gets a HubSpot follow-up task for the covering rep, subject 'Renewal follow-up: <deal name>'. Then send the cover one email listing the deals",
                "For each open renewal deal due this month owned by someone out today per the leave sheet, create a task for their "
                "cover titled 'Renewal follow-up: <deal name>', and email the cover the list",
            ),
        ),
        hint="Search renewal deals (dealtype existingbusiness), keep the open ones closing between today and month end, read "
        "'Sales leave & cover' for reps whose leave covers today, create a task per deal owned by the cover's owner id, and email the cover.",
        subtasks=[
            "List the renewal deals in HubSpot",
            "Keep the open ones closing this month",
            "Find who is on leave today and their cover in the leave sheet",
            "Create a follow-up task per deal for the covering rep",
            "Email the covering rep the list of deals",
        ],
    )


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


@family("sales.reply_to_sql_call", "sales", ("email", "crm", "calendar"))
def reply_to_sql_call(b: Builder) -> None:
    """A lead said yes to my follow-up: make them an SQL in HubSpot, book the call they proposed, log it on the contact."""
    cust, cust2 = b.customer(where=in_crm(b)), b.customer(where=in_crm(b))
    yes, no = b.contact_of(cust), b.contact_of(cust2)
    prod = b.pick(b.company.products)
    subject = f"Following up on {prod.name}"
    c_yes, c_no = _crm_contact(b, yes.email), _crm_contact(b, no.email)
    for c in (c_yes, c_no):
        b.svc("crm").objects.update(c["id"], {"properties": {**c["properties"], "lifecyclestage": "lead"}})
    twin = _crm_obj(
        b,
        "contacts",
        {
            "firstname": yes.first,
            "lastname": yes.last,
            "email": f"{yes.first.lower()}.{yes.last.lower()}@gmail.com",
            "lifecyclestage": "subscriber",
        },
        150,
    )
    day = b.now + timedelta(days=b.rng.randrange(2, 5))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    hour = b.rng.choice((10, 11, 14, 15, 16))
    start = day.replace(hour=hour, minute=0, second=0, microsecond=0)
    wd = _DAYS[start.weekday()]
    me = b.me.email
    sent = b.now - timedelta(days=3, hours=2)
    t1 = _mail(
        b,
        me,
        yes.email,
        subject,
        f"Hi {yes.first}, checking in on {prod.name}: any interest in a call?",
        sent,
        labels=("SENT",),
    )
    _mail(
        b,
        me,
        no.email,
        subject,
        f"Hi {no.first}, checking in on {prod.name}: any interest in a call?",
        sent,
        labels=("SENT",),
    )
    _mail(
        b,
        yes.email,
        me,
        "Re: " + subject,
        f"Hi {b.me.first},\n\nYes, we'd like to move forward and talk pricing for {cust.name}. "
        f"Does {wd} at {hour:02d}:00 UTC work for a 30-minute call?\n\nBest,\n{yes.first}",
        b.now - timedelta(days=1, hours=5),
        thread=t1["threadId"],
    )
    _mail(
        b,
        no.email,
        me,
        "Re: " + subject,
        f"Hi {b.me.first},\n\nThanks for following up on the {prod.name} email. Not a yes from us yet: we are not ready "
        f"to be qualified or to have a 30-minute call booked in your calendar this quarter. Please note it and keep our stage "
        f"as is; could we revisit the time on {wd} next month?\n\n{no.first}",
        b.now - timedelta(hours=3),
    )
    b.begin()

    found = b.call("email__gmail_search_emails", {"query": f'subject:"{subject}"', "maxResults": 20})
    msgs = [m for m in rows(found) if m["from"] != b.me.email]
    b.decide()
    reads = {}
    for m in msgs:
        reads[m["id"]] = b.call("email__gmail_read_email", {"messageId": m["id"]})
    pick = next(m for m in msgs if "Yes, we'd like to move forward" in str(reads[m["id"]]))
    sender = pick["from"]
    assert sender == yes.email
    hit = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "contacts",
            "property_name": "email",
            "operator": "EQ",
            "value": sender,
            "properties": ["email", "firstname", "lastname", "lifecyclestage"],
        },
    )
    cid = rows(hit)[0]["id"]
    assert cid == c_yes["id"]
    b.call(
        "crm__hubspot_update_contact_by_id",
        {"contact_id": cid, "updates": {"lifecyclestage": "salesqualifiedlead"}},
    )
    b.composed(format_time(start), format_time(start + timedelta(minutes=30)))
    b.call(
        "calendar__google_calendar_create_event",
        {
            "summary": f"{cust.name} pricing call",
            "start_datetime": format_time(start),
            "end_datetime": format_time(start + timedelta(minutes=30)),
            "attendees": [sender],
        },
    )
    b.call(
        "crm__hubspot_create_note",
        {
            "note_body": f"Replied yes to the {prod.name} follow-up; pricing call booked for {format_time(start)}.",
            "contact_ids": [cid],
        },
    )

    b.expect_change(
        "crm",
        "objects",
        cid,
        "properties.lifecyclestage",
        "salesqualifiedlead",
        f"{yes.name} is a sales qualified lead",
    )
    b.goal(
        f"a 30-minute call with {yes.name} at {format_time(start)}",
        {
            "predicate": "event_scheduled",
            "service": "calendar",
            "attendees": [yes.email],
            "names": [yes.name],
            "start": format_time(start),
            "duration_minutes": 30,
            "exclusive": True,
        },
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "notes", "to_object_type": "contacts", "to_object_id": cid},
        f"a note on {yes.name}'s contact logs the reply and the call",
    )
    b.keep("crm", "objects", c_no["id"], f"{no.name} declined and stays a lead")
    b.keep("crm", "objects", twin["id"], f"the personal-address {yes.name} record is not the one who replied")
    b.trap(
        "near_duplicate",
        "a newer reply to the same follow-up that declines",
        swap={sender: no.email, cid: c_no["id"]},
    )
    b.trap("near_duplicate", "a second HubSpot contact with the same name", swap={cid: twin["id"]})
    b.fact(yes.name, yes.email, cid, format_time(start))
    b.write(
        frame(
            b.rng,
            b.say(
                f'deal with the replies to my "{subject}" email: whoever said yes gets qualified and a call booked',
                f'someone answered my "{subject}" follow-up with a yes; qualify them and set up the call',
            ),
            context=b.say(
                "A yes means: lifecycle stage 'salesqualifiedlead' in HubSpot, a 30-minute call in my calendar at the time they "
                "proposed with them invited, then a note on their contact saying when it's booked. Anyone not ready stays as is",
                "Only someone who actually agreed counts. Make them an SQL in HubSpot, put the 30-minute call they asked for in my "
                "calendar with them, and log a note on the contact with the booked time",
            ),
        ),
        hint="Search the inbox for replies to the follow-up, read them, take the one who agreed and the slot they proposed, find their "
        "HubSpot contact by email, set lifecyclestage to salesqualifiedlead, create the calendar event and add a note on the contact.",
        subtasks=[
            "Find and read the replies to the follow-up",
            "Pick the reply that agrees and the proposed time",
            "Set that contact's lifecycle stage to salesqualifiedlead",
            "Book the 30-minute call with them",
            "Log a note on the contact with the booked time",
        ],
    )


# ---- the GUI's account notes decide who signs a renewal ----------------------------------------
RENEWAL_COLLEAGUES = (  # people at the customer who do not sign renewals
    ("Dana", "Whitfield", "Accounts payable"),
    ("Marco", "Bellini", "IT administrator"),
    ("Yuki", "Tanabe", "Office manager"),
    ("Priyanka", "Rao", "Procurement analyst"),
)


@family("sales.renewal_decision_maker", "sales", ("crm", "browser", "email"))
def renewal_decision_maker(b: Builder) -> None:
    """The web app's account notes say who signs the renewal now; log it on the deal and email them."""
    from compoworld.interfaces.web import slug
    from compoworld.tasks.families._common import crm_objects, in_crm, rows

    def contacts_of(name: str) -> list[dict]:
        return [o for o in crm_objects(b, "contacts") if (o.get("properties") or {}).get("company") == name]

    cust = b.customer(where=lambda c: in_crm(b)(c) and len(contacts_of(c.name)) >= 2)
    old, new = sorted(contacts_of(cust.name), key=lambda o: o["id"])[:2]
    if (old["properties"]["firstname"], old["properties"]["lastname"]) == (
        new["properties"]["firstname"],
        new["properties"]["lastname"],
    ):
        raise PlantError("two contacts share a name")
    if b.rng.random() < 0.5:
        old, new = new, old
    po, pn = old["properties"], new["properties"]
    # colleagues added to HubSpot since (listed first, the newest): the first contact listed is
    # never the one who signs, and neither is the one touched last (the former signer)
    domain = str(pn.get("email", "x@example.com")).split("@")[-1]
    taken = {
        (o["properties"].get("firstname"), o["properties"].get("lastname")) for o in contacts_of(cust.name)
    }
    extra = [(f, la, t) for f, la, t in RENEWAL_COLLEAGUES if (f, la) not in taken]
    for f, la, title in b.rng.sample(extra, 2):
        b.plant(
            "crm__hubspot_create_contact",
            {
                "properties": {
                    "firstname": f,
                    "lastname": la,
                    "email": f"{f.lower()}.{la.lower()}@{domain}",
                    "company": cust.name,
                    "jobtitle": title,
                }
            },
        )
    close = b.days(b.rng.randrange(18, 45)).replace(hour=9, minute=0, second=0, microsecond=0)
    year = b.now.year

    def renewal(name: str, when: datetime, stage: str) -> dict:
        return b.plant(
            "crm__hubspot_create_deal",
            {
                "properties": {
                    "dealname": f"{name} renewal {year}",
                    "amount": f"{b.rng.randrange(8, 90) * 500}.00",
                    "dealstage": stage,
                    "closedate": b.iso(when),
                    "dealtype": "existingbusiness",
                }
            },
        )

    # other accounts renew this year too, and ours is anywhere among them: the top hit of a search
    # for renewals is not the deal to log on
    pool = [c for c in b.company.customers if c.id != cust.id and not c.name.startswith(cust.name)]
    others = b.rng.sample(pool, min(len(pool), b.rng.randrange(2, 5)))
    at = b.rng.randrange(len(others) + 1)
    deal: dict = {}
    for o in [*others[:at], cust, *others[at:]]:
        if o is cust:
            deal = renewal(cust.name, close, "contractsent")
        else:
            when = b.days(b.rng.randrange(10, 60)).replace(hour=9, minute=0, second=0, microsecond=0)
            renewal(o.name, when, b.rng.choice(["appointmentscheduled", "qualifiedtobuy", "contractsent"]))
    last = b.plant(
        "crm__hubspot_create_deal",
        {
            "properties": {
                "dealname": f"{cust.name} renewal {year - 1}",
                "amount": f"{b.rng.randrange(8, 90) * 500}.00",
                "dealstage": "closedwon",
                "closedate": b.iso(close.replace(year=year - 1)),
                "dealtype": "existingbusiness",
            }
        },
    )
    # last year's deal was entered and closed last year: the open one is neither the only nor the
    # oldest deal a lazy agent could pick by its dates
    when = b.iso(b.now.replace(year=year - 1) - timedelta(days=b.rng.randrange(20, 60)))
    b.svc("crm").objects.update(last["id"], {"createdAt": when, "updatedAt": when})
    # HubSpot is stale: it still marks the former signer, and was touched last
    b.plant(
        "crm__hubspot_update_contact_by_id",
        {
            "contact_id": old["id"],
            "updates": {"jobtitle": f"{po.get('jobtitle') or 'Buyer'} (renewal decision maker)"},
        },
    )
    notes = b.svc("browser").facts
    text = (
        f"Renewals: {pn['firstname']} {pn['lastname']} ({pn.get('jobtitle') or 'buyer'}) signs off on renewals from "
        f"this year. {po['firstname']} {po['lastname']} moved to a regional role and asked not to be contacted about it."
    )
    if notes.get(cust.name) is None:
        notes.create({"text": text}, id=cust.name)
    else:
        notes.update(cust.name, {"text": text})
    other = b.customer(exclude=(cust.id,))
    if notes.get(other.name) is None:
        notes.create({"text": f"Renewals: {b.contact_of(other).name} signs off on renewals."}, id=other.name)
    b.begin()

    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "deals",
            "property_name": "dealname",
            "operator": "CONTAINS_TOKEN",
            "value": "renewal",
            "properties": ["dealname", "dealstage", "closedate"],
        },
    )
    open_deal = next(
        d
        for d in rows(found)
        if d["properties"]["dealname"].startswith(cust.name)
        and d["properties"]["dealstage"] not in ("closedwon", "closedlost")
    )
    assert open_deal["id"] == deal["id"]
    b.call("browser__open", {"url": "/"})
    b.call("browser__open", {"url": "/accounts"})
    b.call("browser__open", {"url": f"/accounts/{slug(cust.name)}"})
    b.decide()
    people = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "contacts",
            "property_name": "company",
            "operator": "EQ",
            "value": cust.name,
            "properties": ["firstname", "lastname", "email", "jobtitle"],
        },
    )
    signer = next(
        p
        for p in rows(people)
        if (p["properties"]["firstname"], p["properties"]["lastname"]) == (pn["firstname"], pn["lastname"])
    )
    email = signer["properties"]["email"]
    b.call(
        "crm__hubspot_create_note",
        {
            "note_body": f"Renewal sign-off: {pn['firstname']} {pn['lastname']} (per the account notes).",
            "contact_ids": [signer["id"]],
            "deal_ids": [open_deal["id"]],
        },
    )
    day = open_deal["properties"]["closedate"][:10]
    b.call(
        "email__gmail_send_email",
        {
            "to": [email],
            "subject": f"{cust.name} renewal",
            "body": f"Hi {pn['firstname']}, a quick note that your renewal is due on {day}. Happy to walk you through it.",
        },
    )
    b.goal(
        "a note on the new signer's contact",
        {
            "predicate": "record_exists",
            "service": "crm",
            "table": "associations",
            "new": True,
            "where": {"from_object_type": "notes", "to_object_type": "contacts", "to_object_id": new["id"]},
        },
    )
    b.goal(
        "the note is on this year's renewal deal",
        {
            "predicate": "record_exists",
            "service": "crm",
            "table": "associations",
            "new": True,
            "where": {"from_object_type": "notes", "to_object_type": "deals", "to_object_id": deal["id"]},
        },
    )
    b.expect_message("email", [pn["email"], f"{pn['firstname']} {pn['lastname']}"], contains=[day])
    b.no_message(
        "email", [po["email"], f"{po['firstname']} {po['lastname']}"], "the former signer was not contacted"
    )
    b.guard(
        "no note on the former signer",
        {
            "predicate": "record_absent",
            "service": "crm",
            "table": "associations",
            "new": True,
            "where": {"from_object_type": "notes", "to_object_id": old["id"]},
        },
    )
    b.keep("crm", "objects", last["id"], "last year's closed renewal was left alone")
    b.trap(
        "stale",
        "HubSpot still marks the former signer",
        swap={new["id"]: old["id"], pn["email"]: po["email"]},
    )
    b.trap("closed", "last year's closed-won renewal", swap={deal["id"]: last["id"]})
    b.write(
        frame(
            b.rng,
            f"make sure {cust.name}'s renewal goes to the person who signs it: note it on this year's renewal "
            "deal and their contact in HubSpot, and email them the renewal date",
            context=b.say(
                "The account team keeps its notes in our web app, under Accounts",
                "Our account notes live in the web app (Accounts)",
            ),
        ),
        hint="Find the open renewal deal in HubSpot, read the customer's account notes in the web app, then note and email the signer.",
        subtasks=[
            f"Find {cust.name}'s open renewal deal and its close date in HubSpot",
            "Read the account notes in the web app (Accounts) to see who signs",
            "Add a note on the signer's contact and the deal",
            "Email the signer the renewal date",
        ],
    )
