"""Typed state of the issue tracker: Linear teams, users, workflow states, issues, projects,
comments, initiatives and initiative-project links."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Team(_M):
    id: str
    key: str
    name: str
    member_ids: list[str]


class User(_M):
    id: str
    name: str
    email: str
    active: bool = True


class WorkflowState(_M):
    id: str
    team_id: str
    name: str
    type: str  # backlog | unstarted | started | completed | canceled
    position: int


class Issue(_M):
    id: str
    identifier: str
    team_id: str
    title: str
    description: str = ""
    assignee_id: str | None = None
    creator_id: str
    priority: int = 0  # 0 none, 1 urgent, 2 high, 3 medium, 4 low
    state_id: str
    project_id: str | None = None
    due_date: str | None = None
    labels: list[str] = []
    created_at: str
    updated_at: str
    completed_at: str | None = None


class Project(_M):
    id: str
    name: str
    description: str = ""
    team_ids: list[str]
    lead_id: str | None = None
    state: str = "planned"  # planned | started | paused | completed | canceled
    target_date: str | None = None
    created_at: str


class Comment(_M):
    id: str
    issue_id: str
    user_id: str
    body: str
    created_at: str
    edited_at: str | None = None


class Initiative(_M):
    id: str
    name: str
    description: str = ""
    owner_id: str | None = None
    target_date: str | None = None
    status: str = "Planned"  # Planned | Active | Completed
    color: str | None = None
    icon: str | None = None
    created_at: str


class InitiativeProject(_M):
    id: str
    initiative_id: str
    project_id: str
