"""Typed state of project management: Asana workspaces, users, teams, projects, tasks, tags."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Workspace(_M):
    gid: str
    name: str
    is_organization: bool


class User(_M):
    gid: str
    name: str
    email: str
    workspace_gids: list[str]


class Team(_M):
    gid: str
    name: str
    workspace_gid: str
    member_gids: list[str]


class Project(_M):
    gid: str
    name: str
    notes: str = ""
    workspace_gid: str
    team_gid: str | None = None
    owner_gid: str | None = None
    archived: bool = False
    color: str | None = None
    due_on: str | None = None
    created_at: str


class Attachment(_M):
    gid: str
    name: str
    size: int
    content_preview: str


class Task(_M):
    gid: str
    name: str
    notes: str = ""
    workspace_gid: str
    project_gids: list[str] = []
    parent_gid: str | None = None
    assignee_gid: str | None = None
    tag_gids: list[str] = []
    start_on: str | None = None
    due_on: str | None = None
    completed: bool = False
    completed_at: str | None = None
    attachments: list[Attachment] = []
    created_at: str
    modified_at: str


class Tag(_M):
    gid: str
    name: str
    notes: str = ""
    color: str | None = None
    workspace_gid: str
