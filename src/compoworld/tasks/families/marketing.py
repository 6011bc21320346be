"""Marketing workflows: audiences and campaigns in Mailchimp worked against meetings, the CRM and bases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import ago, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family


# ---- planting helpers (this module only) -----------------------------------------------------
def _crm_contact(b: Builder, email: str) -> dict[str, Any]:
    for r in b.svc("crm").objects.find(object_type="contacts"):
        if (r["properties"].get("email") or "").lower() == email.lower():
            return r
    raise PlantError(f"no CRM contact {email}")


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
                "Only people who actually joined the Meet count, tag them 'webinar'. Anyone marked do-not-contact in "
                "HubSpot stays off, and never re-add someone who unsubscribed from that audience",
                "Compliance rule: only real joiners (not no-shows), nobody flagged do-not-contact in HubSpot, and "
                "nobody who already unsubscribed from the list. Tag new members 'webinar'",
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
