"""Typed state of marketing: a Mailchimp account's audiences, members (with tags and activity)
and campaigns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Audience(_M):
    id: str
    name: str
    contact: dict[str, str]
    permission_reminder: str
    from_name: str
    from_email: str
    subject: str
    language: str = "en"
    email_type_option: bool = False
    double_optin: bool = False
    has_welcome: bool = False
    date_created: str


class Member(_M):
    id: str  # "<list_id>:<subscriber_hash>"
    list_id: str
    email_address: str
    status: str  # subscribed | unsubscribed | cleaned | pending | transactional
    merge_fields: dict[str, str] = {}
    interests: dict[str, bool] = {}
    language: str = ""
    vip: bool = False
    tags: list[str] = []
    activity: list[dict[str, str]] = []
    timestamp_signup: str | None = None
    last_changed: str


class Campaign(_M):
    id: str
    type: str
    list_id: str
    subject_line: str
    from_name: str
    reply_to: str
    title: str = ""
    folder_id: str | None = None
    status: str = "save"  # save | paused | schedule | sending | sent
    html: str | None = None
    plain_text: str | None = None
    send_time: str | None = None
    emails_sent: int = 0
    create_time: str
