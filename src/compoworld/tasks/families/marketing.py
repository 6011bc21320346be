"""Marketing workflows: audiences and campaigns in Mailchimp worked against meetings, the CRM and bases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import ago, rows
from compoworld.tasks.families._common import bases_row as _bases_row
from compoworld.tasks.families._common import bases_table as _bases_table
from compoworld.tasks.families._common import crm_contact as _crm_contact
from compoworld.tasks.families._common import sheet as _sheet
from compoworld.tasks.families._common import sheet_rows as _sheet_rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

# ---- planting helpers (this module only) -----------------------------------------------------


def _crm_prop(b: Builder, otype: str, name: str, label: str) -> None:
    svc = b.svc("crm")
    if not svc.props.get(f"{otype}.{name}"):
        svc.props.create(
            {
                "object_type": otype,
                "name": name,
                "label": label,
                "description": label,
                "type": "string",
                "custom": True,
            },
            id=f"{otype}.{name}",
        )


def _crm_set(b: Builder, rec: dict[str, Any], **props: str) -> None:
    b.svc("crm").objects.update(rec["id"], {"properties": {**rec["properties"], **props}})


def _audience(b: Builder, name: str, subject: str, days_ago: float = 120) -> dict[str, Any]:
    svc = b.svc("marketing")
    base = svc.audiences.all()[0]
    return svc.audiences.create(
        {
            "name": name,
            "contact": base["contact"],
            "permission_reminder": "You attended one of our events.",
            "from_name": base["from_name"],
            "from_email": base["from_email"],
            "subject": subject,
            "date_created": ago(b, days=days_ago),
        }
    )


def _member(
    b: Builder, list_id: str, p: Any, status: str, tags: list[str], days_ago: float = 60
) -> dict[str, Any]:
    cust = b.company.customer(p.company_id) if getattr(p, "company_id", None) else None
    return b.svc("marketing")._add_member(
        list_id,
        p.email,
        status,
        {"FNAME": p.first, "LNAME": p.last, "COMPANY": cust.name if cust else ""},
        tags,
        ago(b, days=days_ago),
    )


def _past_meet(
    b: Builder, summary: str, days_ago: float, invited: list[Any], joined: list[Any], minutes: int = 45
) -> dict[str, Any]:
    svc = b.svc("meet")
    start = (b.now - timedelta(days=days_ago)).replace(minute=0, second=0, microsecond=0)
    space = svc._new_space(format_time(start - timedelta(days=3)))
    m = svc.meetings.create(
        {
            "summary": summary,
            "description": "",
            "start": format_time(start),
            "end": format_time(start + timedelta(minutes=minutes)),
            "attendees": [{"email": p.email, "responseStatus": "accepted"} for p in invited],
            "organizer": b.me.email,
            "hangoutLink": space["meetingUri"],
            "space_id": space["id"],
        }
    )
    svc.spaces.update(
        space["id"],
        {
            "participants": [
                {"email": p.email, "displayName": p.name, "joined": format_time(start)} for p in joined
            ]
        },
    )
    return m


# ---- families ----------------------------------------------------------------------------------
@family("marketing.webinar_followup_audience", "marketing", ("meet", "marketing", "crm"))
def webinar_followup_audience(b: Builder) -> None:
    """Add the people who actually joined yesterday's webinar to the follow-up audience, minus opt-outs and DNC."""
    prod = b.pick(b.company.products)
    title = f"Webinar: {prod.name} in practice"
    people = [b.person(external=True) for _ in range(6)]
    good, dnc, unsub, noshow = people[:3], people[3], people[4], people[5]
    _crm_prop(b, "contacts", "do_not_contact", "Do not contact")
    _crm_set(b, _crm_contact(b, dnc.email), do_not_contact="true")
    for p in good:
        _crm_set(b, _crm_contact(b, p.email), do_not_contact="false")
    prev_people = [b.person(external=True) for _ in range(2)]
    prev = _past_meet(b, title, 35, prev_people, prev_people)
    series = b.pick(["Spring series 2026", "Practitioner sessions", "Customer academy Q1"])
    web = _past_meet(b, title, 1, people, [*good, dnc, unsub])
    b.svc("meet").meetings.update(
        web["id"], {"description": f"Follow-ups for this session go to the Mailchimp audience '{series}'."}
    )
    generic = _audience(b, "Webinar follow-up (2025)", "Thanks for joining", days_ago=400)
    aud = _audience(b, series, "Thanks for joining us", days_ago=20)
    gone = _member(b, aud["id"], unsub, "unsubscribed", ["webinar"])
    b.begin()

    past = b.call("meet__google_meet_list_past_meetings", {"max_results": 20})
    b.decide()
    mid = next(
        m["id"] for m in sorted(rows(past), key=lambda m: m["start"], reverse=True) if m["summary"] == title
    )
    assert mid == web["id"]
    det = b.call("meet__google_meet_get_meeting_details", {"event_id": mid})
    named = det["description"].split("'")[1]
    att = b.call("meet__google_meet_get_past_meeting_attendees", {"event_id": mid})
    joined = [a["email"] for a in rows(att) if a["joined"]]
    auds = b.call("marketing__mailchimp_get_all_audiences", {"count": 50})
    lid = next(a["id"] for a in rows(auds) if a["name"] == named)
    mem = b.call("marketing__mailchimp_get_audience_members", {"list_id": lid, "count": 500})
    on_list = {m["email_address"].lower() for m in rows(mem)}
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "contacts",
            "property_name": "email",
            "operator": "IN",
            "value": ",".join(joined),
            "properties": ["email", "firstname", "lastname", "do_not_contact"],
            "limit": 50,
        },
    )
    b.decide()
    blocked = {
        c["properties"]["email"].lower()
        for c in rows(found)
        if (c["properties"].get("do_not_contact") or "") == "true"
    }
    add = [e for e in joined if e.lower() not in blocked and e.lower() not in on_list]
    assert sorted(add) == sorted(p.email for p in good)
    for e in add:
        b.call(
            "marketing__mailchimp_add_member_to_audience",
            {"list_id": lid, "email_address": e, "tags": ["webinar"]},
        )

    for p in good:
        b.expect_record(
            "marketing",
            "members",
            {"list_id": lid, "email_address": p.email, "status": "subscribed"},
            f"{p.name}, who joined, is subscribed to the follow-up audience",
        )
    b.not_written(
        "marketing",
        dnc.email,
        f"{dnc.name} is do-not-contact in HubSpot and stays off the list",
        tables=["members"],
    )
    b.not_written("marketing", noshow.email, f"{noshow.name} never joined the webinar", tables=["members"])
    b.keep("marketing", "members", gone["id"], f"{unsub.name} unsubscribed and is not resubscribed")
    b.not_written(
        "marketing",
        prev_people[0].email,
        "last month's session is not the one asked about",
        tables=["members"],
    )
    b.trap(
        "do_not_contact",
        "a joined attendee flagged do-not-contact in HubSpot",
        swap={good[0].email: dnc.email},
    )
    b.trap("stale", "an invitee who never joined", swap={good[0].email: noshow.email})
    b.trap("policy_exception", "an attendee who already unsubscribed from the audience")
    b.trap(
        "near_duplicate",
        "last month's session of the same webinar",
        swap={mid: prev["id"], good[0].email: prev_people[0].email},
    )
    b.trap("near_duplicate", "last year's generic webinar follow-up audience", swap={lid: generic["id"]})
    b.fact(*[p.email for p in good], series)
    b.write(
        frame(
            b.rng,
            b.say(
                f'get the people who attended yesterday\'s "{title}" session onto the Mailchimp audience its invite names',
                f'put yesterday\'s "{title}" attendees on the follow-up list named in the Meet invite',
            ),
            context=b.say(
                "Tag them 'webinar'",
                "Tag new members 'webinar'",
            ),
        ),
        hint="Find yesterday's session in past Meet meetings, read the audience its description names, take the attendees who joined, drop those already on the "
        "audience and those with do_not_contact=true in HubSpot, then add the rest with the 'webinar' tag.",
        subtasks=[
            "Find yesterday's webinar among past Meet meetings",
            "List the attendees who actually joined",
            "Read the follow-up audience from the meeting's description",
            "Check who is already on that audience",
            "Check the do-not-contact flag of the joiners in HubSpot",
            "Add the remaining joiners with the 'webinar' tag",
        ],
    )


_SHOWS = (
    "SaaS Connect Berlin",
    "Data Summit London",
    "CloudExpo Madrid",
    "Retail Tech Paris",
    "DevWorld Amsterdam",
)


def _co(b: Builder, p: Any) -> str:
    return b.company.customer(p.company_id).name if getattr(p, "company_id", None) else ""


@family("marketing.trade_show_segment", "marketing", ("bases", "crm", "marketing"))
def trade_show_segment(b: Builder) -> None:
    """Trade-show leads who opted in (and are not do-not-contact in HubSpot) go on the show's audience; rows are marked synced."""
    show, other = b.pick(_SHOWS, 2)
    year = b.now.year
    people = [b.person(external=True) for _ in range(7)]
    good, noconsent, dnc, elsewhere = people[:3], people[3], people[4], people[5]
    n_good = b.rng.choice((2, 3))
    good = good[:n_good]
    _crm_prop(b, "contacts", "do_not_contact", "Do not contact")
    _crm_set(b, _crm_contact(b, dnc.email), do_not_contact="true")
    for p in good:
        _crm_set(b, _crm_contact(b, p.email), do_not_contact="false")
    t, fid = _bases_table(
        b,
        "Events",
        "Trade show leads",
        "Badge scans from our booths",
        [
            {"name": "Name", "type": "singleLineText"},
            {"name": "Email", "type": "email"},
            {"name": "Company", "type": "singleLineText"},
            {"name": "Event", "type": "singleLineText"},
            {"name": "Marketing consent", "type": "checkbox"},
            {"name": "Synced", "type": "checkbox"},
        ],
    )

    def row(p: Any, ev: str, consent: bool, days_ago: float, synced: bool = False) -> dict[str, Any]:
        return _bases_row(
            b,
            t,
            fid,
            {
                "Name": p.name,
                "Email": p.email,
                "Company": _co(b, p),
                "Event": ev,
                "Marketing consent": consent,
                "Synced": synced,
            },
            days_ago,
        )

    recs = [row(p, show, True, 4 + 0.1 * i) for i, p in enumerate(good)]
    r_nc = row(noconsent, show, False, 4.05)
    r_dnc = row(dnc, show, True, 3.9)
    r_old = row(people[6], show, True, 370, synced=True)
    r_else = row(elsewhere, other, True, 0.5)
    _audience(b, f"{show} {year} follow-up", "Great to meet you", days_ago=20)
    old_aud = _audience(b, f"{show} {year - 1} follow-up", "Great to meet you", days_ago=380)
    new_aud = _audience(b, f"{other} {year} follow-up", "Great to meet you", days_ago=2)
    b.begin()

    bases = rows(b.call("bases__airtable_list_bases_info", {}))
    base_id = next(x["id"] for x in bases if x["name"] == "Events")
    tables = rows(b.call("bases__airtable_list_tables_info", {"base_id": base_id}))
    tid = next(x["id"] for x in tables if x["name"] == "Trade show leads")
    got = rows(b.call("bases__airtable_list_records", {"base_id": base_id, "table_id": tid}))
    b.decide()
    cand = [
        r
        for r in got
        if r["fields"].get("Event") == show
        and r["fields"].get("Marketing consent")
        and not r["fields"].get("Synced")
    ]
    emails = [r["fields"]["Email"] for r in cand]
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "contacts",
            "property_name": "email",
            "operator": "IN",
            "value": ",".join(emails),
            "properties": ["email", "do_not_contact"],
            "limit": 50,
        },
    )
    b.decide()
    blocked = {
        c["properties"]["email"].lower()
        for c in rows(found)
        if (c["properties"].get("do_not_contact") or "") == "true"
    }
    ok = [r for r in cand if r["fields"]["Email"].lower() not in blocked]
    assert sorted(r["id"] for r in ok) == sorted(r["id"] for r in recs)
    auds = b.call("marketing__mailchimp_get_all_audiences", {"count": 50})
    lid = next(a["id"] for a in rows(auds) if a["name"] == f"{show} {year} follow-up")
    slug = show.lower().replace(" ", "-")
    for r in ok:
        b.call(
            "marketing__mailchimp_add_member_to_audience",
            {"list_id": lid, "email_address": r["fields"]["Email"], "status": "subscribed", "tags": [slug]},
        )
    b.call(
        "bases__airtable_update_records",
        {
            "base_id": base_id,
            "table_id": tid,
            "records": [{"id": r["id"], "fields": {"Synced": True}} for r in ok],
        },
    )

    for p, r in zip(good, recs, strict=True):
        b.expect_record(
            "marketing",
            "members",
            {"list_id": lid, "email_address": p.email, "status": "subscribed"},
            f"{p.name} is subscribed to the {show} {year} follow-up audience",
        )
        b.expect_change(
            "bases",
            "records",
            r["id"],
            "fields." + fid["Synced"],
            True,
            f"{p.name}'s lead row is marked synced",
        )
    b.not_written(
        "marketing", noconsent.email, f"{noconsent.name} gave no marketing consent", tables=["members"]
    )
    b.not_written("marketing", dnc.email, f"{dnc.name} is do-not-contact in HubSpot", tables=["members"])
    b.not_written("marketing", elsewhere.email, f"{elsewhere.name} met us at {other}", tables=["members"])
    b.not_written("marketing", people[6].email, "last year's lead was synced already", tables=["members"])
    for r in (r_nc, r_dnc, r_old, r_else):
        b.keep("bases", "records", r["id"], "a lead row outside the rule stays as it was")
    b.keep("marketing", "audiences", old_aud["id"], "last year's audience is untouched")
    b.keep("marketing", "audiences", new_aud["id"], "the other show's audience is untouched")
    b.trap(
        "do_not_contact",
        "a consenting lead flagged do-not-contact in HubSpot",
        swap={good[0].email: dnc.email, recs[0]["id"]: r_dnc["id"]},
    )
    b.trap(
        "policy_exception",
        "a lead from the same show without marketing consent",
        swap={good[0].email: noconsent.email, recs[0]["id"]: r_nc["id"]},
    )
    b.trap(
        "near_duplicate",
        "the newest lead, from another show",
        swap={good[0].email: elsewhere.email, recs[0]["id"]: r_else["id"]},
    )
    b.trap("stale", "last year's audience of the same show", swap={lid: old_aud["id"]})
    b.trap("near_duplicate", "the newest audience, for another show", swap={lid: new_aud["id"]})
    b.fact(*[p.email for p in good])
    b.write(
        frame(
            b.rng,
            b.say(
                f"push the {show} booth leads into the Mailchimp audience '{show} {year} follow-up'",
                f"sync our {show} leads from Airtable to the '{show} {year} follow-up' audience in Mailchimp",
            ),
            context=b.say(
                f"Tag them '{slug}' and tick Synced on each row you add",
                f"Tag new members '{slug}' and mark their Airtable rows as Synced",
            ),
        ),
        hint="List the 'Trade show leads' table in the Events base, keep the show's consenting, unsynced rows, drop those with "
        "do_not_contact=true in HubSpot, add the rest to the audience with the tag and set Synced on their rows.",
        subtasks=[
            "List the trade show leads in Airtable",
            "Keep the show's consenting rows not yet synced",
            "Drop anyone do-not-contact in HubSpot",
            "Add the rest to the show's audience with the tag",
            "Mark their rows as Synced",
        ],
    )


def _crm_company(b: Builder, name: str) -> dict[str, Any]:
    for r in b.svc("crm").objects.find(object_type="companies"):
        if r["properties"].get("name") == name:
            return r
    raise PlantError(f"no CRM company {name}")


def _campaign(
    b: Builder, list_id: str, title: str, subject: str, status: str, days_ago: float
) -> dict[str, Any]:
    ts = ago(b, days=days_ago)
    return b.svc("marketing").campaigns.create(
        {
            "type": "regular",
            "list_id": list_id,
            "subject_line": subject,
            "from_name": b.company.name,
            "reply_to": f"news@{b.company.domain}",
            "title": title,
            "status": status,
            "html": "<p>Hello *|FNAME|*</p>",
            "send_time": ts if status == "sent" else None,
            "create_time": ts,
        }
    )


@family("marketing.churned_off_campaign", "marketing", ("marketing", "crm"))
def churned_off_campaign(b: Builder) -> None:
    """Before a drafted campaign is scheduled, unsubscribe audience members whose company churned; note it in HubSpot."""
    prod = b.pick(b.company.products)
    custs = []
    names: set[str] = set()
    for _ in range(5):
        c = b.customer(where=lambda c: c.name not in names and bool(c.contact_ids))
        names.add(c.name)
        custs.append(c)
    n_churn = b.rng.choice((1, 2))
    churned, risk, fine = custs[:n_churn], custs[n_churn], custs[n_churn + 1 : -1]
    already = custs[-1]  # churned as well, but already unsubscribed
    _crm_prop(b, "companies", "customer_status", "Customer status")
    # the rule lives where the status is defined, not in the request
    b.svc("crm").props.update(
        "companies.customer_status",
        {
            "description": "Where the customer stands: Active, At risk or Churned. Marketing policy: we don't "
            "market to Churned companies. Before a campaign goes out, unsubscribe their people from its "
            "audience (unsubscribe, never delete) and log a note on each such company saying they were taken off."
        },
    )
    comps = {}
    for c in custs:
        try:
            comps[c.name] = _crm_company(b, c.name)
        except PlantError:
            raise
        status = "Churned" if c in churned or c is already else ("At risk" if c is risk else "Active")
        _crm_set(b, comps[c.name], customer_status=status)
    extra = []
    for _ in range(2):
        try:
            c = b.customer(where=lambda c: c.name not in names)
        except PlantError:
            break
        names.add(c.name)
        try:
            rec = _crm_company(b, c.name)
        except PlantError:
            continue
        _crm_set(b, rec, customer_status="Churned")
        extra.append(rec)
    q = (b.now.month - 1) // 3 + 1
    title = f"{prod.name} Q{q} update"
    aud = _audience(b, f"{prod.name} customers", f"What's new in {prod.name}", days_ago=200)
    mems = {}
    for i, c in enumerate(custs):
        p = b.contact_of(c)
        st = "unsubscribed" if c is already else "subscribed"
        mems[c.name] = (p, _member(b, aud["id"], p, st, ["customer"], days_ago=150 - 20 * i))
    other_aud = b.pick([a for a in b.svc("marketing").audiences.all() if a["id"] != aud["id"]])
    _campaign(b, aud["id"], title, f"{prod.name}: what's new this quarter", "save", 3)
    old = _campaign(
        b, aud["id"], f"{prod.name} Q{q} update ({b.now.year - 1})", f"{prod.name}: what's new", "sent", 365
    )
    newer = _campaign(b, other_aud["id"], f"{prod.name} webinar invite", "Join our webinar", "save", 0.5)
    when = (b.now + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    b.begin()

    b.call("crm__hubspot_list_properties", {"object_type": "companies"})  # the policy, on the field
    camps = b.call("marketing__mailchimp_get_all_campaigns", {"status": "save", "count": 100})
    cid = next(c["id"] for c in rows(camps) if c["title"] == title)
    info = b.call("marketing__mailchimp_get_campaign_info", {"campaign_id": cid})
    lid = info["list_id"]
    mem = b.call(
        "marketing__mailchimp_get_audience_members", {"list_id": lid, "status": "subscribed", "count": 500}
    )
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "customer_status",
            "operator": "EQ",
            "value": "Churned",
            "properties": ["name", "customer_status"],
            "limit": 100,
        },
    )
    b.decide()
    gone = {c["properties"]["name"]: c["id"] for c in rows(found)}
    drop = [m for m in rows(mem) if (m.get("merge_fields") or {}).get("COMPANY") in gone]
    assert sorted(m["email_address"] for m in drop) == sorted(mems[c.name][0].email for c in churned)
    for m in drop:
        b.call(
            "marketing__mailchimp_update_member",
            {"list_id": lid, "email_address": m["email_address"], "status": "unsubscribed"},
        )
    b.composed(format_time(when))
    b.call("marketing__mailchimp_schedule_campaign", {"campaign_id": cid, "schedule_time": format_time(when)})
    for m in drop:
        co = m["merge_fields"]["COMPANY"]
        b.call(
            "crm__hubspot_create_note",
            {
                "note_body": f"Churned: unsubscribed {m['email_address']} from the '{title}' campaign audience before sending.",
                "company_ids": [gone[co]],
            },
        )

    for c in churned:
        p, rec = mems[c.name]
        b.expect_change(
            "marketing",
            "members",
            rec["id"],
            "status",
            "unsubscribed",
            f"{p.name} ({c.name}, churned) is unsubscribed",
        )
        b.expect_record(
            "crm",
            "associations",
            {"from_object_type": "notes", "to_object_type": "companies", "to_object_id": comps[c.name]["id"]},
            f"a note on {c.name} records the removal",
        )
    b.expect_change("marketing", "campaigns", cid, "status", "schedule", "the campaign is scheduled")
    b.expect_change(
        "marketing",
        "campaigns",
        cid,
        "send_time",
        format_time(when),
        "it goes out tomorrow 09:00 UTC",
    )
    for c in [risk, *fine]:
        b.keep(
            "marketing", "members", mems[c.name][1]["id"], f"{c.name} has not churned and stays subscribed"
        )
    for rec in extra:
        b.keep("crm", "objects", rec["id"], "a churned company with nobody on the audience needs no note")
    b.keep("marketing", "campaigns", newer["id"], "the newer draft for another audience is not scheduled")
    b.keep("marketing", "campaigns", old["id"], "last year's sent campaign is untouched")
    b.keep("marketing", "members", mems[already.name][1]["id"], "the member already unsubscribed stays as is")
    victim = mems[churned[0].name][0].email
    b.trap(
        "policy_exception",
        "an at-risk (not churned) customer on the audience",
        swap={victim: mems[risk.name][0].email},
    )
    b.trap(
        "near_duplicate", "the newest member, an active customer", swap={victim: mems[fine[-1].name][0].email}
    )
    b.trap("near_duplicate", "a newer draft campaign for another audience", swap={cid: newer["id"]})
    b.trap("closed", "last year's sent campaign with the same title", swap={cid: old["id"]})
    b.fact(*[mems[c.name][0].email for c in churned])
    b.write(
        frame(
            b.rng,
            b.say(
                f"get the '{title}' draft out tomorrow at 09:00 UTC, but clean churned customers off its audience first",
                f"schedule our '{title}' campaign for 09:00 UTC tomorrow after removing churned accounts from the list it goes to",
            ),
            context=b.say(
                "Do it the way our marketing policy says: it's written on the Customer status field of HubSpot companies",
                "Our marketing policy is in the description of HubSpot's Customer status property (companies); follow it",
            ),
        ),
        hint="Read the policy on HubSpot's Customer status property, find the draft campaign and its audience, list subscribed members with their COMPANY merge field, search HubSpot companies "
        "with customer_status Churned, unsubscribe matching members, schedule the campaign and note each churned company.",
        subtasks=[
            "Read the marketing policy on HubSpot's Customer status field",
            "Find the draft campaign and its audience",
            "List the audience's subscribed members and their companies",
            "Find the churned companies in HubSpot",
            "Unsubscribe the churned companies' members",
            "Schedule the campaign for tomorrow 09:00 UTC",
            "Note the removal on each churned company",
        ],
    )


@family("marketing.launch_day_announce", "marketing", ("sheets", "marketing", "community"))
def launch_day_announce(b: Builder) -> None:
    """Today's go launch from the launch calendar: send its campaign, announce it on the customer Discord, mark it announced."""
    prod, held, later, done = b.pick(b.company.products, 4)
    com = b.svc("community")
    server = com.servers.all()[0]
    chan_name = b.pick(["product-news", "launches", "whats-new"])
    chan = com.channels.create(
        {"server_id": server["id"], "name": chan_name, "type": 0, "topic": "Product launches for customers"},
        id=com._snowflake(),
    )
    beta = com.channels.create(
        {"server_id": server["id"], "name": f"beta-{chan_name}", "type": 0, "topic": "Beta programme only"},
        id=com._snowflake(),
    )
    aud = b.pick(b.svc("marketing").audiences.all())
    _campaign(b, aud["id"], f"{prod.name} launch", f"Introducing {prod.name}", "save", 4)
    held_c = _campaign(
        b,
        aud["id"],
        f"{held.name} launch",
        f"Going live today: the {held.name} launch announcement",
        "save",
        1,
    )
    old_c = _campaign(b, aud["id"], f"{prod.name} beta launch", f"{prod.name} beta is here", "sent", 120)
    today = b.iso(b.now)[:10]

    def d(x: float) -> str:
        return (b.now + timedelta(days=x)).date().isoformat()

    sid_s = server["id"]
    table = [
        ["Product", "Launch date", "Status", "Mailchimp campaign", "Discord server ID", "Discord channel"],
        [done.name, d(-30), "Announced", f"{done.name} launch", sid_s, chan_name],
        [prod.name, today, "Go", f"{prod.name} launch", sid_s, chan_name],
        [later.name, d(b.rng.randrange(5, 12)), "Go", f"{later.name} launch", sid_s, chan_name],
        [held.name, today, "Postponed", f"{held.name} launch", sid_s, chan_name],
    ]
    _sheet(b, "Launch calendar", "Launches", table, 2)
    b.begin()

    books = b.call("sheets__google_sheets_list_spreadsheets", {})
    sid = next(s["id"] for s in rows(books) if s["title"] == "Launch calendar")
    got = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": sid})
    b.decide()
    all_rows = _sheet_rows(got)
    n, row = next((i + 1, r) for i, r in enumerate(all_rows) if r[1] == today and r[2] == "Go")
    assert row[0] == prod.name
    camps = b.call("marketing__mailchimp_get_all_campaigns", {"status": "save", "count": 100})
    cid = next(c["id"] for c in rows(camps) if c["title"] == row[3])
    b.call("marketing__mailchimp_send_campaign", {"campaign_id": cid})
    info = b.call("community__discord_get_server_info", {"server_id": str(row[4])})
    ch = next(c["id"] for c in info["channels"] if c["name"] == row[5])
    b.call(
        "community__discord_send_message",
        {
            "channel_id": ch,
            "content": f"{row[0]} is live today! Check your inbox for the details and tell us what you think.",
        },
    )
    b.call(
        "sheets__google_sheets_write_to_cell",
        {"spreadsheet_id": sid, "column": "C", "row": n, "value": "Announced"},
    )

    b.expect_change(
        "marketing", "campaigns", cid, "status", "sent", f"the {prod.name} launch campaign is sent"
    )
    b.expect_message("community", [chan["id"], chan_name], contains=[prod.name])
    b.expect_record(
        "sheets",
        "spreadsheets",
        {"id": sid, f"sheets.cells.C{n}": "Announced"},
        f"the {prod.name} row is marked Announced",
    )
    b.keep("marketing", "campaigns", held_c["id"], f"the postponed {held.name} launch is not sent")
    b.keep("marketing", "campaigns", old_c["id"], "the old beta campaign is untouched")
    b.no_message(
        "community", [beta["id"], beta["name"]], "the beta channel is not the customer announcement channel"
    )
    b.expect_record(
        "sheets",
        "spreadsheets",
        {"id": sid, "sheets.cells.C5": "Postponed"},
        "the postponed launch stays postponed",
    )
    b.trap(
        "policy_exception",
        "a launch set for today but postponed",
        swap={cid: held_c["id"], prod.name: held.name},
    )
    b.trap("near_duplicate", "the old sent beta campaign of the same product", swap={cid: old_c["id"]})
    b.trap("near_duplicate", "the beta channel with a similar name (newest)", swap={ch: beta["id"]})
    b.fact(prod.name, cid)
    b.write(
        frame(
            b.rng,
            b.say(
                "run today's launch from the launch calendar",
                "do the launch-day comms for whatever is going live today",
            ),
            context=b.say(
                "Send its Mailchimp campaign, post a short announcement naming the product in the customer Discord "
                "channel the calendar gives, then set its status to Announced",
                "Launch-day routine: send the campaign the Launch calendar sheet lists for it, announce the product "
                "in its Discord channel, and mark the row Announced",
            ),
        ),
        hint="Read 'Launch calendar', take today's row with status Go, send the draft campaign it names, get the Discord server "
        "to find the channel, post the announcement, then write Announced into the row's Status cell.",
        subtasks=[
            "Find today's Go launch in the Launch calendar",
            "Send its Mailchimp campaign",
            "Post the announcement in the listed Discord channel",
            "Mark the launch row Announced",
        ],
    )


def _demo_type(b: Builder) -> dict[str, Any]:
    bk = b.svc("booking")
    hit = bk.types.find(name="Platform demo")
    if hit:
        return hit[0]
    return bk.types.create({"name": "Platform demo", "slug": "platform-demo", "duration": 45, "active": True})


def _booked(
    b: Builder, et: dict[str, Any], status: str, days: float, p: Any, reason: str | None = None
) -> dict[str, Any]:
    bk = b.svc("booking")
    start = (b.now + timedelta(days=days)).replace(
        hour=b.rng.randrange(9, 16), minute=0, second=0, microsecond=0
    )
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
    bk.invitees.create({"event": ev["id"], "name": p.name, "email": p.email, "status": status})
    return ev


@family("marketing.cancelled_demo_reengage", "marketing", ("booking", "crm", "marketing"))
def cancelled_demo_reengage(b: Builder) -> None:
    """Prospects whose platform demo was cancelled in the last two weeks and never rebooked join the re-engagement audience."""
    et = _demo_type(b)
    intro = next(t for t in b.svc("booking").types.all() if t["name"] == "Intro call")
    people = [b.person(external=True) for _ in range(6)]
    n_t = b.rng.choice((1, 2))
    targets = people[:n_t]
    rebooked, old, dnc, other_type = people[2:6]
    for i, p in enumerate(targets):
        _booked(b, et, "canceled", -(2 + 4 * i), p, "Invitee cancelled")
    _booked(b, et, "canceled", -5, rebooked, "Invitee cancelled")
    _booked(b, et, "active", b.rng.randrange(2, 6), rebooked)
    _booked(b, et, "canceled", -b.rng.randrange(30, 45), old, "Invitee cancelled")
    _booked(b, et, "canceled", -3, dnc, "Invitee cancelled")
    _booked(b, intro, "canceled", -1, other_type, "Invitee cancelled")
    _crm_prop(b, "contacts", "do_not_contact", "Do not contact")
    _crm_set(b, _crm_contact(b, dnc.email), do_not_contact="true")
    for p in targets:
        _crm_set(b, _crm_contact(b, p.email), do_not_contact="false")
    _audience(b, "Demo re-engagement", "Still thinking it over?", days_ago=90)
    old_aud = _audience(
        b,
        "Demo re-engagement 2024 (prospects who cancelled a platform demo)",
        "Still thinking it over?",
        days_ago=500,
    )
    att_aud = _audience(b, "Demo attendees follow-up", "Thanks for the demo", days_ago=3)
    b.begin()

    evs = b.call("booking__calendly_list_events", {"status": "canceled", "count": 100})
    lo, hi = b.iso(b.days(-14)), b.iso(b.now)
    b.decide()
    gone: dict[str, str] = {}
    for e in rows(evs):
        if e["name"] == "Platform demo" and lo <= e["start_time"] <= hi:
            for i in rows(b.call("booking__calendly_list_event_invitees", {"event_uuid": e["uuid"]})):
                gone[i["email"]] = i["name"]
    act = b.call("booking__calendly_list_events", {"status": "active", "count": 100})
    for e in rows(act):
        if e["name"] == "Platform demo" and e["start_time"] >= hi:
            for i in rows(b.call("booking__calendly_list_event_invitees", {"event_uuid": e["uuid"]})):
                gone.pop(i["email"], None)
    b.decide()
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "contacts",
            "property_name": "email",
            "operator": "IN",
            "value": ",".join(sorted(gone)),
            "properties": ["email", "firstname", "lastname", "do_not_contact"],
            "limit": 50,
        },
    )
    ok = [c for c in rows(found) if (c["properties"].get("do_not_contact") or "") != "true"]
    assert sorted(c["properties"]["email"] for c in ok) == sorted(p.email for p in targets)
    auds = b.call("marketing__mailchimp_get_all_audiences", {"count": 50})
    lid = next(a["id"] for a in rows(auds) if a["name"] == "Demo re-engagement")
    for c in ok:
        b.call(
            "marketing__mailchimp_add_member_to_audience",
            {
                "list_id": lid,
                "email_address": c["properties"]["email"],
                "status": "subscribed",
                "tags": ["demo-cancelled"],
            },
        )
    for c in ok:
        b.call(
            "crm__hubspot_create_note",
            {
                "note_body": "Cancelled the platform demo and did not rebook; added to the Demo re-engagement audience.",
                "contact_ids": [c["id"]],
            },
        )

    for p in targets:
        cid = _crm_contact(b, p.email)["id"]
        b.expect_record(
            "marketing",
            "members",
            {"list_id": lid, "email_address": p.email, "status": "subscribed"},
            f"{p.name} is on the Demo re-engagement audience",
        )
        b.expect_record(
            "crm",
            "associations",
            {"from_object_type": "notes", "to_object_type": "contacts", "to_object_id": cid},
            f"a note on {p.name}'s contact records it",
        )
    for p, why in (
        (rebooked, "rebooked a demo"),
        (old, "cancelled over two weeks ago"),
        (dnc, "is do-not-contact in HubSpot"),
        (other_type, "cancelled an intro call, not a demo"),
    ):
        b.not_written("marketing", p.email, f"{p.name} {why}", tables=["members"])
    b.keep("marketing", "audiences", old_aud["id"], "the 2024 audience is retired")
    b.keep("marketing", "audiences", att_aud["id"], "the attendees audience is for people who came")
    b.trap("stale", "someone who cancelled but rebooked", swap={targets[0].email: rebooked.email})
    b.trap("stale", "a cancellation older than two weeks", swap={targets[0].email: old.email})
    b.trap(
        "do_not_contact", "a recent cancellation flagged do-not-contact", swap={targets[0].email: dnc.email}
    )
    b.trap(
        "near_duplicate", "the newest cancellation, an intro call", swap={targets[0].email: other_type.email}
    )
    b.trap("near_duplicate", "the newest audience, for demo attendees", swap={lid: att_aud["id"]})
    b.trap("stale", "the retired 2024 re-engagement audience", swap={lid: old_aud["id"]})
    b.fact(*[p.email for p in targets])
    b.write(
        frame(
            b.rng,
            b.say(
                "put the people who dropped out of a platform demo lately into our Demo re-engagement audience",
                "re-engage the prospects who cancelled their platform demo in Calendly recently",
            ),
            context=b.say(
                "That's Platform demos cancelled in the last 14 days. Tag them 'demo-cancelled' and leave a note on their "
                "HubSpot contact",
                "I mean Platform demos cancelled within the past two weeks; they go in tagged 'demo-cancelled', with a "
                "note on the contact",
            ),
        ),
        hint="List cancelled Calendly events, keep Platform demos from the last 14 days and their invitees, drop anyone with an "
        "upcoming active Platform demo, check do_not_contact in HubSpot, add the rest to 'Demo re-engagement' with the tag and note each contact.",
        subtasks=[
            "Find Platform demos cancelled in the last 14 days and who booked them",
            "Drop invitees who have rebooked a demo",
            "Drop anyone do-not-contact in HubSpot",
            "Add the rest to the Demo re-engagement audience with the tag",
            "Note it on each contact in HubSpot",
        ],
    )
