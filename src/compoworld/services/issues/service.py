"""Issue tracking: Linear, modelled on klavis_linear.json (Klavis Linear MCP server).

All 18 tools of the spec are modelled with their real names and parameters. Issues move through
their team's workflow states; an issue's state must belong to its team, and its project must be one
the team works on.
"""

from __future__ import annotations

from typing import Any, Literal

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.issues.seed import seed_issues
from compoworld.services.issues.state import (
    Comment,
    Initiative,
    InitiativeProject,
    Issue,
    Project,
    Team,
    User,
    WorkflowState,
)

ProjectState = Literal["planned", "started", "paused", "completed", "canceled"]
InitiativeStatus = Literal["Planned", "Active", "Completed"]


def _date(value: str | None, field: str) -> str | None:
    return None if value is None else parse_datetime_arg(value, field).date().isoformat()


def _test(op: str, v: Any, val: Any) -> bool:
    if op == "eq":
        return v == val or (isinstance(v, str) and isinstance(val, str) and norm(v) == norm(val))
    if op == "neq":
        return v != val
    if op in ("in", "nin"):
        return isinstance(val, list) and ((v in val) == (op == "in"))
    if op == "contains":
        return v is not None and norm(str(val)) in norm(str(v))
    if op in ("gte", "lte"):
        return v is not None and (str(v) >= str(val) if op == "gte" else str(v) <= str(val))
    return (v is None) == bool(val)


def _filter(
    records: list[dict[str, Any]], flt: dict[str, Any] | None, aliases: dict[str, str]
) -> list[dict[str, Any]]:
    """Linear-style filters: {field: value} or {field: {eq|neq|in|nin|contains|gte|lte: value}}."""
    if not flt:
        return records
    tests = []
    for key, cond in flt.items():
        field = aliases.get(key, key)
        if not isinstance(cond, dict):
            cond = {"eq": cond}
        for op, val in cond.items():
            if op not in ("eq", "neq", "in", "nin", "contains", "gte", "lte", "null"):
                raise InvalidArguments(
                    f"'filter.{key}': unknown operator {op!r} (use eq, neq, in, nin, contains, gte, lte, null)"
                )
            tests.append((field, op, val))
    known = set(records[0]) if records else set()
    for field, _, _ in tests:
        if records and field not in known:
            raise InvalidArguments(
                f"'filter': unknown field {field!r}; fields: {', '.join(sorted(known | set(aliases)))}"
            )

    def ok(rec: dict[str, Any]) -> bool:
        for field, op, val in tests:
            hit = _test(op, rec.get(field), val)
            if not hit:
                return False
        return True

    return [r for r in records if ok(r)]


class IssuesService(Service):
    """Linear issue tracker: teams, workflow states, issues, comments, projects and initiatives."""

    name = "issues"
    domain = "issue_tracking"
    spec = "klavis_linear.json"

    teams = Resource("teams", Team)
    users = Resource("users", User, text=("name", "email"))
    states = Resource("states", WorkflowState, label="workflow state")
    issues_ = Resource("issues", Issue, prefix="iss-", text=("identifier", "title", "description"))
    projects = Resource("projects", Project, prefix="prj-", text=("name", "description"))
    comments = Resource("comments", Comment, prefix="cmt-")
    initiatives = Resource("initiatives", Initiative, prefix="ini-")
    links = Resource("initiative_projects", InitiativeProject, label="initiative-project link", prefix="ip-")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_issues(self, ctx)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["me"]

    def _issue(self, issue_id: str) -> dict[str, Any]:
        rec = self.issues_.get(issue_id)
        if rec is None:
            found = self.issues_.find(lambda i: i["identifier"].upper() == str(issue_id).upper())
            rec = found[0] if found else None
        if rec is None:
            raise NotFound(f"issue '{issue_id}' not found", type="issue_not_found")
        return rec

    def _view(self, i: dict[str, Any]) -> dict[str, Any]:
        st = self.states.get(i["state_id"]) or {}
        return {**i, "state": {"id": i["state_id"], "name": st.get("name"), "type": st.get("type")}}

    def _check_issue_refs(self, team_id: str, assignee_id, state_id, project_id) -> None:
        if assignee_id is not None:
            self.users.require(assignee_id, "assignee_id")
        if state_id is not None:
            st = self.states.require(state_id, "state_id")
            if st["team_id"] != team_id:
                raise RuleViolation(
                    f"state '{state_id}' belongs to another team's workflow", type="state_not_in_team"
                )
        if project_id is not None:
            proj = self.projects.require(project_id, "project_id")
            if team_id not in proj["team_ids"]:
                raise RuleViolation(
                    f"project '{proj['name']}' is not worked on by this team", type="project_not_in_team"
                )

    @tool
    def linear_get_teams(self) -> list[dict[str, Any]]:
        """Get all teams in the Linear workspace, with their workflow states and members."""
        out = []
        for t in sorted(self.teams.all(), key=lambda t: t["key"]):
            states = sorted(self.states.find(team_id=t["id"]), key=lambda s: s["position"])
            out.append(
                {**t, "states": [{"id": s["id"], "name": s["name"], "type": s["type"]} for s in states]}
            )
        return out

    @tool
    def linear_get_issues(
        self, team_id: str | None = None, limit: int = 10, filter: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Get issues, newest first, optionally of one team and filtered, e.g. {"priority": 1}, {"state": "In Progress"}, {"assignee_id": "..."}, {"due_date": {"lte": "2026-03-10"}}.

        Args:
            team_id: Only issues of this team.
            limit: Maximum number of issues (default 10, max 250).
            filter: Field filters: {field: value} or {field: {eq|neq|in|nin|contains|gte|lte|null: value}}.
        """
        check_limit(limit, "limit", 1, 250)
        if team_id is not None:
            self.teams.require(team_id, "team_id")
        recs = [self._view(i) for i in self.issues_.find(team_id=team_id)]
        flat = [{**r, "state": r["state"]["name"]} for r in recs]
        keep = {
            r["id"]
            for r in _filter(
                flat, filter, {"assignee": "assignee_id", "project": "project_id", "team": "team_id"}
            )
        }
        recs = sort_records([r for r in recs if r["id"] in keep], "created_at", descending=True)
        return recs[:limit]

    @tool
    def linear_get_issue_by_id(self, issue_id: str) -> dict[str, Any]:
        """Get an issue by its id or its identifier (e.g. 'ENG-12'), with its comments.

        Args:
            issue_id: The issue id or identifier.
        """
        i = self._issue(issue_id)
        return {**self._view(i), "comments": sort_records(self.comments.find(issue_id=i["id"]), "created_at")}

    @tool(mutates=True)
    def linear_create_issue(
        self,
        team_id: str,
        title: str,
        description: str | None = None,
        assignee_id: str | None = None,
        priority: int | None = None,
        state_id: str | None = None,
        project_id: str | None = None,
        due_date: str | None = None,
    ) -> dict[str, Any]:
        """Create a new issue in a team.

        Args:
            team_id: The team to create the issue in.
            title: The issue title.
            description: Markdown description.
            assignee_id: The user to assign.
            priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low.
            state_id: The workflow state (default: the team's Todo).
            project_id: The project the issue belongs to.
            due_date: Due date (YYYY-MM-DD).
        """
        team = self.teams.require(team_id, "team_id")
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if priority is not None and not 0 <= priority <= 4:
            raise InvalidArguments("'priority' must be 0 (none), 1 (urgent), 2 (high), 3 (medium) or 4 (low)")
        self._check_issue_refs(team_id, assignee_id, state_id, project_id)
        counters = dict(self.store.tables[META].get("counters", {}))
        counters[team_id] = counters.get(team_id, 0) + 1
        self.store.put(META, "counters", counters)
        todo = next(s["id"] for s in self.states.find(team_id=team_id) if s["name"] == "Todo")
        now = self.clock.iso()
        issue = self.issues_.create(
            {
                "identifier": f"{team['key']}-{counters[team_id]}",
                "team_id": team_id,
                "title": title,
                "description": description or "",
                "assignee_id": assignee_id,
                "creator_id": self._me,
                "priority": priority or 0,
                "state_id": state_id or todo,
                "project_id": project_id,
                "due_date": _date(due_date, "due_date"),
                "created_at": now,
                "updated_at": now,
            }
        )
        return self._view(issue)

    @tool(mutates=True)
    def linear_update_issue(
        self,
        issue_id: str,
        title: str | None = None,
        description: str | None = None,
        assignee_id: str | None = None,
        priority: int | None = None,
        state_id: str | None = None,
        project_id: str | None = None,
        due_date: str | None = None,
    ) -> dict[str, Any]:
        """Update an issue; moving it to a completed state records when it was completed.

        Args:
            issue_id: The issue id or identifier.
            title: New title.
            description: New description.
            assignee_id: New assignee.
            priority: New priority (0-4).
            state_id: New workflow state (of the issue's team).
            project_id: New project.
            due_date: New due date (YYYY-MM-DD).
        """
        i = self._issue(issue_id)
        if priority is not None and not 0 <= priority <= 4:
            raise InvalidArguments("'priority' must be between 0 and 4")
        if title is not None and not title.strip():
            raise InvalidArguments("'title' must not be empty")
        self._check_issue_refs(i["team_id"], assignee_id, state_id, project_id)
        changes = {
            k: v
            for k, v in {
                "title": title,
                "description": description,
                "assignee_id": assignee_id,
                "priority": priority,
                "state_id": state_id,
                "project_id": project_id,
                "due_date": _date(due_date, "due_date"),
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        if state_id is not None:
            done = self.states.get(state_id)["type"] == "completed"
            changes["completed_at"] = (i["completed_at"] or self.clock.iso()) if done else None
        return self._view(self.issues_.update(i["id"], {**changes, "updated_at": self.clock.iso()}))

    @tool
    def linear_search_issues(
        self, query: str, team_id: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """Search issues by words in their identifier, title or description.

        Args:
            query: The words to look for.
            team_id: Only issues of this team.
            limit: Maximum number of results (max 250).
        """
        check_limit(limit, "limit", 1, 250)
        if not query.strip():
            raise InvalidArguments("'query' must not be empty")
        hits = self.issues_.search(query, self.issues_.find(team_id=team_id))
        return [self._view(i) for i in sort_records(hits, "updated_at", descending=True)[:limit]]

    @tool
    def linear_get_projects(
        self, team_id: str | None = None, limit: int = 10, filter: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Get projects, optionally of one team and filtered (e.g. {"state": "started"}).

        Args:
            team_id: Only projects of this team.
            limit: Maximum number of projects (max 250).
            filter: Field filters like linear_get_issues.
        """
        check_limit(limit, "limit", 1, 250)
        recs = self.projects.find(lambda p: team_id is None or team_id in p["team_ids"])
        return sort_records(_filter(recs, filter, {"lead": "lead_id"}), "created_at", descending=True)[:limit]

    @tool(mutates=True)
    def linear_create_project(
        self,
        name: str,
        description: str | None = None,
        team_ids: list[str] | None = None,
        lead_id: str | None = None,
        target_date: str | None = None,
    ) -> dict[str, Any]:
        """Create a new project.

        Args:
            name: Project name (unique).
            description: Project description.
            team_ids: Teams working on it (at least one).
            lead_id: The project lead.
            target_date: Target date (YYYY-MM-DD).
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if not team_ids:
            raise InvalidArguments("'team_ids' must list at least one team")
        for t in team_ids:
            self.teams.require(t, "team_ids")
        if lead_id is not None:
            self.users.require(lead_id, "lead_id")
        if self.projects.find(lambda p: norm(p["name"]) == norm(name)):
            raise RuleViolation(f"a project named {name!r} already exists", type="duplicate_project")
        return self.projects.create(
            {
                "name": name,
                "description": description or "",
                "team_ids": list(dict.fromkeys(team_ids)),
                "lead_id": lead_id,
                "target_date": _date(target_date, "target_date"),
                "created_at": self.clock.iso(),
            }
        )

    @tool(mutates=True)
    def linear_update_project(
        self,
        project_id: str,
        name: str | None = None,
        description: str | None = None,
        state: ProjectState | None = None,
        target_date: str | None = None,
        lead_id: str | None = None,
    ) -> dict[str, Any]:
        """Update a project.

        Args:
            project_id: The project.
            name: New name.
            description: New description.
            state: planned, started, paused, completed or canceled.
            target_date: New target date (YYYY-MM-DD).
            lead_id: New lead.
        """
        self.projects.require(project_id)
        if lead_id is not None:
            self.users.require(lead_id, "lead_id")
        changes = {
            k: v
            for k, v in {
                "name": name,
                "description": description,
                "state": state,
                "target_date": _date(target_date, "target_date"),
                "lead_id": lead_id,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.projects.update(project_id, changes)

    @tool
    def linear_get_comments(self, issue_id: str) -> list[dict[str, Any]]:
        """Get the comments of an issue, oldest first.

        Args:
            issue_id: The issue id or identifier.
        """
        return sort_records(self.comments.find(issue_id=self._issue(issue_id)["id"]), "created_at")

    @tool(mutates=True)
    def linear_create_comment(self, issue_id: str, body: str) -> dict[str, Any]:
        """Add a comment to an issue.

        Args:
            issue_id: The issue id or identifier.
            body: Markdown body of the comment.
        """
        i = self._issue(issue_id)
        if not body.strip():
            raise InvalidArguments("'body' must not be empty")
        return self.comments.create(
            {"issue_id": i["id"], "user_id": self._me, "body": body, "created_at": self.clock.iso()}
        )

    @tool(mutates=True)
    def linear_update_comment(self, comment_id: str, body: str) -> dict[str, Any]:
        """Edit one of your comments.

        Args:
            comment_id: The comment.
            body: The new body.
        """
        c = self.comments.require(comment_id)
        if c["user_id"] != self._me:
            raise RuleViolation("you can only edit your own comments", type="not_comment_author")
        if not body.strip():
            raise InvalidArguments("'body' must not be empty")
        return self.comments.update(comment_id, {"body": body, "edited_at": self.clock.iso()})

    @tool
    def linear_get_initiatives(
        self, limit: int = 10, filter: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Get initiatives with their projects.

        Args:
            limit: Maximum number of initiatives (max 250).
            filter: Field filters, e.g. {"status": "Active"}.
        """
        check_limit(limit, "limit", 1, 250)
        recs = sort_records(
            _filter(self.initiatives.all(), filter, {"owner": "owner_id"}), "created_at", descending=True
        )
        return [self._initiative(i) for i in recs[:limit]]

    def _initiative(self, i: dict[str, Any]) -> dict[str, Any]:
        return {
            **i,
            "projects": [
                {"link_id": link["id"], "project_id": link["project_id"]}
                for link in self.links.find(initiative_id=i["id"])
            ],
        }

    @tool
    def linear_get_initiative_by_id(self, initiative_id: str) -> dict[str, Any]:
        """Get an initiative by id, with its projects.

        Args:
            initiative_id: The initiative.
        """
        return self._initiative(self.initiatives.require(initiative_id))

    @tool(mutates=True)
    def linear_create_initiative(
        self,
        name: str,
        description: str | None = None,
        owner_id: str | None = None,
        target_date: str | None = None,
        status: InitiativeStatus = "Planned",
        color: str | None = None,
        icon: str | None = None,
    ) -> dict[str, Any]:
        """Create an initiative.

        Args:
            name: Initiative name.
            description: Description.
            owner_id: The owner.
            target_date: Target date (YYYY-MM-DD).
            status: Planned, Active or Completed.
            color: Hex color.
            icon: Icon name.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if owner_id is not None:
            self.users.require(owner_id, "owner_id")
        return self.initiatives.create(
            {
                "name": name,
                "description": description or "",
                "owner_id": owner_id,
                "target_date": _date(target_date, "target_date"),
                "status": status,
                "color": color,
                "icon": icon,
                "created_at": self.clock.iso(),
            }
        )

    @tool(mutates=True)
    def linear_update_initiative(
        self,
        initiative_id: str,
        name: str | None = None,
        description: str | None = None,
        owner_id: str | None = None,
        target_date: str | None = None,
        status: InitiativeStatus | None = None,
        color: str | None = None,
        icon: str | None = None,
    ) -> dict[str, Any]:
        """Update an initiative. It can be Completed only when all its projects are completed or canceled.

        Args:
            initiative_id: The initiative.
            name: New name.
            description: New description.
            owner_id: New owner.
            target_date: New target date.
            status: Planned, Active or Completed.
            color: New color.
            icon: New icon.
        """
        self.initiatives.require(initiative_id)
        if owner_id is not None:
            self.users.require(owner_id, "owner_id")
        if status == "Completed":
            open_ = [
                p["name"]
                for link in self.links.find(initiative_id=initiative_id)
                if (p := self.projects.get(link["project_id"]))
                and p["state"] not in ("completed", "canceled")
            ]
            if open_:
                raise RuleViolation(
                    f"projects still open: {', '.join(open_)}", type="initiative_has_open_projects"
                )
        changes = {
            k: v
            for k, v in {
                "name": name,
                "description": description,
                "owner_id": owner_id,
                "target_date": _date(target_date, "target_date"),
                "status": status,
                "color": color,
                "icon": icon,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self._initiative(self.initiatives.update(initiative_id, changes))

    @tool(mutates=True)
    def linear_add_project_to_initiative(self, initiative_id: str, project_id: str) -> dict[str, Any]:
        """Add a project to an initiative.

        Args:
            initiative_id: The initiative.
            project_id: The project.
        """
        self.initiatives.require(initiative_id)
        self.projects.require(project_id)
        if self.links.find(initiative_id=initiative_id, project_id=project_id):
            raise RuleViolation("the project is already part of this initiative", type="already_linked")
        return self.links.create({"initiative_id": initiative_id, "project_id": project_id})

    @tool(mutates=True)
    def linear_remove_project_from_initiative(self, initiative_to_project_id: str) -> dict[str, Any]:
        """Remove a project from an initiative, by the link id that linear_get_initiative_by_id lists.

        Args:
            initiative_to_project_id: The id of the initiative-project link.
        """
        self.links.delete(initiative_to_project_id)
        return {"id": initiative_to_project_id, "deleted": True}
