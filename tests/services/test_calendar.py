from __future__ import annotations

import pytest

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "calendar__google_calendar_"


@pytest.fixture
def env() -> Environment:
    return Environment(services=["calendar"], seed=5)


def _event(env: Environment, **kw) -> dict:
    args = {
        "summary": "Planning",
        "start_datetime": "2026-03-05T10:00:00Z",
        "end_datetime": "2026-03-05T11:00:00Z",
        **kw,
    }
    return ok(env, S + "create_event", args)["event"]


def test_current_time_is_simulated(env: Environment) -> None:
    assert ok(env, S + "get_current_time") == {
        "datetime": "2026-03-02T09:00:00Z",
        "date": "2026-03-02",
        "weekday": "Monday",
        "timezone": "UTC",
    }


def test_list_calendars(env: Environment) -> None:
    r = ok(env, S + "list_calendars")
    assert r["calendars"][0]["primary"] and all(not c["hidden"] and not c["deleted"] for c in r["calendars"])
    assert len(ok(env, S + "list_calendars", {"show_hidden": True, "show_deleted": True})["calendars"]) == 5
    p1 = ok(env, S + "list_calendars", {"max_results": 2})
    p2 = ok(env, S + "list_calendars", {"max_results": 2, "next_page_token": p1["next_page_token"]})
    assert {c["id"] for c in p1["calendars"]}.isdisjoint({c["id"] for c in p2["calendars"]})
    err(env, S + "list_calendars", {"max_results": 251}, 400)


def test_create_event_rules(env: Environment) -> None:
    ev = _event(
        env,
        attendees=["Pat@Example.com"],
        add_google_meet=True,
        start_datetime="2026-03-05T12:00:00+02:00",
        end_datetime="2026-03-05T13:00:00+02:00",
    )
    assert ev["start"] == {"dateTime": "2026-03-05T10:00:00Z"} and ev["hangoutLink"].startswith(
        "https://meet.google.com/"
    )
    assert ev["attendees"] == [{"email": "pat@example.com", "responseStatus": "needsAction"}]
    msg = err(
        env,
        S + "create_event",
        {"summary": "x", "start_datetime": "2026-03-05T10:00:00Z", "end_datetime": "2026-03-05T09:00:00Z"},
        422,
        "invalid_time_range",
    )
    assert "cannot end" in msg
    err(
        env,
        S + "create_event",
        {"summary": "x", "start_datetime": "2026-03-05T10:00:00Z", "end_datetime": "2026-03-05T10:00:00Z"},
        422,
    )
    err(
        env,
        S + "create_event",
        {"summary": "x", "start_datetime": "tomorrow", "end_datetime": "2026-03-05T10:00:00Z"},
        400,
    )
    err(
        env,
        S + "create_event",
        {
            "summary": "x",
            "start_datetime": "2026-03-05T10:00:00Z",
            "end_datetime": "2026-03-05T11:00:00Z",
            "attendees": ["bob"],
        },
        400,
    )
    err(
        env,
        S + "create_event",
        {
            "summary": "x",
            "start_datetime": "2026-03-05T10:00:00Z",
            "end_datetime": "2026-03-05T11:00:00Z",
            "calendar_id": "nope",
        },
        404,
    )
    err(
        env,
        S + "create_event",
        {
            "summary": "x",
            "start_datetime": "2026-03-05T10:00:00Z",
            "end_datetime": "2026-03-05T11:00:00Z",
            "calendar_id": "holidays@group.calendar",
        },
        422,
        "calendar_read_only",
    )
    err(
        env,
        S + "create_event",
        {
            "summary": "x",
            "start_datetime": "2026-03-05T10:00:00Z",
            "end_datetime": "2026-03-05T11:00:00Z",
            "recurrence": ["FREQ=DAILY"],
        },
        400,
    )
    err(
        env,
        S + "create_event",
        {"summary": " ", "start_datetime": "2026-03-05T10:00:00Z", "end_datetime": "2026-03-05T11:00:00Z"},
        400,
    )


def test_list_events_range_and_recurrence(env: Environment) -> None:
    ev = _event(
        env,
        summary="Standup",
        recurrence=["RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4"],
        start_datetime="2026-03-09T09:00:00Z",
        end_datetime="2026-03-09T09:15:00Z",
    )
    r = ok(
        env,
        S + "list_events",
        {
            "min_end_datetime": "2026-03-09T00:00:00Z",
            "max_start_datetime": "2026-04-01T00:00:00Z",
            "max_results": 2500,
        },
    )
    inst = [e for e in r["events"] if e.get("recurringEventId") == ev["id"]]
    assert [e["start"]["dateTime"] for e in inst] == [
        "2026-03-09T09:00:00Z",
        "2026-03-11T09:00:00Z",
        "2026-03-16T09:00:00Z",
        "2026-03-18T09:00:00Z",
    ]
    starts = [e["start"]["dateTime"] for e in r["events"]]
    assert starts == sorted(starts)
    daily = _event(
        env,
        summary="Daily",
        recurrence=["RRULE:FREQ=DAILY;UNTIL=20260312", "EXDATE:20260311T090000Z"],
        start_datetime="2026-03-10T09:00:00Z",
        end_datetime="2026-03-10T09:10:00Z",
    )
    r = ok(
        env,
        S + "list_events",
        {
            "min_end_datetime": "2026-03-01T00:00:00Z",
            "max_start_datetime": "2026-04-01T00:00:00Z",
            "max_results": 2500,
        },
    )
    assert [e["start"]["dateTime"][:10] for e in r["events"] if e.get("recurringEventId") == daily["id"]] == [
        "2026-03-10",
        "2026-03-12",
    ]
    small = ok(
        env,
        S + "list_events",
        {
            "min_end_datetime": "2026-03-01T00:00:00Z",
            "max_start_datetime": "2026-04-01T00:00:00Z",
            "max_results": 3,
        },
    )
    assert len(small["events"]) == 3 and small["truncated"]
    err(
        env,
        S + "list_events",
        {"min_end_datetime": "2026-03-02T00:00:00Z", "max_start_datetime": "2026-03-01T00:00:00Z"},
        400,
    )
    err(env, S + "list_events", {"min_end_datetime": "x", "max_start_datetime": "2026-03-01T00:00:00Z"}, 400)


def test_update_event(env: Environment) -> None:
    ev = _event(env, attendees=["a@x.io", "b@x.io"])
    r = ok(
        env,
        S + "update_event",
        {
            "event_id": ev["id"],
            "updated_summary": "Planning v2",
            "updated_end_datetime": "2026-03-05T12:00:00Z",
            "attendees_to_add": ["c@x.io"],
            "attendees_to_remove": ["a@x.io"],
        },
    )["event"]
    assert r["summary"] == "Planning v2" and r["end"]["dateTime"] == "2026-03-05T12:00:00Z"
    assert [a["email"] for a in r["attendees"]] == ["b@x.io", "c@x.io"]
    err(
        env,
        S + "update_event",
        {"event_id": ev["id"], "updated_end_datetime": "2026-03-05T09:00:00Z"},
        422,
        "invalid_time_range",
    )
    err(env, S + "update_event", {"event_id": ev["id"], "attendees_to_remove": ["zz@x.io"]}, 422)
    err(env, S + "update_event", {"event_id": "evnope"}, 404)
    err(env, S + "update_event", {"event_id": ev["id"], "updated_recurrence": ["RRULE:FREQ=HOURLY"]}, 400)


def test_delete_and_add_attendees(env: Environment) -> None:
    ev = _event(env)
    r = ok(env, S + "add_attendees_to_event", {"event_id": ev["id"], "attendees": ["x@y.io", "x@y.io"]})
    assert r["added"] == ["x@y.io"]
    err(env, S + "add_attendees_to_event", {"event_id": ev["id"], "attendees": ["X@y.io"]}, 409)
    err(env, S + "add_attendees_to_event", {"event_id": ev["id"], "attendees": []}, 400)
    err(env, S + "delete_event", {"event_id": ev["id"], "calendar_id": "team-x@group.calendar"}, 404)
    assert ok(env, S + "delete_event", {"event_id": ev["id"], "send_updates": "all"})["notified"] == [
        "x@y.io"
    ]
    err(env, S + "delete_event", {"event_id": ev["id"]}, 404)
    err(env, S + "add_attendees_to_event", {"event_id": ev["id"], "attendees": ["q@y.io"]}, 404)


def test_find_free_slots(env: Environment) -> None:
    lo, hi = "2026-03-05T08:00:00Z", "2026-03-05T18:00:00Z"
    before = ok(env, S + "find_free_slots", {"time_min": lo, "time_max": hi})
    _event(env, start_datetime="2026-03-05T08:00:00Z", end_datetime="2026-03-05T18:00:00Z")
    after = ok(env, S + "find_free_slots", {"time_min": lo, "time_max": hi})
    assert before["calendars"]["primary"]["free"] and after["calendars"]["primary"]["free"] == []
    colleague = next(p for p in env.company.employees if p.id != env.company.me.id)
    r = ok(
        env,
        S + "find_free_slots",
        {
            "items": [colleague.email, "ghost@nowhere.io"],
            "time_min": "2026-03-02T00:00:00Z",
            "time_max": "2026-03-16T00:00:00Z",
            "timezone": "Europe/Berlin",
            "min_slot_duration_minutes": 60,
        },
    )
    assert r["errors"] == {"ghost@nowhere.io": "notFound"} and r["calendars"][colleague.email]["busy"]
    assert r["timeMin"].endswith("+01:00")
    err(env, S + "find_free_slots", {"timezone": "Mars/Olympus"}, 400)
    err(env, S + "find_free_slots", {"time_min": hi, "time_max": lo}, 422)
    err(env, S + "find_free_slots", {"min_slot_duration_minutes": 0}, 400)


def test_search_contacts(env: Environment) -> None:
    person = env.company.contacts[0]
    r = ok(env, S + "search_contacts", {"query": person.email})
    assert any(c["email"] == person.email for kind in r.values() for c in kind["results"])
    err(env, S + "search_contacts", {"query": ""}, 400)
