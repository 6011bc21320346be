from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "issues__linear_"


def test_linear_flow() -> None:
    env = Environment(services=["issues"], seed=6)
    teams = ok(env, S + "get_teams")
    eng = next(t for t in teams if t["key"] == "ENG")
    states = {s["name"]: s["id"] for s in eng["states"]}
    prd_todo = next(t for t in teams if t["key"] == "PRD")["states"][1]["id"]
    issue = ok(
        env,
        S + "create_issue",
        {"team_id": eng["id"], "title": "Login bug", "priority": 1, "due_date": "2026-03-20"},
    )
    assert issue["identifier"].startswith("ENG-") and issue["state"]["name"] == "Todo"
    err(
        env,
        S + "create_issue",
        {"team_id": eng["id"], "title": "x", "state_id": prd_todo},
        422,
        "state_not_in_team",
    )
    err(env, S + "create_issue", {"team_id": eng["id"], "title": "x", "priority": 9}, 400)
    err(env, S + "create_issue", {"team_id": "team-nope", "title": "x"}, 404)
    assert ok(env, S + "get_issue_by_id", {"issue_id": issue["identifier"]})["id"] == issue["id"]
    err(env, S + "get_issue_by_id", {"issue_id": "ENG-99999"}, 404)
    done = ok(env, S + "update_issue", {"issue_id": issue["id"], "state_id": states["Done"]})
    assert done["completed_at"] == env.clock.iso()
    err(env, S + "update_issue", {"issue_id": issue["id"]}, 400)
    urgent = ok(env, S + "get_issues", {"team_id": eng["id"], "filter": {"priority": 1}, "limit": 250})
    assert urgent and all(i["priority"] == 1 for i in urgent)
    assert all(
        i["state"]["name"] == "Todo"
        for i in ok(env, S + "get_issues", {"filter": {"state": {"eq": "todo"}}, "limit": 50})
    )
    err(env, S + "get_issues", {"filter": {"colour": "red"}}, 400)
    err(env, S + "get_issues", {"filter": {"priority": {"approx": 1}}}, 400)
    assert ok(env, S + "search_issues", {"query": "login bug"})[0]["id"] == issue["id"]
    err(env, S + "search_issues", {"query": "  "}, 400)
    c = ok(env, S + "create_comment", {"issue_id": issue["identifier"], "body": "Fixed in build 42"})
    ok(env, S + "update_comment", {"comment_id": c["id"], "body": "Fixed in build 43"})
    assert ok(env, S + "get_comments", {"issue_id": issue["id"]})[-1]["body"] == "Fixed in build 43"
    theirs = next(
        x for x in env.services["issues"].comments.all() if x["user_id"] != env.services["issues"]._me
    )
    err(env, S + "update_comment", {"comment_id": theirs["id"], "body": "hijack"}, 422, "not_comment_author")
    err(env, S + "create_comment", {"issue_id": issue["id"], "body": ""}, 400)
    proj = ok(
        env,
        S + "create_project",
        {"name": "Auth revamp", "team_ids": [eng["id"]], "target_date": "2026-06-30"},
    )
    err(env, S + "create_project", {"name": "auth revamp", "team_ids": [eng["id"]]}, 422)
    err(env, S + "create_project", {"name": "Lonely", "team_ids": []}, 400)
    ok(env, S + "update_project", {"project_id": proj["id"], "state": "started"})
    err(env, S + "update_project", {"project_id": proj["id"]}, 400)
    assert any(
        p["id"] == proj["id"]
        for p in ok(
            env, S + "get_projects", {"team_id": eng["id"], "limit": 250, "filter": {"state": "started"}}
        )
    )
    ini = ok(env, S + "create_initiative", {"name": "Security", "status": "Active"})
    link = ok(env, S + "add_project_to_initiative", {"initiative_id": ini["id"], "project_id": proj["id"]})
    err(env, S + "add_project_to_initiative", {"initiative_id": ini["id"], "project_id": proj["id"]}, 422)
    err(
        env,
        S + "update_initiative",
        {"initiative_id": ini["id"], "status": "Completed"},
        422,
        "initiative_has_open_projects",
    )
    ok(env, S + "update_project", {"project_id": proj["id"], "state": "completed"})
    ok(env, S + "update_initiative", {"initiative_id": ini["id"], "status": "Completed"})
    assert (
        ok(env, S + "get_initiative_by_id", {"initiative_id": ini["id"]})["projects"][0]["project_id"]
        == proj["id"]
    )
    assert any(
        i["id"] == ini["id"] for i in ok(env, S + "get_initiatives", {"filter": {"status": "Completed"}})
    )
    ok(env, S + "remove_project_from_initiative", {"initiative_to_project_id": link["id"]})
    err(env, S + "remove_project_from_initiative", {"initiative_to_project_id": link["id"]}, 404)
    err(env, S + "get_initiative_by_id", {"initiative_id": "ini-none"}, 404)
