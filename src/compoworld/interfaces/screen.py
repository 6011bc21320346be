"""How a page looks: the HTML and CSS a person (or a vision agent) sees for a `web.Page`.

The same elements and the same form as the text browser (inputs are named by element id, a button
posts `click=<id>`), laid out as an app a person recognises: a top bar, a sidebar of apps with
icons, list rows with avatars and pagination, a week grid for the calendar, a confirmation dialog
for one-click actions, pictures drawn as inline SVG. Everything is inline or served by the app
itself (the bundled DejaVu fonts), so the same state gives the same pixels, with no network.
"""

from __future__ import annotations

import hashlib
import html
from datetime import date, datetime, timedelta
from typing import Any

PAGE_SIZE = 12  # list rows per page

_P = "fill='none' stroke='currentColor' stroke-width='2' stroke-linecap='round' stroke-linejoin='round'"
ICONS = {
    "home": "<path d='M3 11l9-8 9 8v10h-6v-6H9v6H3z'/>",
    "accounts": "<rect x='4' y='3' width='16' height='18' rx='2'/><path d='M8 8h8M8 12h8M8 16h5'/>",
    "inbox": "<rect x='3' y='5' width='18' height='14' rx='2'/><path d='M3 7l9 6 9-6'/>",
    "channels": "<path d='M4 5h16v11H9l-5 4z'/><path d='M8 9h8M8 12h5'/>",
    "calendar": "<rect x='3' y='5' width='18' height='16' rx='2'/><path d='M3 10h18M8 3v4M16 3v4'/>",
    "tickets": "<path d='M3 8a2 2 0 0 0 0 4v4h18v-4a2 2 0 0 1 0-4V4H3z'/><path d='M12 4v12'/>",
    "companies": "<path d='M4 21V5l8-3v19M12 9h8v12M7 8h2M7 12h2M7 16h2M15 13h2M15 17h2'/>",
    "crm": "<circle cx='9' cy='8' r='4'/><path d='M2 21c0-4 3-6 7-6s7 2 7 6M16 4a4 4 0 0 1 0 8M22 21c0-3-2-5-4-6'/>",
    "orders": "<circle cx='9' cy='20' r='1.5'/><circle cx='18' cy='20' r='1.5'/><path d='M2 3h3l3 12h11l3-8H6'/>",
    "shop": "<path d='M4 9l1-5h14l1 5M4 9v11h16V9M4 9h16M9 20v-6h6v6'/>",
    "sheets": "<rect x='3' y='3' width='18' height='18' rx='2'/><path d='M3 9h18M3 15h18M9 3v18M15 3v18'/>",
    "wiki": "<path d='M4 4h7a3 3 0 0 1 3 3v13a2 2 0 0 0-2-2H4zM20 4h-5a3 3 0 0 0-3 3'/>",
    "files": "<path d='M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z'/>",
    "search": "<circle cx='11' cy='11' r='7'/><path d='M21 21l-5-5'/>",
    "back": "<path d='M15 18l-6-6 6-6'/>",
    "next": "<path d='M9 18l6-6-6-6'/>",
}
APPS = (
    ("home", "/", "Home", None),
    ("accounts", "/accounts", "Accounts", None),
    ("inbox", "/inbox", "Mail", "email"),
    ("channels", "/channels", "Chat", "chat"),
    ("calendar", "/calendar", "Calendar", "calendar"),
    ("tickets", "/tickets", "Tickets", "helpdesk"),
    ("companies", "/companies", "Companies", "helpdesk"),
    ("crm", "/crm", "CRM", "crm"),
    ("orders", "/orders", "Shop admin", "shop"),
    ("shop", "/shop", "Storefront", "shop"),
    ("sheets", "/sheets", "Sheets", "sheets"),
    ("wiki", "/wiki", "Docs & wiki", "wiki"),
    ("files", "/files", "Files", "files"),
)
PALETTE = ("#2563eb", "#7c3aed", "#db2777", "#ea580c", "#16a34a", "#0891b2", "#4f46e5", "#b45309")

CSS = """
@font-face{font-family:CW;src:url('/_assets/DejaVuSans.ttf')}
@font-face{font-family:CW;font-weight:bold;src:url('/_assets/DejaVuSans-Bold.ttf')}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 CW;color:#1f2937;background:#f3f4f6}
a{color:inherit;text-decoration:none}
.top{height:52px;background:#1e3a8a;color:#fff;display:flex;align-items:center;padding:0 16px;gap:16px}
.top .brand{font-weight:bold;font-size:16px;width:188px}
.top .search{flex:0 0 420px;background:#2b4aa5;border-radius:6px;padding:6px 10px;color:#c7d2fe;display:flex;gap:8px;align-items:center}
.top .me{margin-left:auto;width:32px;height:32px;border-radius:16px;background:#f59e0b;display:flex;align-items:center;justify-content:center;font-weight:bold}
.wrap{display:flex;min-height:calc(100vh - 52px)}
nav{width:220px;background:#fff;border-right:1px solid #e5e7eb;padding:12px 8px}
nav a{display:flex;gap:10px;align-items:center;padding:8px 10px;border-radius:6px;color:#374151}
nav a.on{background:#dbeafe;color:#1e3a8a;font-weight:bold}
svg.i{width:18px;height:18px;flex:none}
main{flex:1;padding:20px 28px;max-width:1060px}
.crumbs{color:#6b7280;font-size:12px;margin-bottom:6px}
h1{font-size:22px;margin:0 0 14px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:16px 18px;margin-bottom:14px}
h2{font-size:16px;margin:14px 0 8px;color:#111827}
p.t{margin:6px 0;white-space:pre-wrap}
.rows{background:#fff;border:1px solid #e5e7eb;border-radius:8px;overflow:hidden}
.row{display:flex;gap:12px;align-items:center;padding:9px 14px;border-bottom:1px solid #f0f1f3}
.row:hover{background:#f9fafb}
.av{width:28px;height:28px;border-radius:14px;color:#fff;font-size:12px;font-weight:bold;display:flex;align-items:center;justify-content:center;flex:none}
.pager{display:flex;gap:6px;align-items:center;margin:10px 0;color:#6b7280}
.pager a,.pager span{padding:4px 10px;border:1px solid #d1d5db;border-radius:6px;background:#fff}
.pager .cur{background:#1e3a8a;color:#fff;border-color:#1e3a8a}
label.f{display:block;margin:10px 0 4px;font-weight:bold}
textarea,input{font:inherit;width:100%;border:1px solid #cbd5e1;border-radius:6px;padding:8px 10px;background:#fff}
textarea{height:84px;resize:none}
.btn{display:inline-block;margin:10px 8px 0 0;padding:8px 16px;border-radius:6px;border:0;background:#2563eb;color:#fff;font:bold 14px CW;cursor:pointer}
.btn.warn{background:#dc2626}
.btn.ghost{background:#e5e7eb;color:#111827}
details.dlg>summary{list-style:none}
details.dlg>summary::-webkit-details-marker{display:none}
.modal{position:fixed;inset:0;background:rgba(17,24,39,.45);display:flex;align-items:center;justify-content:center}
.modal .box{background:#fff;border-radius:10px;padding:20px 24px;width:380px}
.alert{background:#fee2e2;color:#991b1b;border:1px solid #fecaca;border-radius:6px;padding:8px 12px}
.week{display:grid;grid-template-columns:repeat(7,1fr);gap:6px}
.day{background:#fff;border:1px solid #e5e7eb;border-radius:8px;min-height:300px;padding:6px}
.day .dh{font-weight:bold;font-size:12px;color:#6b7280;border-bottom:1px solid #eee;margin-bottom:6px}
.day.today .dh{color:#1e3a8a}
.ev{background:#dbeafe;border-left:3px solid #2563eb;border-radius:4px;padding:3px 5px;margin-bottom:4px;font-size:12px}
.later{margin-top:12px}
.shelf{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}
.prod{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:10px;display:flex;flex-direction:column;gap:6px}
.prod .ph{height:96px;border-radius:8px;display:flex;align-items:center;justify-content:center;color:#fff}
.prod .ph svg{width:40px;height:40px}
.prod .price{color:#16a34a;font-weight:bold}
.sheet{overflow:auto;max-height:560px;background:#fff;border:1px solid #d1d5db}
.sheet table{border-collapse:collapse;font-size:12px}
.sheet th{background:#f3f4f6;color:#6b7280;font-weight:normal;border:1px solid #e5e7eb;padding:2px 6px;position:sticky;top:0}
.sheet td{border:1px solid #e5e7eb;padding:2px 6px;max-width:160px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
"""


def icon(name: str) -> str:
    return f"<svg class='i' viewBox='0 0 24 24' {_P}>{ICONS.get(name, ICONS['home'])}</svg>"


def _avatar(label: str) -> str:
    colour = PALETTE[int(hashlib.sha1(label.encode()).hexdigest(), 16) % len(PALETTE)]
    letters = "".join(w[0] for w in label.replace("#", "").split()[:2] if w[:1].isalnum()).upper() or "·"
    return f"<span class='av' style='background:{colour}'>{html.escape(letters)}</span>"


def _colour(label: str) -> str:
    return PALETTE[int(hashlib.sha1(label.encode()).hexdigest(), 16) % len(PALETTE)]


def _grid(eid: str, grid: list[list[str]]) -> str:
    """A spreadsheet: lettered columns, numbered rows, cells clipped to their width."""
    cols = max((len(r) for r in grid), default=0)
    head = "".join(f"<th>{chr(65 + c) if c < 26 else c + 1}</th>" for c in range(cols))
    body = "".join(
        f"<tr><th>{i + 1}</th>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
        for i, row in enumerate(grid)
    )
    return f"<div class='sheet' data-eid='{eid}'><table><tr><th></th>{head}</tr>{body}</table></div>"


def _card_svg(text: str, alt: str) -> str:
    """A picture of a contact card: the text is drawn, for eyes only (no text node an agent reads)."""
    lines = [ln for ln in text.split("\n") if ln][:4]
    rows = "".join(
        f"<text x='84' y='{44 + 24 * i}' font-size='{16 if i == 0 else 13}' "
        f"font-weight='{'bold' if i == 0 else 'normal'}' fill='#111827'>{html.escape(ln)}</text>"
        for i, ln in enumerate(lines)
    )
    return (
        f"<svg role='img' aria-label='{html.escape(alt)}' width='460' height='{70 + 24 * len(lines)}' "
        "style='font-family:CW;display:block;margin:8px 0'>"
        f"<rect x='1' y='1' width='458' height='{68 + 24 * len(lines)}' rx='10' fill='#fefce8' stroke='#facc15'/>"
        "<circle cx='44' cy='46' r='22' fill='#f59e0b'/><path d='M34 58c2-8 18-8 20 0M44 38a6 6 0 1 0 0.01 0' "
        "stroke='#fff' stroke-width='3' fill='none'/>"
        f"{rows}</svg>"
    )


def _when(s: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(s).replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _week(page: Any, today: date) -> str:
    """The calendar's events as a Monday-to-Sunday grid of the week they start in (the first shown)."""
    evs = [(e, _when((e.meta or {}).get("start"))) for e in page.elements if e.role == "text"]
    starts = [w for _, w in evs if w is not None]
    anchor = next((w.date() for w in starts if w.date() >= today), starts[0].date() if starts else today)
    monday = anchor - timedelta(days=anchor.weekday())
    cols = []
    for d in range(7):
        day = monday + timedelta(days=d)
        items = "".join(
            f"<div class='ev' data-eid='{e.id}'><b>{w:%H:%M}</b> {html.escape(e.label.split('  ', 1)[-1])}</div>"
            for e, w in evs
            if w is not None and w.date() == day
        )
        cls = "day today" if day == today else "day"
        cols.append(f"<div class='{cls}'><div class='dh'>{day:%a %d %b}</div>{items}</div>")
    rest = [e for e, w in evs if w is None or not (monday <= w.date() < monday + timedelta(days=7))]
    later = "".join(f"<p class='t' data-eid='{e.id}'>{html.escape(e.label)}</p>" for e in rest[:20])
    return f"<div class='crumbs'>Week of {monday:%d %B %Y}</div><div class='week'>{''.join(cols)}</div>" + (
        f"<div class='card later'><h2>Other events</h2>{later}</div>" if later else ""
    )


def page_html(page: Any, inputs: dict[str, str], page_no: int = 1) -> str:
    head = page.url.split("?")[0].strip("/").split("/")[0]
    have = getattr(page, "services", None)
    nav = "".join(
        f"<a href='{href}' class='{'on' if key == (head or 'home') else ''}'>{icon(key)}{label}</a>"
        for key, href, label, svc in APPS
        if svc is None or have is None or svc in have
    )
    body: list[str] = []
    links = [e for e in page.elements if e.role == "link"]
    pages = max(1, -(-len(links) // PAGE_SIZE))
    page_no = min(max(1, page_no), pages)
    shown = {e.id for e in links[(page_no - 1) * PAGE_SIZE : page_no * PAGE_SIZE]}
    rows: list[str] = []

    def flush() -> None:
        if rows:
            cls = "shelf" if rows[0].startswith("<a class='prod'") else "rows"
            body.append(f"<div class='{cls}'>" + "".join(rows) + "</div>")
            rows.clear()

    if head == "calendar" and any(e.role == "text" and e.meta for e in page.elements):
        for e in page.elements:  # the calendar's own actions sit above its grid
            if e.role == "link":
                body.append(
                    f"<a class='btn' data-eid='{e.id}' href='{html.escape(e.href or '')}'>{html.escape(e.label)}</a>"
                )
        body.append(_week(page, _today(page)))
    else:
        for e in page.elements:
            lab = html.escape(e.label)
            if e.role == "link" and (e.meta or {}).get("product") and e.id in shown:
                name, _, price = e.label.rpartition(" — ")
                rows.append(
                    f"<a class='prod' data-eid='{e.id}' href='{html.escape(e.href or '')}' aria-label='{lab}'>"
                    f"<span class='ph' style='background:{_colour(name)}'>{icon('shop')}</span>"
                    f"<b>{html.escape(name)}</b><span class='price'>{html.escape(price)}</span></a>"
                )
                continue
            if e.role == "link":
                if e.id in shown:
                    rows.append(
                        f"<a class='row' data-eid='{e.id}' href='{html.escape(e.href or '')}' aria-label='{lab}'>"
                        f"{_avatar(e.label)}<span>{lab}</span></a>"
                    )
                continue
            flush()
            if e.role == "heading":
                body.append(f"<h2 data-eid='{e.id}'>{lab}</h2>")
            elif e.role == "text" and (e.meta or {}).get("grid") is not None:
                body.append(_grid(e.id, e.meta["grid"]))
            elif e.role == "text":
                body.append(f"<p class='t' data-eid='{e.id}'>{lab}</p>")
            elif e.role == "image":
                body.append(
                    f"<div data-eid='{e.id}'>{_card_svg((e.meta or {}).get('card', ''), e.label)}</div>"
                )
            elif e.role == "textbox" and (e.meta or {}).get("kind") in ("date", "time"):
                kind = e.meta["kind"]  # Chromium draws its own picker (segments and a calendar popup)
                body.append(
                    f"<label class='f' for='{e.id}'>{lab}</label><input type='{kind}' id='{e.id}' "
                    f"data-eid='{e.id}' name='{e.id}' aria-label='{lab}' style='width:220px' "
                    f"value='{html.escape(inputs.get(e.id, ''))}'>"
                )
            elif e.role == "textbox" and (e.meta or {}).get("line"):
                body.append(
                    f"<label class='f' for='{e.id}'>{lab}</label><input id='{e.id}' data-eid='{e.id}' "
                    f"name='{e.id}' aria-label='{lab}' value='{html.escape(inputs.get(e.id, ''))}'>"
                )
            elif e.role == "textbox":
                body.append(
                    f"<label class='f' for='{e.id}'>{lab}</label><textarea id='{e.id}' data-eid='{e.id}' "
                    f"name='{e.id}' aria-label='{lab}'>{html.escape(inputs.get(e.id, ''))}</textarea>"
                )
            elif (e.action or {}).get("inputs"):
                body.append(
                    f"<button class='btn' data-eid='{e.id}' name='click' value='{e.id}'>{lab}</button>"
                )
            else:  # a one-click action asks first, in a dialog
                body.append(
                    f"<details class='dlg'><summary class='btn warn' data-eid='{e.id}'>{lab}</summary>"
                    f"<div class='modal'><div class='box'><b>{lab}?</b><p>This cannot be undone.</p>"
                    f"<button class='btn warn' name='click' value='{e.id}' aria-label='Confirm {lab}'>"
                    f"Confirm</button></div></div></details>"
                )
        flush()
    if pages > 1:
        base = page.url.split("?")[0]
        parts = [
            f"<a href='{base}?p={n}'>{n}</a>" if n != page_no else f"<span class='cur'>{n}</span>"
            for n in range(1, pages + 1)
        ]
        prev = f"<a href='{base}?p={page_no - 1}'>{icon('back')}</a>" if page_no > 1 else ""
        nxt = f"<a href='{base}?p={page_no + 1}'>{icon('next')}</a>" if page_no < pages else ""
        body.append(f"<div class='pager'>{prev}{''.join(parts)}{nxt} <small>{len(links)} items</small></div>")
    title = html.escape(page.title)
    crumb = " / ".join(html.escape(p) for p in page.url.split("?")[0].strip("/").split("/") if p) or "home"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{CSS}</style>"
        "</head><body><div class='top'><span class='brand'>Workplace</span>"
        f"<span class='search'>{icon('search')}Search mail, people, records</span><span class='me'>ME</span>"
        f"</div><div class='wrap'><nav>{nav}</nav><main><div class='crumbs'>{crumb}</div><h1>{title}</h1>"
        f"<form method='post'>{''.join(body)}</form></main></div></body></html>"
    )


def _today(page: Any) -> date:
    return getattr(page, "today", None) or date(1970, 1, 1)
