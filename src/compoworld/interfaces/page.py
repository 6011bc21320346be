"""A page as elements with stable ids (`Element`, `Page`): what `web` renders and `apps` builds.

Its own module so the app pages (`apps`) and the router over them (`web`) both import it, one way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Element:
    role: str  # heading | text | link | textbox | button | image
    label: str
    href: str | None = None
    action: dict[str, Any] | None = (
        None  # button: {"tool": ..., "args": {...}, "inputs": {arg: textbox label}, "then": url}
    )
    id: str = ""
    meta: dict[str, Any] | None = None  # how the screen draws it (an image's drawing, an event's time)


IMAGE = "image:"  # a page fact under "image:<name>" is drawn as a picture on that account's page only


@dataclass
class Page:
    url: str
    title: str
    elements: list[Element] = field(default_factory=list)

    def add(self, role: str, label: str, **kw: Any) -> Element:
        e = Element(role, label, **kw)
        e.id = f"e{len(self.elements) + 1}"
        self.elements.append(e)
        return e

    def find(self, eid: str) -> Element | None:
        return next((e for e in self.elements if e.id == eid), None)

    def text(self, inputs: dict[str, str] | None = None) -> str:
        inputs = inputs or {}
        lines = [f"page {self.url}", f"# {self.title}"]
        for e in self.elements:
            if e.role == "heading":
                lines.append(f"[{e.id}] heading {e.label!r}")
            elif e.role == "text":
                lines.append(f"[{e.id}] text {e.label!r}")
            elif e.role == "link":
                lines.append(f"[{e.id}] link {e.label!r} -> {e.href}")
            elif e.role == "textbox":
                lines.append(f"[{e.id}] textbox {e.label!r} value={inputs.get(e.id, '')!r}")
            elif e.role == "image":  # the text browser gives only the alt text: the drawing is for eyes
                lines.append(f"[{e.id}] image {e.label!r}")
            else:
                lines.append(f"[{e.id}] button {e.label!r}")
        return "\n".join(lines) + "\n"

    def html(self, inputs: dict[str, str] | None = None, page_no: int = 1) -> str:
        """The page as a person sees it (see `interfaces/screen.py`): the same elements and form."""
        from compoworld.interfaces.screen import page_html

        return page_html(self, inputs or {}, page_no)
