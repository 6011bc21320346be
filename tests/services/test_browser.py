"""The text browser over the web pages: reading, page-only facts, forms acting through the tools."""

from __future__ import annotations

import re

import pytest

from compoworld.core.environment import Environment


@pytest.fixture
def env() -> Environment:
    return Environment(["browser", "email", "chat", "helpdesk"], seed=4, size="small")


def page(env: Environment, tool: str, **args) -> str:
    r = env.call(f"browser__{tool}", args)
    assert r["success"], r
    return r["data"]["page"]


def eid(text: str, label_part: str) -> str:
    for line in text.splitlines():
        if label_part in line:
            return re.match(r"\[(e\d+)\]", line).group(1)
    raise AssertionError(f"{label_part!r} not on page:\n{text}")


def test_pages_navigate_by_links(env: Environment) -> None:
    home = page(env, "open", url="/")
    assert "link 'Inbox' -> /inbox" in home and "link 'Tickets' -> /tickets" in home
    inbox = page(env, "click", element_id=eid(home, "'Inbox'"))
    assert inbox.startswith("page /inbox\n# Inbox (")
    assert page(env, "read") == inbox  # the tab is state
    missing = env.call("browser__open", {"url": "/nowhere"})
    assert not missing["success"] and missing["error"]["code"] == 404


def test_a_fact_only_the_page_shows(env: Environment) -> None:
    accounts = page(env, "open", url="/accounts")
    first = re.search(r"\[(e\d+)\] link '([^']+)'", accounts)
    detail = page(env, "click", element_id=first.group(1))
    note = re.search(r"text '([^']+)'", detail).group(1)
    assert "Internal account notes" in detail
    # no MCP tool of the other services can return it: it is in none of their state
    for name, svc in env.services.items():
        if name != "browser":
            assert note not in repr(svc.snapshot())


def test_a_form_acts_through_the_tools_and_mcp_sees_it(env: Environment) -> None:
    chans = page(env, "open", url="/channels")
    # post in a channel the user belongs to: try channels until one accepts
    for m in re.finditer(r"\[(e\d+)\] link '#([^']+)'", chans):
        page(env, "open", url="/channels")
        ch = page(env, "click", element_id=m.group(1))
        page(env, "type", element_id=eid(ch, "textbox 'Message'"), text="Posted from the web page 7731")
        r = env.call("browser__click", {"element_id": eid(ch, "button 'Post'")})
        if r["success"]:
            break
    assert r["success"] and "Posted from the web page 7731" in r["data"]["page"]
    found = env.call("chat__slack_user_search_messages", {"query": "7731"})
    assert found["success"] and "Posted from the web page 7731" in repr(found["data"])
    # a ticket closed by a button is closed for the MCP tool too
    tickets = page(env, "open", url="/tickets")
    tid = re.search(r"#(\d+) .*\[open\]", tickets).group(1)
    t = page(env, "open", url=f"/tickets/{tid}")
    page(env, "click", element_id=eid(t, "button 'Close ticket'"))
    got = env.call("helpdesk__freshdesk_get_ticket_by_id", {"ticket_id": int(tid)})
    assert got["data"]["status"] == 5


def test_bad_clicks_and_empty_forms_change_nothing(env: Environment) -> None:
    page(env, "open", url="/inbox")
    msg = page(env, "click", element_id="e1")
    before = env.state_hash()
    r = env.call("browser__click", {"element_id": eid(msg, "button 'Send reply'")})
    assert not r["success"] and r["error"]["code"] == 400 and "fill in" in r["error"]["message"]
    assert env.call("browser__click", {"element_id": "e999"})["error"]["code"] == 404
    assert (
        env.call("browser__type", {"element_id": eid(msg, "text 'From"), "text": "x"})["error"]["code"] == 404
    )
    assert env.state_hash() == before


def test_crm_and_order_pages_show_the_records_mcp_sees() -> None:
    env = Environment(["browser", "crm", "shop"], seed=2, size="small")
    home = page(env, "open", url="/")
    assert "-> /crm" in home and "-> /orders" in home
    page(env, "open", url="/orders")
    detail = page(env, "click", element_id="e1")
    oid = detail.splitlines()[0].rsplit("/", 1)[1]
    assert env.services["shop"].table("orders")[oid]["name"] in detail
    crm = page(env, "open", url="/crm")
    rec = page(env, "click", element_id=eid(crm, "companies:"))
    assert "name: " in rec
