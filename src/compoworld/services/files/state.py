"""Typed state of file storage: a virtual Dropbox tree (never the host's file system), revisions,
shared links, file requests and finished batch jobs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Member(_M):
    email: str
    access_level: str  # viewer | editor


class Entry(_M):
    id: str  # "id:..." (the table key is path_lower)
    tag: str  # file | folder
    name: str
    path_lower: str
    path_display: str
    size: int = 0
    content: str | None = None
    rev: str | None = None
    server_modified: str | None = None
    locked: bool = False
    members: list[Member] = []
    deleted: bool = False


class Revision(_M):
    id: str  # the rev
    file_id: str
    path_lower: str
    content: str
    size: int
    server_modified: str


class SharedLink(_M):
    id: str  # the url
    path_lower: str
    visibility: str
    expires: str | None = None


class FileRequest(_M):
    id: str
    title: str
    destination: str
    description: str = ""
    is_open: bool = True
    created: str


class Job(_M):
    id: str
    kind: str
    entries: int
