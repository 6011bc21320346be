"""Typed state of the chat service: users, channels (public, private, DMs) and messages."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class User(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    real_name: str
    email: str | None
    title: str
    tz: str
    locale: str
    is_bot: bool
    team_id: str


class Channel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    is_private: bool
    is_im: bool
    is_archived: bool
    created: int
    creator: str
    topic: str
    purpose: str
    members: list[str]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ts: str
    channel: str
    user: str
    text: str
    thread_ts: str | None = None
    reply_count: int = 0
    reactions: dict[str, list[str]] = {}


class ChatState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    users: dict[str, User]
    channels: dict[str, Channel]
    messages: dict[str, Message]
