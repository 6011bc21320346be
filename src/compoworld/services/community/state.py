"""Typed state of the community chat: a Discord server (guild), its members, channels and messages."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Server(_M):
    id: str
    name: str
    owner_id: str
    description: str = ""


class User(_M):
    id: str
    username: str
    global_name: str
    bot: bool = False


class Member(_M):
    id: str  # "<server>:<user>"
    server_id: str
    user_id: str
    nick: str | None = None
    roles: list[str] = []
    joined_at: str


class Channel(_M):
    id: str
    server_id: str
    name: str
    type: int  # 0 text, 4 category
    parent_id: str | None = None
    topic: str | None = None


class Message(_M):
    id: str
    channel_id: str
    author_id: str
    content: str
    timestamp: str
    reactions: dict[str, list[str]] = {}
