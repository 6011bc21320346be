"""Data and reporting workflows: metrics computed in SQL by the wiki's definitions, exported and logged."""

from __future__ import annotations

import shlex
from datetime import date, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import rows
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

REGIONS = {
    "EMEA": ("London", "Berlin"),
    "Americas": ("New York", "San Francisco", "Toronto"),
    "APAC": ("Singapore",),
}


def _team_space(b: Builder) -> dict[str, Any]:
    wiki = b.svc("wiki")
    team = next(t for t in b.company.teams if t.name == b.me.team)
    hits = wiki.spaces.find(lambda s: s["key"] == team.slug.upper()[:10])
    if not hits:
        raise PlantError("no team space")
    return hits[0]


def _wiki_page(
    b: Builder, space: dict[str, Any], title: str, content: str, days_ago: float = 20
) -> dict[str, Any]:
    ts = format_time(b.now - timedelta(days=days_ago))
    return b.svc("wiki").pages.create(
        {
            "space_id": space["id"],
            "title": title,
            "content": content,
            "parent_id": space.get("homepage_id"),
            "author_id": b.me.email,
            "created_at": ts,
            "updated_at": ts,
        }
    )


def _quarter(d: date) -> tuple[date, date, str]:
    q = (d.month - 1) // 3
    start = date(d.year, 3 * q + 1, 1)
    end = date(d.year + (q == 3), (3 * q + 3) % 12 + 1, 1) - timedelta(days=1)
    return start, end, f"Q{q + 1} {d.year}"


@family("data.region_revenue_export", "data_reporting", ("wiki", "sql", "workspace"))
def region_revenue_export(b: Builder) -> None:
    """This quarter's revenue of a region by the wiki's definition: a per-account CSV and the total logged."""
    by_region = {r: [c for c in b.company.customers if c.city in cities] for r, cities in REGIONS.items()}
    options = [r for r, cs in by_region.items() if len(cs) >= 2]
    if not options:
        raise PlantError("no region with two accounts")
    region = b.pick(options)
    custs = by_region[region]
    today = b.now.date()
    q0, q1, qname = _quarter(today)
    span = max(1, (today - q0).days)
    oid = 90000 + b.rng.randrange(1000)
    extra = []
    for c in custs:
        for status in ("delivered", "shipped", b.pick(("pending", "cancelled"))):
            day = q0 + timedelta(days=b.rng.randrange(span))
            extra.append((oid, c.id, day.isoformat(), status, float(b.rng.randrange(800, 9000))))
            oid += 1
        # last quarter's order of the same account: outside the window
        extra.append(
            (
                oid,
                c.id,
                (q0 - timedelta(days=b.rng.randrange(3, 40))).isoformat(),
                "delivered",
                float(b.rng.randrange(800, 9000)),
            )
        )
        oid += 1
    vals = ", ".join(f"({i}, '{c}', '{d}', '{s}', {t:.2f})" for i, c, d, s, t in extra)
    b.plant("sql__write_query", {"query": f"INSERT INTO orders VALUES {vals}"})
    space = _team_space(b)
    regions_txt = "".join(f"<li>{r}: {', '.join(cs)}</li>" for r, cs in REGIONS.items())
    definition = _wiki_page(
        b,
        space,
        "Revenue reporting definitions",
        "<p>Revenue is the sum of order totals with status 'shipped' or 'delivered' (pending and cancelled orders do not count), "
        f"by order date within the quarter.</p><p>{qname} runs from {q0.isoformat()} to {q1.isoformat()}.</p>"
        f"<p>Regions are the customers' cities:</p><ul>{regions_txt}</ul>"
        "<p>Every regional figure goes on the page 'Regional revenue log' with the region and quarter.</p>",
        days_ago=45,
    )
    log = _wiki_page(
        b,
        space,
        "Regional revenue log",
        "<ul><li>Last quarter figures were filed by finance.</li></ul>",
        days_ago=30,
    )
    archived = _wiki_page(
        b,
        space,
        "Revenue log 2025 (archived)",
        "<p>Archived regional revenue figures of 2025. Do not add to this page.</p>",
        days_ago=2,
    )
    fname = f"{region.lower()}-revenue.csv"
    path = f"/home/user/Reports/{fname}"
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["revenue"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "Revenue reporting definitions")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    log_id = next(p["id"] for p in hits if p["title"] == "Regional revenue log")
    cities = REGIONS[region]
    where = (
        f"o.status IN ('shipped', 'delivered') AND o.order_date >= '{q0.isoformat()}' AND o.order_date <= '{q1.isoformat()}' "
        f"AND c.city IN ({', '.join(repr(x) for x in cities)})"
    )
    q = (
        "SELECT c.name AS customer, printf('%.2f', SUM(o.total)) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id "
        f"WHERE {where} GROUP BY c.name UNION ALL SELECT 'TOTAL', printf('%.2f', SUM(o.total)) FROM orders o "
        f"JOIN customers c ON c.id = o.customer_id WHERE {where}"
    )
    res = rows(b.call("sql__read_query", {"query": q}))
    tot_row = next(r for r in res if r["customer"] == "TOTAL")
    res = [r for r in res if r["customer"] != "TOTAL"]
    b.aggregate()
    total = float(tot_row["revenue"])
    expect = round(
        sum(t for _, cid, d, s, t in extra if s in ("shipped", "delivered") and d >= q0.isoformat()), 2
    )
    if total < expect - 0.01:
        raise PlantError("sql total disagrees")
    wrong = round(
        total + sum(t for _, _, d, s, t in extra if s in ("pending", "cancelled") and d >= q0.isoformat()), 2
    )
    lines = ["customer,revenue", *(f"{r['customer']},{r['revenue']}" for r in res), f"TOTAL,{total:.2f}"]
    cmd = f"mkdir -p Reports && echo {shlex.quote(lines[0])} > Reports/{fname}"
    cmd += "".join(f" && echo {shlex.quote(x)} >> Reports/{fname}" for x in lines[1:])
    out = b.call("workspace__shell", {"command": cmd + f" && cat Reports/{fname}"})
    if out["exit_code"] != 0:
        raise PlantError(out["stderr"])
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": log_id,
            "content": f"<p>{region} {qname}: {total:.2f}</p>",
            "update_mode": "append",
        },
    )
    b.expect_record(
        "workspace",
        "entries",
        {"id": path, "content": {"contains": f"{total:.2f}"}},
        f"~/Reports/{fname} holds the region's total {total:.2f}",
    )
    b.expect_record(
        "workspace",
        "entries",
        {
            "id": path,
            "content": {"contains_all": [c.name for c in custs if any(r["customer"] == c.name for r in res)]},
        },
        "the CSV lists each account of the region",
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": [region, f"{total:.2f}"]}},
        "the log page has the region's figure",
    )
    b.not_written("wiki", f"{wrong:.2f}", "pending and cancelled orders were not counted")
    b.keep("wiki", "pages", definition["id"], "the definitions page is not edited")
    b.keep("wiki", "pages", archived["id"], "the archived 2025 log is not edited")
    b.trap("stale", "the archived revenue log of last year", swap={log["id"]: archived["id"]})
    b.trap(
        "policy_exception", "counting pending and cancelled orders too", swap={f"{total:.2f}": f"{wrong:.2f}"}
    )
    b.fact(f"{total:.2f}")
    ask = b.say(
        f"work out this quarter's revenue for the {region} region the way our reporting definitions say, save the per-account breakdown with a total line as ~/Reports/{fname}, and log the figure on the wiki",
        f"I need {region}'s revenue for this quarter: per-account numbers plus a total in ~/Reports/{fname}, and the figure added to the wiki log, using our revenue definition",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say("Finance wants it before the review", "", "The definitions are on our team wiki"),
        ),
        hint="Read the revenue definitions page on the wiki (statuses, quarter dates, cities of the region), query the orders with SQL grouped by customer, write the CSV in the workspace, and append the total to the log page.",
        subtasks=[
            "Read the revenue definitions on the wiki",
            "Query this quarter's shipped/delivered orders of the region's cities by customer",
            f"Write ~/Reports/{fname} with a total line",
            "Append the region's figure to the revenue log page",
        ],
    )
