"""Issue tracking with JQL: Jira, modelled on klavis_jira.json (Klavis Jira MCP server).

All 15 tools of the spec are modelled with their real names and parameters, including JQL search
(a parsed subset: clauses, AND/OR, IN, ~, IS EMPTY, currentUser(), ORDER BY). Issues move through
To Do -> In Progress -> In Review -> Done; a subtask needs a parent; a sprint ends after it starts
and only one sprint per board is active at a time; a closed sprint cannot change.
"""

from __future__ import annotations

from typing import Any, Literal

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, matches, norm, parse_datetime_arg
from compoworld.core.resource import Resource, json_object
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.tracker import jql
from compoworld.services.tracker.seed import seed_tracker
from compoworld.services.tracker.state import Board, Issue, Project, Sprint, User

STATUSES = ("To Do", "In Progress", "In Review", "Done")
TYPES = ("Task", "Bug", "Story", "Epic", "Subtask")
PRIORITIES = ("Lowest", "Low", "Medium", "High", "Highest")
ESSENTIAL = ("summary", "status", "assignee", "issuetype", "priority", "created", "updated")
LINK_TYPES = [
    {"id": "10000", "name": "Blocks", "inward": "is blocked by", "outward": "blocks"},
    {"id": "10001", "name": "Cloners", "inward": "is cloned by", "outward": "clones"},
    {"id": "10002", "name": "Duplicate", "inward": "is duplicated by", "outward": "duplicates"},
    {"id": "10003", "name": "Relates", "inward": "relates to", "outward": "relates to"},
]
FIELD_DEFS = [
    {"id": f, "name": f.capitalize(), "custom": False}
    for f in (
        "summary",
        "description",
        "status",
        "priority",
        "assignee",
        "reporter",
        "labels",
        "components",
        "issuetype",
        "parent",
        "duedate",
        "created",
        "updated",
    )
] + [{"id": "customfield_10020", "name": "Sprint", "custom": True}]


class TrackerService(Service):
    """Jira: projects, issues with JQL search, comments, epics, boards and sprints."""

    name = "tracker"
    domain = "issue_tracking"
    spec = "klavis_jira.json"

    projects = Resource("projects", Project, label="project")
    users = Resource("users", User)
    boards = Resource("boards", Board)
    sprints = Resource("sprints", Sprint)
    issues = Resource("issues", Issue, label="issue")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_tracker(self, ctx)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["me"]

    def _user(self, ref: str | None) -> str | None:
        if ref in (None, ""):
            return None
        if ref == "currentUser()":
            return self._me
        for u in self.users.all():
            if (
                ref in (u["id"], u["emailAddress"])
                or norm(ref) == norm(u["displayName"])
                or norm(ref) == norm(u["emailAddress"].split("@")[0])
            ):
                return u["id"]
        return None

    def _require_user(self, ref: str, field: str) -> str:
        uid = self._user(ref)
        if uid is None:
            raise NotFound(
                f"'{field}': no user matches {ref!r} (account id, name or email)", type="user_not_found"
            )
        return uid

    def _new_issue(self, project: str, fields: dict[str, Any]) -> dict[str, Any]:
        n = self.next_seq(f"key:{project}")
        now = fields.get("created") or self.clock.iso()
        return self.issues.create(
            {"project": project, **fields, "created": now, "updated": now}, id=f"{project}-{n}"
        )

    def _issue(self, key: str) -> dict[str, Any]:
        rec = self.issues.get(key.strip().upper())
        if rec is None:
            raise NotFound(
                f"issue {key} does not exist or you do not have permission to see it", type="issue_not_found"
            )
        return rec

    def _view(self, i: dict[str, Any], fields: str | None = None, comment_limit: int = 0) -> dict[str, Any]:
        names = {u["id"]: u["displayName"] for u in self.users.all()}
        full = {
            **{k: v for k, v in i.items() if k not in ("id", "comments", "history")},
            "assignee": {"accountId": i["assignee"], "displayName": names.get(i["assignee"])}
            if i["assignee"]
            else None,
            "reporter": {"accountId": i["reporter"], "displayName": names.get(i["reporter"])},
            "customfield_10020": i["sprint"],
        }
        wanted = (
            list(full)
            if fields == "*all"
            else [f.strip() for f in (fields or ",".join(ESSENTIAL)).split(",") if f.strip()]
        )
        out: dict[str, Any] = {"key": i["id"], "fields": {f: full.get(f) for f in wanted}}
        if comment_limit:
            out["comments"] = i["comments"][-comment_limit:]
        return out

    def _apply(
        self, issue: dict[str, Any] | None, project: str, data: dict[str, Any], where: str
    ) -> dict[str, Any]:
        """Validated field changes from a Jira-style fields object."""
        allowed = {
            "summary",
            "description",
            "priority",
            "assignee",
            "labels",
            "components",
            "parent",
            "duedate",
            "status",
            "issuetype",
            "customfield_10020",
            "sprint",
        }
        bad = set(data) - allowed
        if bad:
            raise InvalidArguments(
                f"'{where}' has unknown field(s) {sorted(bad)}; see jira_search_fields", type="invalid_field"
            )
        out: dict[str, Any] = {}
        for k, v in data.items():
            if isinstance(v, dict):
                v = v.get("name") or v.get("key") or v.get("accountId") or v.get("id")
            if k == "summary":
                if not isinstance(v, str) or not v.strip():
                    raise InvalidArguments(f"'{where}.summary' must be non-empty text")
                out[k] = v
            elif k == "description":
                out[k] = str(v or "")
            elif k == "priority":
                if v not in PRIORITIES:
                    raise InvalidArguments(f"'{where}.priority' must be one of {', '.join(PRIORITIES)}")
                out[k] = v
            elif k == "assignee":
                out[k] = self._require_user(str(v), f"{where}.assignee") if v else None
            elif k in ("labels", "components"):
                vals = v if isinstance(v, list) else [x.strip() for x in str(v or "").split(",") if x.strip()]
                if k == "components":
                    known = self.projects.get(project)["components"]
                    unknown = [c for c in vals if c not in known]
                    if unknown:
                        raise InvalidArguments(
                            f"'{where}.components': {unknown} are not components of {project} ({', '.join(known)})"
                        )
                if k == "labels" and any(" " in str(x) for x in vals):
                    raise InvalidArguments(f"'{where}.labels' cannot contain spaces")
                out[k] = [str(x) for x in vals]
            elif k == "parent":
                if v:
                    parent = self._issue(str(v))
                    if issue is not None and parent["id"] == issue["id"]:
                        raise RuleViolation("an issue cannot be its own parent", type="invalid_parent")
                    out[k] = parent["id"]
                else:
                    out[k] = None
            elif k == "duedate":
                out[k] = parse_datetime_arg(str(v), f"{where}.duedate").date().isoformat() if v else None
            elif k == "status":
                if v not in STATUSES:
                    raise InvalidArguments(f"'{where}.status' must be one of {', '.join(STATUSES)}")
                out[k] = v
            elif k == "issuetype":
                if v not in TYPES:
                    raise InvalidArguments(f"'{where}.issuetype' must be one of {', '.join(TYPES)}")
                out[k] = v
            else:  # sprint
                if v:
                    s = self.sprints.require(str(v), f"{where}.sprint")
                    if s["state"] == "closed":
                        raise RuleViolation(f"sprint {s['name']} is closed", type="sprint_closed")
                    out["sprint"] = s["id"]
                else:
                    out["sprint"] = None
        return out

    def _search(self, q: str, projects_filter: str | None = None) -> list[dict[str, Any]]:
        try:
            pred, order = jql.parse(q, self._me, self._user)
        except (jql.JqlError, IndexError) as e:
            raise InvalidArguments(f"invalid JQL: {e}", type="invalid_jql") from None
        allowed = {p.strip().upper() for p in (projects_filter or "").split(",") if p.strip()}
        hits = [i for i in self.issues.all() if (not allowed or i["project"] in allowed) and pred(i)]
        hits.sort(key=lambda i: (i["project"], int(i["id"].split("-")[1])))
        for field, desc in reversed(order or [("created", True)]):
            hits.sort(key=lambda i, f=field: (i.get(f) is None, str(i.get(f) or "")), reverse=desc)
        return hits

    # ---- tools ----------------------------------------------------------------------
    @tool
    def jira_search_issues(
        self, jql: str, maxResults: float = 50, fields: list[str] | None = None
    ) -> dict[str, Any]:
        """Search issues with JQL, e.g. "project = OPS AND status = 'In Progress' ORDER BY priority DESC".

        Args:
            jql: JQL query string.
            maxResults: Maximum number of results (1-100).
            fields: Fields to return (default essential fields).
        """
        check_limit(int(maxResults), "maxResults", 1, 100)
        hits = self._search(jql)
        return {
            "total": len(hits),
            "issues": [self._view(i, ",".join(fields) if fields else None) for i in hits[: int(maxResults)]],
        }

    @tool
    def jira_search(
        self,
        jql: str,
        fields: str | None = None,
        limit: float = 10,
        startAt: float = 0,
        projects_filter: str | None = None,
    ) -> dict[str, Any]:
        """Search Jira issues using JQL (Jira Query Language), with paging and a project filter.

        Args:
            jql: JQL query string, e.g. "issuetype = Epic AND project = OPS" or "parent = OPS-1".
            fields: Comma-separated fields to return, or '*all'.
            limit: Maximum number of results (1-50).
            startAt: Starting index for pagination (0-based).
            projects_filter: Comma-separated project keys to restrict the search to.
        """
        check_limit(int(limit), "limit", 1, 50)
        check_limit(int(startAt), "startAt", 0, 10**6)
        hits = self._search(jql, projects_filter)
        s = int(startAt)
        return {
            "total": len(hits),
            "startAt": s,
            "issues": [self._view(i, fields) for i in hits[s : s + int(limit)]],
        }

    @tool(mutates=True)
    def jira_create_issue(
        self,
        project_key: str,
        summary: str,
        issue_type: str,
        assignee: str | None = None,
        description: str = "",
        components: str = "",
        additional_fields: str | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a new Jira issue with optional Epic link or parent for subtasks (a Subtask needs {"parent": "KEY-1"} in additional_fields).

        Args:
            project_key: The project key (e.g. 'OPS').
            summary: Summary/title of the issue.
            issue_type: Task, Bug, Story, Epic or Subtask.
            assignee: Assignee (account ID, full name or e-mail).
            description: Issue description.
            components: Comma-separated component names.
            additional_fields: JSON object of more fields, e.g. {"priority": {"name": "High"}, "labels": ["x"], "parent": "OPS-1"}.
        """
        proj = self.projects.get(project_key.strip().upper())
        if proj is None:
            raise NotFound(
                f"project {project_key} does not exist; projects: {', '.join(sorted(self.projects.rows))}",
                type="project_not_found",
            )
        if issue_type not in TYPES:
            raise InvalidArguments(
                f"'issue_type' must be one of {', '.join(TYPES)} (use 'Subtask', not 'Sub-task')",
                type="invalid_issue_type",
            )
        data = {
            "summary": summary,
            "description": description,
            "components": components,
            **json_object(additional_fields, "additional_fields"),
        }
        if assignee:
            data["assignee"] = assignee
        fields = self._apply(None, proj["id"], data, "additional_fields")
        if issue_type == "Subtask" and not fields.get("parent"):
            raise RuleViolation(
                'a Subtask needs a parent issue ({"parent": "KEY-1"} in additional_fields)',
                type="subtask_needs_parent",
            )
        if fields.get("parent") and self.issues.get(fields["parent"])["project"] != proj["id"]:
            raise RuleViolation("the parent issue is in another project", type="invalid_parent")
        issue = self._new_issue(
            proj["id"], {"issuetype": issue_type, "status": "To Do", "reporter": self._me, **fields}
        )
        return self._view(issue, "*all")

    @tool
    def jira_get_issue(
        self,
        issue_key: str,
        fields: str | None = None,
        expand: str | None = None,
        comment_limit: int = 10,
        properties: str | None = None,
        update_history: bool = True,
    ) -> dict[str, Any]:
        """Get details of a specific Jira issue including its Epic links and relationship information.

        Args:
            issue_key: Jira issue key (e.g. 'OPS-123').
            fields: Comma-separated fields, '*all', or omitted for essential fields.
            expand: 'changelog' for history, 'transitions' for allowed status changes.
            comment_limit: Maximum number of comments to include (0-100).
            properties: Issue properties to return (not used).
            update_history: Whether to update the view history (not used).
        """
        check_limit(comment_limit, "comment_limit", 0, 100)
        i = self._issue(issue_key)
        out = self._view(i, fields, comment_limit)
        out["children"] = sorted(c["id"] for c in self.issues.find(parent=i["id"]))
        for part in (expand or "").split(","):
            if part.strip() == "changelog":
                out["changelog"] = i["history"]
            elif part.strip() == "transitions":
                out["transitions"] = [s for s in STATUSES if s != i["status"]]
        return out

    @tool(mutates=True)
    def jira_update_issue(
        self,
        issue_key: str,
        fields: str | dict[str, Any],
        additional_fields: str | dict[str, Any] | None = None,
        attachments: str | None = None,
    ) -> dict[str, Any]:
        """Update an issue: summary, description, priority, assignee, labels, status, parent (Epic link), sprint, ...

        Args:
            issue_key: Jira issue key (e.g. 'OPS-123').
            fields: JSON object of fields to update, e.g. {"summary": "New title", "priority": {"name": "High"}}.
            additional_fields: JSON object of more fields.
            attachments: File paths to attach (refused: no host files are reachable here).
        """
        i = self._issue(issue_key)
        if attachments:
            raise RuleViolation(
                "attachments from file paths are not available: this environment reaches no host files",
                type="source_not_allowed",
            )
        changes = self._apply(
            i,
            i["project"],
            {**json_object(fields, "fields"), **json_object(additional_fields, "additional_fields")},
            "fields",
        )
        if not changes:
            raise InvalidArguments("'fields' must set at least one field")
        if changes.get("status") == "Done":
            open_kids = [
                c["id"]
                for c in self.issues.find(parent=i["id"])
                if c["status"] != "Done" and c["issuetype"] == "Subtask"
            ]
            if open_kids:
                raise RuleViolation(f"subtasks still open: {', '.join(open_kids)}", type="open_subtasks")
        now = self.clock.iso()
        hist = [
            {"field": k, "from": str(i.get(k)), "to": str(v), "at": now}
            for k, v in changes.items()
            if i.get(k) != v
        ]
        return self._view(
            self.issues.update(i["id"], {**changes, "updated": now, "history": [*i["history"], *hist]}),
            "*all",
        )

    @tool(mutates=True)
    def jira_add_comment(self, issue_key: str, comment: str) -> dict[str, Any]:
        """Add a comment to an issue.

        Args:
            issue_key: Jira issue key.
            comment: Comment text (Markdown).
        """
        i = self._issue(issue_key)
        if not comment.strip():
            raise InvalidArguments("'comment' must not be empty")
        c = {
            "id": str(20000 + self.next_seq("comment")),
            "author": self._me,
            "body": comment,
            "created": self.clock.iso(),
        }
        self.issues.update(i["id"], {"comments": [*i["comments"], c], "updated": c["created"]})
        return c

    @tool
    def jira_search_fields(
        self, keyword: str = "", limit: float = 10, refresh: bool = False
    ) -> list[dict[str, Any]]:
        """Search Jira fields by keyword with fuzzy match.

        Args:
            keyword: Keyword; empty lists the first fields.
            limit: Maximum number of results.
            refresh: Force a refresh (not needed here).
        """
        check_limit(int(limit), "limit", 1, 100)
        hits = [f for f in FIELD_DEFS if not keyword or matches(keyword, f["id"], f["name"])]
        return hits[: int(limit)]

    @tool
    def jira_get_project_issues(
        self, project_key: str, limit: float = 10, startAt: float = 0
    ) -> dict[str, Any]:
        """Get all issues of a project, newest first.

        Args:
            project_key: The project key.
            limit: Maximum results (1-50).
            startAt: Starting index (0-based).
        """
        if not self.projects.get(project_key.upper()):
            raise NotFound(f"project {project_key} does not exist", type="project_not_found")
        return self.jira_search(
            f"project = {project_key.upper()} ORDER BY created DESC", None, limit, startAt
        )

    @tool
    def jira_get_epic_issues(self, epic_key: str, limit: float = 10, startAt: float = 0) -> dict[str, Any]:
        """Get the issues linked to an Epic.

        Args:
            epic_key: The Epic's key.
            limit: Maximum results (1-50).
            startAt: Starting index (0-based).
        """
        e = self._issue(epic_key)
        if e["issuetype"] != "Epic":
            raise RuleViolation(f"{epic_key} is a {e['issuetype']}, not an Epic", type="not_an_epic")
        return self.jira_search(f"parent = {e['id']}", None, limit, startAt)

    @tool
    def jira_get_sprints_from_board(
        self,
        board_id: str | None = None,
        state: Literal["active", "future", "closed"] | None = None,
        startAt: float = 0,
        limit: float = 10,
    ) -> list[dict[str, Any]]:
        """List the sprints of a board (all boards if omitted), optionally by state.

        Args:
            board_id: The board id (e.g. '1000').
            state: active, future or closed.
            startAt: Starting index.
            limit: Maximum results (1-50).
        """
        if board_id is not None:
            self.boards.require(board_id, "board_id")
        check_limit(int(limit), "limit", 1, 50)
        recs = sorted(self.sprints.find(board_id=board_id, state=state), key=lambda s: s["startDate"])
        return recs[int(startAt) : int(startAt) + int(limit)]

    @tool(mutates=True)
    def jira_create_sprint(
        self, board_id: str, sprint_name: str, start_date: str, end_date: str, goal: str | None = None
    ) -> dict[str, Any]:
        """Create a future sprint on a board.

        Args:
            board_id: The board id.
            sprint_name: Name of the sprint.
            start_date: Start time (ISO 8601).
            end_date: End time (ISO 8601).
            goal: Goal of the sprint.
        """
        self.boards.require(board_id, "board_id")
        if not sprint_name.strip():
            raise InvalidArguments("'sprint_name' must not be empty")
        s, e = parse_datetime_arg(start_date, "start_date"), parse_datetime_arg(end_date, "end_date")
        if e <= s:
            raise RuleViolation("a sprint cannot end before it starts", type="invalid_time_range")
        return self.sprints.create(
            {
                "board_id": board_id,
                "name": sprint_name,
                "state": "future",
                "startDate": s.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "endDate": e.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "goal": goal or "",
            },
            id=str(10000 + len(self.sprints.rows)),
        )

    @tool
    def jira_get_sprint_issues(
        self, sprint_id: str, fields: str | None = None, startAt: float = 0, limit: float = 10
    ) -> dict[str, Any]:
        """Get the issues of a sprint.

        Args:
            sprint_id: The sprint id.
            fields: Comma-separated fields to return.
            startAt: Starting index.
            limit: Maximum results (1-50).
        """
        self.sprints.require(sprint_id, "sprint_id")
        check_limit(int(limit), "limit", 1, 50)
        hits = sorted(
            self.issues.find(sprint=sprint_id), key=lambda i: (i["project"], int(i["id"].split("-")[1]))
        )
        return {
            "total": len(hits),
            "issues": [self._view(i, fields) for i in hits[int(startAt) : int(startAt) + int(limit)]],
        }

    @tool(mutates=True)
    def jira_update_sprint(
        self,
        sprint_id: str,
        sprint_name: str | None = None,
        state: Literal["future", "active", "closed"] | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        goal: str | None = None,
    ) -> dict[str, Any]:
        """Update a sprint; starting one requires no other active sprint on the board, and a closed sprint cannot change.

        Args:
            sprint_id: The sprint id.
            sprint_name: New name.
            state: future, active or closed.
            start_date: New start (ISO 8601).
            end_date: New end (ISO 8601).
            goal: New goal.
        """
        sp = self.sprints.require(sprint_id, "sprint_id")
        if sp["state"] == "closed":
            raise RuleViolation(f"sprint {sp['name']} is closed", type="sprint_closed")
        if (
            state == "active"
            and sp["state"] != "active"
            and self.sprints.find(board_id=sp["board_id"], state="active")
        ):
            raise RuleViolation(
                "the board already has an active sprint; close it first", type="sprint_already_active"
            )
        if state == "future" and sp["state"] == "active":
            raise RuleViolation("an active sprint cannot go back to future", type="invalid_sprint_transition")
        s = (
            parse_datetime_arg(start_date, "start_date").strftime("%Y-%m-%dT%H:%M:%SZ")
            if start_date
            else sp["startDate"]
        )
        e = (
            parse_datetime_arg(end_date, "end_date").strftime("%Y-%m-%dT%H:%M:%SZ")
            if end_date
            else sp["endDate"]
        )
        if e <= s:
            raise RuleViolation("a sprint cannot end before it starts", type="invalid_time_range")
        changes = {
            k: v for k, v in {"name": sprint_name, "state": state, "goal": goal}.items() if v is not None
        }
        if not changes and not start_date and not end_date:
            raise InvalidArguments("give at least one field to update")
        return self.sprints.update(sprint_id, {**changes, "startDate": s, "endDate": e})

    @tool(mutates=True)
    def jira_delete_issue(self, issue_key: str) -> dict[str, Any]:
        """Delete an issue (an issue with subtasks cannot be deleted; delete or move them first).

        Args:
            issue_key: Jira issue key.
        """
        i = self._issue(issue_key)
        kids = [c["id"] for c in self.issues.find(parent=i["id"]) if c["issuetype"] == "Subtask"]
        if kids:
            raise RuleViolation(f"issue has subtasks: {', '.join(kids)}", type="has_subtasks")
        for c in self.issues.find(parent=i["id"]):
            self.issues.update(c["id"], {"parent": None})
        self.issues.delete(i["id"])
        return {"deleted": i["id"]}

    @tool
    def jira_get_link_types(self) -> list[dict[str, str]]:
        """List the issue link types."""
        return LINK_TYPES
