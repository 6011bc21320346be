"""Discord moves: a community message that carries a fact; answering in a channel."""

from __future__ import annotations

from compoworld.tasks.moves.base import Fact, Gen, Relay, Write, WriteStep, key_text


def _channels(g: Gen) -> list[dict]:
    return sorted(g.svc("community").channels.find(type=0), key=lambda c: c["name"])


def _plant(g: Gen, key: Fact, value: Fact, text: str, decoy: bool) -> list:
    svc = g.svc("community")
    ch = g.rng.choice(_channels(g))
    author = g.rng.choice(svc.users.all())["id"]
    svc.messages.create(
        {
            "channel_id": ch["id"],
            "author_id": author,
            "content": f"{key_text(key)}: {text}",
            "timestamp": g.env.clock.iso(),
        },
        id=svc._snowflake(),
    )
    return [("community__discord_read_messages", {"channel_id": ch["id"], "limit": 100})]


def _say(g: Gen, fact: Fact) -> WriteStep:
    ch = g.rng.choice(_channels(g))
    return WriteStep(
        calls=[
            ("community__discord_send_message", {"channel_id": ch["id"], "content": f"Update: {fact.value}"})
        ],
        checks=[
            (
                f"it was posted in #{ch['name']} on Discord",
                {
                    "predicate": "record_exists",
                    "service": "community",
                    "table": "messages",
                    "new": True,
                    "where": {"channel_id": ch["id"], "content": {"contains": fact.value}},
                },
            )
        ],
        allow=[{"service": "community", "table": "messages"}, {"service": "community", "table": "_meta"}],
        phrase=f"post that {{it}} in the #{ch['name']} channel of our Discord server",
    )


MOVES = [
    Relay(
        "community",
        "community_message",
        ("customer", "code"),
        ("code", "amount", "date", "person", "phone"),
        "the Discord message",
        "on our Discord server",
        _plant,
    ),
    Write("community", "post_discord", ("any",), None, _say),
]
