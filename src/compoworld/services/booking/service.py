"""Booking: Calendly, modelled on klavis_calendly.json (Klavis Calendly MCP server).

All six tools of the spec are modelled with their real names and parameters. The spec is
read-only (bookings are made by invitees through Calendly's pages), and so is this service; its
events and invitees are the data that tasks join with the calendar, CRM and email.
"""

from __future__ import annotations

from typing import Any, Literal

from compoworld.core.envelope import NotFound
from compoworld.core.query import check_limit, norm
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.booking.seed import seed_booking
from compoworld.services.booking.state import EventType, Invitee, Schedule, ScheduledEvent

BASE = "https://api.calendly.com"


class BookingService(Service):
    """Calendly: the user's event types, availability, booked events and their invitees."""

    name = "booking"
    domain = "scheduling"
    spec = "klavis_calendly.json"

    types = Resource("event_types", EventType, label="event type", width=16)
    schedules = Resource("schedules", Schedule, label="availability schedule", width=16)
    events = Resource("events", ScheduledEvent, label="event", width=16)
    invitees = Resource("invitees", Invitee, label="invitee", width=16)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_booking(self, ctx)

    def _user_uri(self) -> str:
        return f"{BASE}/users/{self.store.tables[META]['user']['slug']}"

    def _event_view(self, e: dict[str, Any]) -> dict[str, Any]:
        return {
            **e,
            "uri": f"{BASE}/scheduled_events/{e['id']}",
            "uuid": e["id"],
            "invitees_counter": {
                "total": len(self.invitees.find(event=e["id"])),
                "active": len(self.invitees.find(event=e["id"], status="active")),
            },
        }

    @tool
    def calendly_get_user_info(self) -> dict[str, Any]:
        """Get current user's Calendly profile information."""
        u = self.store.tables[META]["user"]
        return {**u, "uri": self._user_uri(), "scheduling_url": f"https://calendly.com/{u['slug']}"}

    @tool
    def calendly_list_events(
        self, status: Literal["active", "canceled"] | None = None, count: int = 20
    ) -> list[dict[str, Any]]:
        """List scheduled events for the current user, soonest upcoming first, then past ones.

        Args:
            status: Filter events by status (active, canceled). Leave empty for all.
            count: Number of events to return (max 100).
        """
        check_limit(count, "count", 1, 100)
        now = self.clock.iso()
        recs = self.events.find(status=status)
        upcoming = sort_records([e for e in recs if e["start_time"] >= now], "start_time")
        past = sort_records([e for e in recs if e["start_time"] < now], "start_time", descending=True)
        return [self._event_view(e) for e in (upcoming + past)[:count]]

    @tool
    def calendly_get_event_details(self, event_uuid: str) -> dict[str, Any]:
        """Get detailed information about a specific event.

        Args:
            event_uuid: The UUID of the event to retrieve details for.
        """
        return self._event_view(self.events.require(event_uuid.rsplit("/", 1)[-1], "event_uuid"))

    @tool
    def calendly_list_event_types(self, active: bool | None = True, count: int = 20) -> list[dict[str, Any]]:
        """List available event types for the current user.

        Args:
            active: Filter by active status. Leave empty for all.
            count: Number of event types to return (max 100).
        """
        check_limit(count, "count", 1, 100)
        return [
            {
                **t,
                "scheduling_url": f"https://calendly.com/{self.store.tables[META]['user']['slug']}/{t['slug']}",
            }
            for t in sort_records(self.types.find(active=active), "name")[:count]
        ]

    @tool
    def calendly_list_availability_schedules(
        self, user_uri: str | None = None, count: int = 20
    ) -> list[dict[str, Any]]:
        """List the availability schedules of the given user.

        Args:
            user_uri: The URI of the user; default the current user.
            count: Number of availability schedules to return (max 100).
        """
        check_limit(count, "count", 1, 100)
        if user_uri is not None and user_uri != self._user_uri():
            raise NotFound(f"user {user_uri} not found or not visible", type="user_not_found")
        return sort_records(self.schedules.all(), "name")[:count]

    @tool
    def calendly_list_event_invitees(
        self,
        event_uuid: str,
        count: int = 20,
        email: str | None = None,
        status: Literal["active", "canceled"] | None = None,
    ) -> list[dict[str, Any]]:
        """List invitees for a specific scheduled event.

        Args:
            event_uuid: The UUID of the event to list invitees for.
            count: Number of invitees to return (max 100).
            email: Filter invitees by email address.
            status: Filter invitees by status.
        """
        check_limit(count, "count", 1, 100)
        ev = self.events.require(event_uuid.rsplit("/", 1)[-1], "event_uuid")
        recs = self.invitees.find(
            lambda i: email is None or norm(i["email"]) == norm(email), event=ev["id"], status=status
        )
        return sort_records(recs, "name")[:count]
