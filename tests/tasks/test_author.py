"""The task author against scripted OpenAI-compatible endpoints: good proposals are kept and pass
`tasks check`; bad ones are rejected by the generator's own gates, with the right cause."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.llm.client import LLMClient, LLMConfig
from compoworld.tasks.author import PROPOSE, AuthorSettings, author_one, resolve, skeleton
from compoworld.tasks.model import load_tasks
from tests.scripted_server import ScriptedServer, say, tool_calls
from tests.tasks.author_scripts import GOOD, PO, variant

runner = CliRunner()
SETTINGS = AuthorSettings(k=2, distractors=1, pool=("chat", "email"), rounds=0)
ARGS = ["--services", "chat,email", "--k", "2", "--distractors", "1", "--walk", "3:6"]


def _client(url: str) -> LLMClient:
    return LLMClient(LLMConfig(base_url=url, model="scripted", max_retries=0, profile="generic"))


def _run(script: list, settings: AuthorSettings = SETTINGS):
    async def go():
        with ScriptedServer(script) as srv:
            client = _client(srv.url)
            try:
                return await author_one(client, 0, 0, settings), srv.requests
            finally:
                await client.close()

    return asyncio.run(go())


def test_skeleton_covers_the_services_and_revisits_one():
    sk = skeleton(0, 0, SETTINGS)
    assert sorted(set(sk.walk)) == ["chat", "email"]
    assert len(sk.walk) > len(set(sk.walk))
    assert all(a != b for a, b in zip(sk.walk, sk.walk[1:], strict=False))
    assert skeleton(0, 0, SETTINGS) == sk  # a pure function of (seed, index, settings)
    assert sk.distractors and not set(sk.distractors) & set(sk.services)


def test_cli_author_revises_from_diagnostics_and_its_tasks_pass_check(tmp_path):
    out, log = tmp_path / "authored.jsonl", tmp_path / "log.jsonl"
    script = [
        tool_calls(("chat__slack_user_search_messages", {"query": "renewal"})),  # EXPLORE
        tool_calls((PROPOSE, variant("leak"))),  # rejected: no_leak
        tool_calls((PROPOSE, GOOD)),  # the revision is kept
    ]
    with ScriptedServer(script) as srv:
        r = runner.invoke(
            app,
            [
                "tasks",
                "author",
                "--base-url",
                srv.url,
                "--model",
                "scripted",
                "--n",
                "1",
                *ARGS,
                "--out",
                str(out),
                "--log",
                str(log),
            ],
        )
        reqs = srv.requests
    assert r.exit_code == 0, r.output
    # the explore call ran against the real environment and came back as an envelope
    explored = next(m for m in reqs[1]["messages"] if m["role"] == "tool")
    assert json.loads(explored["content"])["success"] is True
    # the rejection went back to the model with its cause
    feedback = [
        m["content"] for m in reqs[2]["messages"] if m["role"] == "tool" and "diagnostics" in m["content"]
    ]
    assert feedback and json.loads(feedback[0])["diagnostics"][0]["cause"] == "no_leak"
    tasks = load_tasks(out)
    assert len(tasks) == 1
    t = tasks[0]
    assert t.meta["generator"] == "author" and t.meta["author"]["rounds"] == 2
    assert t.meta["author"]["history"][0]["causes"] == ["no_leak"]
    assert PO in t.meta["facts"] and PO not in t.instruction
    # the ${ref.0...} lookup was resolved into a literal channel id, grounded on the search
    post = t.reference_solution[-1]
    assert post.arguments["channel_id"].startswith("C") and post.sources["channel_id"] == "obs:0"
    [first, second] = [json.loads(line) for line in log.read_text().splitlines()]
    assert [d["cause"] for d in first["diagnostics"]] == ["no_leak"] and second["diagnostics"] == []
    check = runner.invoke(app, ["tasks", "check", str(out), "--json"])
    assert check.exit_code == 0, check.output
    assert json.loads(check.output)["passed"] == 1


@pytest.mark.parametrize(
    ("kind", "cause", "says"),
    [
        ("leak", "no_leak", PO),
        ("unknown_predicate", "rubric", "channel_was_pleased"),
        ("ungrounded", "grounded", "before it was shown"),
        ("label", "labels", "superseded"),
    ],
)
def test_bad_proposals_are_rejected_with_the_right_cause(kind, cause, says):
    outcome, _ = _run([tool_calls((PROPOSE, variant(kind)))])
    assert outcome.task is None
    assert outcome.cause == cause
    assert says in outcome.rounds[0]["details"][0]


def test_a_json_reply_without_tool_calls_is_a_proposal_and_rounds_are_bounded():
    bad = json.dumps(variant("unknown_predicate"))
    settings = AuthorSettings(k=2, distractors=1, pool=("chat", "email"), rounds=1)
    outcome, reqs = _run([say(f"Here it is:\n```json\n{bad}\n```"), say(bad), say(bad)], settings)
    assert outcome.task is None and outcome.cause == "rubric"
    assert len(outcome.rounds) == 2  # the first proposal and one revision, no more
    assert len(reqs) == 2


def test_a_reply_that_is_no_proposal_ends_the_session_as_format():
    outcome, _ = _run([say("I am not sure."), say("Still thinking."), say("No.")])
    assert outcome.task is None and outcome.cause == "format"


def test_resolve_is_a_lookup_and_refuses_what_has_not_run():
    from compoworld.tasks.author import Reject

    data = [{"messages": [{"channel_id": "C1", "n": 3}]}]
    assert resolve({"a": "${ref.0.messages.0.n}", "b": "in ${ref.0.messages.0.channel_id}!"}, [], data) == {
        "a": 3,
        "b": "in C1!",
    }
    with pytest.raises(Reject, match="has not run"):
        resolve("${ref.3.x}", [], data)
    with pytest.raises(Reject, match="no field"):
        resolve("${ref.0.nope}", [], data)


def test_gateway_calls_in_a_proposal_are_unwrapped():
    d = json.loads(json.dumps(GOOD))
    first = d["reference"][0]
    d["reference"][0] = {
        "tool": "call_tool",
        "arguments": {"tool": first["tool"], "arguments": first["arguments"]},
    }
    settings = AuthorSettings(k=2, distractors=1, pool=("chat", "email"), rounds=0, mode="gateway")
    outcome, reqs = _run([tool_calls(("list_services", {})), tool_calls((PROPOSE, d))], settings)
    assert outcome.task is not None, outcome.rounds
    assert outcome.task["reference_solution"][0]["tool"] == first["tool"]
    offered = {t["function"]["name"] for t in reqs[0]["tools"]}
    assert offered == {"list_services", "list_tools", "describe_tool", "call_tool", PROPOSE}
