"""Screen-only workflows: a step that only the pixels of the web app show, done on the `computer`.

The customer's escalation contact is drawn on a contact card (a picture) on the account's page: the
text browser shows only "image 'Account contact card'", no MCP tool returns it. The reference reads
it the way a person would: screenshot, click the Accounts app, click the customer (next page when
the list runs on), look at the card, all by pointer actions at the positions the set-of-marks
observation gave. A check asks that the account page was shown on the screen (the GUI step was
done through the GUI); the rest of the work goes over chat's MCP tools.
"""

from __future__ import annotations

from typing import Any

from compoworld.interfaces.web import IMAGE, slug
from compoworld.tasks.families._common import chat_channel
from compoworld.tasks.workflow import Builder, PlantError, family


def _card(b: Builder, name: str, text: str) -> None:
    facts = b.svc("browser").facts
    if facts.get(IMAGE + name) is None:
        facts.create({"text": text}, id=IMAGE + name)
    else:
        facts.update(IMAGE + name, {"text": text})


def _mark(obs: dict[str, Any], label: str, role: str = "link") -> dict[str, Any] | None:
    return next((m for m in obs.get("marks", []) if m["role"] == role and m["label"] == label), None)


def _click(b: Builder, m: dict[str, Any]) -> dict[str, Any]:
    return b.call("computer__click", {"x": m["x"], "y": m["y"], "marks": True})


def _need(obs: dict[str, Any], label: str, role: str = "link") -> dict[str, Any]:
    m = _mark(obs, label, role)
    if m is None:
        raise PlantError(f"no {role} {label!r} on the screen at {obs.get('url')}")
    return m


def open_account(b: Builder, name: str) -> dict[str, Any]:
    """Pointer actions from the home screen to `name`'s account page (paging the list as needed)."""
    obs = b.call("computer__screenshot", {"marks": True})
    acc = _mark(obs, "Accounts")
    if acc is None:
        raise PlantError("no Accounts app on the screen")
    obs = _click(b, acc)
    for _ in range(20):
        row = _mark(obs, name)
        if row is not None:
            return _click(b, row)
        pager = [m for m in obs["marks"] if m["role"] == "link" and m["label"].isdigit()]
        cur = int(obs["url"].split("?p=")[1]) if "?p=" in obs["url"] else 1
        nxt = next((m for m in pager if int(m["label"]) == cur + 1), None)
        if nxt is None:
            break
        obs = _click(b, nxt)
    raise PlantError(f"{name} is not in the accounts list")


@family("computer.escalation_contact_on_card", "support", ("computer", "chat"))
def escalation_contact_on_card(b: Builder) -> None:
    """Post a heads-up in #escalations naming the customer's escalation contact, which only the
    contact card picture on the account page shows (read on the screen)."""
    cust, story = b.story(kinds=("customer_escalation", "onboarding", "renewal"))
    person = b.contact_of(cust)
    other = b.customer(exclude=(cust.id,))
    decoy = b.contact_of(other)
    if person.name == decoy.name:
        raise PlantError("contacts collide")
    esc = chat_channel(b, "escalations", topic="Customer escalations: who to call on their side")
    arch = chat_channel(b, "escalations-archive", topic="Archived escalations (read only)")
    _card(b, cust.name, f"Escalation contact\n{person.name}\n{person.title or 'Main contact'}")
    _card(b, other.name, f"Escalation contact\n{decoy.name}\n{decoy.title or 'Main contact'}")
    if b.svc("browser").facts.get(cust.name) is None or b.svc("browser").facts.get(other.name) is None:
        raise PlantError("the customers have no account pages")
    b.fact(person.name)
    b.begin()

    page = open_account(b, cust.name)
    assert page["url"] == f"/accounts/{slug(cust.name)}"
    b.composed(person.name)  # read from the card's pixels: no text observation carries it
    b.decide()
    found = b.call("chat__slack_user_list_channels", {"limit": 200})
    cid = next(c["id"] for c in found.get("channels", []) if c.get("name") == "escalations")
    assert cid == esc
    # back on the screen: the channel's page, its Message box, the Post button
    obs = _click(b, _need(page, "Chat"))
    obs = _click(b, _need(obs, "#escalations"))
    assert obs["url"] == f"/channels/{cid}"
    _click(b, _need(obs, "Message", "textbox"))
    text = f"Heads-up: {cust.name} has escalated. Their escalation contact is {person.name}."
    obs = b.call("computer__type", {"text": text, "marks": True})
    _click(b, _need(obs, "Post", "button"))

    b.expect_message(
        "chat",
        cid,
        contains=[cust.name, person.name],
        exclude=[decoy.name],
        description="#escalations got the heads-up with the customer and the contact on their card",
    )
    b.expect_record(
        "computer",
        "visits",
        {"id": f"/accounts/{slug(cust.name)}"},
        "the customer's account page was looked at on the screen (the card is only a picture)",
    )
    b.no_message("chat", arch, "nothing was posted in the archive channel")
    b.trap("near_duplicate", "another customer's contact card", swap={person.name: decoy.name})
    b.trap("near_duplicate", "the archived escalations channel", swap={cid: arch})
    why = f"the {cust.name} escalation" if story else f"{cust.name}'s escalation"
    b.write(
        b.say(
            f"{cust.name} has escalated. Post a heads-up in #escalations naming the customer and who to "
            "call on their side; their escalation contact is on the contact card of their account page "
            "in our web app.",
            f"On {why}: let #escalations know, with the customer and their escalation contact, which "
            "you'll find on the contact card in the web app's account page for them.",
        ),
        hint="On the screen, open Accounts, click the customer, read the escalation contact on the card "
        "picture, then post the heads-up in #escalations over chat.",
        subtasks=[
            "Open the customer's account page on the screen",
            "Read the escalation contact on the contact card",
            "Post the heads-up with the customer and the contact in #escalations",
        ],
    )
