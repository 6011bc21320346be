"""Typed state of the email service: messages, labels and contacts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from compoworld.services._contacts import Contact


class Attachment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    filename: str
    mimeType: str
    size: int
    content: str


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    id: str
    threadId: str
    from_: str = Field(alias="from")
    to: list[str]
    cc: list[str] = []
    bcc: list[str] = []
    subject: str
    body: str
    htmlBody: str | None = None
    mimeType: str = "text/plain"
    date: str
    labelIds: list[str]
    inReplyTo: str | None = None
    attachments: list[Attachment] = []


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    type: str  # system | user


class EmailState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: dict[str, Message]
    labels: dict[str, Label]
    contacts: dict[str, Contact]
