"""File storage: Dropbox, modelled on klavis_dropbox.json (Klavis Dropbox MCP server).

The tree lives in state: paths are names in a virtual namespace, never host paths, and uploads read
only `data:` URIs (file://, http(s):// and ftp:// are refused: nothing reaches the host or network).
34 of the spec's 44 tools are modelled. Not modelled: the six shared-folder membership tools
(`dropbox_share_folder`, `dropbox_list_folder_members`, `dropbox_add_folder_member`,
`dropbox_list_shared_folders`, `dropbox_unshare_folder`, `dropbox_remove_folder_member`), which
need a second account's namespace; `dropbox_save_url` and its job check, which download from the
network; `dropbox_get_thumbnail`, which renders images; and `dropbox_list_received_files`, which
needs other users sharing into this account.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import urllib.parse
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, matches, paginate, parse_datetime_arg
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.files.seed import seed_files
from compoworld.services.files.state import Entry, FileRequest, Job, Revision, SharedLink

QUOTA = 2 * 1024**3
MAX_FILE = 10 * 1024**2


class PathArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str


class MoveArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    from_path: str
    to_path: str


class MemberArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str
    access_level: Literal["viewer", "editor"] = "viewer"


class LinkSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    requested_visibility: Literal["public", "team_only", "password"] = "public"
    link_password: str | None = None
    expires: str | None = None


def norm_path(path: str, field: str = "path", root_ok: bool = False) -> tuple[str, str]:
    """(path_lower, path_display) of a Dropbox path; anything that could escape the tree is refused."""
    p = path.strip()
    if p in ("", "/"):
        if root_ok:
            return "", ""
        raise InvalidArguments(f"'{field}' must name a file or folder, not the root")
    if not p.startswith("/") or "\\" in p or "\x00" in p or len(p) > 4096:
        raise InvalidArguments(
            f"'{field}' {path[:80]!r} is malformed: paths start with '/', e.g. '/Finance/report.txt'",
            type="malformed_path",
        )
    parts = p.rstrip("/").split("/")[1:]
    if any(part in ("", ".", "..") for part in parts):
        raise InvalidArguments(
            f"'{field}' {path[:80]!r} is malformed: no empty, '.' or '..' segments", type="malformed_path"
        )
    display = "/" + "/".join(parts)
    return display.lower(), display


def _cursor(state: dict[str, Any]) -> str:
    """Stateless cursors: the listing's parameters travel inside the cursor, so reads write nothing."""
    return base64.urlsafe_b64encode(orjson.dumps(state)).decode()


def _uncursor(cursor: str, kind: str) -> dict[str, Any]:
    try:
        state = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
        if not isinstance(state, dict) or state.get("kind") != kind:
            raise ValueError
        return state
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        raise InvalidArguments(
            f"'cursor' is not a {kind} cursor; pass the cursor of the previous page", type="reset"
        ) from None


def parent_of(path_lower: str) -> str:
    return path_lower.rsplit("/", 1)[0]


_MEASURED: dict[int, tuple[str, int, str]] = {}  # id(content) -> (content, UTF-8 size, SHA-256)


def _measure(content: str) -> tuple[int, str]:
    """A file content's UTF-8 size and SHA-256, computed once per string object for big ones: copies
    share the string, and encoding 512K non-ASCII characters takes ~5 ms holding the GIL, twice per
    copy (its size, then its hash in the answer). A pure function of the text; the memo holds the
    string itself, so its id cannot be reused while it is cached, and keeps at most 8 (process-wide:
    a fixed few MB at most, whatever the sessions)."""
    if len(content) < 4096:
        data = content.encode()
        return len(data), hashlib.sha256(data).hexdigest()
    hit = _MEASURED.get(id(content))
    if hit is not None and hit[0] is content:
        return hit[1], hit[2]
    data = content.encode()
    out = len(data), hashlib.sha256(data).hexdigest()
    if len(_MEASURED) >= 8:
        with contextlib.suppress(RuntimeError, StopIteration):  # another session's thread evicts too
            _MEASURED.pop(next(iter(_MEASURED)), None)
    _MEASURED[id(content)] = (content, *out)
    return out


class FilesService(Service):
    """Dropbox: a virtual file tree with folders, revisions, sharing, locks and batch operations."""

    name = "files"
    domain = "files"
    spec = "klavis_dropbox.json"

    entries = Resource("entries", Entry, label="path", key="path_lower")
    revisions = Resource("revisions", Revision, label="revision")
    links = Resource("shared_links", SharedLink, label="shared link")
    requests = Resource("file_requests", FileRequest, label="file request")
    jobs = Resource("jobs", Job, label="job")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_files(self, ctx)

    # ---- tree primitives ---------------------------------------------------------------
    def _put_folder(self, display: str) -> dict[str, Any]:
        low = display.lower()
        rec = self.entries.validate(
            {
                "id": f"id:{self.next_id('', 14)}",
                "tag": "folder",
                "name": display.rsplit("/", 1)[-1],
                "path_lower": low,
                "path_display": display,
            }
        )
        self.store.put("entries", low, rec)
        return rec

    def _put_file(
        self, display: str, content: str, when: str | None = None, file_id: str | None = None
    ) -> dict[str, Any]:
        low = display.lower()
        when = when or self.clock.iso()
        rev = self.next_id("", 16)
        size = _measure(content)[0]
        fid = file_id or (self.entries.get(low) or {}).get("id") or f"id:{self.next_id('', 14)}"
        rec = self.entries.validate(
            {
                "id": fid,
                "tag": "file",
                "name": display.rsplit("/", 1)[-1],
                "path_lower": low,
                "path_display": display,
                "size": size,
                "content": content,
                "rev": rev,
                "server_modified": when,
                "locked": False,
                "members": (self.entries.get(low) or {}).get("members", []),
            }
        )
        self.store.put("entries", low, rec)
        self.revisions.create(
            {"file_id": fid, "path_lower": low, "content": content, "size": size, "server_modified": when},
            id=rev,
        )
        return rec

    def _entry(self, path: str, field: str = "path") -> dict[str, Any]:
        if path.startswith("id:"):
            found = self.store.lookup("entries", "id", path)  # indexed, in table order
            if not found:
                raise NotFound(f"'{field}': no file or folder with id {path}", type="path_not_found")
            return found[0]
        low, _ = norm_path(path, field)
        e = self.entries.get(low)
        if e is None:
            raise NotFound(f"'{field}': nothing at {path}", type="path_not_found")
        return e

    def _subtree(self, low: str) -> list[dict[str, Any]]:
        return [
            e for e in self.entries.all() if e["path_lower"] == low or e["path_lower"].startswith(low + "/")
        ]

    def _parent_ok(self, low: str, field: str) -> None:
        parent = parent_of(low)
        if parent and (self.entries.get(parent) or {}).get("tag") != "folder":
            raise NotFound(f"'{field}': the parent folder {parent} does not exist", type="parent_not_found")

    def _free(self, low: str, display: str, autorename: bool, field: str) -> tuple[str, str]:
        if not self.entries.get(low):
            return low, display
        if not autorename:
            raise Conflict(f"'{field}': something already exists at {display}", type="conflict")
        stem, dot, ext = display.rpartition(".") if "." in display.rsplit("/", 1)[-1] else (display, "", "")
        for n in range(2, 1000):
            cand = f"{stem} ({n}){dot}{ext}"
            if not self.entries.get(cand.lower()):
                return cand.lower(), cand
        raise Conflict(f"'{field}': no free name near {display}", type="conflict")

    def _meta(self, e: dict[str, Any]) -> dict[str, Any]:
        out = {
            ".tag": e["tag"],
            "id": e["id"],
            "name": e["name"],
            "path_lower": e["path_lower"],
            "path_display": e["path_display"],
        }
        if e["tag"] == "file":
            out.update(
                size=e["size"],
                rev=e["rev"],
                server_modified=e["server_modified"],
                is_locked=e["locked"],
                content_hash=_measure(e["content"] or "")[1],
            )
        return out

    def _check_unlocked(self, entries: list[dict[str, Any]]) -> None:
        locked = [e["path_display"] for e in entries if e.get("locked")]
        if locked:
            raise RuleViolation(
                f"locked file(s) cannot be changed: {', '.join(locked[:5])}", type="file_locked"
            )

    def _move(
        self, src: str, dst: str, autorename: bool, copy: bool, field: str = "to_path"
    ) -> dict[str, Any]:
        e = self._entry(src, "from_path")
        low, display = norm_path(dst, field)
        if low == e["path_lower"] or low.startswith(e["path_lower"] + "/"):
            raise RuleViolation("cannot move or copy a folder into itself", type="cant_nest_shared_folder")
        self._parent_ok(low, field)
        low, display = self._free(low, display, autorename, field)
        tree = self._subtree(e["path_lower"])
        if not copy:
            self._check_unlocked(tree)
        for item in sorted(tree, key=lambda x: x["path_lower"]):
            new_low = low + item["path_lower"][len(e["path_lower"]) :]
            new_display = display + item["path_display"][len(e["path_display"]) :]
            if not copy:
                self.store.delete("entries", item["path_lower"])
            if item["tag"] == "folder":
                rec = self._put_folder(new_display)
                if not copy:
                    self.store.put("entries", new_low, {**rec, "id": item["id"]})
            elif copy:
                self._put_file(new_display, item["content"] or "", file_id=f"id:{self.next_id('', 14)}")
            else:
                self.store.put(
                    "entries",
                    new_low,
                    {
                        **item,
                        "path_lower": new_low,
                        "path_display": new_display,
                        "name": new_display.rsplit("/", 1)[-1],
                    },
                )
        return self._meta(self.entries.get(low))

    def _job(self, kind: str, n: int) -> str:
        return self.jobs.create({"kind": kind, "entries": n}, id=f"dbjid:{self.next_id('', 20)}")["id"]

    # ---- listing and metadata ----------------------------------------------------------
    @tool
    def dropbox_list_folder(
        self,
        path: str = "",
        recursive: bool = False,
        include_media_info: bool = False,
        include_deleted: bool = False,
        include_has_explicit_shared_members: bool = False,
        include_mounted_folders: bool = True,
        limit: int = 100,
        include_non_downloadable_files: bool = True,
    ) -> dict[str, Any]:
        """Lists the contents of a folder ('' for the root); continue with dropbox_list_folder_continue while has_more.

        Args:
            path: Folder path ('' for the root).
            recursive: Include all subfolders' contents.
            include_media_info: Include media info (ignored).
            include_deleted: Include deleted entries.
            include_has_explicit_shared_members: Include whether entries have members.
            include_mounted_folders: Include mounted folders.
            limit: Maximum entries per page (1-2000).
            include_non_downloadable_files: Include non-downloadable files.
        """
        if not 1 <= limit <= 2000:
            raise InvalidArguments("'limit' must be between 1 and 2000")
        low, _ = norm_path(path, "path", root_ok=True)
        if low and (self.entries.get(low) or {}).get("tag") != "folder":
            raise NotFound(f"'path': no folder at {path}", type="path_not_found")
        items = [
            e
            for e in self.entries.all()
            if e["path_lower"].startswith(low + "/")
            and (include_deleted or not e["deleted"])
            and (recursive or parent_of(e["path_lower"]) == low)
        ]
        items.sort(key=lambda e: e["path_lower"])
        page, nxt = paginate(items, None, limit)
        cursor = _cursor(
            {
                "kind": "list",
                "path": low,
                "recursive": recursive,
                "deleted": include_deleted,
                "limit": limit,
                "at": nxt,
            }
        )
        return {
            "entries": [self._meta(e) for e in page],
            "cursor": cursor if nxt else None,
            "has_more": nxt is not None,
        }

    @tool
    def dropbox_list_folder_continue(self, cursor: str) -> dict[str, Any]:
        """Continues listing a folder from the cursor of dropbox_list_folder.

        Args:
            cursor: The cursor returned by dropbox_list_folder or a previous continue call.
        """
        c = _uncursor(cursor, "list")
        low = c["path"]
        items = sorted(
            (
                e
                for e in self.entries.all()
                if e["path_lower"].startswith(low + "/")
                and (c["deleted"] or not e["deleted"])
                and (c["recursive"] or parent_of(e["path_lower"]) == low)
            ),
            key=lambda e: e["path_lower"],
        )
        page, nxt = paginate(items, c["at"], c["limit"])
        return {
            "entries": [self._meta(e) for e in page],
            "cursor": _cursor({**c, "at": nxt}) if nxt else None,
            "has_more": nxt is not None,
        }

    @tool
    def dropbox_get_file_info(
        self,
        path: str,
        include_media_info: bool = False,
        include_deleted: bool = False,
        include_has_explicit_shared_members: bool = False,
    ) -> dict[str, Any]:
        """Gets metadata of a file or folder.

        Args:
            path: Path or id ('id:...') of the file or folder.
            include_media_info: Include media info (ignored).
            include_deleted: Return deleted entries too.
            include_has_explicit_shared_members: Include whether the file has members.
        """
        e = self._entry(path)
        if e["deleted"] and not include_deleted:
            raise NotFound(f"'path': nothing at {path}", type="path_not_found")
        out = self._meta(e)
        if include_has_explicit_shared_members:
            out["has_explicit_shared_members"] = bool(e["members"])
        return out

    @tool
    def dropbox_search_files(
        self,
        query: str,
        path: str = "",
        max_results: int = 100,
        file_status: Literal["active", "deleted"] = "active",
        filename_only: bool = False,
    ) -> dict[str, Any]:
        """Searches for files and folders by name (and, unless filename_only, by text content).

        Args:
            query: Search query for finding files.
            path: Path to search within (empty for entire Dropbox).
            max_results: Maximum number of search results (1-1000).
            file_status: active or deleted.
            filename_only: Search only in filenames.
        """
        if not query.strip():
            raise InvalidArguments("'query' must not be empty")
        if not 1 <= max_results <= 1000:
            raise InvalidArguments("'max_results' must be between 1 and 1000")
        low, _ = norm_path(path, "path", root_ok=True)
        hits = [
            e
            for e in self.entries.all()
            if e["path_lower"].startswith(low + "/")
            and e["deleted"] == (file_status == "deleted")
            and (
                matches(query, e["name"])
                or (not filename_only and e["tag"] == "file" and matches(query, e["content"]))
            )
        ]
        hits.sort(key=lambda e: e["path_lower"])
        page, nxt = paginate(hits, None, max_results)
        cursor = _cursor(
            {
                "kind": "search",
                "path": low,
                "status": file_status,
                "names": filename_only,
                "query": query,
                "limit": max_results,
                "at": nxt,
            }
        )
        return {
            "matches": [self._meta(e) for e in page],
            "has_more": nxt is not None,
            "cursor": cursor if nxt else None,
        }

    @tool
    def dropbox_search_files_continue(self, cursor: str) -> dict[str, Any]:
        """Continues a search from the cursor of dropbox_search_files.

        Args:
            cursor: The cursor of the previous search page.
        """
        c = _uncursor(cursor, "search")
        low, query = c["path"], c["query"]
        hits = sorted(
            (
                e
                for e in self.entries.all()
                if e["path_lower"].startswith(low + "/")
                and e["deleted"] == (c["status"] == "deleted")
                and (
                    matches(query, e["name"])
                    or (not c["names"] and e["tag"] == "file" and matches(query, e["content"]))
                )
            ),
            key=lambda e: e["path_lower"],
        )
        page, nxt = paginate(hits, c["at"], c["limit"])
        return {
            "matches": [self._meta(e) for e in page],
            "has_more": nxt is not None,
            "cursor": _cursor({**c, "at": nxt}) if nxt else None,
        }

    # ---- files and folders -------------------------------------------------------------
    @tool(mutates=True)
    def dropbox_create_folder(self, path: str, autorename: bool = False) -> dict[str, Any]:
        """Creates a folder (its parent must exist).

        Args:
            path: Path of the folder to create.
            autorename: Pick a free name if the path is taken.
        """
        low, display = norm_path(path)
        self._parent_ok(low, "path")
        low, display = self._free(low, display, autorename, "path")
        return self._meta(self._put_folder(display))

    @tool(mutates=True)
    def dropbox_upload_file(
        self,
        dropbox_path: str,
        source_uri: str,
        mode: Literal["add", "overwrite", "update"] = "add",
        autorename: bool = False,
        mute: bool = False,
    ) -> dict[str, Any]:
        """Uploads content given as a data: URI (e.g. data:text/plain;base64,SGVsbG8=). file://, http(s):// and ftp:// are refused: this environment reaches neither host files nor the network.

        Args:
            dropbox_path: Path where the file should be uploaded (e.g. '/folder/filename.txt').
            source_uri: A data: URI holding the content.
            mode: add (fail or autorename if taken), overwrite, or update.
            autorename: Pick a free name if the path is taken (mode add).
            mute: Suppress notifications.
        """
        scheme = source_uri.split(":", 1)[0].lower()
        if scheme in ("file", "http", "https", "ftp"):
            raise RuleViolation(
                f"{scheme}:// sources are not readable here; send the content as a data: URI",
                type="source_not_allowed",
            )
        if scheme != "data" or "," not in source_uri:
            raise InvalidArguments("'source_uri' must be a data: URI such as data:text/plain;base64,SGVsbG8=")
        header, payload = source_uri[5:].split(",", 1)
        try:
            raw = (
                base64.b64decode(urllib.parse.unquote(payload), validate=True)
                if header.endswith(";base64")
                else urllib.parse.unquote(payload).encode()
            )
        except (binascii.Error, ValueError):
            raise InvalidArguments("'source_uri' has invalid base64 data") from None
        if len(raw) > MAX_FILE:
            raise RuleViolation("files over 10 MB are not accepted here", type="too_large")
        low, display = norm_path(dropbox_path, "dropbox_path")
        self._parent_ok(low, "dropbox_path")
        current = self.entries.get(low)
        if current and current["tag"] == "folder":
            raise Conflict(f"'dropbox_path': {display} is a folder", type="conflict")
        if current and mode == "add":
            low, display = self._free(low, display, autorename, "dropbox_path")
            current = None
        if current:
            self._check_unlocked([current])
        used = sum(e["size"] for e in self.entries.all()) - (current["size"] if current else 0)
        if used + len(raw) > QUOTA:
            raise RuleViolation("not enough space in this account", type="insufficient_space")
        return self._meta(self._put_file(display, raw.decode("utf-8", "replace")))

    @tool
    def dropbox_download_file(self, path: str) -> dict[str, Any]:
        """Downloads a file's content (as text) and metadata.

        Args:
            path: Path or id of the file.
        """
        e = self._entry(path)
        if e["tag"] != "file" or e["deleted"]:
            raise RuleViolation(f"{path} is not a file that can be downloaded", type="not_file")
        return {"metadata": self._meta(e), "content": e["content"]}

    @tool(mutates=True)
    def dropbox_delete_file(self, path: str) -> dict[str, Any]:
        """Deletes a file or folder (with its contents). Deleted files keep their revisions.

        Args:
            path: Path of the file or folder.
        """
        e = self._entry(path)
        if e["deleted"]:
            raise NotFound(f"'path': nothing at {path}", type="path_not_found")
        tree = self._subtree(e["path_lower"])
        self._check_unlocked(tree)
        for item in tree:
            if item["tag"] == "file":
                self.store.put("entries", item["path_lower"], {**item, "deleted": True})
            else:
                self.store.delete("entries", item["path_lower"])
        return {"metadata": self._meta(e)}

    @tool(mutates=True)
    def dropbox_move_file(
        self,
        from_path: str,
        to_path: str,
        allow_shared_folder: bool = False,
        autorename: bool = False,
        allow_ownership_transfer: bool = False,
    ) -> dict[str, Any]:
        """Moves or renames a file or folder.

        Args:
            from_path: Current path.
            to_path: New path (its parent folder must exist).
            allow_shared_folder: Allow moving shared folders.
            autorename: Pick a free name if to_path is taken.
            allow_ownership_transfer: Allow ownership transfer.
        """
        return {"metadata": self._move(from_path, to_path, autorename, copy=False)}

    @tool(mutates=True)
    def dropbox_copy_file(
        self,
        from_path: str,
        to_path: str,
        allow_shared_folder: bool = False,
        autorename: bool = False,
        allow_ownership_transfer: bool = False,
    ) -> dict[str, Any]:
        """Copies a file or folder.

        Args:
            from_path: Path to copy.
            to_path: Destination path (its parent folder must exist).
            allow_shared_folder: Allow copying shared folders.
            autorename: Pick a free name if to_path is taken.
            allow_ownership_transfer: Allow ownership transfer.
        """
        return {"metadata": self._move(from_path, to_path, autorename, copy=True)}

    @tool
    def dropbox_list_revisions(
        self, path: str, mode: Literal["path", "id"] = "path", limit: int = 10
    ) -> dict[str, Any]:
        """Lists the revisions of a file, newest first.

        Args:
            path: Path (or id, with mode='id') of the file.
            mode: How to interpret the path.
            limit: Maximum number of revisions (1-100).
        """
        if not 1 <= limit <= 100:
            raise InvalidArguments("'limit' must be between 1 and 100")
        if mode == "id" and not path.startswith("id:"):
            raise InvalidArguments("with mode='id', 'path' must be a file id like 'id:abc'")
        e = self._entry(path)
        revs = sorted(
            self.revisions.find(file_id=e["id"]), key=lambda r: (r["server_modified"], r["id"]), reverse=True
        )
        return {
            "is_deleted": e["deleted"],
            "entries": [{k: v for k, v in r.items() if k != "content"} for r in revs[:limit]],
        }

    @tool(mutates=True)
    def dropbox_restore_file(self, path: str, rev: str) -> dict[str, Any]:
        """Restores a file to a previous revision (also undeletes it).

        Args:
            path: Path of the file.
            rev: The revision to restore.
        """
        low, display = norm_path(path)
        r = self.revisions.require(rev, "rev")
        if r["path_lower"] != low and (self.entries.get(low) or {}).get("id") != r["file_id"]:
            raise RuleViolation(f"revision {rev} does not belong to {path}", type="invalid_revision")
        self._parent_ok(low, "path")
        current = self.entries.get(low)
        if current:
            self._check_unlocked([current])
        return self._meta(self._put_file(display, r["content"], file_id=r["file_id"]))

    # ---- sharing -----------------------------------------------------------------------
    @tool(mutates=True)
    def dropbox_share_file(self, path: str, settings: LinkSettings | None = None) -> dict[str, Any]:
        """Creates a shared link for a file or folder ('public' for basic accounts; 'password' needs link_password).

        Args:
            path: Path of the file or folder to share.
            settings: Link settings: requested_visibility (public, team_only, password), link_password, expires.
        """
        e = self._entry(path)
        s = settings or LinkSettings()
        if s.requested_visibility == "password" and not s.link_password:
            raise InvalidArguments("'settings.link_password' is required for password visibility")
        expires = (
            parse_datetime_arg(s.expires, "settings.expires").strftime("%Y-%m-%dT%H:%M:%SZ")
            if s.expires
            else None
        )
        if expires and expires <= self.clock.iso():
            raise RuleViolation("a shared link cannot expire in the past", type="invalid_settings")
        if self.links.find(path_lower=e["path_lower"]):
            raise Conflict(
                "a shared link already exists for this path; see dropbox_get_shared_links",
                type="shared_link_already_exists",
            )
        url = f"https://www.dropbox.com/s/{self.next_id('', 15)}/{urllib.parse.quote(e['name'])}?dl=0"
        return self.links.create(
            {"path_lower": e["path_lower"], "visibility": s.requested_visibility, "expires": expires}, id=url
        )

    @tool
    def dropbox_get_shared_links(self, path: str | None = None, cursor: str | None = None) -> dict[str, Any]:
        """Lists shared links, of one path or all.

        Args:
            path: Only links of this path.
            cursor: Cursor of the next page.
        """
        low = norm_path(path)[0] if path else None
        recs = sorted(self.links.find(path_lower=low), key=lambda r: r["id"])
        page, nxt = paginate(recs, cursor, 100)
        return {
            "links": [
                {
                    "url": r["id"],
                    "path_lower": r["path_lower"],
                    "visibility": r["visibility"],
                    "expires": r["expires"],
                }
                for r in page
            ],
            "has_more": nxt is not None,
            "cursor": nxt,
        }

    @tool(mutates=True)
    def dropbox_unshare_file(self, file: str) -> dict[str, Any]:
        """Removes all members and shared links of a file.

        Args:
            file: Path or id of the file.
        """
        e = self._entry(file, "file")
        links = self.links.find(path_lower=e["path_lower"])
        if not e["members"] and not links:
            raise RuleViolation(f"{e['path_display']} is not shared", type="not_shared")
        for link in links:
            self.links.delete(link["id"])
        self.store.put("entries", e["path_lower"], {**e, "members": []})
        return {"unshared": e["path_display"]}

    @tool
    def dropbox_get_temporary_link(self, path: str) -> dict[str, Any]:
        """Gets a temporary (4 hour) download link for a file.

        Args:
            path: Path of the file.
        """
        e = self._entry(path)
        if e["tag"] != "file" or e["deleted"]:
            raise RuleViolation(f"{path} is not a file", type="not_file")
        token = hashlib.blake2b(f"{e['id']}:{e['rev']}".encode(), digest_size=12).hexdigest()
        return {"metadata": self._meta(e), "link": f"https://dl.dropboxusercontent.com/apitl/1/{token}"}

    @tool(mutates=True)
    def dropbox_add_file_member(
        self, file: str, members: list[MemberArg], quiet: bool = False, custom_message: str | None = None
    ) -> dict[str, Any]:
        """Adds members (by email, as viewer or editor) to a file.

        Args:
            file: File id ('id:...') or path.
            members: Members to add: email and access_level (viewer or editor).
            quiet: Suppress notifications.
            custom_message: Message in the invitation.
        """
        e = self._entry(file, "file")
        if e["tag"] != "file":
            raise RuleViolation("members can only be added to files here", type="not_file")
        if not members:
            raise InvalidArguments("'members' must list at least one member")
        emails = check_emails([m.email for m in members], "members.email")
        owner = self.store.tables[META]["owner"]
        if owner in emails:
            raise RuleViolation("the owner is already a member of every file", type="owner_is_member")
        current = {m["email"]: m for m in e["members"]}
        for m, email in zip(members, emails, strict=True):
            current[email] = {"email": email, "access_level": m.access_level}
        self.store.put(
            "entries", e["path_lower"], {**e, "members": sorted(current.values(), key=lambda m: m["email"])}
        )
        return {"file": e["id"], "members": sorted(current.values(), key=lambda m: m["email"])}

    @tool
    def dropbox_list_file_members(
        self, file: str, include_inherited: bool = True, limit: int = 100
    ) -> dict[str, Any]:
        """Lists the members of a file (the owner first).

        Args:
            file: File id or path.
            include_inherited: Include members inherited from folders.
            limit: Maximum members (1-300).
        """
        if not 1 <= limit <= 300:
            raise InvalidArguments("'limit' must be between 1 and 300")
        e = self._entry(file, "file")
        owner = {"email": self.store.tables[META]["owner"], "access_level": "owner"}
        return {"users": [owner, *e["members"]][:limit]}

    @tool(mutates=True)
    def dropbox_remove_file_member(self, file: str, member: str) -> dict[str, Any]:
        """Removes a member from a file.

        Args:
            file: File id or path.
            member: Email of the member to remove.
        """
        e = self._entry(file, "file")
        email = check_emails([member], "member")[0]
        if not any(m["email"] == email for m in e["members"]):
            raise NotFound(f"{email} is not a member of {e['path_display']}", type="member_not_found")
        self.store.put(
            "entries", e["path_lower"], {**e, "members": [m for m in e["members"] if m["email"] != email]}
        )
        return {"removed": email}

    # ---- account -----------------------------------------------------------------------
    @tool
    def dropbox_get_current_account(self) -> dict[str, Any]:
        """Gets the current account: name, email and plan."""
        email = self.store.tables[META]["owner"]
        return {
            "account_id": "dbid:" + hashlib.blake2b(email.encode(), digest_size=8).hexdigest(),
            "email": email,
            "name": {"display_name": email.split("@")[0].replace(".", " ").title()},
            "account_type": "business",
        }

    @tool
    def dropbox_get_space_usage(self) -> dict[str, Any]:
        """Gets the space used and the quota."""
        used = sum(e["size"] for e in self.entries.all() if e["tag"] == "file")
        return {"used": used, "allocation": {".tag": "individual", "allocated": QUOTA}}

    # ---- file requests -----------------------------------------------------------------
    @tool(mutates=True)
    def dropbox_create_file_request(
        self, title: str, destination: str, description: str | None = None
    ) -> dict[str, Any]:
        """Creates a file request: a link others use to upload files into a destination folder.

        Args:
            title: The title of the request.
            destination: Folder path the files go to (created if missing).
            description: Instructions for the uploaders.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        low, display = norm_path(destination, "destination")
        e = self.entries.get(low)
        if e and e["tag"] != "folder":
            raise Conflict(f"'destination' {display} is a file", type="conflict")
        if not e:
            self._parent_ok(low, "destination")
            self._put_folder(display)
        return self.requests.create(
            {
                "title": title,
                "destination": display,
                "description": description or "",
                "created": self.clock.iso(),
            },
            id=self.next_id("", 16),
        )

    @tool
    def dropbox_get_file_request(self, id: str) -> dict[str, Any]:
        """Gets a file request.

        Args:
            id: The file request id.
        """
        return self.requests.require(id)

    @tool
    def dropbox_list_file_requests(self) -> dict[str, Any]:
        """Lists the file requests of this account."""
        return {"file_requests": sorted(self.requests.all(), key=lambda r: r["created"] + r["id"])}

    @tool(mutates=True)
    def dropbox_update_file_request(
        self,
        id: str,
        title: str | None = None,
        destination: str | None = None,
        description: str | None = None,
        open: bool | None = None,
    ) -> dict[str, Any]:
        """Updates a file request (title, destination folder, description, open or closed).

        Args:
            id: The file request id.
            title: New title.
            destination: New destination folder (must exist).
            description: New description.
            open: Whether the request accepts uploads.
        """
        self.requests.require(id)
        changes: dict[str, Any] = {
            k: v
            for k, v in {"title": title, "description": description, "is_open": open}.items()
            if v is not None
        }
        if destination is not None:
            low, display = norm_path(destination, "destination")
            if (self.entries.get(low) or {}).get("tag") != "folder":
                raise NotFound(f"'destination': no folder at {destination}", type="path_not_found")
            changes["destination"] = display
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.requests.update(id, changes)

    @tool(mutates=True)
    def dropbox_delete_file_request(self, ids: list[str]) -> dict[str, Any]:
        """Deletes file requests (they must be closed first, as in Dropbox).

        Args:
            ids: The file request ids.
        """
        if not ids:
            raise InvalidArguments("'ids' must list at least one id")
        for i in ids:
            if self.requests.require(i, "ids")["is_open"]:
                raise RuleViolation(
                    f"file request {i} is open; close it first (dropbox_update_file_request open=false)",
                    type="file_request_open",
                )
        for i in dict.fromkeys(ids):
            self.requests.delete(i)
        return {"deleted": list(dict.fromkeys(ids))}

    # ---- batches and jobs --------------------------------------------------------------
    @tool(mutates=True)
    def dropbox_batch_delete(self, entries: list[PathArg]) -> dict[str, Any]:
        """Deletes several files and folders at once (all or nothing); returns a job id for dropbox_check_batch_job_status.

        Args:
            entries: Up to 1000 entries, each with a 'path'.
        """
        if not 1 <= len(entries) <= 1000:
            raise InvalidArguments("'entries' must hold 1 to 1000 items")
        for i, item in enumerate(entries):
            self._entry(item.path, f"entries[{i}].path")
        for item in entries:
            e = self._entry(item.path)
            if not e["deleted"]:
                self.dropbox_delete_file(item.path)
        return {"async_job_id": self._job("delete", len(entries))}

    @tool(mutates=True)
    def dropbox_batch_move(
        self, entries: list[MoveArg], autorename: bool = False, allow_ownership_transfer: bool = False
    ) -> dict[str, Any]:
        """Moves several files and folders at once (all or nothing); returns a job id.

        Args:
            entries: Up to 1000 moves, each with 'from_path' and 'to_path'.
            autorename: Pick free names where destinations are taken.
            allow_ownership_transfer: Allow ownership transfer.
        """
        if not 1 <= len(entries) <= 1000:
            raise InvalidArguments("'entries' must hold 1 to 1000 items")
        for m in entries:
            self._move(m.from_path, m.to_path, autorename, copy=False)
        return {"async_job_id": self._job("move", len(entries))}

    @tool(mutates=True)
    def dropbox_batch_copy(self, entries: list[MoveArg], autorename: bool = False) -> dict[str, Any]:
        """Copies several files and folders at once (all or nothing); returns a job id.

        Args:
            entries: Up to 1000 copies, each with 'from_path' and 'to_path'.
            autorename: Pick free names where destinations are taken.
        """
        if not 1 <= len(entries) <= 1000:
            raise InvalidArguments("'entries' must hold 1 to 1000 items")
        for m in entries:
            self._move(m.from_path, m.to_path, autorename, copy=True)
        return {"async_job_id": self._job("copy", len(entries))}

    def _lock(self, entries: list[PathArg], lock: bool) -> dict[str, Any]:
        if not 1 <= len(entries) <= 1000:
            raise InvalidArguments("'entries' must hold 1 to 1000 items")
        found = [self._entry(p.path, f"entries[{i}].path") for i, p in enumerate(entries)]
        for e in found:
            if e["tag"] != "file":
                raise RuleViolation(
                    f"{e['path_display']} is a folder; only files can be locked", type="not_file"
                )
            if e["locked"] == lock:
                raise Conflict(
                    f"{e['path_display']} is already {'locked' if lock else 'unlocked'}", type="lock_conflict"
                )
        for e in found:
            self.store.put("entries", e["path_lower"], {**e, "locked": lock})
        return {"entries": [{"path_display": e["path_display"], "is_locked": lock} for e in found]}

    @tool(mutates=True)
    def dropbox_lock_file_batch(self, entries: list[PathArg]) -> dict[str, Any]:
        """Locks files so that they cannot be edited, moved or deleted until unlocked.

        Args:
            entries: Up to 1000 entries, each with a 'path'.
        """
        return self._lock(entries, True)

    @tool(mutates=True)
    def dropbox_unlock_file_batch(self, entries: list[PathArg]) -> dict[str, Any]:
        """Unlocks files.

        Args:
            entries: Up to 1000 entries, each with a 'path'.
        """
        return self._lock(entries, False)

    @tool
    def dropbox_check_batch_job_status(self, async_job_id: str) -> dict[str, Any]:
        """Checks a batch job (batches here finish at once, so a known job is complete).

        Args:
            async_job_id: The job id a batch call returned.
        """
        job = self.jobs.require(async_job_id, "async_job_id")
        return {".tag": "complete", "kind": job["kind"], "entries": job["entries"]}

    @tool
    def dropbox_check_job_status(self, async_job_id: str) -> dict[str, Any]:
        """Checks any asynchronous job by id.

        Args:
            async_job_id: The job id.
        """
        return self.dropbox_check_batch_job_status(async_job_id)
