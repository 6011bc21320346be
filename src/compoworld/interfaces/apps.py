"""Read-only app pages for the services the first pages did not cover: a shop storefront, sheets
(a grid), docs and wiki, files. Each is a `web.Page`, so the text browser reads it as lines and the
screen draws it (`screen.py`: product cards, a spreadsheet grid, a file list)."""

from __future__ import annotations

import re
from typing import Any

from compoworld.interfaces.page import Page

_TAG = re.compile(r"<[^>]+>")


def _text(html_text: Any) -> str:
    return re.sub(r"\s+", " ", _TAG.sub(" ", str(html_text or ""))).strip()


def _cell_key(ref: str) -> tuple[int, int]:
    m = re.match(r"([A-Z]+)(\d+)$", ref)
    if not m:
        return (10**6, 10**6)
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - 64
    return int(m.group(2)), col


def app_page(env: Any, head: str, rest: list[str], url: str) -> Page | None:
    svcs = env.services
    if head == "shop" and "shop" in svcs:
        shop = svcs["shop"]
        products = shop.table("products")
        if not rest:
            page = Page(url, "Storefront")
            for p in sorted(products.values(), key=lambda p: str(p["id"])):
                if p.get("status", "active") != "active":
                    continue
                price = (p.get("variants") or [{}])[0].get("price")
                page.add("link", f"{p['title']} — {price}", href=f"/shop/{p['id']}", meta={"product": True})
            return page
        p = products.get(rest[0])
        if p is None:
            return None
        page = Page(url, p["title"])
        page.add("text", _text(p.get("body_html")))
        for v in p.get("variants") or []:
            page.add("text", f"{v.get('title')}: {v.get('price')} (SKU {v.get('sku')})")
        page.add("text", f"Vendor: {p.get('vendor')}  Type: {p.get('product_type')}")
        return page
    if head == "sheets" and "sheets" in svcs:
        books = svcs["sheets"].table("spreadsheets")
        if not rest:
            page = Page(url, "Spreadsheets")
            for b in sorted(books.values(), key=lambda b: b["title"]):
                page.add("link", b["title"], href=f"/sheets/{b['id']}")
            return page
        b = books.get(rest[0])
        if b is None:
            return None
        page = Page(url, b["title"])
        for sh in b.get("sheets") or []:
            cells = sh.get("cells") or {}
            keys = [_cell_key(k) for k in cells]
            rows = max((r for r, _ in keys if r < 10**6), default=0)
            cols = max((c for _, c in keys if c < 10**6), default=0)
            rows, cols = min(rows, 60), min(cols, 16)
            grid = [["" for _ in range(cols)] for _ in range(rows)]
            for k, v in cells.items():
                r, c = _cell_key(k)
                if r <= rows and c <= cols:
                    grid[r - 1][c - 1] = "" if v is None else str(v)
            page.add("heading", sh.get("title") or "Sheet")
            page.add("text", "\n".join("\t".join(row) for row in grid), meta={"grid": grid})
        return page
    if head == "wiki" and "wiki" in svcs:
        wiki = svcs["wiki"]
        pages = wiki.table("pages")
        if not rest:
            page = Page(url, "Docs & wiki")
            spaces = wiki.table("spaces")
            for p in sorted(pages.values(), key=lambda p: (str(p.get("space_id")), p["title"])):
                if p.get("status", "current") == "current" and not p.get("is_private"):
                    space = (spaces.get(str(p.get("space_id"))) or {}).get("name", "")
                    page.add("link", f"{p['title']} · {space}", href=f"/wiki/{p['id']}")
            return page
        p = pages.get(rest[0])
        if p is None or p.get("is_private"):
            return None
        page = Page(url, p["title"])
        page.add("text", f"Version {p.get('version')} · updated {p.get('updated_at')}")
        page.add("text", _text(p.get("content")))
        return page
    if head == "files" and "files" in svcs:
        entries = [e for e in svcs["files"].table("entries").values() if not e.get("deleted")]
        folder = "/" + "/".join(rest).lower() if rest else ""
        inside = [
            e for e in entries if e["path_lower"].rsplit("/", 1)[0] == folder and e["path_lower"] != folder
        ]
        if rest and not inside and not any(e["path_lower"] == folder for e in entries):
            return None
        page = Page(url, "Files" + (f" · {folder}" if folder else ""))
        for e in sorted(inside, key=lambda e: (e["tag"] != "folder", e["path_lower"])):
            if e["tag"] == "folder":
                page.add("link", f"{e['name']}/", href="/files" + e["path_lower"])
            else:
                page.add("text", f"{e['name']}  {e.get('size', 0)} bytes  {e.get('server_modified') or ''}")
        return page
    return None
