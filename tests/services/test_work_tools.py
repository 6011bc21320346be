"""Boards (Trello), key-value (Redis), bases (Airtable), tracker (Jira) and code (GitHub)."""

from __future__ import annotations

import json

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

TR, KV, AT, J, GH = "boards__trello_", "kv__", "bases__airtable_", "tracker__jira_", "code__"


def test_trello_and_redis() -> None:
    env = Environment(services=["boards", "kv"], seed=2)
    board = ok(env, TR + "create_board", {"name": "Launch"})
    assert [x["name"] for x in board["lists"]] == ["To Do", "Doing", "Done"]
    assert any(b["id"] == board["id"] for b in ok(env, TR + "get_my_boards"))
    todo, doing = board["lists"][0]["id"], board["lists"][1]["id"]
    card = ok(env, TR + "create_card", {"idList": todo, "name": "Write copy"})
    err(env, TR + "create_card", {"idList": todo, "name": " "}, 400)
    ok(env, TR + "update_card", {"card_id": card["id"], "idList": doing})
    assert ok(env, TR + "get_list_cards", {"list_id": doing})[0]["id"] == card["id"]
    other_list = next(x for x in env.services["boards"].lists.all() if x["idBoard"] != board["id"])
    err(
        env,
        TR + "update_card",
        {"card_id": card["id"], "idList": other_list["id"]},
        422,
        "list_on_other_board",
    )
    assert ok(env, TR + "get_board_lists", {"board_id": board["id"]})[1]["id"] == doing
    cl = ok(env, TR + "create_checklist", {"idCard": card["id"], "name": "Steps"})
    item = ok(env, TR + "add_item_to_checklist", {"idChecklist": cl["id"], "name": "Draft"})
    ok(
        env,
        TR + "update_checklist_item_state",
        {"idCard": card["id"], "idCheckItem": item["id"], "state": "complete"},
    )
    err(
        env,
        TR + "update_checklist_item_state",
        {"idCard": card["id"], "idCheckItem": item["id"], "state": "complete"},
        409,
    )
    err(
        env,
        TR + "update_checklist_item_state",
        {"idCard": card["id"], "idCheckItem": "nope", "state": "complete"},
        404,
    )
    ok(env, TR + "delete_card", {"card_id": card["id"]})
    err(env, TR + "delete_card", {"card_id": card["id"]}, 404)
    assert not env.services["boards"].checklists.find(idCard=card["id"])
    ok(env, KV + "set", {"key": "session:abc", "value": "user-1", "expireSeconds": 60})
    assert ok(env, KV + "get", {"key": "session:abc"})["value"] == "user-1"
    assert "session:abc" in ok(env, KV + "list", {"pattern": "session:*"})["keys"]
    env.clock.advance(61)
    err(env, KV + "get", {"key": "session:abc"}, 404)
    err(env, KV + "set", {"key": "k", "value": "v", "expireSeconds": -1}, 400)
    ok(env, KV + "set", {"key": "a", "value": "1"})
    assert ok(env, KV + "delete", {"key": ["a", "missing"]})["deleted"] == 1
    assert ok(env, KV + "list", {"pattern": "feature:[n]*"})["keys"] == ["feature:new-dashboard"]


def test_airtable() -> None:
    env = Environment(services=["bases"], seed=2)
    base = next(b["id"] for b in ok(env, AT + "list_bases_info") if b["name"] == "Partner CRM")
    tables = ok(env, AT + "list_tables_info", {"base_id": base})
    assert tables[0]["name"] == "Accounts"
    t = ok(
        env,
        AT + "create_table",
        {
            "base_id": base,
            "name": "Renewals",
            "fields": [
                {"name": "Account", "type": "singleLineText"},
                {"name": "Amount", "type": "currency"},
                {
                    "name": "Stage",
                    "type": "singleSelect",
                    "options": {"choices": [{"name": "Open"}, {"name": "Won"}]},
                },
            ],
        },
    )
    err(
        env,
        AT + "create_table",
        {"base_id": base, "name": "renewals", "fields": [{"name": "A", "type": "singleLineText"}]},
        422,
    )
    err(
        env,
        AT + "create_table",
        {"base_id": base, "name": "Bad", "fields": [{"name": "A", "type": "hologram"}]},
        400,
    )
    ok(env, AT + "update_table", {"base_id": base, "table_id": t["id"], "description": "FY26 renewals"})
    f = ok(
        env,
        AT + "create_field",
        {"base_id": base, "table_id": t["id"], "name": "Notes", "type": "multilineText"},
    )
    err(
        env,
        AT + "create_field",
        {"base_id": base, "table_id": t["id"], "name": "notes", "type": "multilineText"},
        422,
    )
    ok(
        env,
        AT + "update_field",
        {"base_id": base, "table_id": t["id"], "field_id": f["id"], "name": "Comments"},
    )
    made = ok(
        env,
        AT + "create_records",
        {
            "base_id": base,
            "table_id": "Renewals",
            "records": [
                {"fields": {"Account": "Acme", "Amount": 5000, "Stage": "Open"}},
                {"fields": {"Account": "Beta", "Amount": "7000", "Stage": "Lost"}},
            ],
            "typecast": True,
        },
    )
    assert [r["fields"]["Amount"] for r in made["records"]] == [5000.0, 7000.0]
    err(
        env,
        AT + "create_records",
        {"base_id": base, "table_id": t["id"], "records": [{"fields": {"Stage": "Maybe"}}]},
        400,
    )
    err(
        env,
        AT + "create_records",
        {"base_id": base, "table_id": t["id"], "records": [{"fields": {"Amount": "lots"}}]},
        400,
    )
    err(
        env,
        AT + "create_records",
        {"base_id": base, "table_id": t["id"], "records": [{"fields": {}}] * 11},
        400,
    )
    got = ok(
        env,
        AT + "list_records",
        {"base_id": base, "table_id": t["id"], "filter_by_formula": "AND({Amount} > 6000, {Stage} = 'Lost')"},
    )
    assert [r["fields"]["Account"] for r in got["records"]] == ["Beta"]
    err(
        env,
        AT + "list_records",
        {"base_id": base, "table_id": t["id"], "filter_by_formula": "{Amount} >"},
        400,
    )
    srt = ok(
        env,
        AT + "list_records",
        {"base_id": base, "table_id": t["id"], "sort": [{"field": "Amount", "direction": "desc"}]},
    )
    assert [r["fields"]["Account"] for r in srt["records"]] == ["Beta", "Acme"]
    rid = made["records"][0]["id"]
    assert (
        ok(env, AT + "get_record", {"base_id": base, "table_id": t["id"], "record_id": rid})["fields"][
            "Account"
        ]
        == "Acme"
    )
    up = ok(
        env,
        AT + "update_records",
        {
            "base_id": base,
            "table_id": t["id"],
            "records": [
                {"fields": {"Account": "Acme", "Stage": "Won"}},
                {"fields": {"Account": "Gamma", "Amount": 1}},
            ],
            "perform_upsert": {"fieldsToMergeOn": ["Account"]},
        },
    )
    assert len(up["createdRecords"]) == 1 and up["records"][0]["fields"]["Stage"] == "Won"
    err(
        env,
        AT + "update_records",
        {"base_id": base, "table_id": t["id"], "records": [{"fields": {"Stage": "Won"}}]},
        400,
    )
    ok(env, AT + "delete_records", {"base_id": base, "table_id": t["id"], "record_ids": [rid]})
    err(env, AT + "delete_records", {"base_id": base, "table_id": t["id"], "record_ids": [rid]}, 404)


def test_jira() -> None:
    env = Environment(services=["tracker"], seed=2)
    epic = ok(
        env, J + "create_issue", {"project_key": "ops", "summary": "Data migration", "issue_type": "Epic"}
    )
    key = epic["key"]
    task = ok(
        env,
        J + "create_issue",
        {
            "project_key": "OPS",
            "summary": "Copy tables",
            "issue_type": "Task",
            "assignee": env.company.me.email,
            "components": "API",
            "additional_fields": json.dumps({"priority": {"name": "High"}, "labels": ["db"], "parent": key}),
        },
    )
    assert task["fields"]["priority"] == "High" and task["fields"]["parent"] == key
    err(
        env,
        J + "create_issue",
        {"project_key": "OPS", "summary": "x", "issue_type": "Subtask"},
        422,
        "subtask_needs_parent",
    )
    err(env, J + "create_issue", {"project_key": "NOPE", "summary": "x", "issue_type": "Task"}, 404)
    err(env, J + "create_issue", {"project_key": "OPS", "summary": "x", "issue_type": "Sub-task"}, 400)
    err(
        env,
        J + "create_issue",
        {"project_key": "OPS", "summary": "x", "issue_type": "Task", "components": "Kitchen"},
        400,
    )
    sub = ok(
        env,
        J + "create_issue",
        {
            "project_key": "OPS",
            "summary": "Verify",
            "issue_type": "Subtask",
            "additional_fields": {"parent": task["key"]},
        },
    )
    err(
        env,
        J + "update_issue",
        {"issue_key": task["key"], "fields": {"status": "Done"}},
        422,
        "open_subtasks",
    )
    ok(env, J + "update_issue", {"issue_key": sub["key"], "fields": {"status": "Done"}})
    upd = ok(
        env,
        J + "update_issue",
        {"issue_key": task["key"], "fields": '{"status": "Done", "summary": "Copy all tables"}'},
    )
    assert upd["fields"]["status"] == "Done"
    err(env, J + "update_issue", {"issue_key": task["key"], "fields": {"colour": "red"}}, 400)
    err(
        env,
        J + "update_issue",
        {"issue_key": task["key"], "fields": {"summary": "x"}, "attachments": "/etc/passwd"},
        422,
    )
    ok(env, J + "add_comment", {"issue_key": task["key"], "comment": "Done, verified"})
    full = ok(
        env,
        J + "get_issue",
        {"issue_key": task["key"], "expand": "changelog,transitions", "comment_limit": 5},
    )
    assert (
        full["comments"][0]["body"] == "Done, verified"
        and full["changelog"]
        and "To Do" in full["transitions"]
    )
    err(env, J + "get_issue", {"issue_key": "OPS-99999"}, 404)
    mine = ok(
        env, J + "search", {"jql": "assignee = currentUser() AND labels = db AND status = Done", "limit": 50}
    )
    assert [i["key"] for i in mine["issues"]] == [task["key"]]
    ordered = ok(
        env,
        J + "search_issues",
        {"jql": "project = OPS AND priority IN (High, Highest) ORDER BY priority DESC", "maxResults": 100},
    )
    assert ordered["total"] >= 1 and all(
        i["fields"]["priority"] in ("High", "Highest") for i in ordered["issues"]
    )
    assert ok(env, J + "search", {"jql": 'summary ~ "copy all"'})["issues"][0]["key"] == task["key"]
    err(env, J + "search", {"jql": "project = OPS AND"}, 400)
    assert task["key"] in {i["key"] for i in ok(env, J + "get_epic_issues", {"epic_key": key})["issues"]}
    err(env, J + "get_epic_issues", {"epic_key": task["key"]}, 422)
    assert ok(env, J + "get_project_issues", {"project_key": "OPS", "limit": 50})["total"] >= 3
    assert ok(env, J + "search_fields", {"keyword": "sprint"})[0]["id"] == "customfield_10020"
    assert {t["name"] for t in ok(env, J + "get_link_types")} >= {"Blocks", "Relates"}
    board = next(iter(env.services["tracker"].boards.rows))
    active = ok(env, J + "get_sprints_from_board", {"board_id": board, "state": "active"})[0]
    sp = ok(
        env,
        J + "create_sprint",
        {
            "board_id": board,
            "sprint_name": "Hardening",
            "start_date": "2026-03-20T09:00:00Z",
            "end_date": "2026-04-03T09:00:00Z",
        },
    )
    err(
        env,
        J + "create_sprint",
        {
            "board_id": board,
            "sprint_name": "Back",
            "start_date": "2026-03-20T09:00:00Z",
            "end_date": "2026-03-19T09:00:00Z",
        },
        422,
    )
    err(env, J + "update_sprint", {"sprint_id": sp["id"], "state": "active"}, 422, "sprint_already_active")
    ok(env, J + "update_sprint", {"sprint_id": active["id"], "state": "closed"})
    err(env, J + "update_sprint", {"sprint_id": active["id"], "goal": "x"}, 422, "sprint_closed")
    ok(env, J + "update_sprint", {"sprint_id": sp["id"], "state": "active", "goal": "Fix flaky tests"})
    ok(env, J + "update_issue", {"issue_key": task["key"], "fields": {"sprint": sp["id"]}})
    assert [i["key"] for i in ok(env, J + "get_sprint_issues", {"sprint_id": sp["id"]})["issues"]] == [
        task["key"]
    ]
    err(env, J + "delete_issue", {"issue_key": task["key"]}, 422, "has_subtasks")
    ok(env, J + "delete_issue", {"issue_key": sub["key"]})
    ok(env, J + "delete_issue", {"issue_key": task["key"]})
    err(env, J + "delete_issue", {"issue_key": task["key"]}, 404)


def test_github() -> None:
    env = Environment(services=["code"], seed=2)
    me = ok(env, GH + "get_me")["login"]
    repo = ok(
        env, GH + "create_repository", {"name": "tools", "autoInit": True, "description": "Internal tools"}
    )
    err(env, GH + "create_repository", {"name": "tools"}, 422)
    err(env, GH + "create_repository", {"name": "bad name"}, 400)
    o, r = me, "tools"
    assert (
        ok(env, GH + "search_repositories", {"query": f"tools user:{me}"})["items"][0]["full_name"]
        == repo["id"]
    )
    readme = ok(env, GH + "get_file_contents", {"owner": o, "repo": r, "path": "README.md"})
    ok(env, GH + "create_branch", {"owner": o, "repo": r, "branch": "feature"})
    err(env, GH + "create_branch", {"owner": o, "repo": r, "branch": "feature"}, 422)
    ok(
        env,
        GH + "create_or_update_file",
        {
            "owner": o,
            "repo": r,
            "path": "src/app.py",
            "content": "print(1)\n",
            "message": "Add app",
            "branch": "feature",
        },
    )
    err(
        env,
        GH + "create_or_update_file",
        {"owner": o, "repo": r, "path": "README.md", "content": "x", "message": "m", "branch": "feature"},
        422,
        "sha_required",
    )
    err(
        env,
        GH + "create_or_update_file",
        {
            "owner": o,
            "repo": r,
            "path": "README.md",
            "content": "x",
            "message": "m",
            "branch": "feature",
            "sha": "0" * 40,
        },
        409,
    )
    ok(
        env,
        GH + "create_or_update_file",
        {
            "owner": o,
            "repo": r,
            "path": "README.md",
            "content": "# tools v2\n",
            "message": "Docs",
            "branch": "feature",
            "sha": readme["sha"],
        },
    )
    err(
        env,
        GH + "create_or_update_file",
        {"owner": o, "repo": r, "path": "../escape", "content": "x", "message": "m", "branch": "feature"},
        400,
    )
    assert {b["name"] for b in ok(env, GH + "list_branches", {"owner": o, "repo": r})} == {"main", "feature"}
    commits = ok(env, GH + "list_commits", {"owner": o, "repo": r, "sha": "feature"})
    assert [c["message"] for c in commits] == ["Docs", "Add app", "Initial commit"]
    assert (
        ok(env, GH + "list_commits", {"owner": o, "repo": r, "sha": "feature", "path": "src/app.py"})[0][
            "message"
        ]
        == "Add app"
    )
    c = ok(env, GH + "get_commit", {"owner": o, "repo": r, "sha": commits[1]["sha"], "detail": "full_patch"})
    assert c["files"] == [{"filename": "src/app.py", "status": "added", "content": "print(1)\n"}]
    tree = ok(
        env, GH + "get_repository_tree", {"owner": o, "repo": r, "tree_sha": "feature", "recursive": True}
    )["tree"]
    assert {t["path"] for t in tree} == {"README.md", "src/app.py"}
    pr = ok(
        env,
        GH + "create_pull_request",
        {"owner": o, "repo": r, "title": "Add app", "head": "feature", "base": "main", "draft": True},
    )
    err(
        env,
        GH + "create_pull_request",
        {"owner": o, "repo": r, "title": "Again", "head": "feature", "base": "main"},
        422,
        "pull_request_exists",
    )
    err(
        env,
        GH + "merge_pull_request",
        {"owner": o, "repo": r, "pullNumber": pr["number"]},
        422,
        "draft_pull_request",
    )
    env.services["code"].issues.update(pr["id"], {"draft": False})
    diff = ok(
        env,
        GH + "pull_request_read",
        {"owner": o, "repo": r, "pullNumber": pr["number"], "method": "get_diff"},
    )
    assert {f["filename"] for f in diff} == {"README.md", "src/app.py"}
    assert ok(
        env, GH + "pull_request_read", {"owner": o, "repo": r, "pullNumber": pr["number"], "method": "get"}
    )["mergeable"]
    assert ok(env, GH + "list_pull_requests", {"owner": o, "repo": r})[0]["number"] == pr["number"]
    ok(
        env,
        GH + "merge_pull_request",
        {"owner": o, "repo": r, "pullNumber": pr["number"], "merge_method": "squash"},
    )
    err(
        env,
        GH + "merge_pull_request",
        {"owner": o, "repo": r, "pullNumber": pr["number"]},
        422,
        "already_merged",
    )
    assert (
        ok(env, GH + "get_file_contents", {"owner": o, "repo": r, "path": "src/app.py"})["content"]
        == "print(1)\n"
    )
    ok(
        env,
        GH + "delete_file",
        {"owner": o, "repo": r, "path": "src/app.py", "message": "Remove app", "branch": "main"},
    )
    err(
        env,
        GH + "delete_file",
        {"owner": o, "repo": r, "path": "src/app.py", "message": "again", "branch": "main"},
        404,
    )
    issue = ok(
        env,
        GH + "issue_write",
        {"owner": o, "repo": r, "method": "create", "title": "Crash on start", "labels": ["bug"]},
    )
    err(
        env,
        GH + "issue_write",
        {"owner": o, "repo": r, "method": "create", "title": "x", "labels": ["nope"]},
        400,
    )
    ok(
        env,
        GH + "add_issue_comment",
        {"owner": o, "repo": r, "issue_number": issue["number"], "body": "Repro attached"},
    )
    err(
        env,
        GH + "add_issue_comment",
        {"owner": o, "repo": r, "issue_number": issue["number"], "body": ""},
        400,
    )
    assert (
        ok(
            env,
            GH + "issue_read",
            {"owner": o, "repo": r, "issue_number": issue["number"], "method": "get_comments"},
        )[0]["body"]
        == "Repro attached"
    )
    ok(
        env,
        GH + "issue_write",
        {
            "owner": o,
            "repo": r,
            "method": "update",
            "issue_number": issue["number"],
            "state": "closed",
            "state_reason": "not_planned",
        },
    )
    assert (
        ok(env, GH + "issue_read", {"owner": o, "repo": r, "issue_number": issue["number"], "method": "get"})[
            "state_reason"
        ]
        == "not_planned"
    )
    assert ok(env, GH + "list_issues", {"owner": o, "repo": r, "state": "CLOSED"})["totalCount"] == 1
    assert (
        ok(env, GH + "search_issues", {"query": f"repo:{o}/{r} is:closed is:issue crash"})["total_count"] == 1
    )
    err(env, GH + "issue_write", {"owner": o, "repo": r, "method": "update"}, 400)
    seeded = next(x for x in env.services["code"].repos.all() if x["id"] != repo["id"])
    so, sr = seeded["id"].split("/")
    assert ok(env, GH + "list_label", {"owner": so, "repo": sr})
    assert ok(env, GH + "list_tags", {"owner": so, "repo": sr})[0]["name"] == "v1.0.0"
    assert ok(env, GH + "get_latest_release", {"owner": so, "repo": sr})["tag_name"] == "v1.0.0"
    assert ok(env, GH + "list_releases", {"owner": so, "repo": sr})
    err(env, GH + "get_latest_release", {"owner": o, "repo": r}, 404)
    err(env, GH + "get_file_contents", {"owner": o, "repo": "missing"}, 404)
