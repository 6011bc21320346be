from __future__ import annotations

import pytest

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "email__"


@pytest.fixture
def env() -> Environment:
    return Environment(services=["email"], seed=4)


def _any_message(env: Environment, with_attachment: bool = False) -> dict:
    msgs = env.services["email"].table("messages").values()
    return next(m for m in msgs if bool(m["attachments"]) == with_attachment)


def test_seed_is_large_enough_to_need_search(env: Environment) -> None:
    assert len(env.services["email"].table("messages")) > 100
    me = env.company.me.email
    assert all(me in (m["from"], *m["to"]) for m in env.services["email"].table("messages").values())


@pytest.mark.parametrize("seed", range(8))
def test_no_seeded_email_is_dated_after_the_clock(seed: int) -> None:
    """A thread begun this morning has its replies (3 hours apart) by now, never after it."""
    env = Environment(services=["email"], seed=seed)
    now = env.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    dates = [m["date"] for m in env.services["email"].table("messages").values()]
    assert dates and max(dates) <= now


@pytest.mark.parametrize("seed", range(3))
def test_a_seeded_threads_replies_say_something_of_their_own(seed: int) -> None:
    """A reply in a seeded thread is not the first message's words again (from play: "filler emails
    echo the text back word for word"), and only the first message carries the invoice."""
    env = Environment(services=["email"], seed=seed)
    threads: dict[str, list[dict]] = {}
    for m in env.services["email"].table("messages").values():
        threads.setdefault(m["threadId"], []).append(m)
    long = [sorted(ms, key=lambda m: m["date"]) for ms in threads.values() if len(ms) > 1]
    assert len(long) >= 5
    for ms in long:
        assert len({m["body"] for m in ms}) == len(ms), [m["body"] for m in ms]
        assert not any(m["attachments"] for m in ms[1:])


def test_send_then_search_and_read(env: Environment) -> None:
    me = env.company.me.email
    sent = ok(
        env,
        S + "gmail_send_email",
        {
            "to": ["Pat@Example.com"],
            "subject": "Quarterly plan",
            "body": "See attached plan.",
            "cc": ["a@b.io"],
        },
    )
    hits = ok(env, S + "gmail_search_emails", {"query": 'to:pat@example.com subject:"quarterly plan"'})
    assert [m["id"] for m in hits["messages"]] == [sent["messageId"]]
    thread = ok(env, S + "gmail_read_email", {"messageId": sent["messageId"]})
    msg = thread["messages"][0]
    assert msg["from"] == me and msg["to"] == ["pat@example.com"] and msg["cc"] == ["a@b.io"]
    assert msg["labelIds"] == ["SENT"] and msg["date"] == env.clock.iso()


def test_reply_joins_the_thread(env: Environment) -> None:
    parent = _any_message(env)
    r = ok(
        env,
        S + "gmail_send_email",
        {"to": [parent["from"]], "subject": "Re: x", "body": "ok", "inReplyTo": parent["id"]},
    )
    assert r["threadId"] == parent["threadId"]
    thread = ok(env, S + "gmail_read_email", {"messageId": parent["id"]})["messages"]
    assert thread[-1]["messageId"] == r["messageId"]


def test_send_errors(env: Environment) -> None:
    err(env, S + "gmail_send_email", {"to": [], "subject": "s", "body": "b"}, 400)
    msg = err(env, S + "gmail_send_email", {"to": ["nobody"], "subject": "s", "body": "b"}, 400)
    assert "'to'" in msg and "nobody" in msg
    err(
        env,
        S + "gmail_send_email",
        {"to": ["a@b.co"], "subject": "s", "body": "b", "threadId": "t-none"},
        404,
        "thread_not_found",
    )
    err(
        env,
        S + "gmail_send_email",
        {"to": ["a@b.co"], "subject": "s", "body": "b", "inReplyTo": "m-none"},
        404,
    )
    err(
        env,
        S + "gmail_send_email",
        {"to": ["a@b.co"], "subject": "s", "body": "b", "mimeType": "text/html"},
        400,
    )
    p = _any_message(env)
    other = next(
        m for m in env.services["email"].table("messages").values() if m["threadId"] != p["threadId"]
    )
    err(
        env,
        S + "gmail_send_email",
        {"to": ["a@b.co"], "subject": "s", "body": "b", "inReplyTo": p["id"], "threadId": other["threadId"]},
        422,
        "thread_mismatch",
    )


def test_draft(env: Environment) -> None:
    d = ok(env, S + "gmail_draft_email", {"to": ["x@y.com"], "subject": "Draft", "body": "later"})
    assert (
        ok(env, S + "gmail_search_emails", {"query": "in:draft subject:draft"})["messages"][0]["id"]
        == d["draftId"]
    )
    err(env, S + "gmail_draft_email", {"to": ["x"], "subject": "Draft", "body": "later"}, 400)


def test_search_operators(env: Environment) -> None:
    unread = ok(env, S + "gmail_search_emails", {"query": "is:unread", "maxResults": 500})
    assert unread["messages"] and all("UNREAD" in m["labelIds"] for m in unread["messages"])
    assert unread["resultSizeEstimate"] == len(unread["messages"])
    att = ok(env, S + "gmail_search_emails", {"query": "has:attachment", "maxResults": 3})["messages"]
    assert len(att) == 3
    dates = [
        m["date"]
        for m in ok(env, S + "gmail_search_emails", {"query": "after:2026/02/01", "maxResults": 50})[
            "messages"
        ]
    ]
    assert dates == sorted(dates, reverse=True) and all(d >= "2026-02-01" for d in dates)
    neg = ok(env, S + "gmail_search_emails", {"query": "-is:unread", "maxResults": 500})["messages"]
    assert not any("UNREAD" in m["labelIds"] for m in neg)
    assert ok(env, S + "gmail_search_emails", {"query": "label:invoices", "maxResults": 1})["messages"]
    err(env, S + "gmail_search_emails", {"query": "is:weird"}, 400)
    err(env, S + "gmail_search_emails", {"query": "after:yesterday"}, 400)
    err(env, S + "gmail_search_emails", {"query": "x", "maxResults": 0}, 400)
    err(env, S + "gmail_search_emails", {"query": "frob:x"}, 400)


def test_modify_and_labels(env: Environment) -> None:
    m = _any_message(env)
    lab = ok(env, S + "gmail_create_label", {"name": "Escalated"})
    r = ok(
        env,
        S + "gmail_modify_email",
        {"messageId": m["id"], "addLabelIds": [lab["id"], "STARRED"], "removeLabelIds": ["INBOX"]},
    )
    assert lab["id"] in r["labelIds"] and "INBOX" not in r["labelIds"]
    labels = {x["id"]: x for x in ok(env, S + "gmail_list_labels")["labels"]}
    assert labels[lab["id"]]["messagesTotal"] == 1
    err(env, S + "gmail_create_label", {"name": "escalated "}, 409, "label_exists")
    err(env, S + "gmail_create_label", {"name": "  "}, 400)
    err(
        env,
        S + "gmail_modify_email",
        {"messageId": m["id"], "addLabelIds": ["Label_999"]},
        404,
        "label_not_found",
    )
    err(
        env, S + "gmail_modify_email", {"messageId": m["id"], "addLabelIds": ["SENT"]}, 422, "label_protected"
    )
    err(
        env,
        S + "gmail_modify_email",
        {"messageId": m["id"], "addLabelIds": ["STARRED"], "removeLabelIds": ["STARRED"]},
        400,
    )
    err(env, S + "gmail_modify_email", {"messageId": "nope"}, 404)


def test_batch_operations_are_all_or_nothing(env: Environment) -> None:
    ids = list(env.services["email"].table("messages"))[:5]
    r = ok(
        env,
        S + "gmail_batch_modify_emails",
        {"messageIds": ids, "addLabelIds": ["IMPORTANT"], "batchSize": 2},
    )
    assert r == {"modified": 5, "batches": 3}
    assert all("IMPORTANT" in env.services["email"].table("messages")[i]["labelIds"] for i in ids)
    err(
        env, S + "gmail_batch_modify_emails", {"messageIds": [*ids, "ghost"], "addLabelIds": ["STARRED"]}, 404
    )
    err(env, S + "gmail_batch_modify_emails", {"messageIds": []}, 400)
    err(env, S + "gmail_batch_delete_emails", {"messageIds": [ids[0], "ghost"]}, 404)
    err(env, S + "gmail_batch_delete_emails", {"messageIds": ids, "batchSize": 0}, 400)
    assert ok(env, S + "gmail_batch_delete_emails", {"messageIds": ids})["deleted"] == 5
    assert not set(ids) & set(env.services["email"].table("messages"))


def test_delete_and_attachments(env: Environment) -> None:
    m = _any_message(env, with_attachment=True)
    atts = ok(env, S + "gmail_get_email_attachments", {"messageId": m["id"]})["attachments"]
    assert atts[0]["filename"].endswith(".pdf") and "INVOICE" in atts[0]["content"]
    ok(env, S + "gmail_delete_email", {"messageId": m["id"]})
    err(env, S + "gmail_read_email", {"messageId": m["id"]}, 404)
    err(env, S + "gmail_delete_email", {"messageId": m["id"]}, 404)
    err(env, S + "gmail_get_email_attachments", {"messageId": m["id"]}, 404)


def test_search_contacts_shares_the_company(env: Environment) -> None:
    cust = env.company.customers[0]
    person = env.company.person(cust.contact_ids[0])
    r = ok(env, S + "gmail_search_contacts", {"query": person.last, "contactType": "all"})
    found = [c["email"] for kind in r.values() for c in kind["results"]]
    assert person.email in found
    colleague = (
        env.company.employees[0] if env.company.employees[0] != env.company.me else env.company.employees[1]
    )
    d = ok(env, S + "gmail_search_contacts", {"query": colleague.email, "contactType": "directory"})
    assert d["results"][0]["name"] == colleague.name
    page = ok(
        env,
        S + "gmail_search_contacts",
        {"query": env.company.domain, "contactType": "directory", "pageSize": 5},
    )
    assert len(page["results"]) == 5 and page["nextPageToken"]
    nxt = ok(
        env,
        S + "gmail_search_contacts",
        {
            "query": env.company.domain,
            "contactType": "directory",
            "pageSize": 5,
            "pageToken": page["nextPageToken"],
        },
    )
    assert {c["email"] for c in nxt["results"]}.isdisjoint({c["email"] for c in page["results"]})
    err(env, S + "gmail_search_contacts", {"query": ""}, 400)
    err(env, S + "gmail_search_contacts", {"query": "a", "contactType": "personal", "pageSize": 31}, 400)
    err(env, S + "gmail_search_contacts", {"query": "a", "pageToken": "garbage!"}, 400)
