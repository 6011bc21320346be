"""Browser: the GUI interface as a text browser over the environment's web pages.

`open`, `click`, `type` and `read` work on pages rendered from the other services' state
(`compoworld.interfaces.web`); buttons act through those services' own tools, so a form changes
exactly what the matching MCP call would. The tab (URL, typed text) lives in state. Some facts
(internal account notes) are shown only in pages.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.interfaces.web import Page, render

NOTES = (
    "Prefers phone calls before 10am; escalations go to the VP of Operations.",
    "Budget owner changed last quarter; confirm every order over 5k in writing.",
    "Pilot extended twice; renewal depends on the analytics module.",
    "Asked for quarterly business reviews in person, not by video.",
    "Legal requires purchase orders to quote the contract number.",
)


class Tab(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    url: str
    inputs: dict[str, str] = {}


class PageFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # the customer (company) name
    text: str


class BrowserService(Service):
    """A text browser over the workplace's web pages (inbox, channels, calendar, tickets, companies)."""

    name = "browser"
    domain = "web"
    acts_on_others = True
    ephemeral_tables = frozenset({"tabs"})

    tabs = Resource("tabs", Tab, label="tab")
    facts = Resource("facts", PageFact, label="page fact")

    def bind(self, env: Any) -> None:
        self.env = env

    def seed_data(self, ctx: SeedContext) -> None:
        self.tabs.create({"url": "/", "inputs": {}}, id="main")
        for i, c in enumerate(ctx.company.customers):
            self.facts.create({"text": NOTES[(i + ctx.rng.randrange(5)) % len(NOTES)]}, id=c.name)

    def _page(self, url: str) -> Page:
        page = render(self.env, url, {k: v["text"] for k, v in self.table("facts").items()})
        if page is None:
            raise NotFound(f"no page at {url}", type="page_not_found")
        return page

    def _show(self, page: Page, inputs: dict[str, str]) -> dict[str, Any]:
        return {"url": page.url, "title": page.title, "page": page.text(inputs)}

    @tool(mutates=True)
    def open(self, url: str) -> dict:
        """Open a page of the workplace web app and return it as text with element ids.

        Args:
            url: A path such as "/", "/inbox", "/tickets/3" or "/companies/12".
        """
        if not url.startswith("/"):
            raise InvalidArguments("url must be a path that starts with '/'")
        page = self._page(url)
        self.tabs.update("main", {"url": page.url, "inputs": {}})
        return self._show(page, {})

    @tool
    def read(self) -> dict:
        """Return the current page as text with element ids."""
        tab = self.tabs.get("main")
        return self._show(self._page(tab["url"]), tab["inputs"])

    @tool(mutates=True)
    def type(self, element_id: str, text: str) -> dict:
        """Type text into a textbox of the current page.

        Args:
            element_id: The textbox's id, e.g. "e7".
            text: What to type (replaces the textbox's value).
        """
        tab = self.tabs.get("main")
        page = self._page(tab["url"])
        e = page.find(element_id)
        if e is None or e.role != "textbox":
            raise NotFound(f"no textbox {element_id!r} on {page.url}", type="element_not_found")
        inputs = {**tab["inputs"], element_id: text}
        self.tabs.update("main", {"inputs": inputs})
        return self._show(page, inputs)

    @tool(mutates=True)
    def click(self, element_id: str) -> dict:
        """Click a link or a button of the current page; buttons submit their form.

        Args:
            element_id: The element's id, e.g. "e3".
        """
        tab = self.tabs.get("main")
        page = self._page(tab["url"])
        e = page.find(element_id)
        if e is None or e.role not in ("link", "button"):
            raise NotFound(f"no link or button {element_id!r} on {page.url}", type="element_not_found")
        if e.role == "link":
            return self.open(e.href or "/")
        act = e.action or {}
        args = dict(act["args"])
        for arg, box in act["inputs"].items():
            value = tab["inputs"].get(box, "")
            if not value.strip():
                raise InvalidArguments(f"fill in the textbox {box} before clicking {e.label!r}")
            # a list field (recipients) is typed as one comma-separated line
            args[arg] = [v.strip() for v in value.split(",") if v.strip()] if arg in act.get("lists", ()) else value
        if act.get("templates"):  # fields put together from several boxes (a date and a time)
            parts = {k: args.pop(k) for k in list(args) if k not in act.get("args", {}) and k in act["inputs"]}
            keep = {k: v for k, v in parts.items() if not any("{" + k + "}" in t for t in act["templates"].values())}
            args.update(keep)
            for field, tpl in act["templates"].items():
                args[field] = tpl.format(**{k: str(v).strip() for k, v in parts.items()})
        r = self.env.call(act["tool"], {k: v for k, v in args.items() if v is not None})
        if not r["success"]:
            raise RuleViolation(f"{e.label} failed: {r['error']['message']}", type="form_rejected")
        nxt = self._page(act["then"])
        self.tabs.update("main", {"url": nxt.url, "inputs": {}})
        return {**self._show(nxt, {}), "submitted": e.label}
