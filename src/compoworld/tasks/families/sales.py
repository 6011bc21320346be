"""Sales workflows: deals worked in HubSpot against the team's sheets, bookings and meetings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import ago, ahead, crm_company, in_crm, rows
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


def _crm_contact(b: Builder, email: str) -> dict[str, Any]:
    for r in b.svc("crm").objects.find(object_type="contacts"):
        if (r["properties"].get("email") or "").lower() == email.lower():
            return r
    raise PlantError(f"no CRM contact {email}")


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


def _sheet(b: Builder, title: str, tab: str, table: list[list[Any]], days_ago: float = 5) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for r, row in enumerate(table, start=1):
        for c, v in enumerate(row):
            cells[f"{chr(65 + c)}{r}"] = v
    return b.svc("sheets").books.create(
        {
            "title": title,
            "sheets": [{"sheetId": 0, "title": tab, "cells": cells}],
            "modified": ago(b, days=days_ago),
        }
    )


def _next_business_day(d: datetime) -> datetime:
    d = d + timedelta(days=1)
    while d.weekday() >= 5:
        d += timedelta(days=1)
    return d


def _sheet_rows(data: Any) -> list[list[Any]]:
    """Rows of a get_spreadsheet answer as lists of cell values (column A first)."""
    out: list[list[Any]] = []
    for s in (data or {}).get("sheets", []):
        rs = s.get("rows") or {}
        for _, r in sorted(rs.items(), key=lambda kv: int(kv[0])) if isinstance(rs, dict) else enumerate(rs):
            if isinstance(r, dict):
                width = max((ord(k) - 64 for k in r), default=0)
                out.append([r.get(chr(65 + i), "") for i in range(width)])
            else:
                out.append(list(r))
    return out


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
        "Weekly forecast log FY25 (archived)",
        "Log",
        [["Week of", "Stage", "Open deals"], ["2025-03-03", STAGE_LABEL[old_stage], 5]],
        300,
    )
    _sheet(
        b, "FY26 forecast", "Log", [["Week of", "Stage", "Open deals"], [ago(b, days=7)[:10], label, 2]], 7
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
                "Forecast rule: a deal only counts while its close date is today or later; anything past its close "
                "date is stale. The log takes one row per week: today's date, the stage and the number of "
                "deals counted",
                "Only count deals whose close date hasn't passed yet. The log gets today's date, the "
                "stage and how many deals you counted",
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
