from __future__ import annotations

import pytest

from compoworld.core.environment import Environment
from compoworld.services.chat.seed import BOT_ID
from tests.services.helpers import err, ok

S = "chat__"


@pytest.fixture
def env() -> Environment:
    return Environment(services=["chat"], seed=9)


def _chan(env: Environment, name: str) -> dict:
    return next(c for c in env.services["chat"].table("channels").values() if c["name"] == name)


def _me(env: Environment) -> str:
    return "U" + env.company.me.id


def test_list_channels_paginates_and_filters(env: Environment) -> None:
    first = ok(env, S + "slack_user_list_channels", {"limit": 5})
    assert len(first["channels"]) == 5 and first["next_cursor"]
    rest = ok(env, S + "slack_user_list_channels", {"limit": 1000, "cursor": first["next_cursor"]})
    names = [c["name"] for c in first["channels"] + rest["channels"]]
    assert (
        names == sorted(names) and "general" in names and "leadership" not in names
    )  # private, not a member
    assert [
        c["name"] for c in ok(env, S + "slack_user_list_channels", {"channel_name": "GEN"})["channels"]
    ] == ["general"]
    ims = ok(env, S + "slack_user_list_channels", {"types": "im"})["channels"]
    assert ims and all("user" in c for c in ims)
    dm_user = ims[0]["user"]
    assert ok(env, S + "slack_user_list_channels", {"types": "im", "user_id": dm_user})["channels"] == [
        ims[0]
    ]
    detailed = ok(env, S + "slack_user_list_channels", {"response_format": "detailed", "limit": 1})[
        "channels"
    ][0]
    assert detailed["num_members"] == len(detailed["members"])
    err(env, S + "slack_user_list_channels", {"types": "public_channel,group"}, 400)
    err(env, S + "slack_user_list_channels", {"limit": 0}, 400)
    err(env, S + "slack_user_list_channels", {"cursor": "nonsense"}, 400)


def test_post_reply_react_and_read_back(env: Environment) -> None:
    gen = _chan(env, "general")["id"]
    post = ok(env, S + "slack_user_post_message", {"channel_id": gen, "text": "Release notes are out"})
    hist = ok(env, S + "slack_get_channel_history", {"channel_id": gen, "limit": 1})["messages"]
    assert hist[0]["ts"] == post["ts"] and hist[0]["user_id"] == _me(env)
    reply = ok(
        env, S + "slack_user_reply_to_thread", {"channel_id": gen, "thread_ts": post["ts"], "text": "thanks"}
    )
    ok(env, S + "slack_bot_reply_to_thread", {"channel_id": gen, "thread_ts": post["ts"], "text": "bot ack"})
    thread = ok(env, S + "slack_get_thread_replies", {"channel_id": gen, "thread_ts": post["ts"]})["messages"]
    assert [m["is_parent"] for m in thread] == [True, False, False] and thread[1]["ts"] == reply["ts"]
    assert (
        ok(env, S + "slack_get_channel_history", {"channel_id": gen, "limit": 1})["messages"][0][
            "reply_count"
        ]
        == 2
    )
    ok(env, S + "slack_user_add_reaction", {"channel_id": gen, "timestamp": post["ts"], "reaction": ":tada:"})
    ok(env, S + "slack_bot_add_reaction", {"channel_id": gen, "timestamp": post["ts"], "reaction": "tada"})
    msg = env.services["chat"].table("messages")[post["ts"]]
    assert msg["reactions"] == {"tada": [_me(env), BOT_ID]}
    err(
        env,
        S + "slack_user_add_reaction",
        {"channel_id": gen, "timestamp": post["ts"], "reaction": "tada"},
        409,
        "already_reacted",
    )
    err(
        env,
        S + "slack_user_add_reaction",
        {"channel_id": gen, "timestamp": post["ts"], "reaction": "no spaces"},
        400,
    )
    err(env, S + "slack_user_add_reaction", {"channel_id": gen, "timestamp": "1.2", "reaction": "eyes"}, 404)
    err(
        env,
        S + "slack_bot_add_reaction",
        {"channel_id": "CNOPE", "timestamp": post["ts"], "reaction": "eyes"},
        404,
    )


def test_message_to_unknown_or_closed_channel_is_refused(env: Environment) -> None:
    err(env, S + "slack_user_post_message", {"channel_id": "C404", "text": "hi"}, 404, "channel_not_found")
    err(env, S + "slack_bot_post_message", {"channel_id": "C404", "text": "hi"}, 404, "channel_not_found")
    old = _chan(env, "old-announcements")["id"]
    err(env, S + "slack_user_post_message", {"channel_id": old, "text": "hi"}, 422, "is_archived")
    lead = _chan(env, "leadership")
    if _me(env) not in lead["members"]:  # private and not a member: it does not exist for you
        err(env, S + "slack_user_post_message", {"channel_id": lead["id"], "text": "hi"}, 404)
    rnd = _chan(env, "random")["id"]  # the bot is not in #random
    err(env, S + "slack_bot_post_message", {"channel_id": rnd, "text": "hi"}, 422, "not_in_channel")
    err(env, S + "slack_user_post_message", {"channel_id": rnd, "text": "   "}, 400, "no_text")
    err(env, S + "slack_user_post_message", {"channel_id": rnd, "text": "x" * 40001}, 400, "msg_too_long")
    err(
        env,
        S + "slack_user_reply_to_thread",
        {"channel_id": rnd, "thread_ts": "999.1", "text": "x"},
        404,
        "thread_not_found",
    )
    err(env, S + "slack_bot_reply_to_thread", {"channel_id": rnd, "thread_ts": "999.1", "text": "x"}, 422)


def test_history_window_and_pagination(env: Environment) -> None:
    gen = _chan(env, "general")["id"]
    page1 = ok(env, S + "slack_get_channel_history", {"channel_id": gen, "limit": 3})
    page2 = ok(
        env, S + "slack_get_channel_history", {"channel_id": gen, "limit": 3, "cursor": page1["next_cursor"]}
    )
    ts = [float(m["ts"]) for m in page1["messages"] + page2["messages"]]
    assert ts == sorted(ts, reverse=True) and len(set(ts)) == 6
    mid = page1["messages"][1]["ts"]
    exact = ok(
        env,
        S + "slack_get_channel_history",
        {"channel_id": gen, "oldest": mid, "latest": mid, "inclusive": True},
    )
    assert [m["ts"] for m in exact["messages"]] == [mid]
    err(env, S + "slack_get_channel_history", {"channel_id": gen, "oldest": "yesterday"}, 400)
    err(env, S + "slack_get_channel_history", {"channel_id": "CNOPE"}, 404)
    err(env, S + "slack_get_thread_replies", {"channel_id": gen, "thread_ts": "1.0"}, 404)


def test_invite_users(env: Environment) -> None:
    chan = _chan(env, "random")
    users = ok(env, S + "slack_list_users", {"limit": 1000})["members"]
    assert len(users) == len(env.company.employees) + 1
    r = ok(env, S + "slack_invite_users_to_channel", {"channel_id": chan["id"], "user_ids": [BOT_ID]})
    assert r["invited"] == [BOT_ID]
    ok(env, S + "slack_bot_post_message", {"channel_id": chan["id"], "text": "now I can post"})
    err(
        env,
        S + "slack_invite_users_to_channel",
        {"channel_id": chan["id"], "user_ids": [BOT_ID]},
        409,
        "already_in_channel",
    )
    err(
        env,
        S + "slack_invite_users_to_channel",
        {"channel_id": chan["id"], "user_ids": ["UGHOST"]},
        404,
        "user_not_found",
    )
    err(env, S + "slack_invite_users_to_channel", {"channel_id": chan["id"], "user_ids": []}, 400)
    dm = ok(env, S + "slack_user_list_channels", {"types": "im"})["channels"][0]["id"]
    err(env, S + "slack_invite_users_to_channel", {"channel_id": dm, "user_ids": [BOT_ID]}, 422)


def test_users_directory(env: Environment) -> None:
    person = env.company.employees[3]
    found = ok(env, S + "slack_list_users", {"name": person.last.lower()})["members"]
    assert any(u["real_name"] == person.name for u in found)
    info = ok(env, S + "slack_user_get_info", {"user_id": "U" + person.id, "include_locale": True})["user"]
    assert info["profile"]["email"] == person.email and info["locale"] == "en-US"
    err(env, S + "slack_user_get_info", {"user_id": "UNOPE"}, 404)
    page = ok(env, S + "slack_list_users", {"limit": 10})
    assert len(page["members"]) == 10 and page["next_cursor"]


def test_search_messages(env: Environment) -> None:
    gen = _chan(env, "general")["id"]
    ok(env, S + "slack_user_post_message", {"channel_id": gen, "text": "The zebra migration finished"})
    hits = ok(env, S + "slack_user_search_messages", {"query": "zebra in:#general"})
    assert hits["total"] == 1 and hits["messages"][0]["channel_name"] == "general"
    me = env.services["chat"].table("users")[_me(env)]["name"]
    assert ok(env, S + "slack_user_search_messages", {"query": f"zebra from:@{me}"})["total"] == 1
    assert (
        ok(
            env,
            S + "slack_user_search_messages",
            {"query": "zebra", "channel_ids": [_chan(env, "random")["id"]]},
        )["total"]
        == 0
    )
    many = ok(env, S + "slack_user_search_messages", {"query": "rollout", "sort": "timestamp", "count": 5})
    ts = [float(m["ts"]) for m in many["messages"]]
    assert ts == sorted(ts, reverse=True)
    err(env, S + "slack_user_search_messages", {"query": "x", "channel_ids": ["CNOPE"]}, 404)
    err(env, S + "slack_user_search_messages", {"query": "  "}, 400)
    err(env, S + "slack_user_search_messages", {"query": "before:soon"}, 400)
    err(env, S + "slack_user_search_messages", {"query": "x", "count": 101}, 400)
