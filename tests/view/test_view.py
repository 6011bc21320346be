"""The viewer without a browser: indexes, figures, failure classes, paging, replays, the CLI's errors."""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from compoworld.cli.main import app as cli
from compoworld.rollout.metrics import pass_at_k, pass_hat_k
from compoworld.view import view_app
from compoworld.view.data import RunIndex, failure_class, run_metrics
from compoworld.view.replay import episode_calls, reference_timeline
from tests.view.runs import episodes


@pytest.fixture(scope="module")
def client(viewer):
    return TestClient(view_app(viewer))


def test_run_figures_match_the_episodes(view_data, viewer) -> None:
    eps = episodes(view_data["scripted"])
    fam = {t.id: t.meta["family"] for t in view_data["tasks"]}
    m = run_metrics(viewer.runs["scripted"], viewer.catalogs["scripted"])
    by_task: dict[str, list[int]] = {}
    for e in eps:
        by_task.setdefault(e["task_id"], []).append(e["V"])
    want = sum(pass_at_k(len(v), sum(v), 1) for v in by_task.values()) / len(by_task)
    assert m["overall"]["pass@1"] == pytest.approx(want, abs=1e-4) and 0 < want < 1
    want2 = sum(pass_hat_k(len(v), sum(v), 2) for v in by_task.values()) / len(by_task)
    assert m["overall"]["pass^2"] == pytest.approx(want2, abs=1e-4)
    # the failing family is the one at 0, every other family at 1
    assert m["by"]["family"][view_data["fail_family"]]["pass@1"] == 0.0
    assert all(v["pass@1"] == 1.0 for f, v in m["by"]["family"].items() if f != view_data["fail_family"])
    assert set(m["by"]["family"]) == {fam[t] for t in by_task}
    # outcome classes count every episode, from its verdicts
    assert sum(m["outcomes"].values()) == len(eps)
    assert m["outcomes"]["passed"] == sum(e["V"] for e in eps)


def test_failure_classes_come_from_verdicts() -> None:
    goal = {"id": "c1", "passed": False, "kind": "goal"}
    guard = {"id": "c2", "passed": False, "kind": "guard"}
    ok = {"id": "c3", "passed": True, "kind": "goal"}
    assert failure_class("ok", [ok], True) == "passed"
    assert failure_class("ok", [goal, ok], False) == "missed goal"
    assert failure_class("ok", [goal, guard], False) == "guard tripped"
    assert failure_class("agent_format", [goal], False) == "format failure"
    assert failure_class("endpoint_error", [goal], False) == "endpoint error"
    assert failure_class("timeout", [goal], False) == "endpoint error"
    assert failure_class("server_error", [goal], False) == "environment error"


def test_ten_thousand_episodes_page_by_byte_offset(view_data, client) -> None:
    lines = (view_data["big"] / "episodes.jsonl").read_text().splitlines()
    r = client.get("/api/runs/big/episodes", params={"offset": 5000, "limit": 50})
    data = r.json()
    assert r.status_code == 200 and data["total"] == 10_000 and len(data["episodes"]) == 50
    want = [json.loads(x) for x in lines[5000:5050]]
    assert [(e["task_id"], e["sample"]) for e in data["episodes"]] == [
        (w["task_id"], w["sample"]) for w in want
    ]
    assert [e["V"] for e in data["episodes"]] == [w["V"] for w in want]
    # a filter pages over the matching episodes only
    r = client.get("/api/runs/big/episodes", params={"outcome": "missed goal", "offset": 10, "limit": 5})
    got = r.json()
    failed = [json.loads(x) for x in lines if not json.loads(x)["V"]]
    assert (
        got["total"] == len(failed)
        and [e["index"] for e in got["episodes"]]
        == [i for i, x in enumerate(lines) if not json.loads(x)["V"]][10:15]
    )
    # the run page shows the first page and says how many there are
    page = client.get("/runs/big").text
    assert page.count("class='ep-row'") == 50 and "data-total='10000'" in page
    page = client.get("/runs/big", params={"offset": 9950}).text  # the same list without script
    assert re.findall(r"class='ep-row' data-index='(\d+)'", page) == [str(i) for i in range(9950, 10_000)]
    # one episode is read by its offset: the last line's page shows that episode
    last = json.loads(lines[-1])
    page = client.get(f"/runs/big/episodes/{last['task_id']}/{last['sample']}")
    assert page.status_code == 200 and f"sample {last['sample']} of run" in page.text


def test_a_growing_run_is_indexed_incrementally_and_torn_lines_wait(view_data, tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"k": 1, "tasks_file": "x"}))
    lines = (view_data["scripted"] / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    (run / "episodes.jsonl").write_bytes(lines[0])
    idx = RunIndex(run)
    assert len(idx.rows) == 1
    with (run / "episodes.jsonl").open("ab") as f:
        f.write(lines[1] + lines[2][:50])  # a whole line and a torn one
    idx.refresh()
    assert len(idx.rows) == 2
    with (run / "episodes.jsonl").open("ab") as f:
        f.write(lines[2][50:])
    idx.refresh()
    assert [r.task_id for r in idx.rows] == [json.loads(x)["task_id"] for x in lines[:3]]
    assert idx.episode(idx.rows[2]) == json.loads(lines[2])


def test_reference_replay_shows_each_write_diff_and_its_sources(view_data) -> None:
    task = view_data["tasks"][0]
    timeline = reference_timeline(task)
    assert len(timeline) == len(task.reference_solution)
    assert all(c.result.get("success") for c in timeline)
    writes = [c for c in timeline if c.changes]
    assert writes and all(c.mutates for c in writes)
    env = task.environment()
    for c in timeline:  # the diffs, applied in order, give the reference's final state
        env.call(c.tool, c.arguments)
    changed = {(ch.service, ch.path) for c in writes for ch in c.changes}
    assert changed <= {(ch.service, ch.path) for ch in env.diff()} | changed
    assert any(c.sources for c in timeline)


def test_episode_replay_matches_the_recorded_state(view_data, viewer) -> None:
    run = viewer.runs["scripted"]
    row = next(r for r in run.rows if not r.V)
    ep = run.episode(row)
    task = viewer.catalog_for(row.task_id, "scripted").task(row.task_id)
    calls = episode_calls(task, ep)
    assert len(calls) == len(ep["steps"]) and any(c.changes for c in calls)
    assert all(c.replay_hash == c.recorded_hash for c in calls if c.mutates)


def test_pages_and_deep_links(view_data, client) -> None:
    t = view_data["tasks"][0]
    assert client.get("/").status_code == 200
    page = client.get(f"/tasks/{t.id}").text
    assert t.instruction.split()[0] in page and "id='reference'" in page and "id='rubric'" in page
    assert client.get("/tasks/nope").status_code == 404
    fail = next(r for r in episodes(view_data["scripted"]) if not r["V"])
    page = client.get(f"/runs/scripted/episodes/{fail['task_id']}/{fail['sample']}").text
    failed = [c["id"] for c in fail["checks"] if not c["passed"]]
    for cid in failed:
        assert re.search(rf"<tr class='check \w+ failed' id='check-{cid}'", page)
    assert f"{len(failed)} of {len(fail['checks'])} checks failed" in page
    assert client.get("/runs/scripted/episodes/nope/0").status_code == 404
    cmp = client.get("/compare", params={"a": "scripted", "b": "oracle"}).text
    assert "Tasks that differ" in cmp and fail["task_id"] in cmp
    assert client.get("/compare", params={"a": "scripted", "b": "nope"}).status_code == 404
    # task list filters and search
    fam = view_data["fail_family"]
    want = sum(1 for x in view_data["tasks"] if x.meta["family"] == fam)
    page = client.get("/tasks", params={"family": fam}).text
    assert page.count("class='task-row'") == want and f"data-matching='{want}'" in page
    page = client.get("/tasks", params={"q": t.id}).text
    assert page.count("class='task-row'") == 1
    api = client.get("/api/tasks", params={"outcome": "fail", "run": "scripted"}).json()
    assert {x["family"] for x in api["tasks"]} == {fam}


def test_cli_view_refuses_bad_input_with_one_line(tmp_path) -> None:
    r = CliRunner().invoke(cli, ["view", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "no such task file or run directory" in r.output
    r = CliRunner().invoke(cli, ["view", str(tmp_path)])
    assert r.exit_code == 2 and "not a run directory" in r.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    r = CliRunner().invoke(cli, ["view", str(bad)])
    assert r.exit_code == 2 and "bad.jsonl:1" in r.output


def test_an_episode_on_the_web_pages_shows_each_page_the_browser_showed(tmp_path) -> None:
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.model import save_tasks
    from compoworld.tasks.pipeline import generate
    from compoworld.view import Viewer
    from tests.view.runs import oracle_run

    tasks, _ = generate(1, seed=2, settings=Settings(families=("xai",)))
    save_tasks(tasks, tmp_path / "xai.jsonl")
    run = oracle_run(tmp_path / "xai.jsonl", tmp_path / "run")
    client = TestClient(view_app(Viewer(tmp_path / "xai.jsonl", [run])))
    ep = episodes(run)[0]
    page = client.get(f"/runs/run/episodes/{ep['task_id']}/0").text
    opened = [s for s in ep["steps"] if s["tool"].startswith("browser__")]
    assert opened and page.count("<iframe sandbox=''") >= len(opened)  # drawn, never scripted
    assert "replay differs" not in page and "replay matches the recorded state" in page


def test_endpoint_failures_show_until_a_rerun_finishes_them(view_data, tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"k": 1, "tasks_file": "x"}))
    done, other = episodes(view_data["scripted"])[:2]
    failed = {**other, "error_class": "endpoint_error", "error": "connection refused", "V": 0}
    (run / "episodes.jsonl").write_text(json.dumps(done) + "\n")
    (run / "failures.jsonl").write_text(json.dumps(failed) + "\n")
    idx = RunIndex(run)
    rows = idx.all_rows()
    assert [r.outcome for r in rows] == [("passed" if done["V"] else rows[0].outcome), "endpoint error"]
    assert idx.find(other["task_id"], other["sample"]).outcome == "endpoint error"
    with (run / "episodes.jsonl").open("a") as f:  # the rerun finished it
        f.write(json.dumps(other) + "\n")
    idx.refresh()
    assert len(idx.all_rows()) == 2 and all(r.outcome != "endpoint error" for r in idx.all_rows())


def test_a_task_that_cannot_be_rebuilt_is_said_not_a_500(view_data, tmp_path) -> None:
    from compoworld.tasks.model import unpack_line
    from compoworld.view import Viewer

    line = unpack_line(json.loads((view_data["tasks_file"]).read_text().splitlines()[0]))
    line["initial_state_patch"]["digest"] = "0" * 16  # the base world "changed" since it was written
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    client = TestClient(view_app(Viewer(bad, [view_data["scripted"]])))
    r = client.get(f"/tasks/{line['id']}")
    assert r.status_code == 422 and "cannot be read here" in r.text and "does not match the digest" in r.text
    assert client.get("/tasks").status_code == 200  # the list needs no rebuild


def test_compoworld_view_serves_what_it_is_given(view_data) -> None:
    import subprocess
    import sys
    import time
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "compoworld.cli.main", "view", str(view_data["tasks_file"])]
        + [str(view_data["scripted"]), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        url = re.search(r"http://[\d.]+:\d+/", line).group(0)
        assert f"serving {len(view_data['tasks'])} tasks and 1 run(s)" in line
        for _ in range(100):  # uvicorn binds just after the line is printed
            try:
                page = urllib.request.urlopen(url + "runs/scripted", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert "Run scripted" in page
    finally:
        proc.terminate()
        proc.wait(10)
