"""Project management: Asana, modelled on klavis_asana.json (Klavis Asana MCP server).

All 20 tools of the spec are modelled with their real names and parameters. Tasks live in
workspaces and projects, have subtasks, tags and attachments; a task cannot start after it is due,
and a task with open subtasks cannot be marked completed.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, matches, norm, paginate, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.projects.seed import gid, seed_projects
from compoworld.services.projects.state import Project, Tag, Task, Team, User, Workspace


def _day(value: str | None, field: str) -> str | None:
    return None if value is None else parse_datetime_arg(value, field).date().isoformat()


class ProjectsService(Service):
    """Asana: workspaces, teams, projects, tasks with subtasks, tags and attachments."""

    name = "projects"
    domain = "project_management"
    spec = "klavis_asana.json"

    workspaces = Resource("workspaces", Workspace, key="gid")
    users = Resource("users", User, key="gid")
    teams = Resource("teams", Team, key="gid")
    projects = Resource("projects", Project, key="gid")
    tasks = Resource("tasks", Task, text=("name", "notes"), key="gid")
    tags = Resource("tags", Tag, key="gid")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_projects(self, ctx)

    def _gid(self) -> str:
        n = self.store.tables[META]["next_gid"]
        self.store.put(META, "next_gid", n + 1)
        return gid(n)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["me"]

    def _ws(self, workspace_id: str) -> dict[str, Any]:
        return self.workspaces.require(workspace_id, "workspace_id")

    def _user(self, user_id: str | None, field: str) -> str | None:
        if user_id is None:
            return None
        return self._me if user_id == "me" else self.users.require(user_id, field)["gid"]

    def _project(self, ref: str, field: str = "project") -> dict[str, Any]:
        p = self.projects.get(ref) or next(
            (p for p in self.projects.all() if norm(p["name"]) == norm(ref)), None
        )
        if p is None:
            raise NotFound(f"project '{ref}' not found (from '{field}')", type="project_not_found")
        return p

    def _task_view(self, t: dict[str, Any], max_subtasks: int = 0) -> dict[str, Any]:
        out = {k: v for k, v in t.items() if k != "attachments"}
        out["attachments"] = [
            {"gid": a["gid"], "name": a["name"], "size": a["size"]} for a in t["attachments"]
        ]
        out["num_subtasks"] = len(self.tasks.find(parent_gid=t["gid"]))
        if max_subtasks:
            subs = sort_records(self.tasks.find(parent_gid=t["gid"]), "created_at")[:max_subtasks]
            out["subtasks"] = [
                {"gid": s["gid"], "name": s["name"], "completed": s["completed"]} for s in subs
            ]
        return out

    def _page(self, records: list[Any], limit: int, token: str | None) -> dict[str, Any]:
        check_limit(limit, "limit", 1, 100)
        page, nxt = paginate(records, token, limit, "next_page_token")
        return {"data": page, "next_page_token": nxt}

    # ---- tasks --------------------------------------------------------------------------
    @tool(mutates=True)
    def asana_create_task(
        self,
        name: str,
        workspace_id: str,
        start_date: str | None = None,
        due_date: str | None = None,
        description: str | None = None,
        parent_task_id: str | None = None,
        project: str | None = None,
        assignee_id: str | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """Create a task in a workspace, optionally in a project (by id or name), as a subtask, with tags (ids or names).

        Args:
            name: The task name.
            workspace_id: The workspace to create the task in.
            start_date: Start date (YYYY-MM-DD); must not be after the due date.
            due_date: Due date (YYYY-MM-DD).
            description: Notes of the task.
            parent_task_id: Create the task as a subtask of this task.
            project: Project id or name.
            assignee_id: The assignee's id, or 'me'.
            tags: Tag ids or names.
        """
        ws = self._ws(workspace_id)
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        start, due = _day(start_date, "start_date"), _day(due_date, "due_date")
        if start and due and start > due:
            raise RuleViolation(
                f"a task cannot start ({start}) after it is due ({due})", type="start_after_due"
            )
        if start and not due:
            raise InvalidArguments("'due_date' is required when 'start_date' is given")
        if parent_task_id is not None:
            parent = self.tasks.require(parent_task_id, "parent_task_id")
            if parent["workspace_gid"] != ws["gid"]:
                raise RuleViolation("the parent task is in another workspace", type="workspace_mismatch")
        projects = []
        if project is not None:
            p = self._project(project)
            if p["workspace_gid"] != ws["gid"]:
                raise RuleViolation("the project is in another workspace", type="workspace_mismatch")
            if p["archived"]:
                raise RuleViolation(f"project '{p['name']}' is archived", type="project_archived")
            projects = [p["gid"]]
        tag_gids = []
        for ref in tags or []:
            t = self.tags.get(ref) or next((t for t in self.tags.all() if norm(t["name"]) == norm(ref)), None)
            if t is None:
                raise NotFound(f"tag '{ref}' not found", type="tag_not_found")
            tag_gids.append(t["gid"])
        now = self.clock.iso()
        task = self.tasks.create(
            {
                "name": name,
                "notes": description or "",
                "workspace_gid": ws["gid"],
                "project_gids": projects,
                "parent_gid": parent_task_id,
                "assignee_gid": self._user(assignee_id, "assignee_id"),
                "tag_gids": list(dict.fromkeys(tag_gids)),
                "start_on": start,
                "due_on": due,
                "created_at": now,
                "modified_at": now,
            },
            id=self._gid(),
        )
        return self._task_view(task)

    @tool
    def asana_get_task(self, task_id: str, max_subtasks: int = 100) -> dict[str, Any]:
        """Get a task by its id, with up to max_subtasks subtasks.

        Args:
            task_id: The task id.
            max_subtasks: Maximum number of subtasks to include (0-100).
        """
        check_limit(max_subtasks, "max_subtasks", 0, 100)
        return self._task_view(self.tasks.require(task_id), max_subtasks)

    @tool
    def asana_search_tasks(
        self,
        workspace_id: str,
        keywords: str | None = None,
        assignee_id: str | None = None,
        project: str | None = None,
        team_id: str | None = None,
        tags: list[str] | None = None,
        due_on: str | None = None,
        due_on_or_after: str | None = None,
        due_on_or_before: str | None = None,
        start_on: str | None = None,
        start_on_or_after: str | None = None,
        start_on_or_before: str | None = None,
        completed: bool | None = None,
        limit: int = 20,
        sort_by: Literal["due_date", "created_at", "completed_at", "likes", "modified_at"] = "modified_at",
        sort_order: Literal["ascending", "descending"] = "descending",
    ) -> list[dict[str, Any]]:
        """Search tasks in a workspace by keywords, assignee, project, team, tags, dates and completion.

        Args:
            workspace_id: The workspace.
            keywords: Words that must appear in the name or notes.
            assignee_id: Assignee id, or 'me'.
            project: Project id or name.
            team_id: Only tasks in this team's projects.
            tags: Tag ids (all must be present).
            due_on: Due on this date.
            due_on_or_after: Due on or after this date.
            due_on_or_before: Due on or before this date.
            start_on: Starting on this date.
            start_on_or_after: Starting on or after this date.
            start_on_or_before: Starting on or before this date.
            completed: Only completed (true) or incomplete (false) tasks.
            limit: Maximum results (max 100).
            sort_by: due_date, created_at, completed_at, likes or modified_at.
            sort_order: ascending or descending.
        """
        self._ws(workspace_id)
        check_limit(limit, "limit", 1, 100)
        assignee = self._user(assignee_id, "assignee_id")
        proj = self._project(project)["gid"] if project else None
        team_projects = (
            {p["gid"] for p in self.projects.find(team_gid=self.teams.require(team_id, "team_id")["gid"])}
            if team_id
            else None
        )
        d = {
            k: _day(v, k)
            for k, v in (
                ("due_on", due_on),
                ("due_on_or_after", due_on_or_after),
                ("due_on_or_before", due_on_or_before),
                ("start_on", start_on),
                ("start_on_or_after", start_on_or_after),
                ("start_on_or_before", start_on_or_before),
            )
            if v
        }

        def ok(t: dict[str, Any]) -> bool:
            checks = [
                not keywords or matches(keywords, t["name"], t["notes"]),
                assignee is None or t["assignee_gid"] == assignee,
                proj is None or proj in t["project_gids"],
                team_projects is None or bool(team_projects & set(t["project_gids"])),
                not tags or set(tags) <= set(t["tag_gids"]),
                completed is None or t["completed"] == completed,
                "due_on" not in d or t["due_on"] == d["due_on"],
                "due_on_or_after" not in d or (t["due_on"] or "") >= d["due_on_or_after"],
                "due_on_or_before" not in d or (t["due_on"] or "9") <= d["due_on_or_before"],
                "start_on" not in d or t["start_on"] == d["start_on"],
                "start_on_or_after" not in d or (t["start_on"] or "") >= d["start_on_or_after"],
                "start_on_or_before" not in d or (t["start_on"] or "9") <= d["start_on_or_before"],
            ]
            return all(checks)

        hits = [t for t in self.tasks.find(workspace_gid=workspace_id) if ok(t)]
        key = {
            "due_date": "due_on",
            "created_at": "created_at",
            "completed_at": "completed_at",
            "likes": "modified_at",
            "modified_at": "modified_at",
        }[sort_by]
        hits = sort_records(hits, key, descending=sort_order == "descending")
        return [self._task_view(t) for t in hits[:limit]]

    @tool(mutates=True)
    def asana_update_task(
        self,
        task_id: str,
        name: str | None = None,
        completed: bool | None = None,
        start_date: str | None = None,
        due_date: str | None = None,
        description: str | None = None,
        assignee_id: str | None = None,
    ) -> dict[str, Any]:
        """Update a task's name, completion, dates, description or assignee.

        Args:
            task_id: The task id.
            name: New name.
            completed: Mark completed (true) or incomplete (false).
            start_date: New start date (YYYY-MM-DD).
            due_date: New due date (YYYY-MM-DD).
            description: New notes.
            assignee_id: New assignee id, or 'me'.
        """
        t = self.tasks.require(task_id)
        start = _day(start_date, "start_date") or t["start_on"]
        due = _day(due_date, "due_date") or t["due_on"]
        if start and due and start > due:
            raise RuleViolation(
                f"a task cannot start ({start}) after it is due ({due})", type="start_after_due"
            )
        if name is not None and not name.strip():
            raise InvalidArguments("'name' must not be empty")
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "name": name,
                "notes": description,
                "assignee_gid": self._user(assignee_id, "assignee_id"),
            }.items()
            if v is not None
        }
        if start_date is not None or due_date is not None:
            changes.update(start_on=start, due_on=due)
        if completed is not None:
            if completed:
                self._check_subtasks_done(t)
            changes.update(
                completed=completed,
                completed_at=(t["completed_at"] or self.clock.iso()) if completed else None,
            )
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self._task_view(self.tasks.update(task_id, {**changes, "modified_at": self.clock.iso()}))

    def _check_subtasks_done(self, t: dict[str, Any]) -> None:
        open_ = [s["name"] for s in self.tasks.find(parent_gid=t["gid"], completed=False)]
        if open_:
            raise RuleViolation(
                f"task has {len(open_)} open subtask(s); complete them first: {', '.join(open_[:3])}",
                type="open_subtasks",
            )

    @tool(mutates=True)
    def asana_mark_task_completed(self, task_id: str) -> dict[str, Any]:
        """Mark a task completed (its subtasks must be completed first).

        Args:
            task_id: The task id.
        """
        t = self.tasks.require(task_id)
        if t["completed"]:
            raise Conflict(f"task '{t['name']}' is already completed", type="already_completed")
        self._check_subtasks_done(t)
        now = self.clock.iso()
        return self._task_view(
            self.tasks.update(task_id, {"completed": True, "completed_at": now, "modified_at": now})
        )

    @tool
    def asana_get_subtasks(
        self, task_id: str, limit: int = 100, next_page_token: str | None = None
    ) -> dict[str, Any]:
        """Get the subtasks of a task.

        Args:
            task_id: The parent task id.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        self.tasks.require(task_id)
        subs = sort_records(self.tasks.find(parent_gid=task_id), "created_at")
        return self._page([self._task_view(s) for s in subs], limit, next_page_token)

    @tool(mutates=True)
    def asana_attach_file_to_task(
        self,
        task_id: str,
        file_name: str,
        file_content_str: str | None = None,
        file_content_base64: str | None = None,
        file_content_url: str | None = None,
        file_encoding: str = "utf-8",
    ) -> dict[str, Any]:
        """Attach a file to a task, given as text, base64 or a URL (URLs are recorded, never fetched).

        Args:
            task_id: The task id.
            file_name: The file name.
            file_content_str: The file content as text.
            file_content_base64: The file content, base64-encoded.
            file_content_url: A URL of the file (stored as a link; nothing is downloaded).
            file_encoding: Encoding of file_content_str.
        """
        t = self.tasks.require(task_id)
        given = [x for x in (file_content_str, file_content_base64, file_content_url) if x is not None]
        if len(given) != 1:
            raise InvalidArguments(
                "give exactly one of 'file_content_str', 'file_content_base64' or 'file_content_url'"
            )
        if not file_name.strip() or "/" in file_name:
            raise InvalidArguments("'file_name' must be a plain file name")
        if file_content_base64 is not None:
            try:
                raw = base64.b64decode(file_content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidArguments("'file_content_base64' is not valid base64") from None
            preview, size = raw[:200].decode("utf-8", "replace"), len(raw)
        elif file_content_url is not None:
            preview, size = file_content_url, 0
        else:
            preview, size = (
                file_content_str[:200],
                len(file_content_str.encode(file_encoding, "replace") if file_encoding else file_content_str),
            )
        att = {"gid": self._gid(), "name": file_name, "size": size, "content_preview": preview}
        self.tasks.update(task_id, {"attachments": [*t["attachments"], att], "modified_at": self.clock.iso()})
        return {"gid": att["gid"], "name": file_name, "size": size, "parent": task_id}

    # ---- projects -----------------------------------------------------------------------
    @tool
    def asana_get_projects(
        self,
        workspace_id: str,
        team_id: str | None = None,
        limit: int = 100,
        next_page_token: str | None = None,
        filter: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """List projects of a workspace, optionally of one team; filter by {"archived": true|false} or {"name": "..."}.

        Args:
            workspace_id: The workspace.
            team_id: Only projects of this team.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
            filter: {"archived": bool} and/or {"name": text}.
        """
        self._ws(workspace_id)
        bad = set(filter or {}) - {"archived", "name"}
        if bad:
            raise InvalidArguments(f"'filter' supports archived and name, not {sorted(bad)}")
        f = filter or {}
        recs = self.projects.find(
            lambda p: (
                ("archived" not in f or p["archived"] == bool(f["archived"]))
                and ("name" not in f or norm(str(f["name"])) in norm(p["name"]))
            ),
            workspace_gid=workspace_id,
            team_gid=team_id,
        )
        return self._page(sort_records(recs, "name"), limit, next_page_token)

    @tool
    def asana_get_project(self, project_id: str) -> dict[str, Any]:
        """Get a project by id, with task counts.

        Args:
            project_id: The project id.
        """
        p = self.projects.require(project_id)
        tasks = self.tasks.find(lambda t: project_id in t["project_gids"])
        return {**p, "num_tasks": len(tasks), "num_completed_tasks": sum(t["completed"] for t in tasks)}

    @tool
    def asana_get_project_tasks(
        self,
        project_id: str,
        completed_since: str | None = None,
        limit: int = 100,
        next_page_token: str | None = None,
    ) -> dict[str, Any]:
        """List the tasks of a project; completed_since='now' returns only incomplete tasks.

        Args:
            project_id: The project id.
            completed_since: Only tasks incomplete or completed since this time ('now' for incomplete only).
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        self.projects.require(project_id)
        if completed_since == "now":  # Asana's idiom for "incomplete tasks only"
            recs = self.tasks.find(lambda t: project_id in t["project_gids"] and not t["completed"])
        else:
            since = (
                parse_datetime_arg(completed_since, "completed_since").strftime("%Y-%m-%dT%H:%M:%SZ")
                if completed_since
                else None
            )
            recs = self.tasks.find(
                lambda t: (
                    project_id in t["project_gids"]
                    and (since is None or not t["completed"] or (t["completed_at"] or "") >= since)
                )
            )
        return self._page(
            [self._task_view(t) for t in sort_records(recs, "created_at")], limit, next_page_token
        )

    # ---- workspaces, users, teams, tags ----------------------------------------------------
    @tool
    def asana_get_workspaces(self, limit: int = 100, next_page_token: str | None = None) -> dict[str, Any]:
        """List the workspaces you belong to.

        Args:
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        return self._page(sort_records(self.workspaces.all(), "gid"), limit, next_page_token)

    @tool
    def asana_get_workspace(self, workspace_id: str) -> dict[str, Any]:
        """Get a workspace by id.

        Args:
            workspace_id: The workspace id.
        """
        return self._ws(workspace_id)

    @tool
    def asana_get_users(
        self, workspace_id: str, limit: int = 100, next_page_token: str | None = None
    ) -> dict[str, Any]:
        """List the users of a workspace.

        Args:
            workspace_id: The workspace id.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        self._ws(workspace_id)
        users = self.users.find(lambda u: workspace_id in u["workspace_gids"])
        return self._page(sort_records(users, "name"), limit, next_page_token)

    @tool
    def asana_get_user(self, user_id: str) -> dict[str, Any]:
        """Get a user by id, or 'me' for yourself.

        Args:
            user_id: The user id, or 'me'.
        """
        return self.users.require(self._user(user_id, "user_id"))

    @tool
    def asana_get_teams(
        self, workspace_id: str, limit: int = 100, next_page_token: str | None = None
    ) -> dict[str, Any]:
        """List the teams of a workspace.

        Args:
            workspace_id: The workspace id.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        self._ws(workspace_id)
        return self._page(
            sort_records(self.teams.find(workspace_gid=workspace_id), "name"), limit, next_page_token
        )

    @tool
    def asana_get_team(self, team_id: str) -> dict[str, Any]:
        """Get a team by id.

        Args:
            team_id: The team id.
        """
        return self.teams.require(team_id)

    @tool
    def asana_get_user_teams(
        self, workspace_id: str | None = None, limit: int = 100, next_page_token: str | None = None
    ) -> dict[str, Any]:
        """List the teams you are a member of.

        Args:
            workspace_id: Only teams of this workspace.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        if workspace_id is not None:
            self._ws(workspace_id)
        recs = self.teams.find(lambda t: self._me in t["member_gids"], workspace_gid=workspace_id)
        return self._page(sort_records(recs, "name"), limit, next_page_token)

    @tool
    def asana_get_tags(
        self, workspace_id: str, limit: int = 100, next_page_token: str | None = None
    ) -> dict[str, Any]:
        """List the tags of a workspace.

        Args:
            workspace_id: The workspace id.
            limit: Page size (max 100).
            next_page_token: Token of the next page.
        """
        self._ws(workspace_id)
        return self._page(
            sort_records(self.tags.find(workspace_gid=workspace_id), "name"), limit, next_page_token
        )

    @tool
    def asana_get_tag(self, tag_id: str) -> dict[str, Any]:
        """Get a tag by id.

        Args:
            tag_id: The tag id.
        """
        return self.tags.require(tag_id)

    @tool(mutates=True)
    def asana_create_tag(
        self, name: str, workspace_id: str, description: str | None = None, color: str | None = None
    ) -> dict[str, Any]:
        """Create a tag in a workspace; tag names are unique per workspace.

        Args:
            name: Tag name.
            workspace_id: The workspace.
            description: Tag notes.
            color: Tag color (e.g. red, green, blue).
        """
        self._ws(workspace_id)
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if self.tags.find(lambda t: norm(t["name"]) == norm(name), workspace_gid=workspace_id):
            raise Conflict(f"a tag named {name!r} already exists", type="tag_exists")
        return self.tags.create(
            {"name": name, "notes": description or "", "color": color, "workspace_gid": workspace_id},
            id=self._gid(),
        )
