"""Video meetings: Google Meet, modelled on klavis_google_meet.json (Klavis Google Meet server).

All 11 tools of the spec are modelled with their real names and parameters. Upcoming and past
meetings are told apart by the simulated clock; a meeting cannot end before it starts, a past
meeting cannot be edited, and attendance is known only once a meeting has ended.
"""

from __future__ import annotations

from typing import Any

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, check_limit, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.meet.seed import seed_meet
from compoworld.services.meet.state import Meeting, Space


def _iso(dt) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class MeetService(Service):
    """Google Meet: scheduled meetings with Meet links, past attendance, and v2 meeting spaces."""

    name = "meet"
    domain = "scheduling"
    spec = "klavis_google_meet.json"

    meetings = Resource("meetings", Meeting, label="meeting", width=16)
    spaces = Resource("spaces", Space, label="space")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_meet(self, ctx)

    def _new_space(self, created: str) -> dict[str, Any]:
        code = self.next_id("", 10)
        code = f"{code[:3]}-{code[3:7]}-{code[7:10]}"
        return self.spaces.create(
            {"meetingUri": f"https://meet.google.com/{code}", "meetingCode": code, "created": created},
            id=f"spaces/{code}",
        )

    def _space(self, space_id: str) -> dict[str, Any]:
        return self.spaces.require(
            space_id if space_id.startswith("spaces/") else f"spaces/{space_id}", "space_id"
        )

    def _times(self, start_time: str, end_time: str) -> tuple[str, str]:
        s, e = parse_datetime_arg(start_time, "start_time"), parse_datetime_arg(end_time, "end_time")
        if e <= s:
            raise RuleViolation("a meeting cannot end before or when it starts", type="invalid_time_range")
        return _iso(s), _iso(e)

    @tool(mutates=True)
    def google_meet_create_meet(
        self,
        summary: str,
        start_time: str,
        end_time: str,
        attendees: list[str],
        description: str | None = None,
        notify_attendees: bool = True,
    ) -> dict[str, Any]:
        """Create a new Google Meet meeting (via Calendar event).

        Args:
            summary: Meeting title.
            start_time: ISO RFC3339 datetime.
            end_time: ISO RFC3339 datetime.
            attendees: List of attendee email addresses.
            description: Meeting description.
            notify_attendees: Send calendar invitations to attendees.
        """
        if not summary.strip():
            raise InvalidArguments("'summary' must not be empty")
        s, e = self._times(start_time, end_time)
        if s < self.clock.iso():
            raise RuleViolation("a new meeting cannot start in the past", type="start_in_past")
        guests = list(dict.fromkeys(check_emails(attendees, "attendees")))
        space = self._new_space(self.clock.iso())
        m = self.meetings.create(
            {
                "summary": summary,
                "description": description or "",
                "start": s,
                "end": e,
                "attendees": [{"email": g, "responseStatus": "needsAction"} for g in guests],
                "organizer": self.store.tables[META]["owner"],
                "hangoutLink": space["meetingUri"],
                "space_id": space["id"],
            }
        )
        return {**m, "notified": guests if notify_attendees else []}

    @tool
    def google_meet_list_meetings(
        self, max_results: int = 10, start_after: str | None = None, end_before: str | None = None
    ) -> list[dict[str, Any]]:
        """List upcoming Google Meet meetings from the user's calendar, soonest first.

        Args:
            max_results: Maximum number of meetings to return (1-100).
            start_after: Only meetings starting after this RFC3339 UTC time.
            end_before: Only meetings starting before this RFC3339 UTC time.
        """
        check_limit(max_results, "max_results", 1, 100)
        lo = max(
            self.clock.iso(), _iso(parse_datetime_arg(start_after, "start_after")) if start_after else ""
        )
        hi = _iso(parse_datetime_arg(end_before, "end_before")) if end_before else "9999"
        return sort_records(self.meetings.find(lambda m: lo <= m["start"] < hi), "start")[:max_results]

    @tool
    def google_meet_list_past_meetings(
        self, max_results: int = 10, since: str | None = None
    ) -> list[dict[str, Any]]:
        """List past Google Meet meetings (already ended) in descending recency.

        Args:
            max_results: Maximum number of past meetings to return (1-100).
            since: Only include meetings starting after this RFC3339 UTC time.
        """
        check_limit(max_results, "max_results", 1, 100)
        lo = _iso(parse_datetime_arg(since, "since")) if since else ""
        now = self.clock.iso()
        return sort_records(
            self.meetings.find(lambda m: m["end"] <= now and m["start"] >= lo), "start", descending=True
        )[:max_results]

    @tool
    def google_meet_get_meeting_details(self, event_id: str) -> dict[str, Any]:
        """Get details of a specific Google Meet meeting.

        Args:
            event_id: The calendar event ID of the meeting.
        """
        return self.meetings.require(event_id, "event_id")

    @tool(mutates=True)
    def google_meet_update_meeting(
        self,
        event_id: str,
        summary: str | None = None,
        start_time: str | None = None,
        end_time: str | None = None,
        attendees: list[str] | None = None,
        description: str | None = None,
        notify_attendees: bool = True,
    ) -> dict[str, Any]:
        """Update an existing Google Meet meeting that has not ended yet.

        Args:
            event_id: The calendar event ID of the meeting.
            summary: New meeting title.
            start_time: New start time (ISO RFC3339).
            end_time: New end time (ISO RFC3339).
            attendees: New list of attendee email addresses (replaces the list).
            description: New meeting description.
            notify_attendees: Send updated invitations.
        """
        m = self.meetings.require(event_id, "event_id")
        if m["end"] <= self.clock.iso():
            raise RuleViolation("the meeting has already ended and cannot be changed", type="meeting_ended")
        s, e = self._times(start_time or m["start"], end_time or m["end"])
        changes: dict[str, Any] = {"start": s, "end": e}
        if summary is not None:
            if not summary.strip():
                raise InvalidArguments("'summary' must not be empty")
            changes["summary"] = summary
        if description is not None:
            changes["description"] = description
        if attendees is not None:
            old = {a["email"]: a for a in m["attendees"]}
            changes["attendees"] = [
                old.get(g, {"email": g, "responseStatus": "needsAction"})
                for g in dict.fromkeys(check_emails(attendees, "attendees"))
            ]
        if changes == {"start": m["start"], "end": m["end"]}:
            raise InvalidArguments("give at least one field to change")
        return self.meetings.update(event_id, changes)

    @tool(mutates=True)
    def google_meet_delete_meeting(self, event_id: str) -> dict[str, Any]:
        """Delete a Google Meet meeting.

        Args:
            event_id: The calendar event ID of the meeting to delete.
        """
        self.meetings.delete(event_id)
        return {"deleted": event_id}

    @tool
    def google_meet_get_past_meeting_attendees(self, event_id: str) -> dict[str, Any]:
        """Get attendees (with response statuses and whether they joined) for a past meeting (fails if the meeting has not ended).

        Args:
            event_id: The calendar event ID of the past meeting.
        """
        m = self.meetings.require(event_id, "event_id")
        if m["end"] > self.clock.iso():
            raise RuleViolation("the meeting has not ended yet", type="meeting_not_ended")
        joined = {p["email"] for p in (self.spaces.get(m["space_id"]) or {}).get("participants", [])}
        return {
            "event_id": event_id,
            "attendees": [{**a, "joined": a["email"] in joined} for a in m["attendees"]],
        }

    @tool(mutates=True)
    def google_meet_v2_create_instant(self) -> dict[str, Any]:
        """Create an instant ad-hoc Google Meet (Meet API v2)."""
        return self._new_space(self.clock.iso())

    @tool
    def google_meet_v2_get_meeting(self, space_id: str) -> dict[str, Any]:
        """Get Meet API v2 meeting (space) details.

        Args:
            space_id: Space ID or spaces/<id>.
        """
        s = self._space(space_id)
        return {k: v for k, v in s.items() if k != "participants"}

    @tool
    def google_meet_v2_list_meetings(self, max_results: int = 10) -> list[dict[str, Any]]:
        """List Meet API v2 meetings (spaces), newest first.

        Args:
            max_results: 1-100.
        """
        check_limit(max_results, "max_results", 1, 100)
        return [
            {k: v for k, v in s.items() if k != "participants"}
            for s in sort_records(self.spaces.all(), "created", descending=True)[:max_results]
        ]

    @tool
    def google_meet_v2_get_participants(self, space_id: str, max_results: int = 50) -> dict[str, Any]:
        """Get the participants who joined a Meet API v2 meeting.

        Args:
            space_id: Space ID or spaces/<id>.
            max_results: 1-300.
        """
        check_limit(max_results, "max_results", 1, 300)
        s = self._space(space_id)
        if not s["participants"]:
            raise NotFound("no conference has taken place in this space yet", type="conference_not_found")
        return {"space_id": s["id"], "participants": s["participants"][:max_results]}
