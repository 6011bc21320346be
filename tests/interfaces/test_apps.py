"""The storefront, sheets, docs and files pages read the state (text browser; the screen draws the same)."""

from __future__ import annotations

from compoworld.core.environment import Environment
from compoworld.interfaces.screen import page_html
from compoworld.interfaces.web import render


def test_app_pages_show_the_records_and_change_with_the_state() -> None:
    env = Environment(["browser", "shop", "sheets", "wiki", "files"], seed=6, size="small")
    shop = env.call("browser__open", {"url": "/shop"})["data"]["page"]
    active = [
        p for p in env.services["shop"].table("products").values() if p.get("status", "active") == "active"
    ]
    assert active and all(p["title"] in shop for p in active)
    book = sorted(env.services["sheets"].table("spreadsheets").values(), key=lambda b: b["id"])[0]
    sheet = render(env, f"/sheets/{book['id']}", {})
    grid = next(e.meta["grid"] for e in sheet.elements if e.meta and "grid" in e.meta)
    a1 = book["sheets"][0]["cells"]["A1"]
    assert (
        grid[0][0] == str(a1)
        and "<table>" in page_html(sheet, {})
        and f"<td>{a1}</td>" in page_html(sheet, {})
    )
    wiki = env.services["wiki"].table("pages")
    pub = next(
        p for p in wiki.values() if not p.get("is_private") and p.get("status", "current") == "current"
    )
    assert pub["title"] in env.call("browser__open", {"url": f"/wiki/{pub['id']}"})["data"]["title"]
    files = env.call("browser__open", {"url": "/files"})["data"]["page"]
    top = [e for e in env.services["files"].table("entries").values() if e["path_lower"].count("/") == 1]
    assert top and all(e["name"] in files for e in top)
    # a change through the service's own tool shows on its page
    sid = book["id"]
    before = render(env, f"/sheets/{sid}", {}).text()
    r = env.call(
        "sheets__google_sheets_write_to_cell",
        {"spreadsheet_id": sid, "column": "A", "row": 1, "value": "Changed 4471"},
    )
    assert r["success"], r
    after = render(env, f"/sheets/{sid}", {}).text()
    assert "Changed 4471" in after and after != before
    assert env.call("browser__open", {"url": "/sheets/nope"})["error"]["code"] == 404
