"""Support workflows: tickets worked against the CRM, the chat rota and the knowledge base."""

from __future__ import annotations

from compoworld.tasks.families._common import chat_channel, crm_company, hd_contact, hd_ticket, in_crm, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, family

ISSUES = (
    ("Checkout fails with a 502", "Our checkout page fails with a 502 since this morning."),
    ("SSO login loop", "Our users are stuck in a login loop with SSO."),
    ("Invoices missing from portal", "We cannot see last month's invoices in the portal."),
    ("API rate limit errors", "Our integration keeps hitting rate limit errors."),
)


@family("support.escalate_by_tier", "support", ("helpdesk", "crm", "chat"))
def escalate_by_tier(b: Builder) -> None:
    """A customer reports an outage: escalate by the account's tier in the CRM, tell the right channel."""
    cust = b.customer(where=in_crm(b))
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    subject, text = b.pick(ISSUES)
    enterprise = crm_company(b, cust.name)["properties"].get("tier") == "enterprise"
    esc = chat_channel(b, "enterprise-escalations", topic="Enterprise incidents, paged 24/7")
    queue = chat_channel(b, "support-queue", topic="Standard support queue")
    old = hd_ticket(b, contact, subject, text + " (first report)", status=5, days_ago=40)
    t = hd_ticket(b, contact, subject, text, status=2, days_ago=0.2)
    b.begin()
    # the reference: find the requester's open ticket, read the tier, act by the rule
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": person.name})
    cid = next(c["id"] for c in rows(found) if c["email"] == person.email)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": cid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and x["subject"] == subject)
    assert tid == t["id"]
    b.call(
        "crm__hubspot_search_by_property",
        {"object_type": "companies", "property_name": "name", "operator": "EQ", "value": cust.name, "properties": ["name", "tier"]},
    )
    b.decide()
    priority = 4 if enterprise else 3
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "priority": priority})
    chans = b.call("chat__slack_user_list_channels", {"limit": 200})
    target = esc if enterprise else queue
    other = queue if enterprise else esc
    assert any(c["id"] == target for c in rows(chans))
    b.call("chat__slack_user_post_message", {"channel_id": target, "text": f"Ticket #{tid} from {cust.name}: {subject}."})
    b.expect_change("helpdesk", "tickets", tid, "priority", priority, f"ticket #{tid} is at priority {priority}")
    b.expect_message("chat", target, contains=[str(tid)], description="the right channel was told, with the ticket number")
    b.no_message("chat", other, "nothing was posted in the other channel")
    b.keep("helpdesk", "tickets", old["id"], "the closed first report was left alone")
    b.trap("closed", "the closed first report of the same problem", swap={tid: old["id"]})
    b.trap("policy_exception", "the channel of the other tier", swap={target: other})
    b.write(
        frame(
            b.rng,
            f"get {person.name}'s ticket about \"{subject.lower()}\" to the right place",
            context=(
                f"{person.first} at {cust.name} just reported it. Our rule: enterprise accounts (tier in HubSpot) go to "
                "urgent priority and #enterprise-escalations, everyone else to high priority and #support-queue, "
                "with the ticket number in the post"
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
