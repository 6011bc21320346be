"""Typed state of the Jira tracker: projects, users, boards, sprints, issues with comments and links."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Project(_M):
    id: str  # the key, e.g. "OPS"
    name: str
    lead: str
    components: list[str]


class User(_M):
    id: str  # accountId
    displayName: str
    emailAddress: str


class Board(_M):
    id: str
    name: str
    project: str


class Sprint(_M):
    id: str
    board_id: str
    name: str
    state: str  # future | active | closed
    startDate: str
    endDate: str
    goal: str = ""


class Issue(_M):
    id: str  # the key, e.g. "OPS-12"
    project: str
    summary: str
    description: str = ""
    issuetype: str  # Task | Bug | Story | Epic | Subtask
    status: str  # To Do | In Progress | In Review | Done
    priority: str = "Medium"
    assignee: str | None = None
    reporter: str
    labels: list[str] = []
    components: list[str] = []
    parent: str | None = None
    sprint: str | None = None
    duedate: str | None = None
    created: str
    updated: str
    comments: list[dict[str, str]] = []
    history: list[dict[str, str]] = []
