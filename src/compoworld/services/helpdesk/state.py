"""Typed state of the helpdesk: Freshdesk tickets, conversations, contacts, companies, agents."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Attachment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    name: str
    content_type: str
    size: int


class Ticket(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    subject: str
    description: str
    requester_id: int
    responder_id: int | None = None
    company_id: int | None = None
    group_id: int | None = None
    status: int  # 2 open, 3 pending, 4 resolved, 5 closed
    priority: int  # 1 low .. 4 urgent
    source: int
    type: str | None = None
    tags: list[str] = []
    cc_emails: list[str] = []
    custom_fields: dict[str, str | int | float | bool | None] = {}
    due_by: str | None = None
    fr_due_by: str | None = None
    parent_id: int | None = None
    watchers: list[int] = []
    attachments: list[Attachment] = []
    deleted: bool = False
    archived: bool = False
    created_at: str
    updated_at: str


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    ticket_id: int
    kind: str  # note | reply | forward
    body: str
    private: bool
    incoming: bool
    user_id: int | None
    from_email: str | None = None
    to_emails: list[str] = []
    cc_emails: list[str] = []
    bcc_emails: list[str] = []
    created_at: str


class Contact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    name: str
    email: str | None
    phone: str | None = None
    mobile: str | None = None
    company_id: int | None = None
    job_title: str | None = None
    description: str | None = None
    tags: list[str] = []
    active: bool = True
    deleted: bool = False
    created_at: str
    updated_at: str


class Company(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    name: str
    domains: list[str] = []
    description: str | None = None
    note: str | None = None
    health_score: str | None = None
    account_tier: str | None = None
    renewal_date: str | None = None
    industry: str | None = None
    created_at: str
    updated_at: str


class Agent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    name: str
    email: str
    ticket_scope: int
    role_ids: list[int] = []
    group_ids: list[int] = []
    occasional: bool = False
    signature: str | None = None
    language: str = "en"
    time_zone: str = "UTC"
    agent_type: int = 1
    available: bool = True
    contact_id: int | None = None
    created_at: str
