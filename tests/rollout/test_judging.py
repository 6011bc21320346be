"""`tasks judge` against scripted judges: consistency, difficulty and counterfactual probing go into
each task's meta; a judge reply without a verdict object is an error, recorded and never counted; a
sycophantic agent judge that flips under a false claim fails the probe."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.llm.client import LLMClient, LLMConfig
from compoworld.rollout.judging import difficulty, judge_tasks
from compoworld.tasks.author import AuthorSettings, check_design, skeleton
from compoworld.tasks.model import Task, load_tasks, save_tasks
from compoworld.verify.judges import parse_verdict
from tests.scripted_server import ScriptedServer, say, tool_calls
from tests.tasks.author_scripts import GOOD

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:
    """One authored task, an oracle run (3 successes) and a no-op run (3 failures)."""
    d = tmp_path_factory.mktemp("judge")
    s = AuthorSettings(k=2, distractors=1, pool=("chat", "email"))
    data, diags = check_design(GOOD, skeleton(0, 0, s), 0, 0, s)
    assert data is not None, diags
    tasks = d / "tasks.jsonl"
    save_tasks([Task.model_validate(data)], tasks)
    for agent in ("oracle", "noop"):
        r = runner.invoke(
            app, ["eval", "--tasks", str(tasks), "--agent", agent, "--k", "3", "--out", str(d / agent)]
        )
        assert r.exit_code == 0, r.output
    return {"dir": d, "tasks": tasks, "oracle": d / "oracle", "noop": d / "noop"}


def verdict(v: str, why: str = "checked") -> dict[str, Any]:
    return say(json.dumps({"verdict": v, "criteria": {"c1": v == "success"}, "reason": why}))


def judges(llm: str = "honest", agent: str = "honest"):
    """A scripted endpoint playing both judges. Honest ones read the evidence: the LLM judge the
    end-state diff, the agent judge the sent mail it looks up with a read-only tool."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        msgs = body["messages"]
        system, user = msgs[0]["content"], msgs[1]["content"]
        if "read-only tools" not in system:  # the LLM judge
            if llm == "prose":
                return say("Looks good to me!")
            if llm == "always_success":
                return verdict("success")
            changed = "END-STATE DIFF\n(nothing changed)" not in user
            return verdict("success" if changed else "failure")
        if "THE AGENT REPORTS" in user and agent == "sycophantic":
            return verdict("failure" if "could not finish" in user else "success", "the agent says so")
        last = msgs[-1]
        if last["role"] != "tool":
            names = [t["function"]["name"] for t in body.get("tools") or []]
            assert names and "email__gmail_send_email" not in names  # read-only tools only
            return tool_calls(("email__gmail_search_emails", {"query": "Halvorsen"}))
        found = json.loads(last["content"])["data"]
        return verdict("success" if found.get("messages") else "failure", "looked at the mail")

    return answer


def _judge(runs: dict[str, Any], run: str, **kw: str) -> dict[str, Any]:
    async def go():
        with ScriptedServer(default=judges(**kw)) as srv:
            client = LLMClient(LLMConfig(base_url=srv.url, model="judge", max_retries=0, profile="generic"))
            try:
                [t] = await judge_tasks(client, load_tasks(runs["tasks"]), [runs[run]])
            finally:
                await client.close()
            return t.meta["judges"]

    return asyncio.run(go())


def test_parse_verdict_takes_one_object_and_classes_the_rest():
    ok, why = parse_verdict(
        'Sure.\n```json\n{"verdict": "Success", "criteria": {"c1": true}, "reason": "x"}\n```'
    )
    assert why is None and ok == {"verdict": "success", "criteria": {"c1": True}, "reason": "x"}
    for bad in ("It worked!", '{"verdict": "maybe"}', '{"verdict": "success", "criteria": [1]}', "", None):
        v, why = parse_verdict(bad)
        assert v is None and why


def test_difficulty_levels_from_hint_free_attempts():
    def eps(*vs: int, hinted: bool = False):
        return [{"V": v, "hinted": hinted} for v in vs]

    assert difficulty(eps(0, 0, 1))["level"] == "hard"
    assert difficulty(eps(1, 0, 1))["level"] == "medium"
    assert difficulty(eps(1, 1, 1)) | {} == {
        "attempts": 3,
        "successes": 3,
        "level": "too_easy",
        "status": "revise",
    }
    assert difficulty(eps(1, 1) + eps(1, hinted=True))["level"] == "insufficient"  # hinted runs never count


def test_honest_judges_agree_and_an_easy_task_goes_back(runs):
    j = _judge(runs, "oracle")
    assert j["consistency"] == {"episodes": 3, "agree": 3, "disagree": 0, "status": "pass"}
    assert j["difficulty"]["level"] == "too_easy" and j["difficulty"]["successes"] == 3
    assert j["counterfactual"]["status"] == "pass"
    assert j["counterfactual"]["before"] == j["counterfactual"]["after"] == "success"
    assert j["status"] == "revise" and j["judge_errors"] == 0
    assert all(e["program"] == "success" and e["agent"]["verdict"] == "success" for e in j["episodes"])
    # the scripted judges say c1 holds: on a solved task the verifier agrees
    assert all(e["criteria_agreement"]["llm"] == 1.0 for e in j["episodes"])


def test_sycophantic_judge_flips_under_the_false_claim(runs):
    j = _judge(runs, "oracle", agent="sycophantic")
    p = j["counterfactual"]
    assert p["status"] == "fail" and p["before"] == "success" and p["after"] == "failure"
    assert "could not finish" in p["claim"]
    assert j["status"] == "revise"
    honest = _judge(runs, "noop")  # a failed run: the false claim says it succeeded
    assert honest["counterfactual"]["status"] == "pass" and honest["difficulty"]["level"] == "hard"
    j = _judge(runs, "noop", agent="sycophantic")
    assert j["counterfactual"]["after"] == "success" and j["counterfactual"]["status"] == "fail"


def test_a_reply_without_a_verdict_is_a_recorded_error_never_a_vote(runs):
    j = _judge(runs, "noop", llm="prose")
    assert j["judge_errors"] == 3
    assert all(e["llm"]["verdict"] is None and e["llm"]["raw"] == "Looks good to me!" for e in j["episodes"])
    assert j["consistency"]["agree"] == 3 and j["consistency"]["status"] == "pass"  # the agent judge's votes


def test_a_judge_that_disagrees_with_the_verifier_rejects_the_task(runs):
    j = _judge(runs, "noop", llm="always_success")
    assert j["consistency"]["disagree"] == 3 and j["consistency"]["status"] == "reject"
    assert j["status"] == "reject"


def test_cli_judge_writes_the_results_into_meta(runs, tmp_path):
    out, log = tmp_path / "judged.jsonl", tmp_path / "verdicts.jsonl"
    with ScriptedServer(default=judges()) as srv:
        r = runner.invoke(
            app,
            [
                "tasks",
                "judge",
                str(runs["tasks"]),
                "--runs",
                str(runs["noop"]),
                "--model",
                "judge",
                "--base-url",
                srv.url,
                "--out",
                str(out),
                "--log",
                str(log),
                "--json",
            ],
        )
    assert r.exit_code == 0, r.output
    [t] = load_tasks(out)
    j = t.meta["judges"]
    assert j["difficulty"]["level"] == "hard" and j["consistency"]["status"] == "pass"
    assert j["counterfactual"]["status"] == "pass" and j["model"] == "judge"
    assert json.loads(r.output)[t.id]["status"] == "pass"
    assert len(log.read_text().splitlines()) == 4  # three episodes and the probe
    bad = runner.invoke(
        app,
        [
            "tasks",
            "judge",
            str(runs["tasks"]),
            "--runs",
            str(tmp_path),
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    )
    assert bad.exit_code == 2 and "no config.json" in bad.output


@pytest.mark.parametrize("mode", ["direct", "gateway"])
def test_the_agent_judge_cannot_write(runs, mode):
    from compoworld.agents.judge import agent_judge
    from compoworld.tasks.model import load_tasks

    [task] = load_tasks(runs["tasks"])
    send = {"to": ["x@example.com"], "subject": "s", "body": "b"}
    search = {"query": "Halvorsen"}
    if mode == "gateway":
        first = tool_calls(("call_tool", {"tool": "email__gmail_send_email", "arguments": send}))
        second = tool_calls(("call_tool", {"tool": "email__gmail_search_emails", "arguments": search}))
    else:
        first = tool_calls(("email__gmail_send_email", send))
        second = tool_calls(("email__gmail_search_emails", search))

    async def go():
        with ScriptedServer([first, second, verdict("failure")]) as srv:
            client = LLMClient(LLMConfig(base_url=srv.url, model="judge", max_retries=0, profile="generic"))
            try:
                j = await agent_judge(client, task, task.initial_state, None, None, 4, mode)
            finally:
                await client.close()
            return j, srv.requests

    j, reqs = asyncio.run(go())
    assert j.verdict == "failure" and j.requests == 3
    refused = json.loads(reqs[1]["messages"][-1]["content"])
    assert refused["error"]["code"] == 403 and "read-only" in refused["error"]["message"]
    read = json.loads(reqs[2]["messages"][-1]["content"])
    assert read["success"] is True
    offered = {t["function"]["name"] for t in reqs[0]["tools"]}
    assert (
        offered == {"list_services", "list_tools", "describe_tool", "call_tool"}
        if mode == "gateway"
        else ("email__gmail_send_email" not in offered and "email__gmail_search_emails" in offered)
    )


def test_hinted_runs_are_not_hint_free(runs, tmp_path):
    import shutil

    hinted = tmp_path / "hinted"
    shutil.copytree(runs["oracle"], hinted)
    cfg = json.loads((hinted / "config.json").read_text())
    (hinted / "config.json").write_text(json.dumps({**cfg, "hints": "subtasks"}))
    from compoworld.rollout.judging import collect

    assert all(e["hinted"] for e in collect([hinted])[next(iter(collect([hinted])))])
    assert not any(e["hinted"] for eps in collect([runs["oracle"]]).values() for e in eps)


def test_criteria_agreement_reads_the_forms_judges_write():
    from compoworld.rollout.judging import criteria_agreement

    truth = {"c1": True, "c2": False, "c3": True}
    assert criteria_agreement({"c1": "pass", "c2": {"passed": True}, "c3": "no idea"}, truth) == 0.5
    assert criteria_agreement({"c9": True}, truth) is None
