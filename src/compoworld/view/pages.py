"""The viewer's pages as HTML (rendered on the server; every value escaped, no external asset)."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from compoworld.view import svg
from compoworld.view.data import (
    DIMENSIONS,
    FAILURE_CLASSES,
    PASSED,
    EpisodeRow,
    RunIndex,
    TaskCatalog,
    TaskRow,
    run_metrics,
)
from compoworld.view.replay import CallView, Change, Turn

OUTCOME_COLORS = {
    PASSED: "#2a9d6b",
    "missed goal": "#e07b24",
    "guard tripped": "#c23b4e",
    "format failure": "#b04ad3",
    "endpoint error": "#6b7a8f",
    "environment error": "#8a5a2b",
    "limit reached": "#c9a227",
    # a task's outcome in a run: every sample passed, none did, some did, not run
    "pass": "#2a9d6b",
    "fail": "#c23b4e",
    "mixed": "#e07b24",
    "unrun": "#9aa5b5",
}
CUT = 600  # characters of a value shown inline; the rest behind a toggle


def q(s: Any) -> str:
    return quote(str(s), safe="")


def js(x: Any, indent: bool = False) -> str:
    try:
        return orjson.dumps(x, option=orjson.OPT_INDENT_2 if indent else 0, default=str).decode()
    except TypeError:
        return repr(x)


def value(x: Any) -> str:
    """A JSON value inline, long ones folded behind a toggle."""
    text = x if isinstance(x, str) else js(x)
    if len(text) <= CUT:
        return f"<code>{escape(text)}</code>"
    return (
        f"<details class='fold'><summary><code>{escape(text[:120])}…</code> ({len(text)} chars)</summary>"
        f"<pre>{escape(js(x, True) if not isinstance(x, str) else x)}</pre></details>"
    )


def layout(title: str, body: str, nav: str = "") -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)} · CompoWorld view</title>"
        "<link rel='stylesheet' href='/static/view.css'><script src='/static/view.js' defer></script>"
        "</head><body><header class='top'><a class='brand' href='/'>CompoWorld view</a>"
        f"<nav><a href='/tasks'>Tasks</a><a href='/runs'>Runs</a>{nav}</nav></header>"
        f"<main>{body}</main></body></html>"
    )


def badge(outcome: str) -> str:
    color = OUTCOME_COLORS.get(outcome, "#6b7a8f")
    return f"<span class='badge' data-outcome='{escape(outcome)}' style='background:{color}'>{escape(outcome)}</span>"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


# ---- tasks ---------------------------------------------------------------------------------------
TASK_FILTERS = ("family", "domain", "K", "L", "difficulty", "service", "interface", "outcome")


def task_values(row: TaskRow, outcome: str | None) -> dict[str, list[str]]:
    return {
        "family": [row.family],
        "domain": [row.domain],
        "K": [str(row.K)],
        "L": [str(row.L)],
        "difficulty": [row.difficulty],
        "service": row.services,
        "interface": row.interfaces,
        "outcome": [outcome or "unrun"],
    }


def filter_tasks(
    catalog: TaskCatalog, run: RunIndex | None, params: dict[str, str]
) -> tuple[list[TaskRow], dict[str, dict[str, int]]]:
    """Rows matching every filter and the search; per filter, the count each value would give with
    the other filters kept (so a count says what choosing it shows)."""
    want = {f: params[f] for f in TASK_FILTERS if params.get(f)}
    words = [w for w in (params.get("q") or "").lower().split() if w]
    facets: dict[str, dict[str, int]] = {f: {} for f in TASK_FILTERS}
    out = []
    for row in catalog.rows:
        if words:
            text = f"{row.id} {row.instruction} {row.family} {' '.join(row.services)}".lower()
            if not all(w in text for w in words):
                continue
        vals = task_values(row, run.outcome_of(row.id) if run else None)
        misses = [f for f, v in want.items() if v not in vals[f]]
        if not misses:
            out.append(row)
        for f in TASK_FILTERS:
            if not misses or misses == [f]:
                for v in vals[f]:
                    facets[f][v] = facets[f].get(v, 0) + 1
    return out, facets


def tasks_page(
    catalog: TaskCatalog | None, runs: dict[str, RunIndex], params: dict[str, str], per_page: int = 50
) -> str:
    if catalog is None:
        return layout(
            "Tasks", "<h1>Tasks</h1><p>No task file was given (compoworld view TASKS.jsonl ...).</p>"
        )
    run = runs.get(params.get("run") or "") or next(iter(runs.values()), None)
    rows, facets = filter_tasks(catalog, run, params)
    page = max(1, int(params.get("page") or 1) if (params.get("page") or "1").isdigit() else 1)
    start = (page - 1) * per_page
    shown = rows[start : start + per_page]
    selects = []
    for f in TASK_FILTERS:
        opts = sorted(facets[f].items(), key=lambda kv: _natural(kv[0]))
        if f == "outcome" and run is None:
            continue
        cur = params.get(f) or ""
        o = [f"<option value=''>all {f}</option>"]
        for v, c in opts:
            sel = " selected" if v == cur else ""
            o.append(f"<option value='{escape(v)}'{sel}>{escape(v)} ({c})</option>")
        if cur and cur not in facets[f]:
            o.append(f"<option value='{escape(cur)}' selected>{escape(cur)} (0)</option>")
        selects.append(
            f"<label>{escape(f)} <select name='{f}' data-filter='{f}'>{''.join(o)}</select></label>"
        )
    run_sel = ""
    if len(runs) > 1:
        ro = "".join(
            f"<option value='{escape(n)}'{' selected' if run and n == run.name else ''}>{escape(n)}</option>"
            for n in runs
        )
        run_sel = f"<label>outcome in <select name='run'>{ro}</select></label>"
    form = (
        "<form class='filters' method='get' action='/tasks'>"
        f"<input type='search' name='q' placeholder='search instruction, id, family, service' "
        f"value='{escape(params.get('q') or '')}' aria-label='search'>"
        f"{''.join(selects)}{run_sel}<button type='submit'>Filter</button> <a href='/tasks'>clear</a></form>"
    )
    trs = []
    for r in shown:
        oc = run.outcome_of(r.id) if run else ""
        trs.append(
            f"<tr class='task-row' data-id='{escape(r.id)}'><td><a href='/tasks/{q(r.id)}'>{escape(r.id)}</a></td>"
            f"<td>{escape(r.family)}</td><td>{escape(r.domain)}</td><td>{r.K}</td><td>{r.L}</td>"
            f"<td>{escape(r.difficulty)}</td><td>{escape(', '.join(r.services))}</td>"
            f"<td>{escape(', '.join(r.interfaces))}</td>"
            f"<td>{r.checks - r.guards}/{r.guards}</td><td>{r.calls}</td>"
            + (f"<td>{badge(oc)}</td>" if run else "")
            + f"<td class='instr'>{escape(r.instruction[:160])}{'…' if len(r.instruction) > 160 else ''}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "id",
            "family",
            "domain",
            "K",
            "L",
            "difficulty",
            "services",
            "interfaces",
            "goals/guards",
            "calls",
        )
    )
    head += ("<th>outcome</th>" if run else "") + "<th>instruction</th>"
    body = (
        f"<h1>Tasks <span class='muted'>{escape(catalog.path.name)}</span></h1>{form}"
        f"<p class='count' id='count' data-matching='{len(rows)}' data-total='{len(catalog.rows)}'>"
        f"{len(rows)} of {len(catalog.rows)} tasks match</p>"
        f"<table class='list tasks'><thead><tr>{head}</tr></thead><tbody>{''.join(trs)}</tbody></table>"
        + pager("/tasks", params, page, len(rows), per_page)
    )
    return layout("Tasks", body)


def pager(path: str, params: dict[str, str], page: int, total: int, per_page: int) -> str:
    pages = max(1, -(-total // per_page))
    if pages == 1:
        return ""

    def link(p: int, text: str) -> str:
        return f"<a href='{path}?{urlencode({**params, 'page': p})}'>{text}</a>"

    prev = link(page - 1, "‹ prev") if page > 1 else ""
    nxt = link(page + 1, "next ›") if page < pages else ""
    return f"<p class='pager'>{prev} page {page} of {pages} {nxt}</p>"


def _natural(v: str) -> tuple[bool, float, str]:
    num = v.lstrip("-").replace(".", "", 1).isdigit()
    return (not num, float(v) if num else 0.0, v)


def sources_html(sources: dict[str, str], anchor: str) -> str:
    if not sources:
        return ""
    chips = []
    for arg, src in sources.items():
        if src.startswith("obs:"):
            n = src[4:]
            chips.append(f"<a class='src' href='#{anchor}-{escape(n)}'>{escape(arg)} ← call {escape(n)}</a>")
        else:
            chips.append(f"<span class='src'>{escape(arg)} ← {escape(src)}</span>")
    return "<div class='sources'>grounded: " + " ".join(chips) + "</div>"


def _narrow(c: Change) -> tuple[str, Any, Any, int]:
    """A change of a nested object, cut to the keys that differ (path, before, after, keys kept)."""
    path, a, b, same = c.path, c.before, c.after, 0
    while isinstance(a, dict) and isinstance(b, dict):
        diff = [k for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
        same += len(set(a) | set(b)) - len(diff)
        if len(diff) != 1:
            return path, {k: a[k] for k in diff if k in a}, {k: b[k] for k in diff if k in b}, same
        k = diff[0]
        path, a, b = f"{path}/{k}", a.get(k), b.get(k)
    return path, a, b, same


def changes_html(changes: list[Change], more: int) -> str:
    if not changes:
        return ""
    rows = []
    for c in changes:
        path, before, after, same = _narrow(c) if c.op == "change" else (c.path, c.before, c.after, 0)
        note = f" <span class='muted'>({same} keys unchanged)</span>" if same else ""
        rows.append(
            f"<tr class='chg {escape(c.op)}'><td>{escape(c.op)}</td><td>{escape(c.service)}</td>"
            f"<td>{escape(path)}{note}</td><td>{value(before) if before is not None else ''}</td>"
            f"<td>{value(after) if after is not None else ''}</td></tr>"
        )
    rows = "".join(rows)
    extra = f"<p class='muted'>… and {more} more changes</p>" if more else ""
    return (
        "<table class='diff'><thead><tr><th>op</th><th>service</th><th>path</th><th>before</th>"
        f"<th>after</th></tr></thead><tbody>{rows}</tbody></table>{extra}"
    )


def result_summary(result: dict[str, Any]) -> str:
    if result.get("success") is False:
        e = result.get("error") or {}
        return f"error {e.get('code')}: {str(e.get('message', ''))[:140]}"
    data = result.get("data")
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return f"ok, {len(data['results'])} results"
    if isinstance(data, list):
        return f"ok, {len(data)} items"
    if isinstance(data, dict):
        return f"ok, {len(data)} fields"
    return "ok"


def call_html(c: CallView, anchor: str, label: str = "call") -> str:
    ok = c.result.get("success") is not False
    hash_note = ""
    if c.recorded_hash and c.replay_hash and c.mutates:
        same = c.recorded_hash == c.replay_hash
        hash_note = (
            "<span class='ok'>replay matches the recorded state</span>"
            if same
            else "<span class='bad'>replay differs from the recorded state hash</span>"
        )
    shot = ""
    if c.screenshot and c.screenshot.startswith("data:image/"):
        shot = f"<img class='shot' alt='screenshot after call {c.n}' src='{escape(c.screenshot)}'>"
    elif c.page_html:
        shot = (
            "<details class='shot'><summary>the page the browser showed</summary>"
            f"<iframe sandbox='' title='page after call {c.n}' srcdoc='{escape(c.page_html)}'></iframe></details>"
        )
    where = f" · step {c.step}" if c.step is not None else ""
    where += f" · turn {c.turn}" if c.turn else ""
    return (
        f"<div class='call{' write' if c.mutates else ''}{'' if ok else ' err'}' id='{anchor}-{c.n}' "
        f"data-tool='{escape(c.tool)}'><div class='chead'><a href='#{anchor}-{c.n}'>{label} {c.n}</a> "
        f"<b>{escape(c.tool)}</b>{where} {'<span class=w>writes</span>' if c.mutates else ''} {hash_note}</div>"
        f"<div class='args'>args {value(c.arguments)}</div>{sources_html(c.sources, anchor)}"
        f"<details class='result'><summary>{escape(result_summary(c.result))}</summary>"
        f"<pre>{escape(js(c.result, True))}</pre></details>{changes_html(c.changes, c.more_changes)}{shot}</div>"
    )


def rubric_html(
    task: Any, results: dict[str, dict[str, Any]] | None = None, links: dict[str, list[int]] | None = None
) -> str:
    rows = []
    for r in task.rubric:
        res = (results or {}).get(r.id)
        state = "" if res is None else (" passed" if res.get("passed") else " failed")
        verdict = ""
        if res is not None:
            verdict = (
                f"<td class='verdict'>{'✔ pass' if res.get('passed') else '✘ FAILED'}</td>"
                f"<td class='detail'>{escape(str(res.get('detail', '')))}</td>"
            )
            touched = (links or {}).get(r.id) or []
            verdict += "<td>" + " ".join(f"<a href='#call-{n}'>call {n}</a>" for n in touched) + "</td>"
        rows.append(
            f"<tr class='check {escape(r.kind)}{state}' id='check-{escape(r.id)}' data-check='{escape(r.id)}'>"
            f"<td><a href='#check-{escape(r.id)}'>{escape(r.id)}</a></td><td>{escape(r.kind)}</td>"
            f"<td>{r.weight:g}</td><td>{escape(r.description)}</td><td>{value(r.check)}</td>{verdict}</tr>"
        )
    head = "<th>id</th><th>kind</th><th>weight</th><th>description</th><th>check</th>"
    if results is not None:
        head += "<th>verdict</th><th>on what value</th><th>touched by</th>"
    return f"<table class='rubric'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def task_page(task: Any, row: TaskRow, timeline: list[CallView], runs: dict[str, RunIndex]) -> str:
    graph = svg.walk_graph(task.dependency_graph.nodes, task.dependency_graph.edges)
    traps = "".join(
        f"<li><b>{escape(t.kind)}</b>: {escape(t.description)}"
        + (f" <span class='muted'>swap {escape(js(t.swap))}</span>" if t.swap else "")
        + "</li>"
        for t in task.traps
    )
    goals = sum(1 for r in task.rubric if r.kind == "goal")
    subtasks = "".join(f"<li>{escape(s)}</li>" for s in task.subtasks)
    eps = []
    for name, run in runs.items():
        for r in run.by_task().get(task.id, []):
            eps.append(
                f"<li><a href='/runs/{q(name)}/episodes/{q(r.task_id)}/{r.sample}'>{escape(name)} sample {r.sample}</a> "
                f"{badge(r.outcome)} score {r.score:.2f}</li>"
            )
    meta = {k: v for k, v in task.meta.items() if k not in ("settings",)}
    body = (
        f"<h1>{escape(task.id)}</h1>"
        f"<p class='facts'><b>family</b> {escape(row.family)} · <b>domain</b> {escape(row.domain)} · "
        f"<b>K</b> {row.K} · <b>L</b> {row.L} · <b>D</b> {row.D} · <b>difficulty</b> {escape(row.difficulty)} · "
        f"<b>interfaces</b> {escape(', '.join(row.interfaces))}</p>"
        f"<section><h2>Instruction</h2><blockquote class='instruction'>{escape(task.instruction)}</blockquote>"
        + (f"<p><b>expected answer</b> {value(task.answer)}</p>" if task.answer else "")
        + "</section><section><h2>Services</h2><p><b>services</b> "
        + " ".join(f"<span class='svc'>{escape(s)}</span>" for s in task.services)
        + " <b>distractors</b> "
        + " ".join(f"<span class='svc dis'>{escape(s)}</span>" for s in task.distractors)
        + f"</p></section><section><h2>Walk</h2><div class='scroll'>{graph}</div>"
        f"<p class='muted'>{escape(' → '.join(task.walk))}</p></section>"
        f"<section><h2>Traps</h2><ul class='traps'>{traps or '<li>none</li>'}</ul></section>"
        f"<section id='rubric'><h2>Rubric <span class='muted'>{goals} goals, {len(task.rubric) - goals} guards</span></h2>"
        f"{rubric_html(task)}</section>"
        f"<details id='hint' class='toggle'><summary>Hint and subtasks</summary><p>{escape(task.hint)}</p>"
        f"<ol>{subtasks}</ol></details>"
        + (f"<section><h2>Episodes</h2><ul>{''.join(eps)}</ul></section>" if eps else "")
        + f"<section id='reference'><h2>Reference timeline <span class='muted'>{len(timeline)} calls</span></h2>"
        f"<div class='timeline'>{''.join(call_html(c, 'ref', 'ref') for c in timeline)}</div></section>"
        f"<details class='toggle'><summary>meta</summary><pre>{escape(js(meta, True))}</pre></details>"
    )
    return layout(task.id, body)


# ---- runs ----------------------------------------------------------------------------------------
def runs_page(runs: dict[str, RunIndex], catalogs: dict[str, TaskCatalog | None]) -> str:
    rows = []
    for name, run in runs.items():
        m = run_metrics(run, catalogs.get(name))
        o = m["overall"]
        rows.append(
            f"<tr><td><a href='/runs/{q(name)}'>{escape(name)}</a></td><td>{escape(str(run.config.get('agent')))}</td>"
            f"<td>{run.k}</td><td>{o['tasks']}</td><td>{len(run.all_rows())}</td><td>{pct(o['pass@1'])}</td></tr>"
        )
    compare = ""
    if len(runs) >= 2:
        names = list(runs)
        opts = "".join(f"<option>{escape(n)}</option>" for n in names)
        opts_b = "".join(
            f"<option{' selected' if i == 1 else ''}>{escape(n)}</option>" for i, n in enumerate(names)
        )
        compare = (
            "<form method='get' action='/compare' class='filters'><b>Compare</b> "
            f"<select name='a'>{opts}</select> with <select name='b'>{opts_b}</select>"
            "<button type='submit'>Compare</button></form>"
        )
    body = "<h1>Runs</h1>" + (
        "<table class='list'><thead><tr><th>run</th><th>agent</th><th>k</th><th>tasks</th><th>episodes</th>"
        f"<th>pass@1</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{compare}"
        if runs
        else "<p>No run directory was given (compoworld view TASKS RUN_DIR ...).</p>"
    )
    return layout("Runs", body)


def metric_charts(names: list[str], ms: list[tuple[str, dict[str, Any]]]) -> str:
    """One chart per breakdown; with two runs, each metric is a series per run."""
    out = []
    for dim in ("family", "K", "difficulty", "interface"):
        groups = sorted(
            {g for _, m in ms for g in m["by"][dim]},
            key=lambda v: (
                _natural(v)
                if dim != "difficulty"
                else ({"easy": 0, "medium": 1, "hard": 2}.get(v, 9), 0.0, v)
            ),
        )
        series = []
        for run_name, m in ms:
            for metric in names:
                label = metric if len(ms) == 1 else f"{run_name} {metric}"
                series.append((label, [m["by"][dim].get(g, {}).get(metric) for g in groups]))
        note = {g: f"{ms[0][1]['by'][dim].get(g, {}).get('tasks', 0)} tasks" for g in groups}
        out.append(
            f"<div class='chartbox' data-dim='{dim}'>{svg.bar_chart(f'by {dim}', groups, series, note)}</div>"
        )
    return "".join(out)


def run_page(run: RunIndex, catalog: TaskCatalog | None, params: dict[str, str], per_page: int = 50) -> str:
    m = run_metrics(run, catalog)
    o = m["overall"]
    figures = "".join(
        f"<div class='figure' data-metric='{escape(n)}' data-value='{o[n]:.4f}'><div class='fv'>{pct(o[n])}</div>"
        f"<div class='fl'>{escape(n)}</div></div>"
        for n in m["metrics"]
    )
    cls = {k: v for k, v in m["outcomes"].items() if v or k == PASSED}
    outcome_chart = svg.count_bars("episodes by outcome", cls, OUTCOME_COLORS)
    offset = int(params["offset"]) if (params.get("offset") or "").isdigit() else 0
    rows, total = episode_rows(run, catalog, params, offset, per_page)
    filt = episode_filter_form(run, params)
    body = (
        f"<h1>Run {escape(run.name)}</h1>"
        f"<p class='facts'><b>agent</b> {escape(str(run.config.get('agent')))} · <b>mode</b> "
        f"{escape(str(run.config.get('mode')))} · <b>k</b> {run.k} · <b>tasks</b> {o['tasks']} · "
        f"<b>episodes</b> {len(run.all_rows())} · <b>task file</b> {escape(catalog.path.name) if catalog else 'not found'}</p>"
        f"<div class='figures'>{figures}</div>"
        f"<section><h2>Pass rates</h2><div class='charts'>{metric_charts(m['metrics'], [(run.name, m)])}</div></section>"
        f"<section><h2>Failure classes</h2>{outcome_chart}"
        f"<details class='toggle' open><summary>by family</summary>{outcome_table(run, catalog)}</details></section>"
        f"<section id='episodes'><h2>Episodes</h2>{filt}"
        f"<p class='count' data-matching='{total}'>{total} episodes</p>"
        f"<table class='list episodes' data-api='/api/runs/{q(run.name)}/episodes?{escape(urlencode(_ep_params(params)))}'"
        f" data-next='{offset + per_page}' data-total='{total}'><thead><tr><th>task</th><th>sample</th><th>outcome</th><th>score</th>"
        f"<th>turns</th><th>calls</th><th>failed checks</th><th>family</th></tr></thead><tbody>"
        f"{''.join(episode_tr(run, r, catalog) for r in rows)}</tbody></table>"
        + (
            f"<p><button class='more' type='button'>load more</button> "
            f"<noscript><a href='/runs/{q(run.name)}?{escape(urlencode({**_ep_params(params), 'offset': offset + per_page}))}#episodes'>next page</a></noscript></p>"
            if total > offset + per_page
            else ""
        )
        + "</section>"
    )
    return layout(f"Run {run.name}", body)


EPISODE_FILTERS = ("outcome", "family", "task")


def _ep_params(params: dict[str, str]) -> dict[str, str]:
    return {k: params[k] for k in EPISODE_FILTERS if params.get(k)}


def episode_filter_form(run: RunIndex, params: dict[str, str]) -> str:
    opts = "".join(
        f"<option{' selected' if params.get('outcome') == c else ''}>{escape(c)}</option>"
        for c in (PASSED, "failed", *FAILURE_CLASSES)
    )
    return (
        f"<form class='filters' method='get' action='/runs/{q(run.name)}#episodes'>"
        f"<select name='outcome' data-filter='outcome'><option value=''>all outcomes</option>{opts}</select>"
        f"<input name='family' placeholder='family' value='{escape(params.get('family') or '')}'>"
        f"<input name='task' placeholder='task id' value='{escape(params.get('task') or '')}'>"
        "<button type='submit'>Filter</button></form>"
    )


def episode_rows(
    run: RunIndex, catalog: TaskCatalog | None, params: dict[str, str], offset: int, limit: int
) -> tuple[list[EpisodeRow], int]:
    """The slice [offset, offset + limit) of the episodes matching the filters, and their number."""
    rows = run.all_rows()
    outcome, family, task = params.get("outcome"), params.get("family"), params.get("task")
    if outcome or family or task:

        def keep(r: EpisodeRow) -> bool:
            if outcome == "failed" and r.outcome == PASSED:
                return False
            if outcome and outcome != "failed" and r.outcome != outcome:
                return False
            if task and task not in r.task_id:
                return False
            if family:
                tr = catalog.by_id.get(r.task_id) if catalog else None
                if tr is None or not tr.family.startswith(family):
                    return False
            return True

        rows = [r for r in rows if keep(r)]
    return rows[offset : offset + limit], len(rows)


def episode_tr(run: RunIndex, r: EpisodeRow, catalog: TaskCatalog | None) -> str:
    tr = catalog.by_id.get(r.task_id) if catalog else None
    return (
        f"<tr class='ep-row' data-index='{r.index}'><td><a href='/runs/{q(run.name)}/episodes/{q(r.task_id)}/{r.sample}'>"
        f"{escape(r.task_id)}</a></td><td>{r.sample}</td><td>{badge(r.outcome)}</td><td>{r.score:.2f}</td>"
        f"<td>{r.turns}</td><td>{r.calls}</td><td>{escape(', '.join(r.failed))}</td>"
        f"<td>{escape(tr.family if tr else '')}</td></tr>"
    )


def compare_page(a: RunIndex, b: RunIndex, ca: TaskCatalog | None, cb: TaskCatalog | None) -> str:
    ma, mb = run_metrics(a, ca), run_metrics(b, cb)
    names = [n for n in ma["metrics"] if n in mb["metrics"]] or ["pass@1"]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = ""
    for run, m in ((a, ma), (b, mb)):
        rows += (
            f"<tr><td><a href='/runs/{q(run.name)}'>{escape(run.name)}</a></td>"
            + "".join(
                f"<td data-run='{escape(run.name)}' data-metric='{escape(n)}'>{pct(m['overall'].get(n, 0.0))}</td>"
                for n in names
            )
            + "</tr>"
        )
    classes = [c for c in (PASSED, *FAILURE_CLASSES) if ma["outcomes"].get(c) or mb["outcomes"].get(c)]
    crow = "".join(
        f"<tr><td>{badge(c)}</td><td>{ma['outcomes'].get(c, 0)}</td><td>{mb['outcomes'].get(c, 0)}</td></tr>"
        for c in classes
    )
    flips = []
    ta, tb = a.by_task(), b.by_task()
    for tid in sorted(set(ta) & set(tb)):
        pa = sum(r.V for r in ta[tid]) / len(ta[tid])
        pb = sum(r.V for r in tb[tid]) / len(tb[tid])
        if pa != pb:
            flips.append(
                f"<tr><td><a href='/tasks/{q(tid)}'>{escape(tid)}</a></td>"
                f"<td><a href='/runs/{q(a.name)}/episodes/{q(tid)}/0'>{pa:.2f}</a></td>"
                f"<td><a href='/runs/{q(b.name)}/episodes/{q(tid)}/0'>{pb:.2f}</a></td></tr>"
            )
    body = (
        f"<h1>Compare {escape(a.name)} and {escape(b.name)}</h1>"
        f"<table class='list'><thead><tr><th>run</th>{head}</tr></thead><tbody>{rows}</tbody></table>"
        f"<section><h2>Failure classes</h2><table class='list'><thead><tr><th>class</th><th>{escape(a.name)}</th>"
        f"<th>{escape(b.name)}</th></tr></thead><tbody>{crow}</tbody></table></section>"
        f"<section><h2>Pass rates</h2><div class='charts'>{metric_charts(names[:1], [(a.name, ma), (b.name, mb)])}</div></section>"
        f"<section><h2>Tasks that differ <span class='muted'>{len(flips)}</span></h2>"
        f"<table class='list'><thead><tr><th>task</th><th>{escape(a.name)} pass rate</th><th>{escape(b.name)} pass rate</th>"
        f"</tr></thead><tbody>{''.join(flips[:500])}</tbody></table></section>"
    )
    return layout("Compare", body)


def episode_page(
    run: RunIndex,
    row: EpisodeRow,
    ep: dict[str, Any],
    task: Any | None,
    turns: list[Turn],
    timeline: list[CallView] | None,
    links: dict[str, list[int]],
    why: str | None = None,
) -> str:
    results = {c["id"]: c for c in ep.get("checks") or []}
    conv = []
    for i, t in enumerate(turns):
        items = []
        if t.content:
            items.append(f"<div class='content'>{escape(t.content)}</div>")
        for tc, view, text in t.calls:
            fn = tc.get("function") or {}
            if view is not None:
                items.append(call_html(view, "call"))
            else:  # finish, or arguments that were not JSON: as the model sent it, with the reply
                items.append(
                    f"<div class='call plain'><div class='chead'><b>{escape(fn.get('name') or '')}</b></div>"
                    f"<div class='args'>args {value(fn.get('arguments'))}</div>"
                    + (f"<div class='muted'>→ {value(text)}</div>" if text else "")
                    + "</div>"
                )
        conv.append(
            f"<div class='turn {escape(t.role)}' id='turn-{i}'><div class='role'>{escape(t.role)}</div>{''.join(items)}</div>"
        )
    verdict = (
        rubric_html(task, results, links)
        if task is not None
        else "<table class='rubric'>"
        + "".join(
            f"<tr class='check {escape(c.get('kind', 'goal'))} {'passed' if c.get('passed') else 'failed'}' "
            f"id='check-{escape(str(c['id']))}' data-check='{escape(str(c['id']))}'><td>{escape(str(c['id']))}</td>"
            f"<td>{escape(str(c.get('kind')))}</td><td class='verdict'>{'✔ pass' if c.get('passed') else '✘ FAILED'}</td>"
            f"<td class='detail'>{escape(str(c.get('detail')))}</td></tr>"
            for c in ep.get("checks") or []
        )
        + "</table>"
    )
    ref = (
        f"<div class='timeline'>{''.join(call_html(c, 'ref', 'ref') for c in timeline)}</div>"
        if timeline is not None
        else f"<p class='muted'>{escape(why or 'the task is not in the loaded task file')}: no reference and no replayed diffs</p>"
    )
    err = (
        f"<p class='bad'>{escape(str(ep.get('error_class')))}: {escape(str(ep.get('error')))}</p>"
        if ep.get("error")
        else ""
    )
    body = (
        f"<h1>{escape(row.task_id)} <span class='muted'>sample {row.sample} of run "
        f"<a href='/runs/{q(run.name)}'>{escape(run.name)}</a></span></h1>"
        f"<p class='facts'>{badge(row.outcome)} <b>V</b> {row.V} · <b>score</b> {row.score:.3f} · <b>turns</b> "
        f"{row.turns} · <b>calls</b> {row.calls} · <b>answer</b> {value(ep.get('answer'))} · "
        f"<a href='/tasks/{q(row.task_id)}'>task page</a></p>{err}"
        + (
            f"<blockquote class='instruction'>{escape(task.instruction)}</blockquote>"
            if task is not None
            else ""
        )
        + f"<section id='verdict'><h2>Verdict per rubric item</h2>{failed_summary(ep)}{verdict}</section>"
        f"<div class='side'><section class='col'><h2>Episode</h2>{''.join(conv)}</section>"
        f"<section class='col'><h2>Reference</h2>{ref}</section></div>"
    )
    return layout(f"{row.task_id} #{row.sample}", body)


def failed_summary(ep: dict[str, Any]) -> str:
    """One line naming each failed check and the value it failed on (the table below has the rest)."""
    failed = [c for c in ep.get("checks") or [] if not c.get("passed")]
    if not failed:
        return f"<p class='ok'>all {len(ep.get('checks') or [])} checks pass</p>"
    items = "; ".join(
        f"<a href='#check-{escape(str(c['id']))}'>{escape(str(c['id']))}</a> ({escape(str(c.get('kind', 'goal')))}): "
        f"{escape(str(c.get('detail', '')))}"
        for c in failed
    )
    return f"<p class='bad failed-summary'>{len(failed)} of {len(ep.get('checks') or [])} checks failed: {items}</p>"


def outcome_table(run: RunIndex, catalog: TaskCatalog | None) -> str:
    """Episodes by family and failure class: where the failures are, and of which kind."""
    counts: dict[str, dict[str, int]] = run._cached.get("by_family_outcome") or {}
    if not counts:  # once per run version (a growing run clears its caches)
        for r in run.all_rows():
            tr = catalog.by_id.get(r.task_id) if catalog else None
            fam = tr.family if tr else "unknown"
            counts.setdefault(fam, {})
            counts[fam][r.outcome] = counts[fam].get(r.outcome, 0) + 1
        run._cached["by_family_outcome"] = counts
    classes = [c for c in (PASSED, *FAILURE_CLASSES) if any(c in v for v in counts.values())]
    head = "".join(f"<th>{badge(c)}</th>" for c in classes)
    rows = "".join(
        f"<tr data-family='{escape(f)}'><td><a href='/runs/{q(run.name)}?family={q(f)}#episodes'>{escape(f)}</a></td>"
        + "".join(f"<td data-class='{escape(c)}'>{v.get(c, 0) or ''}</td>" for c in classes)
        + "</tr>"
        for f, v in sorted(
            counts.items(), key=lambda kv: (-sum(n for c, n in kv[1].items() if c != PASSED), kv[0])
        )
    )
    return f"<table class='list outcomes'><thead><tr><th>family</th>{head}</tr></thead><tbody>{rows}</tbody></table>"


def not_found(what: str) -> str:
    return layout("Not found", f"<h1>Not found</h1><p>{escape(what)}</p>")


__all__ = ["DIMENSIONS"]
