"""Typed state of code hosting: GitHub repositories with branches and commits (full file trees),
issues and pull requests (sharing one number sequence per repository), labels and releases."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Repo(_M):
    id: str  # "owner/name"
    owner: str
    name: str
    description: str = ""
    private: bool = False
    default_branch: str = "main"
    branches: dict[str, str]  # branch -> head sha
    stars: int = 0
    labels: list[str] = []
    tags: dict[str, str] = {}  # tag -> sha
    created_at: str
    updated_at: str


class Commit(_M):
    id: str  # sha
    repo: str
    parent: str | None
    message: str
    author: str
    date: str
    files: dict[str, str]  # the whole tree at this commit: path -> content


class Issue(_M):
    id: str  # "owner/name#number"
    repo: str
    number: int
    title: str
    body: str = ""
    state: str = "open"
    state_reason: str | None = None
    labels: list[str] = []
    assignees: list[str] = []
    user: str
    comments: list[dict[str, str]] = []
    created_at: str
    updated_at: str
    is_pr: bool = False
    head: str | None = None
    base: str | None = None
    base_sha: str | None = None
    draft: bool = False
    merged: bool = False
    merge_commit: str | None = None


class Release(_M):
    id: str
    repo: str
    tag_name: str
    name: str
    body: str = ""
    published_at: str
