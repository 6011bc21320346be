"""Chat service: a Slack workspace, modelled on klavis_slack.json (Klavis Slack MCP server).

All thirteen tools of the spec are modelled with their real names and parameters: user and bot
posting, threads, reactions, channel history with cursors, user directory and message search.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from compoworld.core.clock import UTC
from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, paginate
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.chat.seed import BOT_ID, seed_chat
from compoworld.services.chat.state import ChatState

Format = Literal["concise", "detailed"]
_REACTION = re.compile(r"^[a-z0-9_+\-']{1,100}$")
_TYPES = {"public_channel", "private_channel", "mpim", "im"}
MAX_TEXT = 40000


def _ts_float(ts: str, field: str) -> float:
    try:
        return float(ts)
    except (TypeError, ValueError):
        raise InvalidArguments(
            f"'{field}' must be a Unix timestamp such as '1234567890.123456', got {ts!r}"
        ) from None


class ChatService(Service):
    """Slack workspace: channels, DMs, threads, reactions, user directory and message search."""

    name = "chat"
    domain = "communication"
    spec = "klavis_slack.json"
    state_model = ChatState

    def seed_data(self, ctx: SeedContext) -> None:
        seed_chat(self, ctx)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["owner"]

    # ---- helpers ------------------------------------------------------------------------
    def _channel(self, channel_id: str, as_user: str | None = None) -> dict[str, Any]:
        ch = self.get("channels", channel_id)
        viewer = as_user or self._me
        if ch is None or (ch["is_private"] and viewer not in ch["members"]):
            raise NotFound(f"channel '{channel_id}' not found", type="channel_not_found")
        return ch

    def _msg_view(self, m: dict[str, Any], fmt: str) -> dict[str, Any]:
        if fmt == "detailed":
            users = self.table("users")
            return {
                **m,
                "type": "message",
                "username": users.get(m["user"], {}).get("name"),
                "reactions": [{"name": k, "users": v, "count": len(v)} for k, v in m["reactions"].items()],
            }
        out = {"user_id": m["user"], "ts": m["ts"], "text": m["text"]}
        if m["thread_ts"]:
            out["thread_ts"] = m["thread_ts"]
        if m["reply_count"]:
            out["reply_count"] = m["reply_count"]
        if m["reactions"]:
            out["reactions"] = [{"name": k, "count": len(v)} for k, v in m["reactions"].items()]
        return out

    def _window(self, msgs, oldest, latest, inclusive):
        lo = _ts_float(oldest, "oldest") if oldest else None
        hi = _ts_float(latest, "latest") if latest else None
        out = []
        for m in msgs:
            t = float(m["ts"])
            if lo is not None and (t < lo or (t == lo and not inclusive)):
                continue
            if hi is not None and (t > hi or (t == hi and not inclusive)):
                continue
            out.append(m)
        return out

    def _post(self, author: str, channel_id: str, text: str, thread_ts: str | None = None) -> dict[str, Any]:
        ch = self._channel(channel_id, author)
        if ch["is_archived"]:
            raise RuleViolation(f"channel '{channel_id}' is archived", type="is_archived")
        if author not in ch["members"]:
            raise RuleViolation(
                f"{'the bot' if author == BOT_ID else 'you'} are not a member of channel '{channel_id}'",
                type="not_in_channel",
            )
        if not text.strip():
            raise InvalidArguments("'text' must not be empty", type="no_text")
        if len(text) > MAX_TEXT:
            raise InvalidArguments(f"'text' is longer than {MAX_TEXT} characters", type="msg_too_long")
        if thread_ts is not None:
            parent = self.get("messages", thread_ts)
            if (
                parent is None
                or parent["channel"] != channel_id
                or parent["thread_ts"] not in (None, parent["ts"])
            ):
                raise NotFound(
                    f"thread '{thread_ts}' not found in channel '{channel_id}'", type="thread_not_found"
                )
            self.update("messages", thread_ts, reply_count=parent["reply_count"] + 1)
        ts = f"{int(self.clock.epoch())}.{self.next_seq('ts'):06d}"
        msg = {
            "ts": ts,
            "channel": channel_id,
            "user": author,
            "text": text,
            "thread_ts": thread_ts,
            "reply_count": 0,
            "reactions": {},
        }
        self.insert("messages", msg, key="ts")
        return {"ok": True, "channel": channel_id, "ts": ts, "message": self._msg_view(msg, "concise")}

    def _react(self, author: str, channel_id: str, timestamp: str, reaction: str) -> dict[str, Any]:
        ch = self._channel(channel_id, author)
        name = reaction.strip(":")
        if not _REACTION.match(name):
            raise InvalidArguments(
                f"'reaction' {reaction!r} is not an emoji name such as 'thumbsup'", type="invalid_name"
            )
        msg = self.get("messages", timestamp)
        if msg is None or msg["channel"] != ch["id"]:
            raise NotFound(
                f"message '{timestamp}' not found in channel '{channel_id}'", type="message_not_found"
            )
        users = msg["reactions"].get(name, [])
        if author in users:
            raise Conflict(f"already reacted with '{name}'", type="already_reacted")
        self.update("messages", timestamp, reactions={**msg["reactions"], name: [*users, author]})
        return {"ok": True, "channel": channel_id, "ts": timestamp, "reaction": name}

    # ---- tools --------------------------------------------------------------------------
    @tool
    def slack_user_list_channels(
        self,
        limit: int = 100,
        cursor: str | None = None,
        types: str = "public_channel",
        channel_name: str | None = None,
        user_id: str | None = None,
        response_format: Format = "concise",
    ) -> dict[str, Any]:
        """List all channels the authenticated user has access to. Supports filtering by channel name or DM user ID, and flexible response formats.

        Args:
            limit: Maximum number of channels to return (default 100, max 1000).
            cursor: Pagination cursor for next page of results (next_cursor of the previous response).
            types: Comma-separated channel types: public_channel, private_channel, mpim, im.
            channel_name: Filter channels by name (case-insensitive partial match). Ignored for im.
            user_id: Filter DMs by user ID (exact match). Only applies when types includes 'im'.
            response_format: 'concise' returns only id and name/user fields; 'detailed' complete objects.
        """
        check_limit(limit, "limit", 1, 1000)
        wanted = {t.strip() for t in types.split(",") if t.strip()}
        bad = wanted - _TYPES
        if bad or not wanted:
            raise InvalidArguments(f"'types' has unknown channel type(s) {sorted(bad)}; use {sorted(_TYPES)}")
        me = self._me
        out = []
        for ch in self.table("channels").values():
            kind = "im" if ch["is_im"] else "private_channel" if ch["is_private"] else "public_channel"
            if kind not in wanted or (ch["is_private"] and me not in ch["members"]):
                continue
            if kind == "im":
                if user_id and user_id not in ch["members"]:
                    continue
            elif channel_name and norm(channel_name) not in ch["name"].lower():
                continue
            out.append(ch)
        out.sort(key=lambda c: (c["name"], c["id"]))
        page, nxt = paginate(out, cursor, limit)
        if response_format == "concise":
            page = [
                {"id": c["id"], "user": next(m for m in c["members"] if m != me)}
                if c["is_im"]
                else {"id": c["id"], "name": c["name"]}
                for c in page
            ]
        else:
            page = [{**c, "num_members": len(c["members"])} for c in page]
        return {"channels": page, "next_cursor": nxt}

    @tool
    def slack_get_channel_history(
        self,
        channel_id: str,
        limit: int = 10,
        cursor: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
        inclusive: bool = False,
        response_format: Format = "concise",
    ) -> dict[str, Any]:
        """Get recent messages from a channel, newest first (thread replies are read with slack_get_thread_replies).

        Args:
            channel_id: The ID of the channel
            limit: Number of messages to retrieve (default 10, max 1000)
            cursor: Pagination cursor for next page of results
            oldest: Only messages after this Unix timestamp (e.g., '1234567890.123456')
            latest: Only messages before this Unix timestamp
            inclusive: Include messages with oldest or latest timestamps in results
            response_format: 'concise' returns essential fields; 'detailed' the complete message.
        """
        check_limit(limit, "limit", 1, 1000)
        self._channel(channel_id)
        msgs = [m for m in self.store.lookup("messages", "channel", channel_id) if m["thread_ts"] is None]
        msgs = self._window(msgs, oldest, latest, inclusive)
        msgs.sort(key=lambda m: float(m["ts"]), reverse=True)
        page, nxt = paginate(msgs, cursor, limit)
        return {
            "messages": [self._msg_view(m, response_format) for m in page],
            "has_more": nxt is not None,
            "next_cursor": nxt,
        }

    @tool
    def slack_get_thread_replies(
        self,
        channel_id: str,
        thread_ts: str,
        limit: int = 10,
        cursor: str | None = None,
        oldest: str | None = None,
        latest: str | None = None,
        inclusive: bool = True,
        response_format: Format = "concise",
    ) -> dict[str, Any]:
        """Get all replies in a message thread, including the parent message, oldest first.

        Args:
            channel_id: The ID of the channel containing the thread (e.g., 'C1234567890')
            thread_ts: The timestamp of the parent message that started the thread
            limit: Maximum number of messages to return (default 10, max 1000)
            cursor: Pagination cursor for next page of results
            oldest: Only messages after this Unix timestamp (inclusive)
            latest: Only messages before this Unix timestamp (exclusive)
            inclusive: Include messages with oldest or latest timestamps in results
            response_format: 'concise' returns only essential fields; 'detailed' the complete messages.
        """
        check_limit(limit, "limit", 1, 1000)
        self._channel(channel_id)
        parent = self.get("messages", thread_ts)
        if parent is None or parent["channel"] != channel_id or parent["thread_ts"] is not None:
            raise NotFound(
                f"thread '{thread_ts}' not found in channel '{channel_id}'", type="thread_not_found"
            )
        msgs = [parent] + self.store.lookup("messages", "thread_ts", thread_ts)
        msgs = self._window(msgs, oldest, latest, inclusive)
        msgs.sort(key=lambda m: float(m["ts"]))
        page, nxt = paginate(msgs, cursor, limit)
        views = []
        for m in page:
            v = self._msg_view(m, response_format)
            v["is_parent"] = m["ts"] == thread_ts
            views.append(v)
        return {"messages": views, "has_more": nxt is not None, "next_cursor": nxt}

    @tool(mutates=True)
    def slack_invite_users_to_channel(self, channel_id: str, user_ids: list[str]) -> dict[str, Any]:
        """Invite one or more users (including bot users) to a Slack channel.

        Args:
            channel_id: The ID of the channel to invite users to (e.g., 'C1234567890')
            user_ids: A list of user IDs to invite to the channel. Can include both regular user IDs and bot user IDs
        """
        ch = self._channel(channel_id)
        if ch["is_im"]:
            raise RuleViolation(
                "users cannot be invited to a direct message", type="method_not_supported_for_channel_type"
            )
        if ch["is_archived"]:
            raise RuleViolation(f"channel '{channel_id}' is archived", type="is_archived")
        if not user_ids:
            raise InvalidArguments("'user_ids' must list at least one user id", type="no_user")
        users = self.table("users")
        missing = [u for u in user_ids if u not in users]
        if missing:
            raise NotFound(f"user(s) not found: {', '.join(missing[:10])}", type="user_not_found")
        new = [u for u in dict.fromkeys(user_ids) if u not in ch["members"]]
        if not new:
            raise Conflict("every user is already in the channel", type="already_in_channel")
        ch = self.update("channels", channel_id, members=sorted([*ch["members"], *new]))
        return {
            "ok": True,
            "channel": {"id": ch["id"], "name": ch["name"], "num_members": len(ch["members"])},
            "invited": new,
        }

    @tool
    def slack_list_users(
        self,
        cursor: str | None = None,
        limit: int = 100,
        team_id: str | None = None,
        include_locale: bool = False,
        user_id: str | None = None,
        name: str | None = None,
        response_format: Format = "concise",
    ) -> dict[str, Any]:
        """Lists all users in a Slack team. Supports filtering by user ID or name, and flexible response formats.

        Args:
            cursor: Pagination cursor for next page of results.
            limit: Maximum number of users to return (default 100, max 1000)
            team_id: Team ID to list users from (for Enterprise Grid)
            include_locale: Whether to include locale information for each user
            user_id: Filter by user ID (exact match).
            name: Filter by name (case-insensitive partial match against name and real_name)
            response_format: 'concise' returns only id, name and real_name; 'detailed' complete users.
        """
        check_limit(limit, "limit", 1, 1000)
        users = sorted(self.table("users").values(), key=lambda u: u["id"])
        if team_id:
            users = [u for u in users if u["team_id"] == team_id]
        if user_id:
            users = [u for u in users if u["id"] == user_id]
        if name:
            n = norm(name)
            users = [u for u in users if n in u["name"].lower() or n in norm(u["real_name"])]
        page, nxt = paginate(users, cursor, limit)
        return {
            "members": [self._user_view(u, response_format, include_locale) for u in page],
            "next_cursor": nxt,
        }

    def _user_view(self, u: dict[str, Any], fmt: str, locale: bool) -> dict[str, Any]:
        if fmt == "concise":
            out = {"id": u["id"], "name": u["name"], "real_name": u["real_name"]}
        else:
            out = {k: v for k, v in u.items() if k != "locale"}
            out["profile"] = {"email": u["email"], "title": u["title"], "real_name": u["real_name"]}
        if locale:
            out["locale"] = u["locale"]
        return out

    @tool
    def slack_user_get_info(self, user_id: str, include_locale: bool = False) -> dict[str, Any]:
        """Gets information about a user

        Args:
            user_id: The ID of the user to get information for (e.g., 'U1234567890')
            include_locale: Whether to include locale information for the user
        """
        return {"user": self._user_view(self.require("users", user_id, "user"), "detailed", include_locale)}

    @tool
    def slack_user_search_messages(
        self,
        query: str,
        channel_ids: list[str] | None = None,
        to_me: Literal["dm", "mention", "off"] = "off",
        sort: Literal["score", "timestamp"] = "score",
        sort_dir: Literal["asc", "desc"] = "desc",
        count: int = 20,
        cursor: str | None = None,
        highlight: bool = False,
        response_format: Format = "concise",
    ) -> dict[str, Any]:
        """Searches for messages matching a query. Supports in:#channel, from:@user or from:<@U123>, before:/after:YYYY-MM-DD, "phrases" and words.

        Args:
            query: The search query string. You can use Slack's search operators.
            channel_ids: Optional list of channel IDs to search within.
            to_me: 'dm': only direct messages to you; 'mention': messages that @mention you; 'off': all.
            sort: Sort results by relevance (score) or date (timestamp). Default is score.
            sort_dir: Sort direction. Default is desc (newest/most relevant first).
            count: Number of results to return per page (default 20, max 100)
            cursor: Pagination cursor for next page of results
            highlight: Whether to include highlighting of matched terms
            response_format: 'concise' returns essential fields; 'detailed' complete messages.
        """
        check_limit(count, "count", 1, 100)
        me = self._me
        channels, users = self.table("channels"), self.table("users")
        visible = {cid for cid, c in channels.items() if not c["is_private"] or me in c["members"]}
        if channel_ids:
            unknown = [c for c in channel_ids if c not in visible]
            if unknown:
                raise NotFound(f"channel(s) not found: {', '.join(unknown[:10])}", type="channel_not_found")
            visible &= set(channel_ids)
        words: list[str] = []
        filters = []
        for tok in re.findall(r'\w+:"[^"]*"|"[^"]*"|\S+', query):
            key, _, val = tok.partition(":")
            val = val.strip('"')
            if key == "in" and val:
                name = val.lstrip("#")
                ids = {cid for cid, c in channels.items() if c["name"] == name or cid == name}
                filters.append(lambda m, ids=ids: m["channel"] in ids)
            elif key == "from" and val:
                who = val.strip("<>@")
                ids = {
                    u["id"]
                    for u in users.values()
                    if who in (u["id"], u["name"]) or norm(who) == norm(u["real_name"])
                }
                filters.append(lambda m, ids=ids: m["user"] in ids)
            elif key in ("before", "after", "on") and val:
                try:
                    day = datetime.strptime(val, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
                except ValueError:
                    raise InvalidArguments(
                        f"'query': {key}: expects a date like 2026-03-01, got {val!r}"
                    ) from None
                if key == "before":
                    filters.append(lambda m, d=day: float(m["ts"]) < d)
                elif key == "after":
                    filters.append(lambda m, d=day: float(m["ts"]) >= d + 86400)
                else:
                    filters.append(lambda m, d=day: d <= float(m["ts"]) < d + 86400)
            else:
                words.append(norm(tok.strip('"')))
        if not words and not filters:
            raise InvalidArguments("'query' must not be empty")
        hits = []
        for m in self.table("messages").values():
            if m["channel"] not in visible or not all(f(m) for f in filters):
                continue
            text = norm(m["text"])
            if not all(w in text for w in words):
                continue
            ch = channels[m["channel"]]
            if to_me == "dm" and not (ch["is_im"] and m["user"] != me):
                continue
            if to_me == "mention" and f"<@{me}>" not in m["text"]:
                continue
            hits.append((sum(text.count(w) for w in words), m))
        key = (lambda h: (h[0], float(h[1]["ts"]))) if sort == "score" else (lambda h: float(h[1]["ts"]))
        hits.sort(key=key, reverse=sort_dir == "desc")
        page, nxt = paginate([m for _, m in hits], cursor, count)
        out = []
        for m in page:
            v = self._msg_view(m, response_format)
            v.update(
                {
                    "channel_id": m["channel"],
                    "channel_name": channels[m["channel"]]["name"],
                    "username": users.get(m["user"], {}).get("name"),
                    "permalink": f"https://compoworld.slack.com/archives/{m['channel']}/p{m['ts'].replace('.', '')}",
                }
            )
            if highlight:
                for w in words:
                    v["text"] = re.sub(
                        re.escape(w), lambda x: f"\ue000{x.group(0)}\ue001", v["text"], flags=re.I
                    )
            out.append(v)
        return {"messages": out, "total": len(hits), "next_cursor": nxt}

    @tool(mutates=True)
    def slack_user_post_message(self, channel_id: str, text: str) -> dict[str, Any]:
        """Post a new message to a Slack channel as a user.

        Args:
            channel_id: The ID of the Slack channel (e.g., 'C1234567890')
            text: The message text to post
        """
        return self._post(self._me, channel_id, text)

    @tool(mutates=True)
    def slack_user_reply_to_thread(self, channel_id: str, thread_ts: str, text: str) -> dict[str, Any]:
        """Reply to a specific message thread in Slack as a user.

        Args:
            channel_id: The ID of the Slack channel (e.g., 'C1234567890')
            thread_ts: The timestamp of the parent message to reply to
            text: The message text to post as a reply
        """
        return self._post(self._me, channel_id, text, thread_ts)

    @tool(mutates=True)
    def slack_user_add_reaction(self, channel_id: str, timestamp: str, reaction: str) -> dict[str, Any]:
        """Add a reaction emoji to a message as a user.

        Args:
            channel_id: The ID of the Slack channel (e.g., 'C1234567890')
            timestamp: The timestamp of the message to react to
            reaction: The name of the emoji reaction (without colons, e.g., 'thumbsup')
        """
        return self._react(self._me, channel_id, timestamp, reaction)

    @tool(mutates=True)
    def slack_bot_post_message(self, channel_id: str, text: str) -> dict[str, Any]:
        """Post a new message to a Slack channel as a bot.

        Args:
            channel_id: The ID of the channel to post to
            text: The message text to post
        """
        return self._post(BOT_ID, channel_id, text)

    @tool(mutates=True)
    def slack_bot_reply_to_thread(self, channel_id: str, thread_ts: str, text: str) -> dict[str, Any]:
        """Reply to a specific message thread in Slack as a bot.

        Args:
            channel_id: The ID of the channel containing the thread
            thread_ts: The timestamp of the parent message in the format '1234567890.123456'
            text: The reply text
        """
        return self._post(BOT_ID, channel_id, text, thread_ts)

    @tool(mutates=True)
    def slack_bot_add_reaction(self, channel_id: str, timestamp: str, reaction: str) -> dict[str, Any]:
        """Add a reaction emoji to a message as a bot.

        Args:
            channel_id: The ID of the channel containing the message
            timestamp: The timestamp of the message to react to
            reaction: The name of the emoji reaction (without ::)
        """
        return self._react(BOT_ID, channel_id, timestamp, reaction)
