"""Typed state of the wiki: Confluence spaces, pages (a tree per space, with versions), attachments."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Space(_M):
    id: str
    key: str
    name: str
    description: str = ""
    is_private: bool = False
    homepage_id: str | None = None
    created_at: str


class Page(_M):
    id: str
    space_id: str
    title: str
    content: str
    parent_id: str | None = None
    status: str = "current"  # current | draft
    is_private: bool = False
    version: int = 1
    author_id: str
    created_at: str
    updated_at: str


class Attachment(_M):
    id: str
    page_id: str
    title: str
    media_type: str
    file_size: int
    created_at: str
