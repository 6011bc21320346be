from __future__ import annotations

import base64

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

S = "files__dropbox_"


def data_uri(text: str) -> str:
    return "data:text/plain;base64," + base64.b64encode(text.encode()).decode()


def test_tree_operations() -> None:
    env = Environment(services=["files"], seed=1)
    ok(env, S + "create_folder", {"path": "/Projects"})
    err(env, S + "create_folder", {"path": "/Projects"}, 409)
    assert (
        ok(env, S + "create_folder", {"path": "/Projects", "autorename": True})["path_display"]
        == "/Projects (2)"
    )
    err(env, S + "create_folder", {"path": "/Nope/Deeper"}, 404)
    up = ok(env, S + "upload_file", {"dropbox_path": "/Projects/plan.txt", "source_uri": data_uri("v1")})
    ok(
        env,
        S + "upload_file",
        {"dropbox_path": "/Projects/plan.txt", "source_uri": data_uri("v2"), "mode": "overwrite"},
    )
    assert ok(env, S + "download_file", {"path": "/projects/PLAN.txt"})["content"] == "v2"
    revs = ok(env, S + "list_revisions", {"path": "/Projects/plan.txt"})["entries"]
    assert len(revs) == 2
    ok(env, S + "restore_file", {"path": "/Projects/plan.txt", "rev": up["rev"]})
    assert ok(env, S + "download_file", {"path": "/Projects/plan.txt"})["content"] == "v1"
    err(env, S + "restore_file", {"path": "/Personal/todo.txt", "rev": up["rev"]}, 422)
    info = ok(
        env, S + "get_file_info", {"path": "/Projects/plan.txt", "include_has_explicit_shared_members": True}
    )
    assert info["has_explicit_shared_members"] is False
    assert ok(env, S + "get_file_info", {"path": info["id"]})["path_display"] == "/Projects/plan.txt"
    ok(env, S + "copy_file", {"from_path": "/Projects", "to_path": "/Archive"})
    assert ok(env, S + "download_file", {"path": "/Archive/plan.txt"})["content"] == "v1"
    ok(env, S + "move_file", {"from_path": "/Archive/plan.txt", "to_path": "/Personal/plan-old.txt"})
    err(env, S + "move_file", {"from_path": "/Projects", "to_path": "/Projects/inside"}, 422)
    err(env, S + "copy_file", {"from_path": "/Nope.txt", "to_path": "/x.txt"}, 404)
    ok(env, S + "delete_file", {"path": "/Personal/plan-old.txt"})
    err(env, S + "download_file", {"path": "/Personal/plan-old.txt"}, 422)
    err(env, S + "delete_file", {"path": "/Personal/plan-old.txt"}, 404)
    assert ok(env, S + "search_files", {"query": "plan-old", "file_status": "deleted"})["matches"]
    listing = ok(env, S + "list_folder", {"path": "/Customers", "limit": 5})
    rest = ok(env, S + "list_folder_continue", {"cursor": listing["cursor"]})
    assert listing["has_more"] and {e["path_lower"] for e in listing["entries"]}.isdisjoint(
        {e["path_lower"] for e in rest["entries"]}
    )
    err(env, S + "list_folder_continue", {"cursor": "garbage"}, 400)
    err(env, S + "list_folder", {"path": "/Personal/todo.txt"}, 404)
    hits = ok(env, S + "search_files", {"query": "renewal", "max_results": 2})
    more = ok(env, S + "search_files_continue", {"cursor": hits["cursor"]})
    assert hits["has_more"] and more["matches"]
    err(env, S + "search_files_continue", {"cursor": listing["cursor"]}, 400)
    assert ok(
        env,
        S + "search_files",
        {"query": "contract", "filename_only": True, "path": "/Customers", "max_results": 1000},
    )["matches"]
    err(env, S + "search_files", {"query": " "}, 400)


def test_escapes_and_host_access_are_refused() -> None:
    env = Environment(services=["files"], seed=1)
    for bad in ("/../etc/passwd", "etc/passwd", "/a//b", "/a/./b", "C:\\Windows", "/a\x00b"):
        err(env, S + "upload_file", {"dropbox_path": bad, "source_uri": data_uri("x")}, 400)
    for uri in ("file:///etc/passwd", "https://example.com/x", "ftp://host/file"):
        err(env, S + "upload_file", {"dropbox_path": "/x.txt", "source_uri": uri}, 422, "source_not_allowed")
    err(env, S + "upload_file", {"dropbox_path": "/x.txt", "source_uri": "data:;base64,!!!"}, 400)


def test_sharing_locks_requests_batches() -> None:
    env = Environment(services=["files"], seed=1)
    path = "/Personal/todo.txt"
    link = ok(env, S + "share_file", {"path": path, "settings": {"requested_visibility": "public"}})
    err(env, S + "share_file", {"path": path}, 409)
    err(env, S + "share_file", {"path": "/Finance", "settings": {"requested_visibility": "password"}}, 400)
    assert ok(env, S + "get_shared_links", {"path": path})["links"][0]["url"] == link["id"]
    assert ok(env, S + "get_temporary_link", {"path": path})["link"].startswith("https://")
    err(env, S + "get_temporary_link", {"path": "/Finance"}, 422)
    ok(
        env,
        S + "add_file_member",
        {"file": path, "members": [{"email": "pal@friends.example", "access_level": "editor"}]},
    )
    assert [m["email"] for m in ok(env, S + "list_file_members", {"file": path})["users"]][1:] == [
        "pal@friends.example"
    ]
    err(env, S + "add_file_member", {"file": path, "members": [{"email": env.company.me.email}]}, 422)
    ok(env, S + "remove_file_member", {"file": path, "member": "pal@friends.example"})
    err(env, S + "remove_file_member", {"file": path, "member": "pal@friends.example"}, 404)
    ok(env, S + "unshare_file", {"file": path})
    err(env, S + "unshare_file", {"file": path}, 422)
    ok(env, S + "lock_file_batch", {"entries": [{"path": path}]})
    err(env, S + "lock_file_batch", {"entries": [{"path": path}]}, 409)
    err(env, S + "delete_file", {"path": path}, 422, "file_locked")
    err(env, S + "upload_file", {"dropbox_path": path, "source_uri": data_uri("x"), "mode": "overwrite"}, 422)
    ok(env, S + "unlock_file_batch", {"entries": [{"path": path}]})
    err(env, S + "unlock_file_batch", {"entries": [{"path": path}]}, 409)
    req = ok(env, S + "create_file_request", {"title": "Receipts", "destination": "/Receipts"})
    assert ok(env, S + "get_file_request", {"id": req["id"]})["destination"] == "/Receipts"
    assert ok(env, S + "list_file_requests")["file_requests"]
    err(env, S + "delete_file_request", {"ids": [req["id"]]}, 422, "file_request_open")
    ok(env, S + "update_file_request", {"id": req["id"], "open": False})
    err(env, S + "update_file_request", {"id": req["id"]}, 400)
    ok(env, S + "delete_file_request", {"ids": [req["id"]]})
    err(env, S + "get_file_request", {"id": req["id"]}, 404)
    job = ok(env, S + "batch_copy", {"entries": [{"from_path": path, "to_path": "/Receipts/todo.txt"}]})[
        "async_job_id"
    ]
    assert ok(env, S + "check_batch_job_status", {"async_job_id": job})[".tag"] == "complete"
    ok(
        env,
        S + "batch_move",
        {"entries": [{"from_path": "/Receipts/todo.txt", "to_path": "/Receipts/todo-2.txt"}]},
    )
    before = env.state_hash()
    err(env, S + "batch_delete", {"entries": [{"path": "/Receipts/todo-2.txt"}, {"path": "/ghost.txt"}]}, 404)
    assert env.state_hash() == before
    ok(env, S + "batch_delete", {"entries": [{"path": "/Receipts/todo-2.txt"}]})
    err(env, S + "check_job_status", {"async_job_id": "dbjid:none"}, 404)
    usage = ok(env, S + "get_space_usage")
    assert 0 < usage["used"] < usage["allocation"]["allocated"]
    assert ok(env, S + "get_current_account")["email"] == env.company.me.email
