"""Code hosting: GitHub, modelled on github-official.json (GitHub's official MCP server).

24 of the spec's 117 tools are modelled with their real names and parameters: repositories,
branches, commits and file contents (a real commit graph with full trees), issues and comments,
pull requests with three-way merge and conflict detection, labels, tags and releases. Not modelled:
Actions, code scanning, Dependabot and secret scanning alerts, security advisories, gists,
discussions, notifications, projects, Copilot and review-thread tools; they need CI runners and
security data that no other service here produces.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, matches, norm, paginate, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.code.seed import seed_code
from compoworld.services.code.state import Commit, Issue, Release, Repo


def _path(p: str, field: str = "path") -> str:
    q = p.strip().strip("/")
    if not q or any(part in ("", ".", "..") for part in q.split("/")) or "\\" in q or "\x00" in q:
        raise InvalidArguments(
            f"'{field}' {p!r} is not a repository path like 'src/main.py'", type="invalid_path"
        )
    return q


class CodeService(Service):
    """GitHub: repositories, branches, commits and files, issues, pull requests and releases."""

    name = "code"
    domain = "code"
    spec = "github-official.json"

    repos = Resource("repositories", Repo, label="repository")
    commits = Resource("commits", Commit, label="commit")
    issues = Resource("issues", Issue, label="issue")
    releases = Resource("releases", Release, label="release")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_code(self, ctx)

    @property
    def _me(self) -> str:
        return self.store.tables[META]["me"]

    # ---- internals ------------------------------------------------------------------
    def _commit(
        self, repo: str, parent: str | None, message: str, author: str, date: str, files: dict[str, str]
    ) -> str:
        sha = hashlib.sha1(f"{repo}:{parent}:{message}:{date}:{sorted(files.items())}".encode()).hexdigest()  # noqa: S324 (git-style id)
        if not self.commits.get(sha):
            self.commits.create(
                {
                    "repo": repo,
                    "parent": parent,
                    "message": message,
                    "author": author,
                    "date": date,
                    "files": files,
                },
                id=sha,
            )
        return sha

    def _new_issue(self, repo: str, fields: dict[str, Any]) -> dict[str, Any]:
        n = self.next_seq(f"num:{repo}")
        now = fields.pop("created_at", None) or self.clock.iso()
        return self.issues.create(
            {"repo": repo, "number": n, **fields, "created_at": now, "updated_at": now}, id=f"{repo}#{n}"
        )

    def _repo(self, owner: str, repo: str) -> dict[str, Any]:
        r = self.repos.get(f"{owner}/{repo}")
        if r is None:
            raise NotFound(f"repository {owner}/{repo} not found", type="repository_not_found")
        return r

    def _head(self, r: dict[str, Any], ref: str | None, field: str = "ref") -> str:
        if ref is None:
            return r["branches"][r["default_branch"]]
        ref = ref.removeprefix("refs/heads/").removeprefix("refs/tags/")
        if ref in r["branches"]:
            return r["branches"][ref]
        if ref in r["tags"]:
            return r["tags"][ref]
        c = self.commits.get(ref)
        if c and c["repo"] == r["id"]:
            return ref
        raise NotFound(f"'{field}': no branch, tag or commit {ref!r} in {r['id']}", type="ref_not_found")

    def _issue(self, r: dict[str, Any], number: float, pr: bool | None = None) -> dict[str, Any]:
        i = self.issues.get(f"{r['id']}#{int(number)}")
        if i is None or (pr is not None and i["is_pr"] != pr):
            kind = "pull request" if pr else "issue"
            raise NotFound(
                f"{kind} #{int(number)} not found in {r['id']}", type=f"{kind.replace(' ', '_')}_not_found"
            )
        return i

    def _page(self, records: list[Any], page: float | None, per_page: float | None) -> list[Any]:
        p, n = int(page or 1), int(per_page or 30)
        check_limit(p, "page", 1, 10**6)
        check_limit(n, "perPage", 1, 100)
        return records[(p - 1) * n : p * n]

    def _ancestors(self, sha: str) -> list[str]:
        out = []
        while sha:
            out.append(sha)
            sha = self.commits.get(sha)["parent"]
        return out

    def _write(
        self, r: dict[str, Any], branch: str, message: str, change: dict[str, str | None]
    ) -> dict[str, Any]:
        if branch not in r["branches"]:
            raise NotFound(f"branch {branch!r} not found in {r['id']}", type="branch_not_found")
        if not message.strip():
            raise InvalidArguments("'message' must not be empty")
        head = r["branches"][branch]
        files = dict(self.commits.get(head)["files"])
        for p, content in change.items():
            if content is None:
                files.pop(p)
            else:
                files[p] = content
        sha = self._commit(r["id"], head, message, self._me, self.clock.iso(), files)
        self.repos.update(
            r["id"], {"branches": {**r["branches"], branch: sha}, "updated_at": self.clock.iso()}
        )
        return {"commit": {"sha": sha, "message": message}, "branch": branch}

    # ---- account and repositories ----------------------------------------------------
    @tool
    def get_me(self) -> dict[str, Any]:
        """Get details of the authenticated GitHub user."""
        return {"login": self._me, "type": "User", "public_repos": len(self.repos.all())}

    @tool
    def search_repositories(
        self,
        query: str,
        minimal_output: bool = True,
        sort: Literal["stars", "forks", "help-wanted-issues", "updated"] | None = None,
        order: Literal["asc", "desc"] = "desc",
        page: float = 1,
        perPage: float = 30,
    ) -> dict[str, Any]:
        """Find repositories by name, description or owner (qualifiers like 'org:' and 'user:' are honoured).

        Args:
            query: Search words, e.g. 'platform org:acme'.
            minimal_output: Return only the main fields.
            sort: stars, forks, help-wanted-issues or updated.
            order: asc or desc.
            page: Page number.
            perPage: Results per page (max 100).
        """
        words, owner = [], None
        for w in query.split():
            key, _, val = w.partition(":")
            if key in ("org", "user", "owner") and val:
                owner = val
            elif key not in ("is", "language", "in"):
                words.append(w)
        hits = [
            r
            for r in self.repos.all()
            if (owner is None or norm(r["owner"]) == norm(owner))
            and matches(" ".join(words), r["name"], r["description"], r["owner"])
        ]
        key = "updated_at" if sort == "updated" else "stars"
        hits = sorted(hits, key=lambda r: (r[key], r["id"]), reverse=order == "desc")
        view = [
            {
                "full_name": r["id"],
                "description": r["description"],
                "stars": r["stars"],
                "private": r["private"],
                "default_branch": r["default_branch"],
            }
            if minimal_output
            else r
            for r in hits
        ]
        return {"total_count": len(hits), "items": self._page(view, page, perPage)}

    @tool(mutates=True)
    def create_repository(
        self,
        name: str,
        description: str | None = None,
        private: bool = False,
        autoInit: bool = False,
        organization: str | None = None,
    ) -> dict[str, Any]:
        """Create a repository (with an initial README commit when autoInit is true).

        Args:
            name: Repository name (letters, digits, '-', '_', '.').
            description: Description.
            private: Whether the repository is private.
            autoInit: Initialise with a README.
            organization: Organisation to create it in (default: your account).
        """
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", name) or name in (".", ".."):
            raise InvalidArguments("'name' may use letters, digits, '-', '_' and '.' only")
        owner = organization or self._me
        if self.repos.get(f"{owner}/{name}"):
            raise RuleViolation(f"repository {owner}/{name} already exists", type="name_already_exists")
        now = self.clock.iso()
        files = {"README.md": f"# {name}\n\n{description or ''}\n"} if autoInit else {}
        head = self._commit(f"{owner}/{name}", None, "Initial commit", self._me, now, files)
        return self.repos.create(
            {
                "owner": owner,
                "name": name,
                "description": description or "",
                "private": private,
                "branches": {"main": head},
                "labels": ["bug", "enhancement", "documentation"],
                "created_at": now,
                "updated_at": now,
            },
            id=f"{owner}/{name}",
        )

    # ---- files, branches, commits ------------------------------------------------------
    @tool
    def get_file_contents(
        self,
        owner: str,
        repo: str,
        path: str = "/",
        ref: str | None = None,
        sha: str | None = None,
        fields: list[str] | None = None,
    ) -> dict[str, Any]:
        """Get the contents of a file, or the listing of a directory, at a branch, tag or commit.

        Args:
            owner: Repository owner.
            repo: Repository name.
            path: Path to a file or directory ('/' for the root).
            ref: Branch, tag or commit (default: the default branch).
            sha: Commit SHA (overrides ref).
            fields: Fields to return (unused).
        """
        r = self._repo(owner, repo)
        files = self.commits.get(self._head(r, sha or ref, "sha" if sha else "ref"))["files"]
        p = path.strip().strip("/")
        if p and p in files:
            return {
                "type": "file",
                "path": p,
                "content": files[p],
                "size": len(files[p].encode()),
                "sha": hashlib.sha1(files[p].encode()).hexdigest(),
            }  # noqa: S324
        if p:
            _path(p)
        prefix = p + "/" if p else ""
        entries = sorted(
            {
                (f[len(prefix) :].split("/")[0], "dir" if "/" in f[len(prefix) :] else "file")
                for f in files
                if f.startswith(prefix)
            }
        )
        if not entries:
            raise NotFound(f"{path!r} not found in {r['id']}", type="path_not_found")
        return {
            "type": "dir",
            "path": p or "/",
            "entries": [{"name": n, "type": t, "path": prefix + n} for n, t in entries],
        }

    @tool(mutates=True)
    def create_or_update_file(
        self,
        owner: str,
        repo: str,
        path: str,
        content: str,
        message: str,
        branch: str,
        sha: str | None = None,
        allow_symlink_write: bool = False,
    ) -> dict[str, Any]:
        """Create or update a file on a branch with a commit. Updating needs the file's current blob sha.

        Args:
            owner: Repository owner.
            repo: Repository name.
            path: File path.
            content: New file content.
            message: Commit message.
            branch: Branch to commit to.
            sha: Blob sha of the file being replaced (required to update).
            allow_symlink_write: Allow writing through symlinks (unused).
        """
        r = self._repo(owner, repo)
        p = _path(path)
        if branch not in r["branches"]:
            raise NotFound(f"branch {branch!r} not found in {r['id']}", type="branch_not_found")
        current = self.commits.get(r["branches"][branch])["files"].get(p)
        if current is not None:
            blob = hashlib.sha1(current.encode()).hexdigest()  # noqa: S324
            if sha is None:
                raise RuleViolation(
                    f"{p} exists; pass its blob 'sha' ({blob}) to update it", type="sha_required"
                )
            if sha != blob:
                raise Conflict(f"{p} has changed; its current sha is {blob}", type="sha_mismatch")
        return self._write(r, branch, message, {p: content})

    @tool(mutates=True)
    def delete_file(self, owner: str, repo: str, path: str, message: str, branch: str) -> dict[str, Any]:
        """Delete a file on a branch with a commit.

        Args:
            owner: Repository owner.
            repo: Repository name.
            path: File path.
            message: Commit message.
            branch: Branch to commit to.
        """
        r = self._repo(owner, repo)
        p = _path(path)
        if branch in r["branches"] and p not in self.commits.get(r["branches"][branch])["files"]:
            raise NotFound(f"{p} does not exist on {branch}", type="path_not_found")
        return self._write(r, branch, message, {p: None})

    @tool
    def list_branches(
        self, owner: str, repo: str, page: float = 1, perPage: float = 30
    ) -> list[dict[str, Any]]:
        """List the branches of a repository.

        Args:
            owner: Repository owner.
            repo: Repository name.
            page: Page number.
            perPage: Results per page (max 100).
        """
        r = self._repo(owner, repo)
        return self._page(
            [
                {"name": b, "commit": {"sha": s}, "protected": b == r["default_branch"]}
                for b, s in sorted(r["branches"].items())
            ],
            page,
            perPage,
        )

    @tool(mutates=True)
    def create_branch(
        self, owner: str, repo: str, branch: str, from_branch: str | None = None
    ) -> dict[str, Any]:
        """Create a branch from another branch (default: the default branch).

        Args:
            owner: Repository owner.
            repo: Repository name.
            branch: New branch name.
            from_branch: Source branch.
        """
        r = self._repo(owner, repo)
        if not re.fullmatch(r"[A-Za-z0-9._/-]{1,200}", branch) or ".." in branch or branch.endswith("/"):
            raise InvalidArguments(f"'branch' {branch!r} is not a valid branch name")
        if branch in r["branches"]:
            raise RuleViolation(f"branch {branch} already exists", type="reference_already_exists")
        src = from_branch or r["default_branch"]
        if src not in r["branches"]:
            raise NotFound(f"'from_branch': branch {src!r} not found", type="branch_not_found")
        self.repos.update(r["id"], {"branches": {**r["branches"], branch: r["branches"][src]}})
        return {"ref": f"refs/heads/{branch}", "sha": r["branches"][src]}

    @tool
    def list_commits(
        self,
        owner: str,
        repo: str,
        sha: str | None = None,
        path: str | None = None,
        author: str | None = None,
        since: str | None = None,
        until: str | None = None,
        page: float = 1,
        perPage: float = 30,
        fields: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """List the commits of a branch (newest first), optionally touching a path, by an author, or in a time range.

        Args:
            owner: Repository owner.
            repo: Repository name.
            sha: Branch, tag or commit to start from.
            path: Only commits that changed this path.
            author: Only commits by this login.
            since: Only commits after this time (ISO 8601).
            until: Only commits before this time (ISO 8601).
            page: Page number.
            perPage: Results per page (max 100).
            fields: Fields to return (unused).
        """
        r = self._repo(owner, repo)
        lo = parse_datetime_arg(since, "since").strftime("%Y-%m-%dT%H:%M:%SZ") if since else ""
        hi = parse_datetime_arg(until, "until").strftime("%Y-%m-%dT%H:%M:%SZ") if until else "9999"
        out = []
        for s in self._ancestors(self._head(r, sha, "sha")):
            c = self.commits.get(s)
            parent = self.commits.get(c["parent"])["files"] if c["parent"] else {}
            if path and c["files"].get(path.strip("/")) == parent.get(path.strip("/")):
                continue
            if (author and c["author"] != author) or not lo <= c["date"] <= hi:
                continue
            out.append({"sha": s, "message": c["message"], "author": c["author"], "date": c["date"]})
        return self._page(out, page, perPage)

    @tool
    def get_commit(
        self,
        owner: str,
        repo: str,
        sha: str,
        detail: Literal["none", "stats", "full_patch"] = "stats",
        page: float = 1,
        perPage: float = 30,
    ) -> dict[str, Any]:
        """Get a commit with the files it changed (and their new content with detail='full_patch').

        Args:
            owner: Repository owner.
            repo: Repository name.
            sha: Commit SHA, branch or tag.
            detail: none, stats or full_patch.
            page: Page of changed files.
            perPage: Files per page (max 100).
        """
        r = self._repo(owner, repo)
        c = self.commits.get(self._head(r, sha, "sha"))
        before = self.commits.get(c["parent"])["files"] if c["parent"] else {}
        changed = []
        for p in sorted(set(before) | set(c["files"])):
            if before.get(p) != c["files"].get(p):
                status = "added" if p not in before else "removed" if p not in c["files"] else "modified"
                item: dict[str, Any] = {"filename": p, "status": status}
                if detail == "full_patch":
                    item["content"] = c["files"].get(p)
                changed.append(item)
        out = {
            "sha": c["id"],
            "message": c["message"],
            "author": c["author"],
            "date": c["date"],
            "parents": [c["parent"]] if c["parent"] else [],
        }
        if detail != "none":
            out["files"] = self._page(changed, page, perPage)
        return out

    @tool
    def get_repository_tree(
        self,
        owner: str,
        repo: str,
        tree_sha: str | None = None,
        recursive: bool = False,
        path_filter: str | None = None,
    ) -> dict[str, Any]:
        """Get the file tree of a repository at a branch, tag or commit.

        Args:
            owner: Repository owner.
            repo: Repository name.
            tree_sha: Branch, tag or commit (default: the default branch).
            recursive: Include all nested files (default: top level only).
            path_filter: Only paths starting with this prefix.
        """
        r = self._repo(owner, repo)
        files = self.commits.get(self._head(r, tree_sha, "tree_sha"))["files"]
        prefix = (path_filter or "").strip("/")
        paths = sorted(p for p in files if p.startswith(prefix))
        if not recursive:
            paths = sorted({p.split("/")[0] + ("/" if "/" in p else "") for p in paths})
        return {
            "tree": [{"path": p.rstrip("/"), "type": "tree" if p.endswith("/") else "blob"} for p in paths]
        }

    # ---- issues -----------------------------------------------------------------------
    def _issue_view(self, i: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in i.items() if k not in ("comments", "base_sha")} | {
            "comments": len(i["comments"])
        }

    @tool
    def list_issues(
        self,
        owner: str,
        repo: str,
        state: Literal["OPEN", "CLOSED"] | None = None,
        labels: list[str] | None = None,
        orderBy: Literal["CREATED_AT", "UPDATED_AT", "COMMENTS"] = "CREATED_AT",
        direction: Literal["ASC", "DESC"] = "DESC",
        since: str | None = None,
        perPage: float = 30,
        after: str | None = None,
        fields: list[str] | None = None,
        field_filters: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """List the issues of a repository (not pull requests), with state, label and time filters and cursor paging.

        Args:
            owner: Repository owner.
            repo: Repository name.
            state: OPEN or CLOSED (default both).
            labels: Only issues having all these labels.
            orderBy: CREATED_AT, UPDATED_AT or COMMENTS.
            direction: ASC or DESC.
            since: Only issues updated since this time.
            perPage: Results per page (max 100).
            after: Cursor of the next page.
            fields: Fields to return (unused).
            field_filters: Issue field filters (unused).
        """
        r = self._repo(owner, repo)
        lo = parse_datetime_arg(since, "since").strftime("%Y-%m-%dT%H:%M:%SZ") if since else ""
        recs = self.issues.find(
            lambda i: (
                not i["is_pr"]
                and (state is None or i["state"] == state.lower())
                and set(labels or []) <= set(i["labels"])
                and i["updated_at"] >= lo
            ),
            repo=r["id"],
        )
        key = {"CREATED_AT": "created_at", "UPDATED_AT": "updated_at", "COMMENTS": "number"}[orderBy]
        recs = sorted(
            recs,
            key=(lambda i: len(i["comments"]))
            if orderBy == "COMMENTS"
            else (lambda i: (i[key], i["number"])),
            reverse=direction == "DESC",
        )
        check_limit(int(perPage), "perPage", 1, 100)
        page, nxt = paginate([self._issue_view(i) for i in recs], after, int(perPage), "after")
        return {
            "issues": page,
            "pageInfo": {"hasNextPage": nxt is not None, "endCursor": nxt},
            "totalCount": len(recs),
        }

    @tool
    def issue_read(
        self,
        owner: str,
        repo: str,
        issue_number: float,
        method: Literal["get", "get_comments", "get_sub_issues", "get_parent", "get_labels"],
        page: float = 1,
        perPage: float = 30,
    ) -> Any:
        """Read an issue: its details (get), comments, labels, sub-issues or parent.

        Args:
            owner: Repository owner.
            repo: Repository name.
            issue_number: The issue number.
            method: get, get_comments, get_sub_issues, get_parent or get_labels.
            page: Page number (for comments).
            perPage: Results per page (max 100).
        """
        i = self._issue(self._repo(owner, repo), issue_number)
        if method == "get":
            return {**self._issue_view(i), "body": i["body"]}
        if method == "get_comments":
            return self._page(i["comments"], page, perPage)
        if method == "get_labels":
            return [{"name": n} for n in i["labels"]]
        return [] if method == "get_sub_issues" else None

    @tool(mutates=True)
    def issue_write(
        self,
        owner: str,
        repo: str,
        method: Literal["create", "update"],
        issue_number: float | None = None,
        title: str | None = None,
        body: str | None = None,
        assignees: list[str] | None = None,
        labels: list[str] | None = None,
        milestone: float | None = None,
        state: Literal["open", "closed"] | None = None,
        state_reason: Literal["completed", "not_planned", "duplicate"] | None = None,
        duplicate_of: float | None = None,
        type: str | None = None,
        issue_fields: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Create an issue, or update one (title, body, labels, assignees, state with a reason).

        Args:
            owner: Repository owner.
            repo: Repository name.
            method: create or update.
            issue_number: The issue to update.
            title: Title (required to create).
            body: Body.
            assignees: Logins to assign.
            labels: Labels (must exist in the repository).
            milestone: Milestone number (unused).
            state: open or closed (update only).
            state_reason: completed, not_planned or duplicate (when closing).
            duplicate_of: Issue this one duplicates (with state_reason duplicate).
            type: Issue type (unused).
            issue_fields: Custom issue fields (unused).
        """
        r = self._repo(owner, repo)
        unknown = [x for x in labels or [] if x not in r["labels"]]
        if unknown:
            raise InvalidArguments(
                f"label(s) {unknown} do not exist in {r['id']}; see list_label", type="label_not_found"
            )
        if method == "create":
            if not (title or "").strip():
                raise InvalidArguments("'title' is required to create an issue")
            if state is not None:
                raise InvalidArguments("'state' cannot be set when creating an issue")
            i = self._new_issue(
                r["id"],
                {
                    "title": title,
                    "body": body or "",
                    "labels": list(dict.fromkeys(labels or [])),
                    "assignees": list(dict.fromkeys(assignees or [])),
                    "user": self._me,
                },
            )
            return self._issue_view(i)
        if issue_number is None:
            raise InvalidArguments("'issue_number' is required to update an issue")
        i = self._issue(r, issue_number)
        if state_reason and state != "closed" and i["state"] != "closed":
            raise InvalidArguments("'state_reason' is only for closing an issue")
        if state_reason == "duplicate":
            if duplicate_of is None:
                raise InvalidArguments("'duplicate_of' is required with state_reason 'duplicate'")
            if int(duplicate_of) == i["number"]:
                raise RuleViolation("an issue cannot duplicate itself", type="invalid_duplicate")
            self._issue(r, duplicate_of)
        if title is not None and not title.strip():
            raise InvalidArguments("'title' must not be empty")
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "title": title,
                "body": body,
                "labels": labels,
                "assignees": assignees,
                "state": state,
            }.items()
            if v is not None
        }
        if state == "closed":
            changes["state_reason"] = state_reason or "completed"
        elif state == "open":
            changes["state_reason"] = None
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self._issue_view(self.issues.update(i["id"], {**changes, "updated_at": self.clock.iso()}))

    @tool(mutates=True)
    def add_issue_comment(
        self,
        owner: str,
        repo: str,
        issue_number: float,
        body: str | None = None,
        comment_id: int | None = None,
        reaction: Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"] | None = None,
    ) -> dict[str, Any]:
        """Comment on an issue or pull request.

        Args:
            owner: Repository owner.
            repo: Repository name.
            issue_number: Issue or pull request number.
            body: Comment text.
            comment_id: Comment to react to (with reaction).
            reaction: Reaction to add to comment_id.
        """
        i = self._issue(self._repo(owner, repo), issue_number)
        if reaction is not None:
            if comment_id is None or not any(c["id"] == str(comment_id) for c in i["comments"]):
                raise NotFound(f"comment {comment_id} not found on #{i['number']}", type="comment_not_found")
            comments = [
                {**c, "reactions": c.get("reactions", "") + reaction + " "}
                if c["id"] == str(comment_id)
                else c
                for c in i["comments"]
            ]
            self.issues.update(i["id"], {"comments": comments})
            return {"comment_id": comment_id, "reaction": reaction}
        if not (body or "").strip():
            raise InvalidArguments("'body' must not be empty")
        c = {
            "id": str(900000 + self.next_seq("comment")),
            "user": self._me,
            "body": body,
            "created_at": self.clock.iso(),
        }
        self.issues.update(i["id"], {"comments": [*i["comments"], c], "updated_at": c["created_at"]})
        return c

    @tool
    def search_issues(
        self,
        query: str,
        owner: str | None = None,
        repo: str | None = None,
        sort: str | None = None,
        order: Literal["asc", "desc"] = "desc",
        page: float = 1,
        perPage: float = 30,
        fields: list[str] | None = None,
    ) -> dict[str, Any]:
        """Search issues and pull requests with GitHub qualifiers: is:open/closed, is:issue/pr, label:x, author:x, assignee:x, repo:o/r, and words.

        Args:
            query: Search query.
            owner: Restrict to this owner.
            repo: Restrict to this repository (with owner).
            sort: comments, created or updated.
            order: asc or desc.
            page: Page number.
            perPage: Results per page (max 100).
            fields: Fields to return (unused).
        """
        tests, words = [], []
        for w in query.split():
            k, _, v = w.partition(":")
            k = k.lower()
            if k == "is" and v in ("open", "closed"):
                tests.append(lambda i, v=v: i["state"] == v)
            elif k == "is" and v in ("issue", "pr"):
                tests.append(lambda i, v=v: i["is_pr"] == (v == "pr"))
            elif k == "label":
                tests.append(lambda i, v=v.strip('"'): v in i["labels"])
            elif k == "author":
                tests.append(lambda i, v=v: i["user"] == v)
            elif k == "assignee":
                tests.append(lambda i, v=v: v in i["assignees"])
            elif k == "repo":
                tests.append(lambda i, v=v: i["repo"] == v)
            elif k in ("org", "user"):
                tests.append(lambda i, v=v: i["repo"].split("/")[0] == v)
            else:
                words.append(w)
        if owner:
            tests.append(
                lambda i: (
                    i["repo"].split("/")[0] == owner and (repo is None or i["repo"] == f"{owner}/{repo}")
                )
            )
        hits = [
            i
            for i in self.issues.all()
            if all(t(i) for t in tests) and matches(" ".join(words), i["title"], i["body"])
        ]
        key = {"comments": lambda i: len(i["comments"]), "updated": lambda i: i["updated_at"]}.get(
            sort or "", lambda i: i["created_at"]
        )
        hits = sorted(hits, key=lambda i: (key(i), i["id"]), reverse=order == "desc")
        return {
            "total_count": len(hits),
            "items": self._page([self._issue_view(i) for i in hits], page, perPage),
        }

    # ---- pull requests -----------------------------------------------------------------
    @tool
    def list_pull_requests(
        self,
        owner: str,
        repo: str,
        state: Literal["open", "closed", "all"] = "open",
        head: str | None = None,
        base: str | None = None,
        sort: Literal["created", "updated", "popularity", "long-running"] = "created",
        direction: Literal["asc", "desc"] = "desc",
        page: float = 1,
        perPage: float = 30,
        fields: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """List pull requests of a repository.

        Args:
            owner: Repository owner.
            repo: Repository name.
            state: open, closed or all.
            head: Only PRs from this branch.
            base: Only PRs into this branch.
            sort: created, updated, popularity or long-running.
            direction: asc or desc.
            page: Page number.
            perPage: Results per page (max 100).
            fields: Fields to return (unused).
        """
        r = self._repo(owner, repo)
        recs = self.issues.find(
            lambda i: i["is_pr"] and (state == "all" or i["state"] == state),
            repo=r["id"],
            head=head,
            base=base,
        )
        recs = sort_records(
            recs, "updated_at" if sort == "updated" else "created_at", descending=direction == "desc"
        )
        return self._page([self._issue_view(i) for i in recs], page, perPage)

    @tool
    def pull_request_read(
        self,
        owner: str,
        repo: str,
        pullNumber: float,
        method: Literal[
            "get",
            "get_diff",
            "get_status",
            "get_files",
            "get_commits",
            "get_review_comments",
            "get_reviews",
            "get_comments",
            "get_check_runs",
        ],
        page: float = 1,
        perPage: float = 30,
        after: str | None = None,
    ) -> Any:
        """Read a pull request: details, diff (changed files with content), files, commits, comments, status.

        Args:
            owner: Repository owner.
            repo: Repository name.
            pullNumber: The pull request number.
            method: get, get_diff, get_status, get_files, get_commits, get_review_comments, get_reviews, get_comments or get_check_runs.
            page: Page number.
            perPage: Results per page (max 100).
            after: Cursor (unused).
        """
        r = self._repo(owner, repo)
        pr = self._issue(r, pullNumber, pr=True)
        if method == "get":
            return {
                **self._issue_view(pr),
                "body": pr["body"],
                "mergeable": not pr["merged"] and pr["state"] == "open" and self._conflicts(r, pr) == [],
            }
        if method in ("get_diff", "get_files"):
            head = self.commits.get(r["branches"].get(pr["head"], pr["merge_commit"] or pr["base_sha"]))[
                "files"
            ]
            base = self.commits.get(pr["base_sha"])["files"]
            files = [
                {
                    "filename": p,
                    "status": "added" if p not in base else "removed" if p not in head else "modified",
                    **({"content": head.get(p)} if method == "get_diff" else {}),
                }
                for p in sorted(set(base) | set(head))
                if base.get(p) != head.get(p)
            ]
            return self._page(files, page, perPage)
        if method == "get_commits":
            if pr["head"] not in r["branches"]:
                return []
            base_anc = set(self._ancestors(pr["base_sha"]))
            return self._page(
                [
                    {"sha": s, "message": self.commits.get(s)["message"]}
                    for s in self._ancestors(r["branches"][pr["head"]])
                    if s not in base_anc
                ],
                page,
                perPage,
            )
        if method == "get_comments":
            return self._page(pr["comments"], page, perPage)
        if method == "get_status":
            return {"state": "success" if not pr["draft"] else "pending", "total_count": 0}
        return []

    def _conflicts(self, r: dict[str, Any], pr: dict[str, Any]) -> list[str]:
        if pr["head"] not in r["branches"] or pr["base"] not in r["branches"]:
            return ["<missing branch>"]
        mb = self.commits.get(pr["base_sha"])["files"]
        head = self.commits.get(r["branches"][pr["head"]])["files"]
        base = self.commits.get(r["branches"][pr["base"]])["files"]
        return sorted(
            p
            for p in set(mb) | set(head) | set(base)
            if head.get(p) != mb.get(p) and base.get(p) != mb.get(p) and head.get(p) != base.get(p)
        )

    @tool(mutates=True)
    def create_pull_request(
        self,
        owner: str,
        repo: str,
        title: str,
        head: str,
        base: str,
        body: str | None = None,
        draft: bool = False,
        maintainer_can_modify: bool = True,
        reviewers: list[str] | None = None,
    ) -> dict[str, Any]:
        """Open a pull request from head into base (branches of the same repository, with commits to merge).

        Args:
            owner: Repository owner.
            repo: Repository name.
            title: PR title.
            head: Branch with the changes.
            base: Branch to merge into.
            body: Description.
            draft: Open as a draft.
            maintainer_can_modify: Allow maintainers to edit.
            reviewers: Logins to request reviews from.
        """
        r = self._repo(owner, repo)
        for field, b in (("head", head), ("base", base)):
            if b not in r["branches"]:
                raise NotFound(f"'{field}': branch {b!r} not found in {r['id']}", type="branch_not_found")
        if head == base:
            raise RuleViolation("head and base must be different branches", type="same_branch")
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if r["branches"][head] in self._ancestors(r["branches"][base]):
            raise RuleViolation(f"no commits between {base} and {head}", type="no_commits")
        if self.issues.find(
            lambda i: i["is_pr"] and i["state"] == "open", repo=r["id"], head=head, base=base
        ):
            raise RuleViolation(
                f"a pull request from {head} into {base} is already open", type="pull_request_exists"
            )
        base_anc = set(self._ancestors(r["branches"][base]))
        merge_base = next(s for s in self._ancestors(r["branches"][head]) if s in base_anc)
        pr = self._new_issue(
            r["id"],
            {
                "title": title,
                "body": body or "",
                "user": self._me,
                "is_pr": True,
                "head": head,
                "base": base,
                "base_sha": merge_base,
                "draft": draft,
                "assignees": list(reviewers or []),
            },
        )
        return self._issue_view(pr)

    @tool(mutates=True)
    def merge_pull_request(
        self,
        owner: str,
        repo: str,
        pullNumber: float,
        commit_title: str | None = None,
        commit_message: str | None = None,
        merge_method: Literal["merge", "squash", "rebase"] = "merge",
    ) -> dict[str, Any]:
        """Merge an open, non-draft pull request without conflicts into its base.

        Args:
            owner: Repository owner.
            repo: Repository name.
            pullNumber: The pull request number.
            commit_title: Title of the merge commit.
            commit_message: Extra detail for the merge commit.
            merge_method: merge, squash or rebase.
        """
        r = self._repo(owner, repo)
        pr = self._issue(r, pullNumber, pr=True)
        if pr["merged"]:
            raise RuleViolation(f"pull request #{pr['number']} is already merged", type="already_merged")
        if pr["state"] != "open":
            raise RuleViolation(f"pull request #{pr['number']} is closed", type="pull_request_closed")
        if pr["draft"]:
            raise RuleViolation(
                "a draft pull request cannot be merged; mark it ready first", type="draft_pull_request"
            )
        conflicts = self._conflicts(r, pr)
        if conflicts:
            raise Conflict(f"merge conflict in: {', '.join(conflicts)}", type="merge_conflict")
        mb = self.commits.get(pr["base_sha"])["files"]
        head = self.commits.get(r["branches"][pr["head"]])["files"]
        files = dict(self.commits.get(r["branches"][pr["base"]])["files"])
        for p in set(mb) | set(head):
            if head.get(p) != mb.get(p):
                if p in head:
                    files[p] = head[p]
                else:
                    files.pop(p, None)
        msg = commit_title or f"Merge pull request #{pr['number']} from {pr['head']}"
        if commit_message:
            msg += f"\n\n{commit_message}"
        sha = self._commit(r["id"], r["branches"][pr["base"]], msg, self._me, self.clock.iso(), files)
        self.repos.update(
            r["id"], {"branches": {**r["branches"], pr["base"]: sha}, "updated_at": self.clock.iso()}
        )
        self.issues.update(
            pr["id"], {"state": "closed", "merged": True, "merge_commit": sha, "updated_at": self.clock.iso()}
        )
        return {"merged": True, "sha": sha, "message": msg}

    # ---- labels, tags, releases --------------------------------------------------------
    @tool
    def list_label(self, owner: str, repo: str) -> list[dict[str, Any]]:
        """List the labels of a repository.

        Args:
            owner: Repository owner.
            repo: Repository name.
        """
        return [{"name": n} for n in self._repo(owner, repo)["labels"]]

    @tool
    def list_tags(self, owner: str, repo: str, page: float = 1, perPage: float = 30) -> list[dict[str, Any]]:
        """List the tags of a repository.

        Args:
            owner: Repository owner.
            repo: Repository name.
            page: Page number.
            perPage: Results per page (max 100).
        """
        r = self._repo(owner, repo)
        return self._page(
            [{"name": t, "commit": {"sha": s}} for t, s in sorted(r["tags"].items())], page, perPage
        )

    @tool
    def list_releases(
        self, owner: str, repo: str, page: float = 1, perPage: float = 30, fields: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """List the releases of a repository, newest first.

        Args:
            owner: Repository owner.
            repo: Repository name.
            page: Page number.
            perPage: Results per page (max 100).
            fields: Fields to return (unused).
        """
        r = self._repo(owner, repo)
        return self._page(
            sort_records(self.releases.find(repo=r["id"]), "published_at", descending=True), page, perPage
        )

    @tool
    def get_latest_release(self, owner: str, repo: str) -> dict[str, Any]:
        """Get the latest release of a repository.

        Args:
            owner: Repository owner.
            repo: Repository name.
        """
        r = self._repo(owner, repo)
        rel = sort_records(self.releases.find(repo=r["id"]), "published_at", descending=True)
        if not rel:
            raise NotFound(f"{r['id']} has no releases", type="release_not_found")
        return rel[0]
