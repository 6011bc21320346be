from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "projects__asana_"


def test_asana_flow() -> None:
    env = Environment(services=["projects"], seed=8)
    ws = ok(env, S + "get_workspaces")["data"][0]["gid"]
    assert ok(env, S + "get_workspace", {"workspace_id": ws})["is_organization"]
    err(env, S + "get_workspace", {"workspace_id": "1"}, 404)
    me = ok(env, S + "get_user", {"user_id": "me"})
    assert me["email"] == env.company.me.email
    assert len(ok(env, S + "get_users", {"workspace_id": ws, "limit": 100})["data"]) == len(
        env.company.employees
    )
    teams = ok(env, S + "get_teams", {"workspace_id": ws})["data"]
    ok(env, S + "get_team", {"team_id": teams[0]["gid"]})
    assert all(
        me["gid"] in t["member_gids"] for t in ok(env, S + "get_user_teams", {"workspace_id": ws})["data"]
    )
    projects = ok(env, S + "get_projects", {"workspace_id": ws, "filter": {"archived": False}})["data"]
    proj = projects[0]
    assert ok(env, S + "get_project", {"project_id": proj["gid"]})["num_tasks"] >= 0
    err(env, S + "get_projects", {"workspace_id": ws, "filter": {"owner": "x"}}, 400)
    tag = ok(env, S + "create_tag", {"name": "launch", "workspace_id": ws})
    err(env, S + "create_tag", {"name": "Launch", "workspace_id": ws}, 409)
    assert ok(env, S + "get_tag", {"tag_id": tag["gid"]})["name"] == "launch"
    assert any(t["gid"] == tag["gid"] for t in ok(env, S + "get_tags", {"workspace_id": ws})["data"])
    task = ok(
        env,
        S + "create_task",
        {
            "name": "Prepare launch deck",
            "workspace_id": ws,
            "project": proj["name"],
            "assignee_id": "me",
            "tags": ["launch"],
            "start_date": "2026-03-03",
            "due_date": "2026-03-10",
        },
    )
    err(
        env,
        S + "create_task",
        {"name": "x", "workspace_id": ws, "start_date": "2026-03-10", "due_date": "2026-03-03"},
        422,
        "start_after_due",
    )
    err(env, S + "create_task", {"name": "x", "workspace_id": ws, "project": "No such project"}, 404)
    sub = ok(
        env, S + "create_task", {"name": "Collect numbers", "workspace_id": ws, "parent_task_id": task["gid"]}
    )
    assert ok(env, S + "get_task", {"task_id": task["gid"]})["subtasks"][0]["gid"] == sub["gid"]
    assert ok(env, S + "get_subtasks", {"task_id": task["gid"]})["data"][0]["gid"] == sub["gid"]
    err(env, S + "mark_task_completed", {"task_id": task["gid"]}, 422, "open_subtasks")
    ok(env, S + "mark_task_completed", {"task_id": sub["gid"]})
    err(env, S + "mark_task_completed", {"task_id": sub["gid"]}, 409)
    ok(env, S + "update_task", {"task_id": task["gid"], "completed": True, "description": "done"})
    err(env, S + "update_task", {"task_id": task["gid"]}, 400)
    found = ok(
        env,
        S + "search_tasks",
        {"workspace_id": ws, "keywords": "launch deck", "completed": True, "tags": [tag["gid"]]},
    )
    assert [t["gid"] for t in found] == [task["gid"]]
    due = ok(
        env,
        S + "search_tasks",
        {
            "workspace_id": ws,
            "due_on_or_before": "2026-03-05",
            "completed": False,
            "sort_by": "due_date",
            "sort_order": "ascending",
            "limit": 100,
        },
    )
    assert all(t["due_on"] <= "2026-03-05" for t in due)
    att = ok(
        env,
        S + "attach_file_to_task",
        {"task_id": task["gid"], "file_name": "deck.txt", "file_content_base64": "aGVsbG8="},
    )
    assert att["size"] == 5
    err(env, S + "attach_file_to_task", {"task_id": task["gid"], "file_name": "x.txt"}, 400)
    err(
        env,
        S + "attach_file_to_task",
        {"task_id": task["gid"], "file_name": "x.txt", "file_content_base64": "%%%"},
        400,
    )
    tasks = ok(
        env, S + "get_project_tasks", {"project_id": proj["gid"], "completed_since": "now", "limit": 100}
    )["data"]
    assert all(not t["completed"] for t in tasks)
    err(env, S + "get_project_tasks", {"project_id": proj["gid"], "limit": 0}, 400)
