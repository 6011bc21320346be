"""The viewer in a real Chromium through Playwright (skips where no Chromium is installed).

Set COMPOWORLD_VIEW_SCREENSHOTS=docs/img to write the README's screenshots of each page."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from compoworld.rollout.metrics import pass_at_k
from tests.view.runs import episodes

CHROMIUM = next(
    (
        p
        for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
        if p and os.path.exists(p)
    ),
    None,
)
playwright = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (apt-get install -y chromium; .ci/run installs it)"
)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def page():
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        p = browser.new_page(viewport={"width": 1400, "height": 900})
        yield p
        browser.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = os.environ.get("COMPOWORLD_VIEW_SCREENSHOTS")
    out = Path(d) if d else tmp_path_factory.mktemp("shots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_task_list_filters_and_search(page, base_url, view_data, shots) -> None:
    tasks = view_data["tasks"]
    page.goto(f"{base_url}/tasks")
    assert page.locator("tr.task-row").count() == len(tasks)
    assert page.locator("#count").get_attribute("data-matching") == str(len(tasks))
    fam = view_data["fail_family"]
    want = [t.id for t in tasks if t.meta["family"] == fam]
    with page.expect_navigation():
        page.select_option("select[data-filter=family]", fam)  # choosing submits the filter
    ids = [r.get_attribute("data-id") for r in page.locator("tr.task-row").all()]
    assert ids == want and f"{len(want)} of {len(tasks)} tasks match" in page.locator("#count").inner_text()
    assert "family=" in page.url  # a filtered list is a deep link
    # outcome in the failing run: exactly the failing family's tasks
    page.goto(f"{base_url}/tasks?run=scripted")
    with page.expect_navigation():
        page.select_option("select[data-filter=outcome]", "fail")
    assert [r.get_attribute("data-id") for r in page.locator("tr.task-row").all()] == want
    # K, then search within it
    page.goto(f"{base_url}/tasks")
    k = str(tasks[0].meta["K"])
    with page.expect_navigation():
        page.select_option("select[data-filter=K]", k)
    assert page.locator("tr.task-row").count() == sum(1 for t in tasks if str(t.meta["K"]) == k)
    page.fill("input[name=q]", tasks[0].id)
    with page.expect_navigation():
        page.press("input[name=q]", "Enter")
    assert [r.get_attribute("data-id") for r in page.locator("tr.task-row").all()] == [tasks[0].id]
    page.goto(f"{base_url}/tasks?run=scripted")
    page.screenshot(path=str(shots / "view-tasks.png"))


def test_task_page_shows_rubric_and_reference_timeline(page, base_url, view_data, shots) -> None:
    task = next(t for t in view_data["tasks"] if t.meta["family"] == view_data["fail_family"])
    page.goto(f"{base_url}/tasks/{task.id}")
    checks = page.locator("#rubric tr.check")
    assert [c.get_attribute("data-check") for c in checks.all()] == [r.id for r in task.rubric]
    assert page.locator("#rubric tr.check.guard").count() == sum(1 for r in task.rubric if r.kind == "guard")
    calls = page.locator("#reference .call")
    assert [c.get_attribute("data-tool") for c in calls.all()] == [c.tool for c in task.reference_solution]
    assert page.locator("#reference .call.write table.diff").count() >= 1  # a write shows its state diff
    assert page.locator("#reference .sources").count() >= 1  # grounding sources
    assert page.locator("svg.walk g.node").count() == len(task.dependency_graph.nodes)
    hint = page.locator("#hint p")
    assert not hint.is_visible()  # the hint sits behind a toggle
    page.click("#hint summary")
    assert hint.is_visible() and hint.inner_text() == task.hint
    page.evaluate("document.querySelector('#hint').open = false")
    page.screenshot(path=str(shots / "view-task.png"))


def test_episode_page_marks_the_failed_check(page, base_url, view_data, shots) -> None:
    fail = next(e for e in episodes(view_data["scripted"]) if not e["V"])
    page.goto(f"{base_url}/runs/scripted/episodes/{fail['task_id']}/{fail['sample']}")
    failed = [c for c in fail["checks"] if not c["passed"]]
    marked = page.locator("#verdict tr.check.failed")
    assert [m.get_attribute("data-check") for m in marked.all()] == [c["id"] for c in failed]
    for c in failed:  # which check failed, and on what value
        row = page.locator(f"#check-{c['id']}")
        assert "FAILED" in row.locator("td.verdict").inner_text()
        assert row.locator("td.detail").inner_text() == c["detail"]
    assert page.locator("#verdict tr.check.passed").count() == len(fail["checks"]) - len(failed)
    bg = page.locator(f"#check-{failed[0]['id']} td").first.evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    assert bg == "rgb(253, 236, 239)"  # marked, not only labelled
    # the episode's calls (with the diffs their replay made) beside the reference
    assert page.locator(".side .col").nth(0).locator(".call[data-tool]").count() == len(fail["steps"])
    assert page.locator(".side .col").nth(1).locator(".call").count() > 0
    assert page.locator(".side .col").nth(0).locator("table.diff").count() >= 1
    page.screenshot(path=str(shots / "view-episode.png"))
    page.evaluate("document.querySelector('.side .col .call.write').scrollIntoView({block: 'center'})")
    page.screenshot(path=str(shots / "view-episode-calls.png"))  # the calls beside the reference


def test_run_page_charts_show_the_run_figures(page, base_url, view_data, shots) -> None:
    eps = episodes(view_data["scripted"])
    by_task: dict[str, list[int]] = {}
    for e in eps:
        by_task.setdefault(e["task_id"], []).append(e["V"])
    p1 = sum(pass_at_k(len(v), sum(v), 1) for v in by_task.values()) / len(by_task)
    page.goto(f"{base_url}/runs/scripted")
    fig = page.locator(".figure[data-metric='pass@1']")
    assert fig.locator(".fv").inner_text() == f"{100 * p1:.1f}%"
    fam = {t.id: t.meta["family"] for t in view_data["tasks"]}
    chart = page.locator(".chartbox[data-dim=family]")
    for family in set(fam[t] for t in by_task):
        bar = chart.locator(f"g.bar[data-group='{family}'][data-series='pass@1']")
        want = 0.0 if family == view_data["fail_family"] else 1.0
        assert float(bar.get_attribute("data-value")) == want
        assert bar.locator("text").text_content() == f"{want:.2f}"
    widths = {
        b.get_attribute("data-group"): float(b.locator("rect").get_attribute("width"))
        for b in chart.locator("g.bar[data-series='pass@1']").all()
    }
    assert widths[view_data["fail_family"]] < min(
        w for f, w in widths.items() if f != view_data["fail_family"]
    )
    assert page.locator(".chartbox[data-dim=family] g.bar[data-series='pass^2']").count() == len(widths)
    outcomes = page.locator("svg.counts g.bar")
    counted = {b.get_attribute("data-group"): int(b.get_attribute("data-value")) for b in outcomes.all()}
    assert counted["passed"] == sum(e["V"] for e in eps) and sum(counted.values()) == len(eps)
    page.screenshot(path=str(shots / "view-run.png"))
    page.goto(f"{base_url}/compare?a=scripted&b=oracle")
    assert page.locator("td[data-run=oracle][data-metric='pass@1']").inner_text() == "100.0%"
    page.screenshot(path=str(shots / "view-compare.png"))


def test_ten_thousand_episodes_page_and_load_more(page, base_url, view_data) -> None:
    page.goto(f"{base_url}/runs/big")
    rows = page.locator("tr.ep-row")
    assert rows.count() == 50
    page.click("button.more")
    page.wait_for_function("document.querySelectorAll('tr.ep-row').length >= 150")
    idx = [int(r.get_attribute("data-index")) for r in rows.all()]
    assert idx[:150] == list(range(150))
    lines = (view_data["big"] / "episodes.jsonl").read_text().splitlines()
    last = rows.nth(149).locator("a").inner_text()
    assert last == json.loads(lines[149])["task_id"]
