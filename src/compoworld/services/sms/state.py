"""Typed state of telephony: the account's phone numbers, SMS messages, calls and opt-outs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PhoneNumber(_M):
    id: str  # PN sid
    phone_number: str
    friendly_name: str
    capabilities: list[str]


class Message(_M):
    id: str  # SM sid
    to: str
    from_: str
    body: str
    direction: str  # inbound | outbound-api
    status: str  # received | delivered | sent | failed
    date_sent: str
    num_segments: int


class Call(_M):
    id: str  # CA sid
    to: str
    from_: str
    direction: str
    status: str  # queued | ringing | in-progress | completed | busy | no-answer | canceled
    start_time: str
    duration: int = 0


class OptOut(_M):
    id: str  # the number that replied STOP
    date: str
