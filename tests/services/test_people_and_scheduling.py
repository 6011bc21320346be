"""HR (BambooHR), meetings (Google Meet), booking (Calendly), SMS and community chat (Discord)."""

from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

H, G, B, T, D = "hr__bamboohr_", "meet__google_meet_", "booking__calendly_", "sms__", "community__discord_"


def test_hr_employees_and_time_off() -> None:
    env = Environment(services=["hr"], seed=7)
    j = {"response_format": "json"}
    directory = ok(env, H + "get_employee_directory", j)["employees"]
    assert len(directory) == len(env.company.employees)
    assert "**employees**" in ok(env, H + "get_employee_directory")["markdown"]
    me = ok(env, H + "get_employee", {"employee_id": "me", "fields": ["workEmail"], **j})
    assert me["workEmail"] == env.company.me.email
    err(env, H + "get_employee", {"employee_id": "me", "fields": ["salary"]}, 400)
    new = ok(
        env,
        H + "create_employee",
        {
            "first_name": "Noa",
            "last_name": "Vale",
            "email": "noa.vale@corp.example",
            "department": "Sales",
            **j,
        },
    )
    err(
        env,
        H + "create_employee",
        {"first_name": "Noa", "last_name": "Vale", "email": "NOA.vale@corp.example"},
        409,
    )
    ok(env, H + "update_employee", {"employee_id": new["id"], "update_data": {"jobTitle": "AE"}})
    err(env, H + "update_employee", {"employee_id": new["id"], "update_data": {"salary": 1}}, 400)
    err(
        env,
        H + "update_employee",
        {"employee_id": new["id"], "update_data": {"supervisorId": new["id"]}},
        422,
    )
    assert new["id"] in {
        e["id"]
        for e in ok(env, H + "get_changed_employees", {"since_timestamp": "2026-03-02T00:00:00Z", **j})[
            "employees"
        ]
    }
    assert isinstance(ok(env, H + "get_employee_birthdays", j)["birthdays"], list)
    assert ok(env, H + "get_fields", j)["fields"]
    assert ok(env, H + "get_company_info", j)["headcount"] == len(env.company.employees) + 1
    types = ok(env, H + "get_time_off_types", j)["timeOffTypes"]
    assert ok(env, H + "get_time_off_policies", j)["policies"]
    bal = ok(env, H + "get_employee_time_off_policies", {"employee_id": "me", **j})["policies"][0]
    assert bal["timeOffTypeId"] == types[0]["id"]
    req = ok(
        env,
        H + "create_time_off_request",
        {
            "employee_id": "me",
            "start_date": "2026-04-06",
            "end_date": "2026-04-07",
            "time_off_type_id": "77",
            "amount": 2,
            **j,
        },
    )
    err(
        env,
        H + "create_time_off_request",
        {
            "employee_id": "me",
            "start_date": "2026-04-07",
            "end_date": "2026-04-08",
            "time_off_type_id": "77",
            "amount": 1,
        },
        409,
    )
    err(
        env,
        H + "create_time_off_request",
        {
            "employee_id": "me",
            "start_date": "2026-05-02",
            "end_date": "2026-05-01",
            "time_off_type_id": "77",
            "amount": 1,
        },
        422,
    )
    err(
        env,
        H + "create_time_off_request",
        {
            "employee_id": "me",
            "start_date": "2026-06-01",
            "end_date": "2026-06-30",
            "time_off_type_id": "77",
            "amount": 99,
            "status": "approved",
        },
        422,
        "insufficient_balance",
    )
    err(env, H + "change_time_off_request_status", {"request_id": req["id"], "status": "denied"}, 400)
    ok(env, H + "change_time_off_request_status", {"request_id": req["id"], "status": "approved"})
    after = ok(env, H + "get_employee_time_off_policies", {"employee_id": "me", **j})["policies"][0][
        "balance"
    ]
    assert after == bal["balance"] - 2
    err(env, H + "change_time_off_request_status", {"request_id": req["id"], "status": "approved"}, 422)
    assert req["id"] in {
        r["id"]
        for r in ok(env, H + "get_time_off_requests", {"employee_id": "me", "status": "approved", **j})[
            "requests"
        ]
    }
    assert any(
        w["start"] == "2026-04-06"
        for w in ok(env, H + "get_whos_out", {"start_date": "2026-04-01", "end_date": "2026-04-30", **j})[
            "whosOut"
        ]
    )
    ok(env, H + "change_time_off_request_status", {"request_id": req["id"], "status": "canceled"})
    assert (
        ok(env, H + "get_employee_time_off_policies", {"employee_id": "me", **j})["policies"][0]["balance"]
        == bal["balance"]
    )
    ok(
        env,
        H + "adjust_time_off_balance",
        {
            "employee_id": "me",
            "time_off_type_id": "77",
            "adjustment_amount": 1.5,
            "effective_date": "2026-03-02",
            "note": "bonus",
        },
    )
    err(
        env,
        H + "adjust_time_off_balance",
        {
            "employee_id": "me",
            "time_off_type_id": "77",
            "adjustment_amount": -999,
            "effective_date": "2026-03-02",
            "note": "x",
        },
        422,
    )
    err(
        env,
        H + "assign_time_off_policy",
        {"employee_id": "me", "time_off_type_id": "77", "accrual_start_date": "2026-03-02"},
        409,
    )
    env.services["hr"].balances.rows  # noqa: B018 (table exists)
    err(
        env,
        H + "assign_time_off_policy",
        {"employee_id": "me", "time_off_type_id": "1", "accrual_start_date": "2026-03-02"},
        404,
    )


def test_hr_training_goals_hiring() -> None:
    env = Environment(services=["hr"], seed=7)
    j = {"response_format": "json"}
    t = ok(env, H + "get_training_types", j)["trainingTypes"][2]["id"]
    assert "Compliance" in ok(env, H + "get_training_categories", j)["categories"]
    rec = ok(
        env,
        H + "add_training_record",
        {"employee_id": "me", "training_type_id": t, "completed_date": "2026-02-27", "hours": 4, **j},
    )
    err(
        env,
        H + "add_training_record",
        {"employee_id": "me", "training_type_id": t, "completed_date": "2027-01-01"},
        422,
    )
    ok(env, H + "update_training_record", {"record_id": rec["id"], "notes": "great"})
    err(env, H + "update_training_record", {"record_id": rec["id"]}, 400)
    assert rec["id"] in {
        r["id"] for r in ok(env, H + "get_training_records", {"employee_id": "me", **j})["records"]
    }
    err(env, H + "delete_training_record", {"record_id": rec["id"], "confirm": False}, 400)
    ok(env, H + "delete_training_record", {"record_id": rec["id"], "confirm": True})
    g = ok(env, H + "create_goal", {"employee_id": "me", "title": "Launch", "due_date": "2026-06-30", **j})
    err(env, H + "create_goal", {"employee_id": "me", "title": "x", "percent_complete": 120}, 400)
    ok(env, H + "update_goal", {"employee_id": "me", "goal_id": g["id"], "status": "completed"})
    assert ok(env, H + "get_goal", {"employee_id": "me", "goal_id": g["id"], **j})["percent_complete"] == 100
    ok(env, H + "add_goal_comment", {"employee_id": "me", "goal_id": g["id"], "comment": "Well done"})
    assert (
        ok(env, H + "get_goal_comments", {"employee_id": "me", "goal_id": g["id"], **j})["comments"][0][
            "text"
        ]
        == "Well done"
    )
    assert g["id"] in {
        x["id"]
        for x in ok(env, H + "get_employee_goals", {"employee_id": "me", "status": "completed", **j})["goals"]
    }
    other = next(
        e["id"] for e in env.services["hr"].employees.all() if e["id"] != env.services["hr"]._emp("me")["id"]
    )
    err(env, H + "get_goal", {"employee_id": other, "goal_id": g["id"]}, 404)
    ok(env, H + "update_goal", {"employee_id": "me", "goal_id": g["id"], "status": "closed"})
    err(env, H + "update_goal", {"employee_id": "me", "goal_id": g["id"], "title": "again"}, 422)
    ok(env, H + "delete_goal", {"employee_id": "me", "goal_id": g["id"], "confirm": True})
    job = ok(env, H + "create_job_opening", {"title": "Data Engineer", "department_id": "Engineering", **j})
    assert ok(env, H + "get_job_details", {"job_id": job["id"], **j})["status"] == "Open"
    assert job["id"] in {x["id"] for x in ok(env, H + "get_job_summaries", {"status": "Open", **j})["jobs"]}
    app = ok(
        env,
        H + "create_candidate",
        {"job_id": job["id"], "first_name": "Kai", "last_name": "Moss", "email": "kai@mail.example", **j},
    )
    err(
        env,
        H + "create_candidate",
        {"job_id": job["id"], "first_name": "Kai", "last_name": "Moss", "email": "KAI@mail.example"},
        409,
    )
    statuses = {s["name"]: s["id"] for s in ok(env, H + "get_application_statuses", j)["statuses"]}
    ok(env, H + "update_applicant_status", {"application_id": app["id"], "status_id": statuses["Interview"]})
    err(env, H + "update_applicant_status", {"application_id": app["id"], "status_id": "99"}, 400)
    ok(env, H + "add_application_comment", {"application_id": app["id"], "comment": "Strong SQL"})
    assert ok(env, H + "get_application_details", {"application_id": app["id"], **j})["status"] == "Interview"
    assert [
        a["id"]
        for a in ok(env, H + "get_job_applications", {"job_id": job["id"], "status": "Interview", **j})[
            "applications"
        ]
    ] == [app["id"]]
    ok(env, H + "update_applicant_status", {"application_id": app["id"], "status_id": statuses["Hired"]})
    err(
        env,
        H + "update_applicant_status",
        {"application_id": app["id"], "status_id": statuses["Offer"]},
        422,
        "application_closed",
    )


def test_meet_and_booking() -> None:
    env = Environment(services=["meet", "booking"], seed=3)
    m = ok(
        env,
        G + "create_meet",
        {
            "summary": "Kickoff",
            "start_time": "2026-03-04T10:00:00Z",
            "end_time": "2026-03-04T10:30:00Z",
            "attendees": ["ana@client.example"],
        },
    )
    assert m["hangoutLink"].startswith("https://meet.google.com/")
    err(
        env,
        G + "create_meet",
        {
            "summary": "Past",
            "start_time": "2026-03-01T10:00:00Z",
            "end_time": "2026-03-01T11:00:00Z",
            "attendees": [],
        },
        422,
    )
    err(
        env,
        G + "create_meet",
        {
            "summary": "Back",
            "start_time": "2026-03-04T10:00:00Z",
            "end_time": "2026-03-04T09:00:00Z",
            "attendees": [],
        },
        422,
    )
    assert m["id"] in {x["id"] for x in ok(env, G + "list_meetings", {"max_results": 100})}
    ok(
        env,
        G + "update_meeting",
        {
            "event_id": m["id"],
            "summary": "Kickoff v2",
            "attendees": ["ana@client.example", "bo@client.example"],
        },
    )
    assert len(ok(env, G + "get_meeting_details", {"event_id": m["id"]})["attendees"]) == 2
    err(env, G + "get_past_meeting_attendees", {"event_id": m["id"]}, 422, "meeting_not_ended")
    past = ok(env, G + "list_past_meetings", {"max_results": 1})[0]
    assert all(
        "joined" in a
        for a in ok(env, G + "get_past_meeting_attendees", {"event_id": past["id"]})["attendees"]
    )
    err(env, G + "update_meeting", {"event_id": past["id"], "summary": "x"}, 422, "meeting_ended")
    space = ok(env, G + "v2_create_instant")
    assert ok(env, G + "v2_get_meeting", {"space_id": space["meetingCode"]})["id"] == space["id"]
    assert space["id"] in {s["id"] for s in ok(env, G + "v2_list_meetings", {"max_results": 100})}
    err(env, G + "v2_get_participants", {"space_id": space["id"]}, 404)
    assert ok(env, G + "v2_get_participants", {"space_id": past["space_id"]})["participants"] is not None
    ok(env, G + "delete_meeting", {"event_id": m["id"]})
    err(env, G + "get_meeting_details", {"event_id": m["id"]}, 404)
    user = ok(env, B + "get_user_info")
    assert user["email"] == env.company.me.email
    types = ok(env, B + "list_event_types", {"active": True})
    assert types and all(t["active"] for t in types)
    assert ok(env, B + "list_availability_schedules", {"user_uri": user["uri"]})
    err(env, B + "list_availability_schedules", {"user_uri": "https://api.calendly.com/users/someone"}, 404)
    events = ok(env, B + "list_events", {"status": "active", "count": 100})
    ev = events[0]
    assert ev["start_time"] >= env.clock.iso()
    assert ok(env, B + "get_event_details", {"event_uuid": ev["uri"]})["id"] == ev["id"]
    inv = ok(env, B + "list_event_invitees", {"event_uuid": ev["id"]})
    assert inv and ok(
        env, B + "list_event_invitees", {"event_uuid": ev["id"], "email": inv[0]["email"].upper()}
    )
    err(env, B + "get_event_details", {"event_uuid": "nope"}, 404)
    err(env, B + "list_events", {"count": 101}, 400)


def test_sms_and_discord() -> None:
    env = Environment(services=["sms", "community"], seed=3)
    nums = ok(env, T + "list_phone_numbers")
    msg = ok(
        env,
        T + "send_sms",
        {"to": "+1 (555) 222-3333", "body": "Your order shipped", "from_number": nums[1]["phone_number"]},
    )
    assert msg["to"] == "+15552223333" and msg["status"] == "sent"
    err(env, T + "send_sms", {"to": "555-1234", "body": "x"}, 400, "invalid_phone_number")
    err(env, T + "send_sms", {"to": "+15552223333", "body": "x" * 1601}, 400)
    err(
        env,
        T + "send_sms",
        {"to": "+15552223333", "body": "x", "from_number": "+15559999999"},
        422,
        "from_not_owned",
    )
    opted = next(iter(env.services["sms"].optouts.rows))
    err(env, T + "send_sms", {"to": opted, "body": "promo"}, 422, "recipient_unsubscribed")
    assert ok(env, T + "lookup_phone_number", {"phone_number": opted})["sms_opted_out"]
    assert ok(env, T + "get_message", {"sid": msg["id"]})["body"] == "Your order shipped"
    assert ok(env, T + "list_messages", {"to": "+15552223333"})["messages"][0]["id"] == msg["id"]
    ok(env, T + "delete_message", {"sid": msg["id"]})
    err(env, T + "get_message", {"sid": msg["id"]}, 404)
    call = ok(env, T + "make_call", {"to": "+15552223333", "twiml": "<Response><Say>Hi</Say></Response>"})
    err(env, T + "make_call", {"to": "+15552223333"}, 422, "call_in_progress")
    err(env, T + "make_call", {"to": "+15550000001", "twiml": "Say hi"}, 400)
    assert ok(env, T + "list_calls", {"status": "ringing"})["calls"][0]["id"] == call["id"]
    assert ok(env, T + "end_call", {"sid": call["id"]})["status"] == "canceled"
    err(env, T + "end_call", {"sid": call["id"]}, 422)
    assert ok(env, T + "get_call", {"sid": call["id"]})["status"] == "canceled"
    server = next(iter(env.services["community"].servers.rows))
    info = ok(env, D + "get_server_info", {"server_id": server})
    assert info["member_count"] == len(ok(env, D + "list_members", {"server_id": server, "limit": 1000}))
    general = next(c["id"] for c in info["channels"] if c["name"] == "general")
    category = next(c["id"] for c in info["channels"] if c["type"] == 4)
    ch = ok(
        env,
        D + "create_text_channel",
        {"server_id": server, "name": "Release Notes!", "category_id": category},
    )
    assert ch["name"] == "release-notes"
    err(env, D + "create_text_channel", {"server_id": server, "name": "x", "category_id": general}, 422)
    err(env, D + "send_message", {"channel_id": category, "content": "hi"}, 422, "not_text_channel")
    m = ok(env, D + "send_message", {"channel_id": ch["id"], "content": "v2 is out"})
    err(env, D + "send_message", {"channel_id": ch["id"], "content": "x" * 2001}, 400)
    ok(env, D + "add_reaction", {"channel_id": ch["id"], "message_id": m["id"], "emoji": "🎉"})
    err(env, D + "add_reaction", {"channel_id": ch["id"], "message_id": m["id"], "emoji": "🎉"}, 409)
    assert ok(
        env,
        D + "add_multiple_reactions",
        {"channel_id": ch["id"], "message_id": m["id"], "emojis": ["🎉", "rocket"]},
    )["added"] == ["rocket"]
    ok(env, D + "remove_reaction", {"channel_id": ch["id"], "message_id": m["id"], "emoji": "rocket"})
    err(env, D + "remove_reaction", {"channel_id": ch["id"], "message_id": m["id"], "emoji": "rocket"}, 404)
    read = ok(env, D + "read_messages", {"channel_id": ch["id"]})
    assert read[0]["content"] == "v2 is out" and read[0]["reactions"] == [{"emoji": "🎉", "count": 1}]
    err(env, D + "read_messages", {"channel_id": general, "limit": 0}, 400)
    assert ok(env, D + "get_user_info", {"user_id": m["author_id"]})["global_name"] == env.company.me.name
    err(env, D + "get_user_info", {"user_id": "1"}, 404)
