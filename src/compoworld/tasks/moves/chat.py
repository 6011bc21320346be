"""Chat moves: a channel message that carries a fact; posting a fact in a channel."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _my_channels(g: Gen) -> list[dict]:
    me = "U" + g.company.me.id
    return sorted(
        (
            c
            for c in g.svc("chat").table("channels").values()
            if not c["is_im"] and not c["is_archived"] and me in c["members"]
        ),
        key=lambda c: c["name"],
    )


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("chat")
    ch = g.rng.choice(_my_channels(g))
    author = g.rng.choice([m for m in ch["members"] if m.startswith("U")])
    ts = f"{int(g.env.clock.epoch()) - (86400 * 30 if decoy else 3600)}.{svc.next_seq('ts'):06d}"
    svc.insert(
        "messages",
        {
            "ts": ts,
            "channel": ch["id"],
            "user": author,
            "text": f"Re {key_text(key)}: {text}",
            "thread_ts": None,
            "reply_count": 0,
            "reactions": {},
        },
        key="ts",
    )
    return [("chat__slack_user_search_messages", {"query": key_text(key), "sort": "timestamp"})]


def _post(g: Gen, fact: Fact) -> WriteStep:
    ch = g.rng.choice(_my_channels(g))
    text = f"FYI: {fact.value}"
    return WriteStep(
        calls=[
            ("chat__slack_user_list_channels", {"channel_name": ch["name"]}),
            ("chat__slack_user_post_message", {"channel_id": ch["id"], "text": text}),
        ],
        checks=[
            (
                f"the {fact.noun} was posted in #{ch['name']}",
                {
                    "predicate": "record_exists",
                    "service": "chat",
                    "table": "messages",
                    "new": True,
                    "where": {"channel": ch["id"], "text": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "chat", "table": "messages"}],
        phrase=g.rng.choice(
            (
                f"post that {{it}} in #{ch['name']}",
                f"share that {{it}} in the #{ch['name']} channel",
                f"let #{ch['name']} know the {{it}}",
            )
        ),
    )


MOVES = [
    Relay(
        "chat",
        "channel_message",
        ("customer", "code"),
        ("code", "amount", "date", "person", "phone"),
        "the Slack message",
        "in Slack",
        _plant,
    ),
    Write("chat", "post_message", ("any",), None, _post),
]
