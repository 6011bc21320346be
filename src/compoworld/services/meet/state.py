"""Typed state of video meetings: Google Meet meetings (calendar events with a Meet link) and
Meet API v2 spaces with their participants."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Attendee(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str
    responseStatus: str


class Meeting(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    summary: str
    description: str = ""
    start: str
    end: str
    attendees: list[Attendee]
    organizer: str
    hangoutLink: str
    space_id: str


class Space(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # "spaces/<code>"
    meetingUri: str
    meetingCode: str
    created: str
    participants: list[dict[str, str]] = []
