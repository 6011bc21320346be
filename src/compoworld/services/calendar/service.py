"""Calendar service: Google Calendar, modelled on klavis_google_calendar.json (Klavis server).

All nine tools of the spec are modelled with their real names and parameters. Recurring events
(RRULE with FREQ=DAILY/WEEKLY/MONTHLY, INTERVAL, COUNT, UNTIL, BYDAY) are expanded into instances
by `google_calendar_list_events`; colleagues' calendars expose free/busy only, as in Google.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from compoworld.core.clock import UTC, format_time, parse_time
from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, check_limit, paginate, parse_datetime_arg
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services._contacts import search_contacts
from compoworld.services.calendar.seed import seed_calendar
from compoworld.services.calendar.state import CalendarState

SendUpdates = Literal["all", "externalOnly", "none"]
Visibility = Literal["default", "public", "private"]
_RULE = re.compile(r"^(RRULE|EXRULE|RDATE|EXDATE)[:;]")
_DAYS = {"MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6}
MAX_INSTANCES = 366


def _parse_rrule(line: str) -> dict[str, str]:
    body = line.split(":", 1)[1] if ":" in line else ""
    parts = dict(p.split("=", 1) for p in body.split(";") if "=" in p)
    if parts.get("FREQ") not in ("DAILY", "WEEKLY", "MONTHLY"):
        raise InvalidArguments(f"recurrence {line!r}: FREQ must be DAILY, WEEKLY or MONTHLY")
    for key in ("COUNT", "INTERVAL"):
        if key in parts and not parts[key].isdigit():
            raise InvalidArguments(f"recurrence {line!r}: {key} must be a positive integer")
    if "BYDAY" in parts and any(d not in _DAYS for d in parts["BYDAY"].split(",")):
        raise InvalidArguments(f"recurrence {line!r}: BYDAY takes MO,TU,WE,TH,FR,SA,SU")
    if "UNTIL" in parts:
        try:
            _until(parts["UNTIL"])
        except ValueError:
            raise InvalidArguments(f"recurrence {line!r}: UNTIL must look like 20260401T000000Z") from None
    return parts


def _until(value: str) -> datetime:
    """RFC 5545 UNTIL: a date (inclusive, to its end) or a UTC date-time."""
    if len(value) == 8:
        return datetime.strptime(value, "%Y%m%d").replace(tzinfo=UTC) + timedelta(days=1, seconds=-1)
    return datetime.strptime(value.rstrip("Z")[:15], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)


def _check_recurrence(lines: list[str]) -> list[str]:
    for line in lines:
        if not _RULE.match(line):
            raise InvalidArguments(
                f"recurrence line {line!r} must start with RRULE:, EXRULE:, RDATE: or EXDATE:"
            )
        if line.startswith("RRULE"):
            _parse_rrule(line)
    return list(lines)


def _instances(ev: dict[str, Any], lo: datetime, hi: datetime) -> list[tuple[datetime, datetime]]:
    """Start/end of every occurrence of `ev` that overlaps [lo, hi)."""
    start, end = parse_time(ev["start"]), parse_time(ev["end"])
    rrules = [r for r in ev["recurrence"] if r.startswith("RRULE")]
    if not rrules:
        return [(start, end)] if start < hi and end > lo else []
    rule = _parse_rrule(rrules[0])
    dur, interval = end - start, int(rule.get("INTERVAL", "1") or 1)
    count = int(rule["COUNT"]) if "COUNT" in rule else MAX_INSTANCES
    until = _until(rule["UNTIL"]) if "UNTIL" in rule else None
    exdates = {
        line.split(":", 1)[1][:8] for line in ev["recurrence"] if line.startswith("EXDATE") and ":" in line
    }
    byday = [_DAYS[d] for d in rule.get("BYDAY", "").split(",") if d] if rule["FREQ"] == "WEEKLY" else []
    out, n, step = [], 0, 0
    while n < min(count, MAX_INSTANCES) and step < 5000:
        if rule["FREQ"] == "DAILY":
            cands = [start + timedelta(days=step * interval)]
        elif rule["FREQ"] == "WEEKLY":
            week = start + timedelta(weeks=step * interval)
            monday = week - timedelta(days=week.weekday())
            cands = sorted(monday + timedelta(days=d) for d in byday) if byday else [week]
            cands = [c.replace(hour=start.hour, minute=start.minute) for c in cands if c >= start]
        else:
            month = start.month - 1 + step * interval
            try:
                cands = [start.replace(year=start.year + month // 12, month=month % 12 + 1)]
            except ValueError:  # e.g. the 31st in a short month: Google skips it
                cands = []
        step += 1
        for c in cands:
            if n >= count or (until and c > until):
                return out
            n += 1
            if c.strftime("%Y%m%d") in exdates:
                continue
            if c >= hi:
                return out
            if c + dur > lo:
                out.append((c, c + dur))
    return out


class CalendarService(Service):
    """Google Calendar: calendars, events with attendees and recurrence, free/busy and contacts."""

    name = "calendar"
    domain = "scheduling"
    spec = "klavis_google_calendar.json"
    state_model = CalendarState

    def seed_data(self, ctx: SeedContext) -> None:
        seed_calendar(self, ctx)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["owner"]

    def _calendar(self, calendar_id: str | None, write: bool = False) -> dict[str, Any]:
        cid = self._me if calendar_id in (None, "", "primary") else calendar_id
        cal = self.get("calendars", cid)
        if cal is None or cal["deleted"]:
            raise NotFound(
                f"calendar '{calendar_id}' not found; see google_calendar_list_calendars",
                type="calendar_not_found",
            )
        if write and cal["accessRole"] not in ("owner", "writer"):
            raise RuleViolation(
                f"calendar '{cal['summary']}' is read-only for you", type="calendar_read_only"
            )
        return cal

    def _event(self, event_id: str, calendar_id: str | None = None) -> dict[str, Any]:
        ev = self.get("events", event_id)
        if ev is None or ev["status"] == "cancelled":
            raise NotFound(f"event '{event_id}' not found", type="event_not_found")
        if calendar_id is not None and ev["calendar_id"] != self._calendar(calendar_id)["id"]:
            raise NotFound(
                f"event '{event_id}' not found in calendar '{calendar_id}'", type="event_not_found"
            )
        return ev

    def _view(
        self, ev: dict[str, Any], start: datetime | None = None, end: datetime | None = None
    ) -> dict[str, Any]:
        out = {k: v for k, v in ev.items() if k != "status"}
        out["start"] = {"dateTime": format_time(start) if start else ev["start"]}
        out["end"] = {"dateTime": format_time(end) if end else ev["end"]}
        out["status"] = ev["status"]
        if start and ev["recurrence"]:
            out["recurringEventId"] = ev["id"]
            out["id"] = f"{ev['id']}_{start.strftime('%Y%m%dT%H%M%SZ')}"
        return out

    # ---- tools --------------------------------------------------------------------------
    @tool
    def google_calendar_get_current_time(self) -> dict[str, Any]:
        """Get the accurate current date and time in the user's timezone. Call this first before creating or updating events, to resolve relative dates such as 'tomorrow'."""
        now = self.clock.now()
        return {
            "datetime": format_time(now),
            "date": now.date().isoformat(),
            "weekday": now.strftime("%A"),
            "timezone": "UTC",
        }

    @tool
    def google_calendar_list_calendars(
        self,
        max_results: int = 10,
        show_deleted: bool = False,
        show_hidden: bool = False,
        next_page_token: str | None = None,
    ) -> dict[str, Any]:
        """List all calendars accessible by the user.

        Args:
            max_results: The maximum number of calendars to return. Up to 250 calendars, defaults to 10.
            show_deleted: Whether to show deleted calendars. Defaults to False
            show_hidden: Whether to show hidden calendars. Defaults to False
            next_page_token: The token to retrieve the next page of calendars. Optional.
        """
        check_limit(max_results, "max_results", 1, 250)
        cals = [
            c
            for c in self.table("calendars").values()
            if (show_deleted or not c["deleted"]) and (show_hidden or not c["hidden"])
        ]
        cals.sort(key=lambda c: (not c["primary"], c["summary"]))
        page, nxt = paginate(cals, next_page_token, max_results, "next_page_token")
        return {"calendars": page, "num_calendars": len(page), "next_page_token": nxt}

    @tool(mutates=True)
    def google_calendar_create_event(
        self,
        summary: str,
        start_datetime: str,
        end_datetime: str,
        calendar_id: str = "primary",
        description: str | None = None,
        location: str | None = None,
        visibility: Visibility = "default",
        attendees: list[str] | None = None,
        send_updates: SendUpdates = "all",
        add_google_meet: bool = False,
        recurrence: list[str] | None = None,
    ) -> dict[str, Any]:
        """Create a new event/meeting/sync/meetup in the specified calendar.

        Args:
            summary: The title of the event
            start_datetime: The datetime when the event starts in ISO 8601 format, e.g., '2024-12-31T15:30:00'.
            end_datetime: The datetime when the event ends in ISO 8601 format, e.g., '2024-12-31T17:30:00'.
            calendar_id: The ID of the calendar to create the event in, usually 'primary'.
            description: The description of the event
            location: The location of the event
            visibility: The visibility of the event
            attendees: The list of attendee emails. Must be valid email addresses e.g., username@domain.com.
            send_updates: Should attendees be notified of the update?
            add_google_meet: Whether to add a Google Meet conference to the event.
            recurrence: List of RRULE, EXRULE, RDATE and EXDATE lines, e.g. ['RRULE:FREQ=DAILY;COUNT=5'].
        """
        if not summary.strip():
            raise InvalidArguments("'summary' must not be empty")
        start = parse_datetime_arg(start_datetime, "start_datetime")
        end = parse_datetime_arg(end_datetime, "end_datetime")
        if end <= start:
            raise RuleViolation(
                f"the event cannot end ({format_time(end)}) before or when it starts ({format_time(start)})",
                type="invalid_time_range",
            )
        guests = list(dict.fromkeys(check_emails(attendees or [], "attendees")))
        rules = _check_recurrence(recurrence or [])
        cal = self._calendar(calendar_id, write=True)
        eid = self.next_id("ev", 16)
        ev = {
            "id": eid,
            "calendar_id": cal["id"],
            "summary": summary,
            "description": description or "",
            "location": location or "",
            "start": format_time(start),
            "end": format_time(end),
            "attendees": [{"email": g, "responseStatus": "needsAction"} for g in guests],
            "organizer": self._me,
            "visibility": visibility,
            "recurrence": rules,
            "hangoutLink": f"https://meet.google.com/{eid[2:5]}-{eid[5:9]}-{eid[9:12]}"
            if add_google_meet
            else None,
            "status": "confirmed",
        }
        self.insert("events", ev)
        return {"event": self._view(ev), "notified": guests if send_updates != "none" else []}

    @tool
    def google_calendar_list_events(
        self,
        min_end_datetime: str,
        max_start_datetime: str,
        calendar_id: str = "primary",
        max_results: int = 50,
    ) -> dict[str, Any]:
        """List events from the specified calendar within the given datetime range, ordered by start time; recurring events are expanded into instances.

        Args:
            min_end_datetime: Filter by events that end on or after this datetime in ISO 8601 format, e.g., '2024-09-15T09:00:00'.
            max_start_datetime: Filter by events that start before this datetime in ISO 8601 format, e.g., '2024-09-16T17:00:00'.
            calendar_id: The ID of the calendar to list events from
            max_results: The maximum number of events to return
        """
        check_limit(max_results, "max_results", 1, 2500)
        lo = parse_datetime_arg(min_end_datetime, "min_end_datetime")
        hi = parse_datetime_arg(max_start_datetime, "max_start_datetime")
        if hi <= lo:
            raise InvalidArguments("'max_start_datetime' must be after 'min_end_datetime'")
        cal = self._calendar(calendar_id)
        found = []
        for ev in self.store.lookup("events", "calendar_id", cal["id"]):
            if ev["status"] == "cancelled":
                continue
            for s, e in _instances(ev, lo, hi):
                found.append((s, ev["id"], self._view(ev, s, e) if ev["recurrence"] else self._view(ev)))
        found.sort(key=lambda x: (x[0], x[1]))
        return {
            "events": [v for _, _, v in found[:max_results]],
            "total": len(found),
            "truncated": len(found) > max_results,
        }

    @tool(mutates=True)
    def google_calendar_update_event(
        self,
        event_id: str,
        updated_start_datetime: str | None = None,
        updated_end_datetime: str | None = None,
        updated_summary: str | None = None,
        updated_description: str | None = None,
        updated_location: str | None = None,
        updated_visibility: Visibility | None = None,
        attendees_to_add: list[str] | None = None,
        attendees_to_remove: list[str] | None = None,
        updated_recurrence: list[str] | None = None,
        send_updates: SendUpdates = "all",
    ) -> dict[str, Any]:
        """Update an existing event in the specified calendar with the provided details.

        Args:
            event_id: The ID of the event to update
            updated_start_datetime: The updated datetime that the event starts in ISO 8601 format
            updated_end_datetime: The updated datetime that the event ends in ISO 8601 format
            updated_summary: The updated title of the event
            updated_description: The updated description of the event
            updated_location: The updated location of the event
            updated_visibility: The visibility of the event
            attendees_to_add: The list of attendee emails to add.
            attendees_to_remove: The list of attendee emails to remove.
            updated_recurrence: Updated recurrence rules in RRULE format (RFC5545); [] makes the event single.
            send_updates: Should attendees be notified of the update?
        """
        ev = self._event(event_id)
        self._calendar(ev["calendar_id"], write=True)
        start = (
            parse_datetime_arg(updated_start_datetime, "updated_start_datetime")
            if updated_start_datetime
            else parse_time(ev["start"])
        )
        end = (
            parse_datetime_arg(updated_end_datetime, "updated_end_datetime")
            if updated_end_datetime
            else parse_time(ev["end"])
        )
        if end <= start:
            raise RuleViolation(
                f"the event cannot end ({format_time(end)}) before or when it starts ({format_time(start)})",
                type="invalid_time_range",
            )
        add = check_emails(attendees_to_add or [], "attendees_to_add")
        remove = set(check_emails(attendees_to_remove or [], "attendees_to_remove"))
        current = {a["email"] for a in ev["attendees"]}
        absent = sorted(remove - current)
        if absent:
            raise RuleViolation(
                f"not attendees of this event: {', '.join(absent)}", type="attendee_not_found"
            )
        attendees = [a for a in ev["attendees"] if a["email"] not in remove]
        attendees += [
            {"email": e, "responseStatus": "needsAction"}
            for e in dict.fromkeys(add)
            if e not in current - remove
        ]
        changes: dict[str, Any] = {
            "start": format_time(start),
            "end": format_time(end),
            "attendees": attendees,
        }
        if updated_summary is not None:
            if not updated_summary.strip():
                raise InvalidArguments("'updated_summary' must not be empty")
            changes["summary"] = updated_summary
        if updated_description is not None:
            changes["description"] = updated_description
        if updated_location is not None:
            changes["location"] = updated_location
        if updated_visibility is not None:
            changes["visibility"] = updated_visibility
        if updated_recurrence is not None:
            changes["recurrence"] = _check_recurrence(updated_recurrence)
        new = self.update("events", event_id, **changes)
        return {"event": self._view(new)}

    @tool(mutates=True)
    def google_calendar_delete_event(
        self, event_id: str, calendar_id: str = "primary", send_updates: SendUpdates = "all"
    ) -> dict[str, Any]:
        """Delete an event from Google Calendar.

        Args:
            event_id: The ID of the event to delete
            calendar_id: The ID of the calendar containing the event
            send_updates: Specifies which attendees to notify about the deletion
        """
        ev = self._event(event_id, calendar_id)
        self._calendar(ev["calendar_id"], write=True)
        self.remove("events", event_id)
        return {
            "deleted": event_id,
            "notified": [a["email"] for a in ev["attendees"]] if send_updates != "none" else [],
        }

    @tool(mutates=True)
    def google_calendar_add_attendees_to_event(
        self,
        event_id: str,
        attendees: list[str],
        calendar_id: str = "primary",
        send_updates: SendUpdates = "all",
    ) -> dict[str, Any]:
        """Add attendees to an existing event in Google Calendar.

        Args:
            event_id: The ID of the event to add attendees to
            attendees: The list of attendee emails to add. Must be valid email addresses e.g., username@domain.com.
            calendar_id: The ID of the calendar containing the event
            send_updates: Specifies which attendees to notify about the addition
        """
        ev = self._event(event_id, calendar_id)
        self._calendar(ev["calendar_id"], write=True)
        if not attendees:
            raise InvalidArguments("'attendees' must list at least one email address")
        emails = check_emails(attendees, "attendees")
        current = {a["email"] for a in ev["attendees"]}
        new = [e for e in dict.fromkeys(emails) if e not in current]
        if not new:
            raise Conflict("every attendee is already invited to this event", type="already_invited")
        ev = self.update(
            "events",
            event_id,
            attendees=[*ev["attendees"], *({"email": e, "responseStatus": "needsAction"} for e in new)],
        )
        return {"event": self._view(ev), "added": new}

    @tool
    def google_calendar_find_free_slots(
        self,
        items: list[str] | None = None,
        time_min: str | None = None,
        time_max: str | None = None,
        timezone: str = "UTC",
        min_slot_duration_minutes: int = 30,
    ) -> dict[str, Any]:
        """Find both free and busy time slots in Google Calendars for specified calendars within a defined time range (defaults to the current day UTC if time_min/time_max are omitted).

        Args:
            items: List of calendar email addresses to check for availability. Use 'primary' for the user's primary calendar. Defaults to ['primary'].
            time_min: The start of the time range to search in ISO 8601 format (e.g., '2024-09-10T00:00:00').
            time_max: The end of the time range to search in ISO 8601 format.
            timezone: Timezone for the time range and output (e.g., 'America/Los_Angeles'). Defaults to 'UTC'.
            min_slot_duration_minutes: Minimum duration in minutes for a time slot to be considered free.
        """
        try:
            tz = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidArguments(
                f"'timezone' {timezone!r} is not an IANA time zone such as 'Europe/Berlin'"
            ) from None
        check_limit(min_slot_duration_minutes, "min_slot_duration_minutes", 1, 24 * 60)
        day = self.clock.now().replace(hour=0, minute=0, second=0)
        lo = parse_datetime_arg(time_min, "time_min") if time_min else day
        hi = parse_datetime_arg(time_max, "time_max") if time_max else lo + timedelta(days=1)
        if hi <= lo:
            raise RuleViolation("'time_max' must be after 'time_min'", type="invalid_time_range")
        if hi - lo > timedelta(days=62):
            raise InvalidArguments("the time range may span at most 62 days")
        ids = items or ["primary"]
        if len(ids) > 50:
            raise InvalidArguments("'items' may list at most 50 calendars")
        min_slot = timedelta(minutes=min_slot_duration_minutes)
        fmt = lambda d: d.astimezone(tz).isoformat()  # noqa: E731
        result, errors, all_busy = {}, {}, []
        for item in ids:
            cid = self._me if item == "primary" else item
            spans = []
            if cid in self.table("calendars"):
                for ev in self.store.lookup("events", "calendar_id", cid):
                    if ev["status"] == "confirmed":
                        spans += _instances(ev, lo, hi)
            elif self.store.lookup("busy", "calendar_id", cid) or cid in {
                c["email"] for c in self.table("contacts").values() if c["type"] == "directory"
            }:
                spans = [
                    (parse_time(b["start"]), parse_time(b["end"]))
                    for b in self.store.lookup("busy", "calendar_id", cid)
                ]
                spans = [(max(s, lo), min(e, hi)) for s, e in spans if s < hi and e > lo]
            else:
                errors[item] = "notFound"
                continue
            merged = _merge(spans)
            all_busy += merged
            result[item] = {
                "busy": [{"start": fmt(s), "end": fmt(e)} for s, e in merged],
                "free": [{"start": fmt(s), "end": fmt(e)} for s, e in _gaps(merged, lo, hi, min_slot)],
            }
        common = _gaps(_merge(all_busy), lo, hi, min_slot)
        return {
            "timeMin": fmt(lo),
            "timeMax": fmt(hi),
            "calendars": result,
            "errors": errors,
            "common_free_slots": [{"start": fmt(s), "end": fmt(e)} for s, e in common],
        }

    @tool
    def google_calendar_search_contacts(
        self,
        query: str,
        contactType: Literal["all", "personal", "other", "directory"] = "all",
        pageSize: int = 10,
        pageToken: str | None = None,
        directorySources: Literal["UNSPECIFIED", "DOMAIN_DIRECTORY", "DOMAIN_CONTACTS"] = "UNSPECIFIED",
    ) -> dict[str, Any]:
        """Search for contacts when you need to know the contact details. Supports searching personal contacts, other contact sources, domain directory, or all sources.

        Args:
            query: The plain-text search query for contact names, email addresses, phone numbers, etc.
            contactType: Type of contacts to search: 'all', 'personal', 'other' or 'directory'.
            pageSize: Number of results to return. For personal/other: max 30, for directory: max 500
            pageToken: Page token for pagination (used with directory searches). Optional.
            directorySources: Directory sources to search (only used for directory type)
        """
        return search_contacts(
            self.table("contacts"), query, contactType, pageSize, pageToken, directorySources
        )


def _merge(spans: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[list[datetime]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _gaps(busy, lo: datetime, hi: datetime, min_slot: timedelta) -> list[tuple[datetime, datetime]]:
    out, cur = [], lo
    for s, e in busy:
        if s - cur >= min_slot:
            out.append((cur, s))
        cur = max(cur, e)
    if hi - cur >= min_slot:
        out.append((cur, hi))
    return out
