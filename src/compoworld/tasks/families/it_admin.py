"""IT admin workflows: access, keys and limits in Redis, worked from helpdesk tickets and the wiki."""

from __future__ import annotations

from typing import Any

from compoworld.core.company import Person
from compoworld.tasks.families._common import ago, crm_company, hd_contact, hd_ticket, in_crm, rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

OTHER = (
    ("Add two more seats", "Could you add two more seats to our plan?"),
    ("Change billing contact", "Please send future invoices to our new finance inbox."),
    ("Question about the roadmap", "Is the new reporting module coming this quarter?"),
    ("Update company address", "We moved offices; please update our address on file."),
)


def _kv(b: Builder, key: str, value: str) -> None:
    svc = b.svc("kv")
    if svc.keys.get(key):
        svc.keys.update(key, {"value": value, "expires_at": None})
    else:
        svc.keys.create({"value": value}, id=key)


def _slug(domain: str) -> str:
    return domain.split(".")[0]


def _employee_contact(b: Builder, p: Person) -> dict[str, Any]:
    """The helpdesk contact of an employee (internal IT requests), created if missing."""
    svc = b.svc("helpdesk")
    hits = svc.contacts.find(lambda c: (c.get("email") or "").lower() == p.email.lower())
    if hits:
        return hits[0]
    when = ago(b, days=300)
    return svc.contacts.create(
        {"name": p.name, "email": p.email, "job_title": p.title, "created_at": when, "updated_at": when}
    )


def _contact_id(b: Builder, p: Person) -> int:
    found = b.call("helpdesk__freshdesk_search_contacts_by_name", {"name": p.name})
    return next(c["id"] for c in rows(found) if c["email"] == p.email)


@family("it_admin.clear_rate_limit_block", "it_admin", ("helpdesk", "crm", "kv"))
def clear_rate_limit_block(b: Builder) -> None:
    """A customer reports 429s: clear their Redis rate-limit block, raise the quota if enterprise, reply."""
    cust = b.customer(where=in_crm(b))
    other = b.customer()
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    enterprise = crm_company(b, cust.name)["properties"].get("tier") == "enterprise"
    mine, theirs = _slug(cust.domain), _slug(other.domain)
    _kv(b, f"ratelimit:{mine}:blocked", "true")
    _kv(b, f"ratelimit:{mine}:quota", "1000")
    _kv(b, f"ratelimit:{theirs}:blocked", "true")
    _kv(b, f"ratelimit:{theirs}:quota", "1000")
    old = hd_ticket(
        b,
        contact,
        f"429 Too Many Requests - {cust.name}",
        f"{person.name}: our API calls get 429 rate limit errors. (fixed in the autumn)",
        status=5,
        days_ago=120,
    )
    t = hd_ticket(
        b,
        contact,
        "Integration stopped syncing",
        "Since an hour ago every call from our integration is refused with HTTP 429.",
        status=2,
        days_ago=0.2,
    )
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.05, priority=1)
    b.begin()
    hcid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and "429" in x["description"])
    assert tid == t["id"]
    found = b.call(
        "crm__hubspot_search_by_property",
        {
            "object_type": "companies",
            "property_name": "name",
            "operator": "EQ",
            "value": cust.name,
            "properties": ["name", "tier", "domain"],
        },
    )
    tier = rows(found)[0]["properties"].get("tier")
    assert (tier == "enterprise") == enterprise
    b.decide()
    keys = b.call("kv__list", {"pattern": "ratelimit:*"})
    block = next(k for k in keys["keys"] if k == f"ratelimit:{mine}:blocked")
    b.call("kv__delete", {"key": block})
    if enterprise:
        quota = next(k for k in keys["keys"] if k == f"ratelimit:{mine}:quota")
        b.call("kv__set", {"key": quota, "value": "5000"})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tid,
            "body": f"Hi {person.first}, we have cleared the rate-limit block on your account; calls should go through again.",
        },
    )
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "status": 4})
    b.goal(
        f"{cust.name}'s rate-limit block key is deleted",
        {
            "predicate": "record_absent",
            "service": "kv",
            "table": "keys",
            "where": {"id": f"ratelimit:{mine}:blocked"},
        },
    )
    if enterprise:
        b.expect_change(
            "kv", "keys", f"ratelimit:{mine}:quota", "value", "5000", "the enterprise quota is raised to 5000"
        )
    else:
        b.keep("kv", "keys", f"ratelimit:{mine}:quota", "a non-enterprise quota stays as it is")
    b.expect_change("helpdesk", "tickets", tid, "status", 4, f"ticket #{tid} is resolved")
    b.expect_record(
        "helpdesk", "conversations", {"ticket_id": tid, "kind": "reply"}, "the customer got a reply"
    )
    b.keep("kv", "keys", f"ratelimit:{theirs}:blocked", f"{other.name}'s block was left alone")
    b.keep("kv", "keys", f"ratelimit:{theirs}:quota", f"{other.name}'s quota was left alone")
    b.keep("helpdesk", "tickets", old["id"], "the closed 429 ticket from the autumn was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap(
        "near_duplicate",
        "another customer's rate-limit block",
        swap={
            f"ratelimit:{mine}:blocked": f"ratelimit:{theirs}:blocked",
            f"ratelimit:{mine}:quota": f"ratelimit:{theirs}:quota",
        },
    )
    b.trap("closed", "the closed 429 ticket from the autumn", swap={tid: old["id"]})
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"unblock {cust.name} in Redis after {person.name}'s 429 report (quota to 5000 too if HubSpot says enterprise) and answer and resolve the ticket",
                f"clear {cust.name}'s rate-limit block in Redis, raise their quota key to 5000 if they are enterprise in HubSpot, then reply to {person.name}'s 429 ticket and resolve it",
            ),
            context="Non-enterprise quotas stay as they are",
        ),
        hint="Find the requester's open 429 ticket in Freshdesk, read the company's tier in HubSpot, delete the company's ratelimit block key in Redis (and set its quota to 5000 if enterprise), then reply and resolve the ticket.",
        subtasks=[
            f"Find {person.name}'s open ticket about the 429s",
            f"Read {cust.name}'s tier in HubSpot",
            "Delete their rate-limit block key, raising the quota if enterprise",
            "Reply to the ticket and resolve it",
        ],
    )


@family("it_admin.offboard_revoke_keys", "it_admin", ("helpdesk", "kv"))
def offboard_revoke_keys(b: Builder) -> None:
    """A manager's offboarding ticket: revoke the leaver's access keys in Redis, keep a namesake's, reply, resolve."""
    teams = [
        t
        for t in b.company.teams
        if t.lead_id != b.me.id and any(m not in (b.me.id, t.lead_id) for m in t.member_ids)
    ]
    team = b.pick(teams)
    manager = b.company.person(team.lead_id)
    leaver = b.company.person(b.pick([m for m in team.member_ids if m not in (b.me.id, team.lead_id)]))
    b._used.update({manager.id, leaver.id})
    other = b.person(external=False, exclude=(manager.id, leaver.id))
    req = _employee_contact(b, manager)
    lv, ot = leaver.email.split("@")[0], other.email.split("@")[0]
    for svc_name in ("vpn", "github", "aws"):
        _kv(b, f"access:{svc_name}:{lv}", "granted")
    _kv(b, f"access:vpn:{ot}", "granted")
    _kv(b, f"access:aws:{ot}", "granted")
    old = hd_ticket(
        b,
        req,
        f"Offboarding: revoke access keys for {other.name}",
        f"{other.name} is leaving; please revoke their access keys in Redis. (cancelled: they stayed)",
        status=5,
        days_ago=60,
    )
    t = hd_ticket(
        b,
        req,
        f"Leaver: {leaver.name}",
        f"{leaver.first} {leaver.last}'s last day is today. Please remove their access.",
        status=2,
        days_ago=0.4,
    )
    newer = hd_ticket(
        b,
        req,
        "New laptop for a starter",
        "We have a new starter next Monday; please order a laptop.",
        status=2,
        days_ago=0.1,
        priority=1,
    )
    b.begin()
    hcid = _contact_id(b, manager)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and leaver.name in x["subject"])
    assert tid == t["id"]
    keys = b.call("kv__list", {"pattern": "access:*"})
    mine = [k for k in keys["keys"] if k.endswith(f":{lv}")]
    assert len(mine) == 3
    b.call("kv__delete", {"key": mine})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tid,
            "body": f"Hi {manager.first}, {leaver.first}'s VPN, GitHub and AWS access keys are revoked.",
        },
    )
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "status": 4})
    for k in mine:
        b.goal(
            f"{k} is revoked",
            {"predicate": "record_absent", "service": "kv", "table": "keys", "where": {"id": k}},
        )
    for k in (f"access:vpn:{ot}", f"access:aws:{ot}"):
        b.keep("kv", "keys", k, f"{other.name}'s key {k} stays")
    b.expect_change("helpdesk", "tickets", tid, "status", 4, f"ticket #{tid} is resolved")
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": tid, "kind": "reply"},
        f"{manager.first} got a reply on the ticket",
    )
    b.keep("helpdesk", "tickets", old["id"], "the cancelled offboarding ticket was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer laptop request was left alone")
    b.trap(
        "near_duplicate",
        "another employee's access keys",
        swap={f"access:vpn:{lv}": f"access:vpn:{ot}", f"access:aws:{lv}": f"access:aws:{ot}"},
    )
    b.trap("cancelled", "a cancelled offboarding ticket for someone else", swap={tid: old["id"]})
    b.trap("recent", "a newer ticket of the same manager on another subject", swap={tid: newer["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"revoke every Redis access key of the leaver in {manager.name}'s offboarding ticket, then reply and resolve it",
                f"do the offboarding {manager.name} asked for in Freshdesk: remove the leaver's access keys in Redis, answer the ticket and resolve it",
            ),
            context="Access keys live under access:<system>:<user>; touch nobody else's",
            who=manager.first,
        ),
        hint="Find the manager's open leaver ticket in Freshdesk, delete the leaver's access:* keys in Redis, then reply to the ticket and resolve it.",
        subtasks=[
            f"Find {manager.name}'s open offboarding ticket",
            "List the access keys in Redis and pick the leaver's",
            "Delete those keys",
            "Reply to the ticket and resolve it",
        ],
    )


def _wiki_page(b: Builder, space_key: str, title: str, content: str, days_ago: float = 30) -> dict[str, Any]:
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
            "author_id": b.me.email,
            "version": 2,
            "created_at": when,
            "updated_at": when,
        }
    )


@family("it_admin.beta_flag_by_allowlist", "it_admin", ("helpdesk", "wiki", "kv"))
def beta_flag_by_allowlist(b: Builder) -> None:
    """A customer asks for the beta API: turn their Redis flag on or waitlist it by the wiki allowlist, reply."""
    cust = b.customer()
    peers = [b.customer() for _ in range(2)]
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    approved = b.rng.random() < 0.5
    allow = [peers[0].name] + ([cust.name] if approved else [])
    wait = [peers[1].name] + ([] if approved else [cust.name])
    b.rng.shuffle(allow)
    b.rng.shuffle(wait)
    _wiki_page(
        b,
        "ENG",
        "Beta API programme",
        "<p>Customers on the approved list get the beta API: set their flag key to <code>on</code>. "
        "Customers on the waitlist: set the flag key to <code>waitlist</code> and tell them so. "
        "Never change the global feature:beta-api flag.</p>"
        f"<h3>Approved</h3><ul>{''.join(f'<li>{n}</li>' for n in allow)}</ul>"
        f"<h3>Waitlist</h3><ul>{''.join(f'<li>{n}</li>' for n in wait)}</ul>",
        days_ago=6,
    )
    mine = f"feature:beta-api:{_slug(cust.domain)}"
    theirs = f"feature:beta-api:{_slug(peers[1].domain)}"
    _kv(b, mine, "requested")
    _kv(b, theirs, "requested")
    _kv(b, f"feature:beta-api:{_slug(peers[0].domain)}", "on")
    old = hd_ticket(
        b,
        contact,
        f"Beta API access for {cust.name}",
        f"{person.name} asks for the beta API for {cust.name}. (closed: programme was paused)",
        status=5,
        days_ago=90,
    )
    t = hd_ticket(
        b,
        contact,
        "Early access to the new endpoints",
        "We'd love to try the new endpoints before general release.",
        status=2,
        days_ago=0.5,
    )
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.1, priority=1)
    b.begin()
    hcid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and "new endpoints" in x["description"])
    assert tid == t["id"]
    hits = b.call("wiki__confluence_search_content", {"must_contain_all": ["beta", "API"]})
    pid = next(p["id"] for p in rows(hits) if p["title"] == "Beta API programme")
    page = b.call("wiki__confluence_get_page", {"page_identifier": pid})
    approved_list = page["content"].split("<h3>Waitlist</h3>")[0]
    assert (f"<li>{cust.name}</li>" in approved_list) == approved
    b.decide()
    keys = b.call("kv__list", {"pattern": "feature:*"})
    key = next(k for k in keys["keys"] if k == mine)
    value = "on" if approved else "waitlist"
    b.call("kv__set", {"key": key, "value": value})
    msg = (
        f"Hi {person.first}, the beta API is now enabled for {cust.name}."
        if approved
        else f"Hi {person.first}, {cust.name} is on the waitlist for the beta API; we will let you know when a spot opens."
    )
    b.call("helpdesk__freshdesk_reply_to_a_ticket", {"ticket_id": tid, "body": msg})
    b.expect_change("kv", "keys", mine, "value", value, f"{cust.name}'s beta flag is {value}")
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": tid, "kind": "reply", "body": {"contains": "enabled" if approved else "waitlist"}},
        "the customer was told the outcome on the ticket",
    )
    b.keep("kv", "keys", "feature:beta-api", "the global beta flag was not changed")
    b.keep("kv", "keys", theirs, "the other waitlisted customer's flag was left alone")
    b.keep(
        "helpdesk", "tickets", old["id"], "the closed beta request from the paused programme was left alone"
    )
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap("policy_exception", "the global beta flag", swap={mine: "feature:beta-api"})
    b.trap("near_duplicate", "another customer's requested flag", swap={mine: theirs})
    b.trap("closed", "the closed beta request from the paused programme (a reply to it is refused)")
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"handle {person.name}'s request for beta API access for {cust.name}: set their Redis flag by the wiki's Beta API programme lists and reply on the ticket",
                f"answer {person.name}'s beta API request for {cust.name}: follow the Beta API programme page, set their flag in Redis and reply on the ticket",
            ),
            context="The global flag stays as it is",
        ),
        hint="Find the requester's open early-access ticket, check the approved and waitlist sections of the Beta API programme page, set the customer's feature:beta-api:<name> key to on or waitlist, then reply on the ticket.",
        subtasks=[
            f"Find {person.name}'s open early-access ticket",
            "Check which list the customer is on in the Beta API programme page",
            "Set the customer's beta flag key in Redis",
            "Reply on the ticket with the outcome",
        ],
    )


@family("it_admin.rotate_leaked_key", "it_admin", ("helpdesk", "kv", "chat"))
def rotate_leaked_key(b: Builder) -> None:
    """A customer leaked their live API key: rotate it in Redis (not the test key), reply, tell #security."""
    from compoworld.tasks.families._common import chat_channel

    cust = b.customer()
    other = b.customer()
    person = b.contact_of(cust)
    contact = hd_contact(b, person)
    sec = chat_channel(b, "security", topic="Security incidents and key rotations")
    chat_channel(b, "support-queue", topic="Standard support queue")
    letters = "abcdefghjkmnpqrstuvwxyz"

    def tok() -> str:
        return "".join(b.rng.choice(letters) for _ in range(16))

    mine, test, theirs = (
        f"apikey:{_slug(cust.domain)}:live",
        f"apikey:{_slug(cust.domain)}:test",
        f"apikey:{_slug(other.domain)}:live",
    )
    _kv(b, mine, f"live_{tok()}")
    _kv(b, test, f"test_{tok()}")
    _kv(b, theirs, f"live_{tok()}")
    old = hd_ticket(
        b,
        contact,
        f"Leaked API key - {cust.name}",
        f"{person.name}: our test API key leaked, please rotate it. (done in the spring)",
        status=5,
        days_ago=150,
    )
    t = hd_ticket(
        b,
        contact,
        "Key pasted in a public issue",
        "One of our developers pasted our live API key into a public GitHub issue an hour ago.",
        status=2,
        days_ago=0.1,
    )
    os_, ot = b.pick(OTHER)
    newer = hd_ticket(b, contact, os_, ot, status=2, days_ago=0.03, priority=1)
    b.begin()
    hcid = _contact_id(b, person)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and "live API key" in x["description"])
    assert tid == t["id"]
    keys = b.call("kv__list", {"pattern": "apikey:*"})
    key = next(k for k in keys["keys"] if k == mine)
    b.decide()
    b.call("kv__set", {"key": key, "value": f"live_{tok()}"})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tid,
            "body": f"Hi {person.first}, we have rotated your live API key; the old one no longer works. Fetch the new one from the portal.",
        },
    )
    chans = b.call("chat__slack_user_list_channels", {"channel_name": "security"})
    cid = next(c["id"] for c in rows(chans) if c["name"] == "security")
    assert cid == sec
    b.call(
        "chat__slack_user_post_message",
        {
            "channel_id": cid,
            "text": f"Rotated the live API key of {cust.name} after a public leak (ticket #{tid}).",
        },
    )
    b.goal(
        f"{cust.name}'s live key has a new value",
        {"predicate": "field_changed", "service": "kv", "table": "keys", "key": mine, "field": "value"},
    )
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": tid, "kind": "reply", "body": {"contains": "rotated"}},
        "the customer was told on the ticket",
    )
    b.expect_message(
        "chat", cid, contains=[cust.name], description="#security was told which customer's key was rotated"
    )
    b.keep("kv", "keys", test, "the test key (not leaked) was left alone")
    b.keep("kv", "keys", theirs, f"{other.name}'s live key was left alone")
    b.keep("helpdesk", "tickets", old["id"], "the closed test-key leak from the spring was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer ticket on another subject was left alone")
    b.trap("near_duplicate", "the same customer's test key", swap={mine: test})
    b.trap("near_duplicate", "another customer's live key", swap={mine: theirs})
    b.trap("recent", "a newer open ticket of the same requester on another subject", swap={tid: newer["id"]})
    b.trap("closed", "the closed test-key leak from the spring (a reply to it is refused)")
    b.write(
        frame(
            b.rng,
            b.say(
                f"rotate the API key {person.name} of {cust.name} says leaked, reply on the ticket and tell #security",
                f"rotate in Redis the API key that {person.name} ({cust.name}) reported leaked, answer the ticket and post in #security",
            ),
        ),
        hint="Find the requester's open leak ticket (it says which key), set a new value for that apikey key in Redis, reply on the ticket, then post the customer name in #security.",
        subtasks=[
            f"Find {person.name}'s open ticket about the leak",
            "Identify the leaked key among the customer's apikey keys",
            "Set a new value for that key",
            "Reply on the ticket and post in #security",
        ],
    )


@family("it_admin.revoke_lost_device_sessions", "it_admin", ("helpdesk", "kv"))
def revoke_lost_device_sessions(b: Builder) -> None:
    """An employee lost a laptop: delete every Redis session that belongs to them (and nobody else's), reply."""
    emp = b.person(external=False)
    other = b.person(external=False)
    req = _employee_contact(b, emp)
    mine = [f"session:{b.rng.randrange(10**6):06d}" for _ in range(2)]
    theirs = f"session:{b.rng.randrange(10**6):06d}"
    if len({*mine, theirs}) < 3 or any(b.svc("kv").keys.get(k) for k in (*mine, theirs)):
        raise PlantError("session id clash")
    for k in mine:
        _kv(b, k, emp.email)
    _kv(b, theirs, other.email)
    old = hd_ticket(
        b,
        req,
        f"Lost laptop - sign {emp.first} out of all sessions",
        f"{emp.name} lost a laptop; please revoke the sessions. (found it the next day, cancelled)",
        status=5,
        days_ago=80,
    )
    t = hd_ticket(
        b,
        req,
        "Laptop left on the train",
        "I left my work laptop on the train this morning. Please make sure nobody can use my logins.",
        status=2,
        days_ago=0.2,
    )
    newer = hd_ticket(
        b,
        req,
        "Second monitor request",
        "Could I get a second monitor for my desk?",
        status=2,
        days_ago=0.05,
        priority=1,
    )
    b.begin()
    hcid = _contact_id(b, emp)
    tickets = b.call("helpdesk__freshdesk_list_tickets", {"requester_id": hcid})
    tid = next(x["id"] for x in rows(tickets) if x["status"] == 2 and "laptop" in x["description"])
    assert tid == t["id"]
    keys = b.call("kv__list", {"pattern": "session:*"})
    owned = []
    for k in keys["keys"]:
        if b.call("kv__get", {"key": k})["value"] == emp.email:
            owned.append(k)
    assert sorted(owned) == sorted(mine)
    b.aggregate()
    b.call("kv__delete", {"key": owned})
    b.call(
        "helpdesk__freshdesk_reply_to_a_ticket",
        {
            "ticket_id": tid,
            "body": f"Hi {emp.first}, all {len(owned)} of your active sessions are revoked; sign in again on your new device.",
        },
    )
    b.call("helpdesk__freshdesk_update_ticket", {"ticket_id": tid, "status": 4})
    for k in owned:
        b.goal(
            f"session {k} is revoked",
            {"predicate": "record_absent", "service": "kv", "table": "keys", "where": {"id": k}},
        )
    b.keep("kv", "keys", theirs, f"{other.name}'s session stays")
    b.expect_change("helpdesk", "tickets", tid, "status", 4, f"ticket #{tid} is resolved")
    b.expect_record(
        "helpdesk",
        "conversations",
        {"ticket_id": tid, "kind": "reply"},
        f"{emp.first} got a reply on the ticket",
    )
    b.keep("helpdesk", "tickets", old["id"], "the cancelled lost-laptop ticket was left alone")
    b.keep("helpdesk", "tickets", newer["id"], "the newer monitor request was left alone")
    b.trap("near_duplicate", "another employee's session", swap={mine[0]: theirs})
    b.trap("cancelled", "an older cancelled lost-laptop ticket", swap={tid: old["id"]})
    b.trap("recent", "a newer ticket of the same employee on another subject", swap={tid: newer["id"]})
    b.write(
        frame(
            b.rng,
            b.say(
                f"sign {emp.name} out everywhere: delete their Redis sessions, then reply on their lost-laptop ticket and resolve it",
                f"revoke every Redis session of {emp.name}, who lost a laptop, then answer their ticket and resolve it",
            ),
            context="Session keys hold the owner's email; leave everyone else's alone",
        ),
        hint="Find the employee's open lost-laptop ticket, read the session:* keys in Redis and delete those holding the employee's email, then reply and resolve the ticket.",
        subtasks=[
            f"Find {emp.name}'s open lost-laptop ticket",
            "Read the session keys and keep those that hold their email",
            "Delete those session keys",
            "Reply on the ticket and resolve it",
        ],
    )
