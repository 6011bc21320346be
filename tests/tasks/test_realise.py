"""`tasks generate --realise-with M`: rewrites that pass the gates again are kept (the original is
recorded and what `tasks check` regenerates against); a rewrite that leaks a fact or drops a value
the reference needs is refused and the task keeps its instruction."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import load_tasks
from compoworld.tasks.pipeline import generate
from tests.scripted_server import ScriptedServer, say

runner = CliRunner()


def test_realised_instructions_pass_the_gates_and_leaks_are_refused(tmp_path):
    offline, _ = generate(3, 0, Settings())
    good, leaky, shy = offline
    fact = leaky.meta["facts"][0] if leaky.meta.get("facts") else leaky.dependency_graph.edges[0].fact.value

    def rewrite(body):
        req = body["messages"][1]["content"].split("\n", 1)[0].removeprefix("Request: ")
        if req == good.instruction:
            return say(json.dumps({"instruction": "Quick favour, when you get a minute: " + req}))
        if req == leaky.instruction:
            return say(json.dumps({"instruction": f"{req} (the value you are after is {fact})"}))
        return say("I would rather not.")  # no rewrite object: the task keeps its instruction

    out = tmp_path / "tasks.jsonl"
    with ScriptedServer(default=rewrite) as srv:
        r = runner.invoke(
            app,
            ["tasks", "generate", "--n", "3", "--seed", "0", "--out", str(out), "--realise-with", "scripted"],
            env={"COMPOWORLD_BASE_URL": srv.url},
        )
        requests = len(srv.requests)
    assert r.exit_code == 0, r.output
    a, b, c = load_tasks(out)
    assert a.instruction.startswith("Quick favour") and a.meta["realised"]["original"] == good.instruction
    assert b.instruction == leaky.instruction and "realised" not in b.meta  # the leak was refused
    assert c.instruction == shy.instruction and "realised" not in c.meta
    assert requests == 1 + 2 + 2  # one kept at once, the others retried once with the diagnostics
    assert "realised 1/3" in r.output and "no_leak 1" in r.output, r.output
    assert "format 1" in r.output
    check = runner.invoke(app, ["tasks", "check", str(out), "--json"])  # regenerates from the seed
    assert check.exit_code == 0, check.output
    assert json.loads(check.output)["passed"] == 3


def test_a_rewrite_that_drops_a_value_the_reference_needs_is_refused():
    import asyncio

    from compoworld.llm.client import LLMClient, LLMConfig
    from compoworld.tasks.author import AuthorSettings, check_design, skeleton
    from compoworld.tasks.model import Task
    from compoworld.tasks.realise import realise_one
    from tests.tasks.author_scripts import GOOD, JULIA

    s = AuthorSettings(k=2, distractors=1, pool=("chat", "email"))
    data, _ = check_design(GOOD, skeleton(0, 0, s), 0, 0, s)
    task = Task.model_validate(data)
    dropped = task.instruction.replace(f" ({JULIA})", "")

    async def go():
        with ScriptedServer(default=say(json.dumps({"instruction": dropped}))) as srv:
            client = LLMClient(LLMConfig(base_url=srv.url, model="m", max_retries=0, profile="generic"))
            try:
                return await realise_one(client, task)
            finally:
                await client.close()

    same, why = asyncio.run(go())
    assert same is task and why.startswith("grounded") and JULIA in why
