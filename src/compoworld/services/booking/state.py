"""Typed state of booking: Calendly user, event types, availability schedules, scheduled events
and their invitees."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EventType(_M):
    id: str
    name: str
    slug: str
    duration: int
    active: bool
    kind: str = "solo"


class Schedule(_M):
    id: str
    name: str
    default: bool
    timezone: str
    rules: list[dict[str, str]]


class ScheduledEvent(_M):
    id: str
    name: str
    event_type: str
    status: str  # active | canceled
    start_time: str
    end_time: str
    location: str
    cancel_reason: str | None = None


class Invitee(_M):
    id: str
    event: str
    name: str
    email: str
    status: str  # active | canceled
    questions_and_answers: list[dict[str, str]] = []
