"""Docs and wiki: Confluence, modelled on klavis_confluence.json (Klavis Confluence MCP server).

All 14 tools of the spec are modelled with their real names and parameters. Pages form a tree in
their space, titles are unique within a space (as in Confluence), every edit bumps the version.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, paginate
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.wiki.seed import seed_wiki
from compoworld.services.wiki.state import Attachment, Page, Space

_KEY = re.compile(r"^[A-Z0-9]{1,10}$")
_TAGS = re.compile(r"<[^>]+>")


def _text(html: str) -> str:
    return _TAGS.sub(" ", html)


def _similar(word: str, text: str) -> bool:
    """Fuzzy word match: equal or one edit apart, for words of 4+ letters."""
    for w in re.findall(r"\w+", text):
        if w == word:
            return True
        if len(word) >= 4 and abs(len(w) - len(word)) <= 1:
            i = 0
            while i < min(len(w), len(word)) and w[i] == word[i]:
                i += 1
            if w[i + 1 :] == word[i + 1 :] or w[i:] == word[i + 1 :] or w[i + 1 :] == word[i:]:
                return True
    return False


class WikiService(Service):
    """Confluence wiki: spaces, page trees with versions, search and attachments."""

    name = "wiki"
    domain = "docs"
    spec = "klavis_confluence.json"

    spaces = Resource("spaces", Space, id_kind="numeric", start=65000)
    pages = Resource("pages", Page, id_kind="numeric", start=98000, text=("title", "content"))
    attachments = Resource("attachments", Attachment, prefix="att", id_kind="numeric", start=500000)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_wiki(self, ctx)

    def _space(self, ref: str) -> dict[str, Any]:
        s = self.spaces.get(ref) or next(iter(self.store.lookup("spaces", "key", str(ref).upper())), None)
        if s is None:
            raise NotFound(f"space '{ref}' not found (give its id or key)", type="space_not_found")
        return s

    def _page(self, ref: str) -> dict[str, Any]:
        p = self.pages.get(ref)
        if p is None:
            hits = [p for p in self.pages.all() if norm(p["title"]) == norm(ref)]
            if len(hits) > 1:
                raise Conflict(
                    f"{len(hits)} pages are titled {ref!r}; use the page id", type="ambiguous_title"
                )
            p = hits[0] if hits else None
        if p is None:
            raise NotFound(f"page '{ref}' not found (give its id or exact title)", type="page_not_found")
        return p

    def _view(self, p: dict[str, Any], body: bool = True) -> dict[str, Any]:
        out = {k: v for k, v in p.items() if body or k != "content"}
        out["space_key"] = self.spaces.get(p["space_id"])["key"]
        return out

    def _title_free(self, space_id: str, title: str, but: str | None = None) -> None:
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if self.pages.find(lambda p: p["id"] != but and norm(p["title"]) == norm(title), space_id=space_id):
            raise Conflict(f"a page titled {title!r} already exists in this space", type="title_exists")

    @tool(mutates=True)
    def confluence_create_page(
        self,
        space_identifier: str,
        title: str,
        content: str,
        parent_id: str | None = None,
        is_private: bool = False,
        is_draft: bool = False,
    ) -> dict[str, Any]:
        """Create a page in a space (by space id or key), optionally under a parent page. Titles are unique per space.

        Args:
            space_identifier: The space id or key.
            title: The page title.
            content: The page body (HTML storage format or plain text).
            parent_id: The parent page id (same space); default: the space homepage.
            is_private: Whether only you can see the page.
            is_draft: Create the page as a draft.
        """
        space = self._space(space_identifier)
        self._title_free(space["id"], title)
        if parent_id is not None:
            parent = self.pages.require(parent_id, "parent_id")
            if parent["space_id"] != space["id"]:
                raise RuleViolation("the parent page is in another space", type="parent_in_other_space")
        now = self.clock.iso()
        page = self.pages.create(
            {
                "space_id": space["id"],
                "title": title,
                "content": content,
                "parent_id": parent_id or space["homepage_id"],
                "status": "draft" if is_draft else "current",
                "is_private": is_private,
                "author_id": self.store.tables[META]["me"],
                "created_at": now,
                "updated_at": now,
            }
        )
        return self._view(page)

    @tool
    def confluence_get_page(self, page_identifier: str) -> dict[str, Any]:
        """Get a page by id or exact title, with its content.

        Args:
            page_identifier: The page id or title.
        """
        return self._view(self._page(page_identifier))

    @tool
    def confluence_get_pages_by_id(self, page_ids: list[str]) -> dict[str, Any]:
        """Get several pages by id; unknown ids are reported, not fatal.

        Args:
            page_ids: The page ids (at most 250).
        """
        if not page_ids or len(page_ids) > 250:
            raise InvalidArguments("'page_ids' must list 1 to 250 ids")
        found = [self._view(p) for i in page_ids if (p := self.pages.get(i))]
        return {"pages": found, "not_found": [i for i in page_ids if not self.pages.get(i)]}

    @tool
    def confluence_list_pages(
        self,
        space_ids: list[str] | None = None,
        sort_by: Literal[
            "id", "-id", "title", "-title", "created-date", "-created-date", "modified-date", "-modified-date"
        ] = "id",
        limit: int = 25,
        pagination_token: str | None = None,
    ) -> dict[str, Any]:
        """List pages (without bodies), optionally of some spaces, sorted and paginated.

        Args:
            space_ids: Only pages of these spaces (ids or keys).
            sort_by: id, title, created-date or modified-date; prefix '-' for descending.
            limit: Page size (max 250).
            pagination_token: Token of the next page.
        """
        check_limit(limit, "limit", 1, 250)
        spaces = {self._space(s)["id"] for s in space_ids} if space_ids else None
        recs = [p for p in self.pages.all() if spaces is None or p["space_id"] in spaces]
        key = {"id": "id", "title": "title", "created-date": "created_at", "modified-date": "updated_at"}[
            sort_by.lstrip("-")
        ]
        recs = sort_records(recs, key, descending=sort_by.startswith("-"))
        page, nxt = paginate(recs, pagination_token, limit, "pagination_token")
        return {"pages": [self._view(p, body=False) for p in page], "next_pagination_token": nxt}

    @tool(mutates=True)
    def confluence_update_page_content(
        self,
        page_identifier: str,
        content: str,
        update_mode: Literal["replace", "append", "prepend"] = "append",
    ) -> dict[str, Any]:
        """Update a page's content: replace it, or append / prepend to it. The version goes up by one.

        Args:
            page_identifier: The page id or title.
            content: The new content.
            update_mode: replace, append or prepend (default append).
        """
        p = self._page(page_identifier)
        body = {"replace": content, "append": p["content"] + content, "prepend": content + p["content"]}[
            update_mode
        ]
        new = self.pages.update(
            p["id"], {"content": body, "version": p["version"] + 1, "updated_at": self.clock.iso()}
        )
        return self._view(new)

    @tool(mutates=True)
    def confluence_rename_page(self, page_identifier: str, title: str) -> dict[str, Any]:
        """Rename a page (the new title must be free in its space).

        Args:
            page_identifier: The page id or title.
            title: The new title.
        """
        p = self._page(page_identifier)
        self._title_free(p["space_id"], title, but=p["id"])
        return self._view(
            self.pages.update(
                p["id"], {"title": title, "version": p["version"] + 1, "updated_at": self.clock.iso()}
            )
        )

    @tool(mutates=True)
    def confluence_create_space(
        self, name: str, key: str | None = None, description: str | None = None, is_private: bool = False
    ) -> dict[str, Any]:
        """Create a space with a homepage. The key (A-Z, 0-9, up to 10) is derived from the name if not given.

        Args:
            name: The space name.
            key: The space key.
            description: The space description.
            is_private: Whether only you can see the space.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        key = (key or re.sub(r"[^A-Z0-9]", "", name.upper())[:10]).upper()
        if not _KEY.match(key):
            raise InvalidArguments(f"'key' {key!r} must be 1-10 letters or digits")
        if self.store.lookup("spaces", "key", key):
            raise Conflict(f"a space with key {key} already exists", type="space_key_exists")
        now = self.clock.iso()
        space = self.spaces.create(
            {
                "key": key,
                "name": name,
                "description": description or "",
                "is_private": is_private,
                "created_at": now,
            }
        )
        home = self.pages.create(
            {
                "space_id": space["id"],
                "title": f"{name} home",
                "content": f"<h1>{name}</h1>",
                "author_id": self.store.tables[META]["me"],
                "created_at": now,
                "updated_at": now,
            }
        )
        return self.spaces.update(space["id"], {"homepage_id": home["id"]})

    @tool
    def confluence_list_spaces(self, limit: int = 25, pagination_token: str | None = None) -> dict[str, Any]:
        """List spaces.

        Args:
            limit: Page size (max 250).
            pagination_token: Token of the next page.
        """
        check_limit(limit, "limit", 1, 250)
        page, nxt = paginate(
            sort_records(self.spaces.all(), "key"), pagination_token, limit, "pagination_token"
        )
        return {"spaces": page, "next_pagination_token": nxt}

    @tool
    def confluence_get_space(self, space_identifier: str) -> dict[str, Any]:
        """Get a space by id or key.

        Args:
            space_identifier: The space id or key.
        """
        s = self._space(space_identifier)
        return {**s, "page_count": len(self.pages.find(space_id=s["id"]))}

    @tool
    def confluence_get_space_hierarchy(self, space_identifier: str) -> dict[str, Any]:
        """Get the page tree of a space, from its homepage down.

        Args:
            space_identifier: The space id or key.
        """
        s = self._space(space_identifier)
        pages = self.pages.find(space_id=s["id"])
        children: dict[str | None, list[dict[str, Any]]] = {}
        for p in sort_records(pages, "title"):
            children.setdefault(p["parent_id"], []).append(p)

        def node(p: dict[str, Any], depth: int) -> dict[str, Any]:
            kids = children.get(p["id"], []) if depth < 20 else []
            return {"id": p["id"], "title": p["title"], "children": [node(c, depth + 1) for c in kids]}

        roots = [p for p in pages if p["parent_id"] is None or not self.pages.get(p["parent_id"])]
        return {
            "space": {"id": s["id"], "key": s["key"], "name": s["name"]},
            "tree": [node(r, 0) for r in sort_records(roots, "id")],
        }

    @tool
    def confluence_search_content(
        self,
        must_contain_all: list[str] | None = None,
        can_contain_any: list[str] | None = None,
        enable_fuzzy: bool = True,
        limit: int = 25,
    ) -> list[dict[str, Any]]:
        """Search pages by words in their title and content: all of must_contain_all, and at least one of can_contain_any.

        Args:
            must_contain_all: Words or phrases that must all appear.
            can_contain_any: Words or phrases of which at least one must appear.
            enable_fuzzy: Also match words one typo away.
            limit: Maximum results (max 100).
        """
        check_limit(limit, "limit", 1, 100)
        if not must_contain_all and not can_contain_any:
            raise InvalidArguments("give 'must_contain_all' or 'can_contain_any'")

        def has(term: str, text: str) -> bool:
            t = norm(term)
            return t in text or (enable_fuzzy and " " not in t and _similar(t, text))

        hits = []
        for p in self.pages.all():
            text = norm(p["title"] + " " + _text(p["content"]))
            if all(has(w, text) for w in must_contain_all or []) and (
                not can_contain_any or any(has(w, text) for w in can_contain_any)
            ):
                hits.append(p)
        hits = sort_records(hits, "updated_at", descending=True)[:limit]
        return [{**self._view(p, body=False), "excerpt": _text(p["content"]).strip()[:160]} for p in hits]

    @tool
    def confluence_list_attachments(
        self,
        sort_order: Literal["created-date", "-created-date", "file-size", "-file-size"] = "-created-date",
        limit: int = 25,
        pagination_token: str | None = None,
    ) -> dict[str, Any]:
        """List all attachments.

        Args:
            sort_order: created-date or file-size; prefix '-' for descending.
            limit: Page size (max 250).
            pagination_token: Token of the next page.
        """
        check_limit(limit, "limit", 1, 250)
        key = "created_at" if "created" in sort_order else "file_size"
        recs = sorted(
            self.attachments.all(), key=lambda a: (a[key], a["id"]), reverse=sort_order.startswith("-")
        )
        page, nxt = paginate(recs, pagination_token, limit, "pagination_token")
        return {"attachments": page, "next_pagination_token": nxt}

    @tool
    def confluence_get_attachments_for_page(
        self, page_identifier: str, limit: int = 25, pagination_token: str | None = None
    ) -> dict[str, Any]:
        """List the attachments of a page.

        Args:
            page_identifier: The page id or title.
            limit: Page size (max 250).
            pagination_token: Token of the next page.
        """
        check_limit(limit, "limit", 1, 250)
        p = self._page(page_identifier)
        page, nxt = paginate(
            sort_records(self.attachments.find(page_id=p["id"]), "created_at"),
            pagination_token,
            limit,
            "pagination_token",
        )
        return {"attachments": page, "next_pagination_token": nxt}

    @tool
    def confluence_get_attachment(self, attachment_id: str) -> dict[str, Any]:
        """Get an attachment's metadata by id.

        Args:
            attachment_id: The attachment id.
        """
        return self.attachments.require(attachment_id)
