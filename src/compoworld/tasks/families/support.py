"""Support workflows: tickets worked against the CRM, the chat rota and the knowledge base."""

from __future__ import annotations

from typing import Any

from compoworld.tasks.families._common import (
    ago,
    chat_channel,
    chat_user,
    crm_company,
    hd_contact,
    hd_ticket,
    in_crm,
    rows,
)
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

ISSUES = (
    ("Checkout fails with a 502", "Our checkout page fails with a 502 since this morning."),
    ("SSO login loop", "Our users are stuck in a login loop with SSO."),
    ("Invoices missing from portal", "We cannot see last month's invoices in the portal."),
    ("API rate limit errors", "Our integration keeps hitting rate limit errors."),
)
OTHER = (
    ("Add two more seats", "Could you add two more seats to our plan?"),
    ("Change billing contact", "Please send future invoices to our new finance inbox."),
    ("Question about the roadmap", "Is the new reporting module coming this quarter?"),
    ("Update company address", "We moved offices; please update our address on file."),
)


def wiki_page(
    b: Builder, space_key: str, title: str, content: str, days_ago: float = 30, author: str = ""
) -> dict[str, Any]:
    """Plant a Confluence page in the space with this key (under its homepage)."""
    svc = b.svc("wiki")
    space = next((s for s in svc.spaces.all() if s["key"] == space_key), None)
    if space is None:
        raise PlantError(f"no wiki space {space_key}")
    when = ago(b, days=days_ago)
    return svc.pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space.get("homepage_id"),
            "author_id": author or b.me.email,
            "version": 1 + int(days_ago) % 4,
            "created_at": when,
            "updated_at": when,
        }
    )


def _e164(phone: str) -> str:
    return "+" + "".join(ch for ch in phone if ch.isdigit())


def _contact_id(b: Builder, person: Any) -> int:
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    return next(c["id"] for c in rows(found) if c["email"] == person.email)


@family("support.escalate_by_tier", "support", ("helpdesk", "crm", "chat"))
def escalate_by_tier(b: Builder) -> None:
    """A customer reports an outage: escalate by the account's tier in the CRM, tell the right channel."""
    cust = b.customer(where=in_crm(b))
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    subject, text = b.pick(ISSUES)
    other_subject, other_text = b.pick(OTHER)
    enterprise = crm_company(b, cust.name)["properties"].get("tier") == "enterprise"
    esc = chat_channel(b, "enterprise-escalations", topic="Enterprise incidents, paged 24/7")
    queue = chat_channel(b, "support-queue", topic="Standard support queue")
    # the routing rule lives in the channel, posted by a colleague, not in the request
    chat = b.svc("chat")
    lead = b.person(external=False)
    chat.insert(
        "messages",
        {
            "ts": f"{int(b.env.clock.epoch()) - 86400 * 6}.{chat.next_seq('ts'):06d}",
            "channel": queue,
            "user": chat_user(lead),
            "text": "Routing reminder: outages from enterprise-tier accounts (the tier on the HubSpot company) get "
            "urgent priority and go to #enterprise-escalations; every other account gets high priority and a post "
            "here in #support-queue. Always put the ticket number in the post.",
            "thread_ts": None,
            "reply_count": 0,
            "reactions": {},
        },
        key="ts",
    )
    old = hd_ticket(
        b,
        contact,
        f"{subject} - {person.name}, {cust.name}",
        f"{person.first} from {cust.name} here: {text} Please get this to the right place.",
        status=5,
        days_ago=40,
    )
    t = hd_ticket(b, contact, subject, text, status=2, days_ago=0.3)
    newer = hd_ticket(b, contact, other_subject, other_text, status=2, days_ago=0.05, priority=1)
    b.begin()
    # the reference: find the requester's open ticket, read the tier, act by the rule
    cid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and x["subject"] == subject)
    assert tid == t["id"]
    b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "name",
            "operator": "EQ",
            "value": cust.name,
            "properties": ["name", "tier"],
        },
    )
    qs = b.call("chat__slack_user_list_channels", {"channel_name": "support-queue"})
    qid = next(c["id"] for c in rows(qs) if c["name"] == "support-queue")
    b.call("chat__slack_get_channel_history", {"channel_id": qid, "limit": 50})
    b.decide()
    priority = 4 if enterprise else 3
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "priority": priority})
    target = esc if enterprise else queue
    other = queue if enterprise else esc
    name = "enterprise-escalations" if enterprise else "support-queue"
    chans = b.call("chat__slack_user_list_channels", {"channel_name": name})
    assert next(c["id"] for c in rows(chans) if c["name"] == name) == target
    b.call(
        "chat__slack_user_post_message",
        {"channel_id": target, "text": f"Ticket #{tid} from {cust.name}: {subject}."},
    )
    b.expect_change(
        "helpdesk", "tickets", tid, "priority", priority, f"ticket #{tid} is at priority {priority}"
    )
    b.expect_message(
        "chat", target, contains=[str(tid)], description="the right channel was told, with the ticket number"
    )
    b.no_message("chat", other, "nothing was posted in the other channel")
    b.keep("helpdesk", "tickets", old["id"], "the closed first report was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap("closed", "the closed first report of the same problem", swap={tid: old["id"]})
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.trap("policy_exception", "the channel of the other tier", swap={target: other})
    b.write(
        frame(
            b.rng,
            f'get {person.name}\'s ticket about "{subject.lower()}" to the right place',
            context=(
                f"{person.first} at {cust.name} just reported it. The routing reminder is in #support-queue"
            ),
        ),
        hint="Find the requester's open ticket in Freshdesk, read the company's tier in HubSpot, then set the priority and post in the matching Slack channel.",
        subtasks=[
            f"Find {person.name}'s open ticket in Freshdesk",
            f"Look up {cust.name}'s tier in HubSpot",
            "Set the ticket's priority by the rule",
            "Post the ticket number in the matching Slack channel",
        ],
    )


@family("support.credit_by_policy", "support", ("helpdesk", "wiki", "crm"))
def credit_by_policy(b: Builder) -> None:
    """A customer asks for a service credit: approve it or send it to finance by the wiki's credit policy."""
    cust = b.customer(where=in_crm(b))
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    limit = b.pick((200, 250, 300, 500))
    within = b.rng.random() < 0.5
    amount = (
        b.pick((limit - 50, limit - 75, limit // 2))
        if within
        else b.pick((limit + 100, limit * 2, limit + 150))
    )
    wiki_page(
        b,
        "SUCCESS",
        "Service credit policy",
        f"<h2>Service credits</h2><p>Support may approve a service credit of up to ${limit} per request. "
        "Approve it with a reply to the customer and resolve the ticket.</p>"
        f"<p>Requests above ${limit} go to Finance: tag the ticket <code>finance-review</code>, leave it open "
        "and do not promise the credit to the customer.</p><p>Either way, log the outcome as a note on the "
        "company in HubSpot.</p>",
        days_ago=20,
    )
    wiki_page(
        b,
        "SUCCESS",
        "Service credit policy 2022",
        f"<p>Effective 2022-01-01. Support may approve service credits of up to ${limit * 4} per request.</p>",
        days_ago=500,
    )
    old = hd_ticket(
        b,
        contact,
        f"Service credit request - {cust.name}",
        f"{person.name} at {cust.name} asks for a service credit under your credit policy.",
        status=5,
        days_ago=200,
    )
    t = hd_ticket(
        b,
        contact,
        b.pick(("Downtime last Tuesday", "Outage on our dashboard", "Six hours without sync")),
        f"We lost most of a working day to the outage. We would like ${amount} credited to our account.",
        status=2,
        days_ago=1.5,
    )
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.2, priority=1)
    b.fact(amount, limit)
    b.begin()
    cid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and f"${amount}" in x["description"])
    assert tid == t["id"]
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["service", "credit"]})
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Service credit policy")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    b.decide()
    if within:
        b.call(
            "helpdesk__freshdesk_reply_to_a_ticket",
            {
                "ticket_id": tid,
                "body": f"Hi {person.first}, we have approved a service credit of ${amount} for the outage. Sorry for the trouble.",
            },
        )
        b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "status": 4})
        outcome = f"Service credit of ${amount} approved (ticket #{tid})."
    else:
        b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "tags": ["finance-review"]})
        outcome = f"Service credit request of ${amount} sent to finance review (ticket #{tid})."
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "name",
            "operator": "EQ",
            "value": cust.name,
            "properties": ["name"],
        },
    )
    company_id = rows(found)[0]["id"] if rows(found) else found["results"][0]["id"]
    b.call("crm__hubspot_create_note", {"note_body": outcome, "company_ids": [company_id]})
    if within:
        b.expect_change("helpdesk", "tickets", tid, "status", 4, f"ticket #{tid} is resolved")
        b.expect_record(
            "helpdesk",
            "conversations",
            {"ticket_id": tid, "kind": "reply", "body": {"contains": str(amount)}},
            "the customer got a reply approving the credit amount",
        )
    else:
        b.expect_change(
            "helpdesk", "tickets", tid, "tags", "finance-review", f"ticket #{tid} is tagged finance-review"
        )
        b.not_written(
            "helpdesk", "approved", "the customer was not promised the credit", tables=["conversations"]
        )
    b.expect_record(
        "crm",
        "objects",
        {"object_type": "notes", "properties.hs_note_body": {"contains": str(amount)}},
        "a HubSpot note logs the outcome with the amount",
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "notes", "to_object_type": "companies", "to_object_id": str(company_id)},
        f"the note is on {cust.name}'s company",
    )
    b.keep("helpdesk", "tickets", old["id"], "last year's closed credit request was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap("closed", "last year's closed credit request of the same customer", swap={tid: old["id"]})
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.trap("stale", "the superseded credit policy with a higher limit")
    b.write(
        frame(
            b.rng,
            b.say(
                f"handle {person.name}'s service credit request from {cust.name} by our wiki credit policy and log the outcome in HubSpot",
                f"deal with the credit {person.name} at {cust.name} asked for, following our service credit policy, and note the result on their HubSpot company",
            ),
            context=b.say(
                "The current policy is on the Customer Success wiki; log what you decided on their HubSpot company",
                "Our wiki has the service credit policy; record the outcome as a HubSpot note on the account",
            ),
        ),
        hint="Find the requester's open credit ticket in Freshdesk, read the current service credit policy in Confluence, approve (reply and resolve) or tag finance-review by the limit, then add a note to the company in HubSpot.",
        subtasks=[
            f"Find {person.name}'s open credit request in Freshdesk",
            "Read the current service credit policy on the wiki",
            "Approve and resolve, or tag finance-review, by the limit",
            f"Log the outcome as a note on {cust.name} in HubSpot",
        ],
    )


def _crm_company_row(b: Builder, name: str, props: list[str]) -> dict[str, Any]:
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "name",
            "operator": "EQ",
            "value": name,
            "properties": props,
        },
    )
    return rows(found)[0]


@family("support.sla_breach_to_owner", "support", ("helpdesk", "crm"))
def sla_breach_to_owner(b: Builder) -> None:
    """Escalate a customer's overdue open tickets and hand the breach to the account owner in HubSpot."""
    cust = b.customer(where=in_crm(b))
    people = [b.company.person(p) for p in cust.contact_ids]
    person = people[0]
    contact = hd_contact(b, person)
    second = hd_contact(b, people[-1])
    subject, text = b.pick(ISSUES)
    t1 = hd_ticket(b, contact, subject, text, status=2, days_ago=5, due_by=ago(b, days=2))
    os_, ot = b.pick(OTHER)
    t2 = hd_ticket(b, second, os_, ot, status=3, days_ago=4, due_by=ago(b, days=1, hours=3))
    done = hd_ticket(
        b,
        contact,
        f"Overdue tickets complaint - {cust.name}",
        f"{cust.name} says our support tickets are overdue and asks to talk to the account owner.",
        status=4,
        days_ago=9,
        due_by=ago(b, days=6),
    )
    s3, x3 = b.pick([i for i in ISSUES if i[0] != subject])
    fresh = hd_ticket(b, second, s3, x3, status=2, days_ago=0.1, due_by=ago(b, days=-2.9))
    owner = crm_company(b, cust.name)["properties"].get("hubspot_owner_id")
    if not owner:
        raise PlantError("company without owner")
    b.begin()
    now = b.iso(b.now)
    comps = b.call("helpdesk__freshdesk_search_companies_by_name", {"name": cust.name})
    hd_cid = next(c["id"] for c in rows(comps) if c["name"] == cust.name)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"company_id": hd_cid, "per_page": 100})
    overdue = sorted(
        x["id"] for x in rows(tickets) if x["status"] in (2, 3) and x.get("due_by") and x["due_by"] < now
    )
    assert (
        t1["id"] in overdue
        and t2["id"] in overdue
        and done["id"] not in overdue
        and fresh["id"] not in overdue
    )
    b.aggregate()
    b.decide()
    comp = _crm_company_row(b, cust.name, ["name", "hubspot_owner_id"])
    owner_id = comp["properties"]["hubspot_owner_id"]
    assert owner_id == owner
    listing = ", ".join(f"#{i}" for i in overdue)
    b.call(
        "crm__hubspot_create_task",
        {
            "properties": {
                "hs_timestamp": now,
                "hs_task_subject": f"SLA breach: {cust.name}",
                "hs_task_body": "Overdue open support tickets; the list is in the company note.",
                "hubspot_owner_id": owner_id,
                "hs_task_priority": "HIGH",
            }
        },
    )
    b.call(
        "crm__hubspot_create_note",
        {"note_body": f"SLA breach: overdue open tickets {listing}.", "company_ids": [comp["id"]]},
    )
    prio = {x["id"]: x["priority"] for x in rows(tickets)}
    for i in overdue:
        if prio[i] != 4:
            b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": i, "priority": 4})
    b.expect_record(
        "crm",
        "objects",
        {
            "object_type": "tasks",
            "properties.hubspot_owner_id": owner_id,
            "properties.hs_task_subject": {"contains": cust.name},
        },
        f"a HubSpot task about {cust.name} is assigned to the account owner",
    )
    b.expect_record(
        "crm",
        "associations",
        {"from_object_type": "notes", "to_object_type": "companies", "to_object_id": str(comp["id"])},
        f"a note is on {cust.name}'s company",
    )
    for i in overdue:
        if prio[i] != 4:
            b.expect_change("helpdesk", "tickets", i, "priority", 4, f"overdue ticket #{i} is urgent")
        b.expect_record(
            "crm",
            "objects",
            {"object_type": "notes", "properties.hs_note_body": {"contains": str(i)}},
            f"the company note lists ticket #{i}",
        )
    b.keep("helpdesk", "tickets", done["id"], "the resolved complaint (past due, but done) was left alone")
    b.keep("helpdesk", "tickets", fresh["id"], "the new ticket that is not yet due was left alone")
    b.trap("closed", "a resolved ticket past its due date", swap={t1["id"]: done["id"]})
    b.trap("recent", "the newest open ticket, not yet due", swap={t1["id"]: fresh["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"set {cust.name}'s overdue open or pending tickets to urgent, give their HubSpot account owner a task and list the tickets in a company note",
                f"deal with the SLA breach at {cust.name}: overdue open or pending tickets go urgent, their account owner gets a HubSpot task, the ticket numbers go in a company note",
            ),
            context=b.say(
                "Resolved tickets don't count, even if late. Give the HubSpot account owner "
                "a task and list the ticket numbers in a company note",
                "Their account owner in HubSpot should get a task, and the overdue ticket numbers go in a note on the company",
            ),
        ),
        hint="Find the company's tickets in Freshdesk, keep the open/pending ones whose due_by has passed, create a HubSpot task for the company's owner listing them, then set each to urgent.",
        subtasks=[
            f"List {cust.name}'s tickets in Freshdesk",
            "Keep the open or pending tickets past their due date",
            "Create a HubSpot task for the account owner and a company note listing them",
            "Set each overdue ticket to urgent priority",
        ],
    )


@family("support.merge_flagged_duplicates", "support", ("chat", "helpdesk"))
def merge_flagged_duplicates(b: Builder) -> None:
    """A colleague flags a customer's duplicate tickets in Slack: merge into the original, reply in the thread."""
    from compoworld.tasks.families._common import chat_user

    cust = b.customer()
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    cs = [p for p in b.company.employees if p.team == "Customer Success" and p.id != b.me.id]
    mate = b.fresh(cs or [p for p in b.company.employees if p.id != b.me.id], 1, key=lambda p: p.id)[0]
    ch = chat_channel(b, "support-queue", members=[mate], topic="Standard support queue")
    subject, text = b.pick(ISSUES)
    old = hd_ticket(
        b,
        contact,
        subject,
        f"{text} (duplicate tickets of this were merged into the original last quarter)",
        status=5,
        days_ago=70,
    )
    first = hd_ticket(b, contact, subject, text, status=2, days_ago=2)
    dup = hd_ticket(b, contact, f"Re: {subject}", f"Sending again: {text}", status=2, days_ago=1)
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.2, priority=1)
    svc = b.svc("chat")
    ts = f"{int(b.env.clock.epoch()) - 5400}.{svc.next_seq('ts'):06d}"
    svc.insert(
        "messages",
        {
            "ts": ts,
            "channel": ch,
            "user": chat_user(mate),
            "text": f'{person.name} ({cust.name}) opened the same ticket twice about "{subject}". Can someone merge the copy into the original?',
            "thread_ts": None,
            "reply_count": 0,
            "reactions": {},
        },
        key="ts",
    )
    b.begin()
    chans = b.call("chat__slack_user_list_channels", {"channel_name": "support-queue"})
    cid = next(c["id"] for c in rows(chans) if c["name"] == "support-queue")
    hist = b.call("chat__slack_get_channel_history", {"channel_id": cid, "limit": 20})
    msg = next(m for m in rows(hist) if person.name in m.get("text", "") and "twice" in m.get("text", ""))
    hcid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    same = sorted(
        (x for x in rows(tickets) if x["status"] in (2, 3) and subject in x["subject"]),
        key=lambda x: x["created_at"],
    )
    primary, copy = same[0]["id"], same[-1]["id"]
    assert (primary, copy) == (first["id"], dup["id"])
    b.decide()
    b.call("helpdesk__freshdesk_merge_tickets", {"primary_ticket_id": primary, "ticket_ids": copy})
    b.call(
        "chat__slack_user_reply_to_thread",
        {
            "channel_id": cid,
            "thread_ts": msg["ts"],
            "text": f"Done: merged #{copy} into the original #{primary}.",
        },
    )
    b.expect_change(
        "helpdesk", "tickets", copy, "parent_id", primary, f"the copy #{copy} is merged into #{primary}"
    )
    b.expect_change("helpdesk", "tickets", copy, "status", 5, f"the copy #{copy} is closed")
    b.expect_record(
        "chat",
        "messages",
        {"channel": cid, "thread_ts": msg["ts"], "text": {"contains": str(primary)}},
        "the flag was answered in its thread with the original's number",
    )
    b.keep(
        "helpdesk", "tickets", old["id"], "last quarter's closed ticket on the same problem was left alone"
    )
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap("closed", "an older closed ticket with the same subject", swap={primary: old["id"]})
    b.trap(
        "recent", "a newer open ticket of the same requester on another subject", swap={primary: newer["id"]}
    )
    b.trap("inverted", "merging the original into the copy", swap={primary: copy, copy: primary})
    b.write(
        frame(
            b.rng,
            b.say(
                f"merge the duplicate tickets {mate.first} flagged in #support-queue and answer in the thread",
                f"take care of {mate.first}'s duplicate-ticket flag in #support-queue and reply in the thread when done",
            ),
            context=b.say(
                "The earliest open ticket stays as the original; answer in the thread once it's done, with the original's number",
                "Keep the first open one as the original, merge the copy into it, and reply in the thread with the original's number",
            ),
            who=mate.first,
        ),
        hint="Read the flag in #support-queue, find the requester's two open tickets on that subject in Freshdesk, merge the newer into the earlier, then reply in the Slack thread.",
        subtasks=[
            f"Read {mate.first}'s message in #support-queue",
            "Find the requester's open tickets on that subject",
            "Merge the later copy into the earliest open ticket",
            "Reply in the Slack thread with the original's number",
        ],
    )


@family("support.page_oncall_from_rota", "support", ("helpdesk", "wiki", "sms"))
def page_oncall_from_rota(b: Builder) -> None:
    """An urgent ticket comes in: page this week's on-call from the wiki rota by SMS, note it on the ticket."""
    from datetime import timedelta

    cust = b.customer()
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    prev, cur, nxt = (b.person(external=False) for _ in range(3))
    monday = (b.now - timedelta(days=b.now.weekday())).date()
    weeks = [(monday - timedelta(days=7), prev), (monday, cur), (monday + timedelta(days=7), nxt)]
    rota = "".join(
        f"<tr><td>Week of {d.isoformat()}</td><td>{p.name}</td><td>{p.phone}</td></tr>" for d, p in weeks
    )
    wiki_page(
        b,
        "SUCCESS",
        "Support on-call rota",
        "<p>Weeks start on Monday. Page the on-call by SMS for urgent tickets.</p>"
        f"<table><tr><th>Week</th><th>On call</th><th>Mobile</th></tr>{rota}</table>",
        days_ago=10,
    )
    subject, text = b.pick(ISSUES)
    old = hd_ticket(
        b,
        contact,
        f"URGENT: {subject}",
        f"{text} Please page the on-call! (resolved last month)",
        status=5,
        days_ago=35,
        priority=4,
    )
    t = hd_ticket(b, contact, subject, text, status=2, days_ago=0.15, priority=4)
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.05, priority=1)
    b.fact(cur.name, cur.phone)
    b.begin()
    hcid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and x["priority"] == 4)
    assert tid == t["id"]
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["on-call", "rota"]})
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Support on-call rota")
    page = b.call("wiki__confluence_get_page", {"page_identifier": pid})
    assert cur.phone in page["content"]
    b.decide()
    b.call(
        "sms__send_sms",
        {"to": cur.phone, "body": f"Urgent ticket #{tid} from {cust.name}: {subject}. Please pick it up."},
    )
    b.call(
        "helpdesk__freshdesk_add_note_to_ticket",
        {"ticket_id": tid, "body": f"Paged {cur.name} (on call this week) by SMS."},
    )
    b.expect_message(
        "sms",
        [cur.phone, _e164(cur.phone)],
        contains=[str(tid)],
        description=f"this week's on-call ({cur.name}) was paged with the ticket number",
    )
    b.no_message("sms", [prev.phone, _e164(prev.phone)], "last week's on-call was not paged")
    b.no_message("sms", [nxt.phone, _e164(nxt.phone)], "next week's on-call was not paged")
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": tid, "kind": "note", "body": {"contains": cur.last}},
        "a note on the ticket says who was paged",
    )
    b.keep("helpdesk", "tickets", old["id"], "last month's closed urgent ticket was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer low-priority ticket was left alone")
    b.trap("closed", "last month's closed urgent ticket of the same customer", swap={tid: old["id"]})
    b.trap("recent", "a newer low-priority ticket of the same requester", swap={tid: newer["id"]})
    b.trap("stale", "last week's on-call on the rota", swap={cur.phone: prev.phone, cur.last: prev.last})
    b.write(
        frame(
            b.rng,
            b.say(
                f"text this week's on-call from the wiki rota about {person.name}'s urgent ticket and note on it who you paged",
                f"page this week's on-call (wiki rota) by SMS about the urgent ticket {person.name} of {cust.name} just opened, then note who you paged on the ticket",
            ),
            context=b.say(
                "The rota is on the Customer Success wiki. Text them the ticket number, then note on the ticket who you paged",
                "Use the support on-call rota on the wiki, page by SMS with the ticket number and leave a note on the ticket saying who got paged",
            ),
        ),
        hint="Find the requester's open urgent ticket in Freshdesk, read this week's row of the on-call rota in Confluence, text that person the ticket number, then add a note to the ticket.",
        subtasks=[
            f"Find {person.name}'s open urgent ticket",
            "Read who is on call this week on the wiki rota",
            "Text the on-call the ticket number",
            "Note on the ticket who was paged",
        ],
    )
