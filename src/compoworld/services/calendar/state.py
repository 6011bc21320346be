"""Typed state of the calendar service: the user's calendars, events, others' busy times, contacts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from compoworld.services._contacts import Contact


class Calendar(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    summary: str
    primary: bool
    timeZone: str
    accessRole: str  # owner | writer | reader
    hidden: bool
    deleted: bool


class Attendee(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str
    responseStatus: str


class Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    calendar_id: str
    summary: str
    description: str
    location: str
    start: str
    end: str
    attendees: list[Attendee]
    organizer: str
    visibility: str
    recurrence: list[str]
    hangoutLink: str | None
    status: str


class Busy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    calendar_id: str  # a colleague's email: only free/busy is visible
    start: str
    end: str


class CalendarState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    calendars: dict[str, Calendar]
    events: dict[str, Event]
    busy: dict[str, Busy]
    contacts: dict[str, Contact]
