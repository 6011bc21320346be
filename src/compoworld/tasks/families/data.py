"""Data and reporting workflows: metrics computed in SQL by the wiki's definitions, exported and logged."""

from __future__ import annotations

import shlex
from datetime import date, timedelta
from typing import Any

from compoworld.core.clock import format_time
from compoworld.tasks.families._common import rows
from compoworld.tasks.families._common import team_space as _team_space
from compoworld.tasks.families._common import wiki_page as _wiki_page
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, PlantError, family

REGIONS = {
    "EMEA": ("London", "Berlin"),
    "Americas": ("New York", "San Francisco", "Toronto"),
    "APAC": ("Singapore",),
}


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
        "Revenue log 2025",
        "<p>Regional revenue figures of 2025, as filed at the year end.</p>",
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
        f"put together {region}'s revenue for this quarter: per-account numbers plus a total in ~/Reports/{fname}, and the figure added to the wiki log, using our revenue definition",
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


FLAGS = ("checkout-redesign", "smart-search", "one-click-reorder", "usage-alerts", "guided-onboarding")


def _rollout_band(lift: float) -> int:
    return 50 if lift >= 2.0 else 20 if lift > 0 else 0


def _run_rows(b: Builder, lift_pts: float) -> tuple[int, int, int, int]:
    """(control users, control conversions, treatment users, treatment conversions) with this lift."""
    cu = b.rng.randrange(4000, 9000)
    tu = b.rng.randrange(4000, 9000)
    base = b.rng.randrange(80, 140) / 10.0  # control rate in %
    cc = round(cu * base / 100)
    tc = round(tu * (cc / cu * 100 + lift_pts) / 100)
    return cu, cc, tu, tc


def _lift(cu: int, cc: int, tu: int, tc: int) -> float:
    return round(tc / tu * 100 - cc / cu * 100, 2)


@family("data.flag_rollout_from_experiment", "data_reporting", ("wiki", "sql", "kv"))
def flag_rollout_from_experiment(b: Builder) -> None:
    """Set a feature flag's rollout in Redis from the latest completed experiment run, by the wiki's bands."""
    flag, twin = b.pick(FLAGS, 2)
    kv = b.svc("kv")
    if any(kv.keys.get(f"rollout:{f}") for f in (flag, twin)):
        raise PlantError("rollout key exists")
    band = b.pick((50, 20, 0))
    lift_target = {
        50: b.rng.randrange(22, 45) / 10,
        20: b.rng.randrange(3, 15) / 10,
        0: -b.rng.randrange(3, 20) / 10,
    }[band]
    for _ in range(20):
        run = _run_rows(b, lift_target)
        if _rollout_band(_lift(*run)) == band and abs(_lift(*run) - 2.0) > 0.15 and abs(_lift(*run)) > 0.15:
            break
    else:
        raise PlantError("could not plant a clean lift")
    lift = _lift(*run)
    stale_band = b.pick([x for x in (50, 20, 0) if x != band])
    lift_old = {50: 3.1, 20: 1.1, 0: -1.2}[stale_band]
    old = _run_rows(b, lift_old)
    while _rollout_band(_lift(*old)) != stale_band:
        old = _run_rows(b, lift_old)
    live_band = b.pick([x for x in (50, 20, 0) if x != band])
    partial = _run_rows(b, {50: 3.4, 20: 0.9, 0: -1.6}[live_band])
    today = b.now.date()
    runs = [
        (
            f"{flag}-r1",
            flag,
            (today - timedelta(days=b.rng.randrange(90, 150))).isoformat(),
            "completed",
            old,
        ),
        (f"{flag}-r2", flag, (today - timedelta(days=b.rng.randrange(3, 12))).isoformat(), "completed", run),
        (
            f"{flag}-r3",
            flag,
            (today + timedelta(days=b.rng.randrange(5, 15))).isoformat(),
            "running",
            partial,
        ),
        (
            f"{twin}-r1",
            twin,
            (today - timedelta(days=b.rng.randrange(2, 20))).isoformat(),
            "completed",
            _run_rows(b, 3.0),
        ),
    ]
    b.plant(
        "sql__create_table",
        {
            "query": "CREATE TABLE experiment_runs (run_id TEXT PRIMARY KEY, flag TEXT, ends_on TEXT, status TEXT, "
            "variant TEXT, users INTEGER, conversions INTEGER)"
        },
    )
    vals = []
    for rid, f, end, st, (cu, cc, tu, tc) in runs:
        vals.append(f"('{rid}-c', '{f}', '{end}', '{st}', 'control', {cu}, {cc})")
        vals.append(f"('{rid}-t', '{f}', '{end}', '{st}', 'treatment', {tu}, {tc})")
    b.rng.shuffle(vals)
    b.plant("sql__write_query", {"query": f"INSERT INTO experiment_runs VALUES {', '.join(vals)}"})
    kv.keys.create({"value": "10"}, id=f"rollout:{flag}")
    kv.keys.create({"value": "10"}, id=f"rollout:{flag}-mobile")
    kv.keys.create({"value": "10"}, id=f"rollout:{twin}")
    space = _team_space(b)
    policy = _wiki_page(
        b,
        space,
        "Feature flag rollout rules",
        "<p>Rollout percentages live in Redis under rollout:&lt;flag&gt; (the web flag; mobile flags end in -mobile and are "
        "managed by the mobile team). Set it from the latest <b>completed</b> run of the flag's experiment in the "
        "experiment_runs table; runs still running do not count.</p><p>Lift = treatment conversion rate minus control "
        "conversion rate, in percentage points. Lift of 2.0 points or more: 50. Positive but under 2.0: 20. "
        "Zero or negative: 0.</p><p>Record every change on the page 'Flag change log' with the flag, the new "
        "percentage and the lift.</p>",
        days_ago=50,
    )
    log = _wiki_page(b, space, "Flag change log", "<ul><li>new-dashboard: set to 100.</li></ul>", days_ago=12)
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["rollout"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "Feature flag rollout rules")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    res = rows(
        b.call(
            "sql__read_query",
            {
                "query": "SELECT run_id, ends_on, status, variant, users, conversions FROM experiment_runs "
                f"WHERE flag = '{flag}' ORDER BY ends_on"
            },
        )
    )
    done = [r for r in res if r["status"] == "completed"]
    latest = max(r["ends_on"] for r in done)
    cur = {r["variant"]: r for r in done if r["ends_on"] == latest}
    got = _lift(
        cur["control"]["users"],
        cur["control"]["conversions"],
        cur["treatment"]["users"],
        cur["treatment"]["conversions"],
    )
    assert abs(got - lift) < 1e-9
    b.aggregate()
    b.decide()
    pct = str(_rollout_band(got))
    keys = b.call("kv__list", {"pattern": f"rollout:{flag}*"})["keys"]
    key = next(k for k in keys if k == f"rollout:{flag}")
    b.call("kv__set", {"key": key, "value": pct})
    b.composed(pct, f"{got:.2f}", f"{abs(got):.2f}")  # tokens drop the sign
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": "Flag change log",
            "content": f"<p>{flag}: set to {pct} (lift {got:.2f} points).</p>",
            "update_mode": "append",
        },
    )
    b.expect_change("kv", "keys", f"rollout:{flag}", "value", pct, f"rollout:{flag} is {pct}")
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": [flag, pct]}},
        "the change is on the flag change log",
    )
    b.keep("kv", "keys", f"rollout:{flag}-mobile", "the mobile flag is the mobile team's")
    b.keep("kv", "keys", f"rollout:{twin}", "another flag is not touched")
    b.keep("wiki", "pages", policy["id"], "the rules page is not edited")
    old_pct, live_pct = str(stale_band), str(live_band)
    b.trap("stale", "the older completed run of the same experiment", swap={pct: old_pct})
    b.trap("stale", "the run still in progress (newest)", swap={pct: live_pct})
    b.trap(
        "near_duplicate",
        "the mobile flag of the same feature",
        swap={f"rollout:{flag}": f"rollout:{flag}-mobile"},
    )
    b.fact(f"{got:.2f}")
    ask = b.say(
        f"set the {flag} rollout from its experiment result, the way our flag rollout rules say, and log the change",
        f"update the {flag} rollout percentage now that its experiment finished a run, per the wiki rules, and record it",
        f"apply our rollout rules to {flag} using its experiment data and note the new percentage on the wiki",
    )
    b.write(
        frame(b.rng, ask, context=b.say("Product asked for it today", "", "The rules are on our team wiki")),
        hint="Read the rollout rules on the wiki, query experiment_runs for the flag's latest completed run, compute the lift in points, set rollout:<flag> in Redis to the band's percentage, and append the change to the flag change log.",
        subtasks=[
            "Read the feature flag rollout rules",
            "Find the latest completed run of the flag's experiment in SQL",
            "Compute the lift and pick the band",
            "Set the web rollout key in Redis",
            "Log the change on the wiki",
        ],
    )


KPIS = {
    "Revenue, last 30 days": (
        "the sum of order totals with status shipped or delivered",
        "printf('%.2f', SUM(total))",
        "status IN ('shipped', 'delivered')",
    ),
    "Average order value": (
        "the average order total of orders with status shipped or delivered",
        "printf('%.2f', AVG(total))",
        "status IN ('shipped', 'delivered')",
    ),
    "Orders delivered": ("the number of orders with status delivered", "COUNT(*)", "status = 'delivered'"),
}


def _new_book(b: Builder, title: str, table: list[list[Any]], days_ago: float) -> str:
    cells: dict[str, Any] = {}
    for r, row in enumerate(table, start=1):
        for c, v in enumerate(row):
            cells[f"{chr(65 + c)}{r}"] = v
    return b.svc("sheets").books.create(
        {
            "title": title,
            "sheets": [{"sheetId": 0, "title": "Sheet1", "cells": cells}],
            "modified": format_time(b.now - timedelta(days=days_ago)),
        }
    )["id"]


@family("data.kpi_scorecard_refresh", "data_reporting", ("wiki", "sql", "sheets"))
def kpi_scorecard_refresh(b: Builder) -> None:
    """Refresh one KPI on the scorecard from SQL by the wiki's definition and note old -> new on the wiki."""
    kpi = b.pick(list(KPIS))
    today = b.now.date()
    lo = today - timedelta(days=30)
    oid = 95000 + b.rng.randrange(1000)
    vals = []
    for c in b.rng.sample(b.company.customers, min(5, len(b.company.customers))):
        for st in ("delivered", "shipped", b.pick(("pending", "cancelled")), "delivered"):
            d = lo + timedelta(days=b.rng.randrange(1, 30))
            vals.append(f"({oid}, '{c.id}', '{d.isoformat()}', '{st}', {b.rng.randrange(500, 9000)}.00)")
            oid += 1
        d = lo - timedelta(days=b.rng.randrange(2, 30))
        vals.append(f"({oid}, '{c.id}', '{d.isoformat()}', 'delivered', {b.rng.randrange(500, 9000)}.00)")
        oid += 1
    b.plant("sql__write_query", {"query": f"INSERT INTO orders VALUES {', '.join(vals)}"})
    _, expr, cond = KPIS[kpi]
    win = f"order_date >= '{lo.isoformat()}' AND order_date <= '{today.isoformat()}'"
    right = rows(
        b.plant("sql__read_query", {"query": f"SELECT {expr} AS v FROM orders WHERE {cond} AND {win}"})
    )
    wrong = rows(b.plant("sql__read_query", {"query": f"SELECT {expr} AS v FROM orders WHERE {win}"}))
    value, bad = str(right[0]["v"]), str(wrong[0]["v"])
    if value == bad:
        raise PlantError("the status filter makes no difference")
    old_vals = {
        k: (f"{b.rng.randrange(5000, 90000)}.00" if k != "Orders delivered" else str(b.rng.randrange(5, 40)))
        for k in KPIS
    }
    if abs(float(old_vals[kpi]) - float(value)) < 1:
        old_vals[kpi] = str(int(float(value)) + b.rng.randrange(3, 9)) + (
            ".00" if "." in old_vals[kpi] else ""
        )
    old_day = (today - timedelta(days=b.rng.randrange(20, 40))).isoformat()
    table = [["KPI", "Value", "Updated", "Notes"]]
    names = list(KPIS)
    b.rng.shuffle(names)
    for k in names:
        table.append([k, old_vals[k], old_day, ""])
    table.append(
        [
            f"{kpi} (EMEA)",
            old_vals[kpi][:-3] + "0.00" if "." in old_vals[kpi] else "7",
            old_day,
            "Regional KPI: the EMEA team refreshes it from the orders database, not us",
        ]
    )
    row_no = 2 + names.index(kpi)
    sid = _new_book(b, "Company scorecard", table, days_ago=25)
    arch = _new_book(b, f"KPI scorecard {today.year - 1}", table, days_ago=1)
    # an older archive nobody has opened in a year: the live scorecard is not the oldest book either
    arch0 = _new_book(b, f"KPI scorecard {today.year - 2}", table, days_ago=b.rng.randrange(300, 450))
    space = _team_space(b)
    defs = "".join(
        f"<li>{k}: {d}, by order date in the last 30 days including today.</li>"
        for k, (d, _, _) in KPIS.items()
    )
    policy = _wiki_page(
        b,
        space,
        "KPI definitions",
        f"<p>Our KPIs live in the spreadsheet 'Company scorecard' (column B the value, column C the date it was "
        f"refreshed). Definitions:</p><ul>{defs}</ul><p>Older scorecards are archived and never edited. Note every "
        "refresh on the page 'Scorecard changes' with the KPI, the old value and the new value.</p>",
        days_ago=60,
    )
    log = _wiki_page(b, space, "Scorecard changes", "<ul><li>Scorecard created.</li></ul>", days_ago=25)
    b.begin()
    hits = rows(b.call("wiki__confluence_search_content", {"must_contain_all": ["KPI"], "limit": 10}))
    pid = next(p["id"] for p in hits if p["title"] == "KPI definitions")
    b.call("wiki__confluence_get_page", {"page_identifier": pid})
    res = rows(
        b.call(
            "sql__read_query",
            {
                "query": f"SELECT {expr} AS value FROM orders WHERE {cond} AND order_date >= '{lo.isoformat()}' "
                f"AND order_date <= '{today.isoformat()}'"
            },
        )
    )
    got = str(res[0]["value"])
    assert got == value
    b.aggregate()
    books = rows(b.call("sheets__google_sheets_list_spreadsheets", {}))
    s_id = next(x["id"] for x in books if x["title"] == "Company scorecard")
    grid = b.call("sheets__google_sheets_get_spreadsheet", {"spreadsheet_id": s_id})["sheets"][0]["rows"]
    r_no, old = next((int(k), r["B"]) for k, r in grid.items() if r.get("A") == kpi)
    assert r_no == row_no
    with b.together():
        b.call(
            "sheets__google_sheets_write_to_cell",
            {"spreadsheet_id": s_id, "column": "B", "row": r_no, "value": got},
        )
        b.call(
            "sheets__google_sheets_write_to_cell",
            {"spreadsheet_id": s_id, "column": "C", "row": r_no, "value": today.isoformat()},
        )
    b.composed(got, today.isoformat())
    b.call(
        "wiki__confluence_update_page_content",
        {
            "page_identifier": "Scorecard changes",
            "content": f"<p>{today.isoformat()}: {kpi} {old} -> {got}</p>",
            "update_mode": "append",
        },
    )
    num = float(value)
    b.goal(
        f"the scorecard's {kpi} is {value}, refreshed today",
        {
            "predicate": "record_exists",
            "service": "sheets",
            "table": "spreadsheets",
            "new": True,
            "where": {
                "id": sid,
                f"sheets.cells.B{row_no}": {"approx": [num, 0.01]},
                f"sheets.cells.C{row_no}": {"at": today.isoformat()},
            },
        },
    )
    b.expect_record(
        "wiki",
        "pages",
        {"id": log["id"], "content": {"contains_all": [kpi, old_vals[kpi], value]}},
        "the change is noted with the old and the new value",
    )
    if "." in bad:  # a short count would match dates and other cells of the sheet
        b.not_written("sheets", bad, "orders of every status were not counted")
    b.keep("sheets", "spreadsheets", arch, "the archived scorecard is not edited")
    b.keep("sheets", "spreadsheets", arch0, "the older archived scorecard is not edited")
    b.keep("wiki", "pages", policy["id"], "the definitions page is not edited")
    b.trap("stale", "last year's archived scorecard, modified more recently", swap={sid: arch})
    b.trap("stale", "an older archived scorecard, modified long ago", swap={sid: arch0})
    b.trap("policy_exception", "counting orders of every status", swap={value: bad})
    b.fact(value, old_vals[kpi])
    ask = b.say(
        f"refresh the '{kpi}' figure on our KPI scorecard using the definition on the wiki, and note the change where the wiki says",
        f"bring the scorecard's '{kpi}' up to date from the orders database, by our KPI definitions, and record the old and new numbers",
        f"update the '{kpi}' KPI on the scorecard from the database as the wiki defines it, and log what changed",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say("Leadership reviews it this afternoon", "", "It has been stale for weeks"),
        ),
        hint="Read the KPI definitions on the wiki, compute the KPI in SQL over the last 30 days, write the value and today's date on the KPI's row of the 'Company scorecard' spreadsheet, and append old -> new to the 'Scorecard changes' page.",
        subtasks=[
            "Read the KPI definitions on the wiki",
            "Compute the KPI in SQL over the last 30 days",
            "Find the KPI's row in the Company scorecard",
            "Write the new value and today's date",
            "Note the old and new values on the wiki",
        ],
    )


@family("data.tier_cache_sync", "data_reporting", ("sql", "kv"))
def tier_cache_sync(b: Builder) -> None:
    """The Redis tier cache drifted from the customers table: fix it from SQL, drop orphans, note it in the memo."""
    kv = b.svc("kv")
    custs = [c for c in b.company.customers if kv.keys.get(f"customer:{c.id}:tier")]
    if len(custs) < 4:
        raise PlantError("too few cached customers")
    drift = b.rng.sample(custs, 2)
    over = b.pick([c for c in custs if c not in drift])
    tiers = ("enterprise", "mid-market", "smb")
    for c in drift:
        kv.keys.update(f"customer:{c.id}:tier", {"value": b.pick([t for t in tiers if t != c.tier])})
    over_val = b.pick([t for t in tiers if t != over.tier])
    kv.keys.create({"value": over_val}, id=f"customer:{over.id}:tier_override")
    ids = {c.id for c in b.company.customers}
    orphan = next(f"C{n}" for n in range(2990, 3100) if f"C{n}" not in ids)
    kv.keys.create({"value": "enterprise"}, id=f"customer:{orphan}:tier")
    b.begin()
    res = rows(b.call("sql__read_query", {"query": "SELECT id, name, tier FROM customers ORDER BY id"}))
    truth = {r["id"]: r["tier"] for r in res}
    keys = b.call("kv__list", {"pattern": "customer:*:tier"})["keys"]
    cache = {}
    for k in keys:
        cache[k] = b.call("kv__get", {"key": k})["value"]
    b.decide(2)
    fix = {
        k: truth[k.split(":")[1]]
        for k, v in cache.items()
        if k.split(":")[1] in truth and truth[k.split(":")[1]] != v
    }
    gone = [k for k in cache if k.split(":")[1] not in truth]
    assert sorted(fix) == sorted(f"customer:{c.id}:tier" for c in drift) and gone == [
        f"customer:{orphan}:tier"
    ]
    with b.together():
        for k, v in sorted(fix.items()):
            b.call("kv__set", {"key": k, "value": v})
        b.call("kv__delete", {"key": gone})
    b.aggregate()
    names = {r["id"]: r["name"] for r in res}
    fixed_txt = ", ".join(
        f"{names[k.split(':')[1]]} ({k.split(':')[1]}) -> {v}" for k, v in sorted(fix.items())
    )
    b.call(
        "sql__append_insight",
        {"insight": f"Tier cache resynced from customers: fixed {fixed_txt}; removed orphan key {gone[0]}."},
    )
    for c in drift:
        b.expect_change(
            "kv", "keys", f"customer:{c.id}:tier", "value", c.tier, f"{c.name}'s cached tier is {c.tier}"
        )
    b.goal(
        "the orphan cache key is gone",
        {
            "predicate": "record_absent",
            "service": "kv",
            "table": "keys",
            "new": False,
            "where": {"id": f"customer:{orphan}:tier"},
        },
    )
    b.expect_record(
        "sql",
        "insights",
        {"text": {"contains_all": [*(c.id for c in drift), orphan]}},
        "the memo notes the fixed accounts and the removed key",
    )
    b.keep("kv", "keys", f"customer:{over.id}:tier_override", "the sales override is left alone")
    b.keep("kv", "keys", f"customer:{over.id}:tier", "a key that already matches is untouched")
    b.trap(
        "policy_exception",
        "a sales override key that differs from the database",
        swap={f"customer:{drift[0].id}:tier": f"customer:{over.id}:tier_override"},
    )
    b.trap(
        "near_duplicate",
        "a matching key of another account",
        swap={f"customer:{drift[1].id}:tier": f"customer:{over.id}:tier"},
    )
    b.fact(*(c.id for c in drift), orphan)
    ask = b.say(
        "make every cached tier in the Redis customer tier cache match the customers table again (it has drifted), remove cache keys of customers that no longer exist, and add a note of what you fixed to the SQL insights memo",
        "resync the Redis customer:<id>:tier cache from the customers table (the database is the truth), drop keys for customers that are gone, and log the fixes in the insights memo",
    )
    b.write(
        frame(
            b.rng,
            ask,
            context=b.say(
                "Leave the sales tier overrides alone",
                "The _override keys belong to sales; do not touch them",
            ),
        ),
        hint="Read every customer's tier from SQL, list the customer:*:tier keys in Redis and read them, set the ones that differ to the database tier, delete keys of customers not in the table, and append a note to the insights memo.",
        subtasks=[
            "Read the customers' tiers from SQL",
            "List and read the cached tier keys in Redis",
            "Set the drifted keys to the database tier",
            "Delete the orphan keys",
            "Note the fixes in the insights memo",
        ],
    )
