"""Community chat: Discord, modelled on klavis_discord.json (Klavis Discord MCP server).

All nine tools of the spec are modelled with their real names and parameters. Ids are snowflakes;
messages go only to text channels and hold at most 2000 characters; a reaction is added once per
user and can only be removed if present.
"""

from __future__ import annotations

import re
from typing import Any

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.community.seed import seed_community, snowflake
from compoworld.services.community.state import Channel, Member, Message, Server, User

_EMOJI = re.compile(r"^(?:[\w+-]{1,32}|<a?:\w{2,32}:\d+>|[^\x00-\x7f]{1,8})$")


class CommunityService(Service):
    """Discord: a server with members, text channels, messages and reactions."""

    name = "community"
    domain = "communication"
    spec = "klavis_discord.json"

    servers = Resource("servers", Server, label="server")
    users = Resource("users", User)
    members = Resource("members", Member)
    channels = Resource("channels", Channel)
    messages = Resource("messages", Message)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_community(self, ctx)

    def _snowflake(self) -> str:
        n = self.store.tables[META]["next"] + 1
        self.store.put(META, "next", n)
        return snowflake(n)

    def _text_channel(self, channel_id: str) -> dict[str, Any]:
        ch = self.channels.require(channel_id, "channel_id")
        if ch["type"] != 0:
            raise RuleViolation(
                f"channel {channel_id} is a category, not a text channel", type="not_text_channel"
            )
        return ch

    def _message(self, channel_id: str, message_id: str) -> dict[str, Any]:
        self._text_channel(channel_id)
        m = self.messages.get(message_id)
        if m is None or m["channel_id"] != channel_id:
            raise NotFound(
                f"message {message_id} not found in channel {channel_id}", type="message_not_found"
            )
        return m

    def _emoji(self, emoji: str, field: str) -> str:
        e = emoji.strip().strip(":")
        if not e or not _EMOJI.match(e):
            raise InvalidArguments(
                f"'{field}' {emoji!r} is not an emoji (unicode, a name like 'thumbsup', or <:name:id>)",
                type="unknown_emoji",
            )
        return e

    @tool
    def discord_list_servers(self) -> list[dict[str, Any]]:
        """List the Discord servers (guilds) the bot is in: id, name and description; get a server's
        channels with discord_get_server_info."""
        return [
            {"id": s["id"], "name": s["name"], "description": s.get("description", "")}
            for s in sort_records(self.servers.all(), "name")
        ]

    @tool
    def discord_get_server_info(self, server_id: str) -> dict[str, Any]:
        """Get information about a Discord server (guild).

        Args:
            server_id: The ID of the Discord server (guild) to retrieve information for.
        """
        s = self.servers.require(server_id, "server_id")
        return {
            **s,
            "member_count": len(self.members.find(server_id=server_id)),
            "channels": [
                {"id": c["id"], "name": c["name"], "type": c["type"]}
                for c in sort_records(self.channels.find(server_id=server_id), "name")
            ],
        }

    @tool
    def discord_list_members(self, server_id: str, limit: int = 100) -> list[dict[str, Any]]:
        """Get a list of members in a server (Default 100, Max 1000).

        Args:
            server_id: The ID of the Discord server (guild).
            limit: The maximum number of members to return (1-1000).
        """
        self.servers.require(server_id, "server_id")
        check_limit(limit, "limit", 1, 1000)
        out = []
        for m in sorted(self.members.find(server_id=server_id), key=lambda m: int(m["user_id"]))[:limit]:
            u = self.users.get(m["user_id"])
            out.append({"user": u, "nick": m["nick"], "roles": m["roles"], "joined_at": m["joined_at"]})
        return out

    @tool(mutates=True)
    def discord_create_text_channel(
        self, server_id: str, name: str, category_id: str | None = None, topic: str | None = None
    ) -> dict[str, Any]:
        """Create a new text channel (names are lower-cased with dashes, 1-100 characters).

        Args:
            server_id: The ID of the Discord server (guild).
            name: The channel name.
            category_id: The category to put it in.
            topic: The channel topic (at most 1024 characters).
        """
        self.servers.require(server_id, "server_id")
        slug = re.sub(r"[^a-z0-9_-]+", "-", name.strip().lower()).strip("-")
        if not 1 <= len(slug) <= 100:
            raise InvalidArguments("'name' must give 1-100 letters, digits, '-' or '_'")
        if category_id is not None:
            cat = self.channels.require(category_id, "category_id")
            if cat["type"] != 4 or cat["server_id"] != server_id:
                raise RuleViolation(
                    f"{category_id} is not a category of this server", type="invalid_category"
                )
        if topic is not None and len(topic) > 1024:
            raise InvalidArguments("'topic' is longer than 1024 characters")
        return self.channels.create(
            {"server_id": server_id, "name": slug, "type": 0, "parent_id": category_id, "topic": topic},
            id=self._snowflake(),
        )

    @tool(mutates=True)
    def discord_add_reaction(self, channel_id: str, message_id: str, emoji: str) -> dict[str, Any]:
        """Add a reaction to a message.

        Args:
            channel_id: The channel ID.
            message_id: The message ID.
            emoji: Unicode emoji, a name like 'thumbsup', or a custom emoji <:name:id>.
        """
        m = self._message(channel_id, message_id)
        e = self._emoji(emoji, "emoji")
        me = self.store.tables[META]["me"]
        if me in m["reactions"].get(e, []):
            raise Conflict(f"you already reacted with {e}", type="already_reacted")
        self.messages.update(
            message_id, {"reactions": {**m["reactions"], e: [*m["reactions"].get(e, []), me]}}
        )
        return {"message_id": message_id, "emoji": e, "added": True}

    @tool(mutates=True)
    def discord_add_multiple_reactions(
        self, channel_id: str, message_id: str, emojis: list[str]
    ) -> dict[str, Any]:
        """Add several reactions to a message (all valid, or none is added).

        Args:
            channel_id: The channel ID.
            message_id: The message ID.
            emojis: The emojis to add.
        """
        m = self._message(channel_id, message_id)
        if not emojis or len(emojis) > 20:
            raise InvalidArguments("'emojis' must hold 1 to 20 emojis")
        me = self.store.tables[META]["me"]
        reactions = dict(m["reactions"])
        added = []
        for k, raw in enumerate(emojis):
            e = self._emoji(raw, f"emojis[{k}]")
            if me not in reactions.get(e, []):
                reactions[e] = [*reactions.get(e, []), me]
                added.append(e)
        if not added:
            raise Conflict("you already reacted with every one of these", type="already_reacted")
        self.messages.update(message_id, {"reactions": reactions})
        return {"message_id": message_id, "added": added}

    @tool(mutates=True)
    def discord_remove_reaction(self, channel_id: str, message_id: str, emoji: str) -> dict[str, Any]:
        """Remove your reaction from a message.

        Args:
            channel_id: The channel ID.
            message_id: The message ID.
            emoji: The emoji to remove.
        """
        m = self._message(channel_id, message_id)
        e = self._emoji(emoji, "emoji")
        me = self.store.tables[META]["me"]
        if me not in m["reactions"].get(e, []):
            raise NotFound(f"you have no {e} reaction on this message", type="reaction_not_found")
        left = [u for u in m["reactions"][e] if u != me]
        reactions = {k: v for k, v in m["reactions"].items() if k != e}
        if left:
            reactions[e] = left
        self.messages.update(message_id, {"reactions": reactions})
        return {"message_id": message_id, "emoji": e, "removed": True}

    @tool(mutates=True)
    def discord_send_message(self, channel_id: str, content: str) -> dict[str, Any]:
        """Send a message to a text channel (1-2000 characters).

        Args:
            channel_id: The channel ID.
            content: The message text.
        """
        self._text_channel(channel_id)
        if not content.strip() or len(content) > 2000:
            raise InvalidArguments("'content' must be 1 to 2000 characters")
        return self.messages.create(
            {
                "channel_id": channel_id,
                "author_id": self.store.tables[META]["me"],
                "content": content,
                "timestamp": self.clock.iso(),
            },
            id=self._snowflake(),
        )

    @tool
    def discord_read_messages(self, channel_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Read the most recent messages of a channel, newest first.

        Args:
            channel_id: The channel ID.
            limit: Number of messages (1-100).
        """
        self._text_channel(channel_id)
        check_limit(limit, "limit", 1, 100)
        out = []
        for m in sorted(self.messages.find(channel_id=channel_id), key=lambda m: int(m["id"]), reverse=True)[
            :limit
        ]:
            u = self.users.get(m["author_id"]) or {}
            out.append(
                {
                    **m,
                    "author": {"id": m["author_id"], "username": u.get("username")},
                    "reactions": [{"emoji": k, "count": len(v)} for k, v in m["reactions"].items()],
                }
            )
        return out

    @tool
    def discord_get_user_info(self, user_id: str) -> dict[str, Any]:
        """Get information about a user.

        Args:
            user_id: The user ID.
        """
        return self.users.require(user_id, "user_id")
