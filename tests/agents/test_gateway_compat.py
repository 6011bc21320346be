"""`mode="gateway-compat"`: the gateway convention of the CompoWorld authors' published trajectories.

The published file could not be fetched into this repository, so these trajectories are written here
in its convention, as its records are shaped: `call_tool {tool_name, arguments}`, arguments as
objects, bare real tool names, a `service__` prefix only on a collision, services named after the
real servers (gmail, slack, hubspot), and servers our library does not have (seedbase).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from compoworld.agents.loop import run_episode
from compoworld.agents.policies import LLMAgent, OracleAgent, oracle_turns
from compoworld.core.environment import Environment
from compoworld.core.service import Service
from compoworld.core.tool import tool
from compoworld.llm.client import LLMClient, LLMConfig
from compoworld.rollout.replay import replay_file, replay_record
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task
from tests.scripted_server import ScriptedServer, tool_calls


def call(name: str, args: dict, i: int) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}


def record(
    services: list[str], calls: list[tuple[str, dict]], listed: dict[str, list[str]] | None = None
) -> dict:
    """A trajectory in the published shape; `listed` adds list_tools results (as the data has them)."""
    messages: list[dict] = [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]
    for svc, names in (listed or {}).items():
        messages.append(
            {
                "role": "tool",
                "name": "list_tools",
                "tool_call_id": f"lt_{svc}",
                "content": json.dumps(
                    {"service": svc, "tools": [{"name": n, "description": ""} for n in names]}
                ),
            }
        )
    for i, (name, args) in enumerate(calls):
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(name, args, i)]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "name": name, "content": "{}"})
    return {"tools": [], "messages": messages, "meta": {"services": services}, "source": "test"}


SAMPLE = record(
    ["gmail", "slack", "hubspot", "seedbase"],
    [
        ("list_services", {}),
        ("list_tools", {"service": "gmail"}),
        ("list_tools", {"service": "seedbase"}),  # not in our library: not counted
        ("describe_tool", {"tool": "gmail_search_emails"}),
        ("call_tool", {"tool_name": "gmail_search_emails", "arguments": {"query": "invoice"}}),
        ("call_tool", {"tool_name": "slack_user_list_channels", "arguments": {"limit": 2}}),
        ("call_tool", {"tool_name": "slack__slack_get_channel_history", "arguments": {"channel_id": "C0"}}),
        ("call_tool", {"tool_name": "hubspot_list_properties", "arguments": {"object_type": "deals"}}),
        ("call_tool", {"tool_name": "seedbase__list_projects", "arguments": {}}),
        ("call_tool", {"tool_name": "get_ddl", "arguments": {"project": "x"}}),
    ],
    listed={"seedbase": ["seedbase__list_projects", "get_ddl"]},
)


def test_published_calls_replay_through_gateway_compat(tmp_path: Path) -> None:
    r = replay_record(SAMPLE)
    assert r["mounted"] == {"gmail": "email", "slack": "chat", "hubspot": "crm"}
    assert r["calls"] == 10 and r["in_library"] == 7  # the three seedbase calls are not ours to judge
    assert r["accepted"] == 7 and r["rejected"] == [], r["rejected"]
    assert r["succeeded"] >= 5  # a channel id of their data need not exist in ours
    path = tmp_path / "sample.jsonl"
    path.write_text(
        json.dumps(SAMPLE) + "\n" + json.dumps(record(["seedbase"], [("list_services", {})])) + "\n"
    )
    total = replay_file(path)
    assert total["trajectories"] == 2 and total["accepted_share"] == 1.0
    assert total["servers_in_library"] == {"gmail": 1, "hubspot": 1, "slack": 1}


def test_the_same_calls_do_not_reach_our_tools_in_plain_gateway_mode() -> None:
    env = Environment(["email", "chat", "crm"], seed=0)
    reached = 0
    for m in SAMPLE["messages"]:
        for tc in m.get("tool_calls") or []:
            fn = tc["function"]
            if fn["name"] == "call_tool":
                r = env.call("call_tool", fn["arguments"])
                reached += r["success"] or r["error"]["code"] not in (400, 404)
    assert reached == 0  # what the issue saw: not one published call reached a tool


class Mirror(Service):
    """A service whose tool shares a real name with the email service's."""

    name = "mirror"
    domain = "test"

    @tool(mutates=False)
    def gmail_search_emails(self, query: str) -> dict:
        """Search the mirror.

        Args:
            query: What to look for.
        """
        return {"mirror": query}


def test_prefix_only_on_a_collision_and_results_not_enveloped() -> None:
    env = Environment(["email", "chat", Mirror], seed=0)
    gw = env.gateway_for("gateway-compat")
    assert gw.call("list_services", {}) == {"services": ["email", "chat", "mirror"]}
    listed = gw.call("list_tools", {"service": "gmail"})  # the real server's name works too
    names = [t["name"] for t in listed["tools"]]
    assert (
        listed["service"] == "email" and "email__gmail_search_emails" in names and "gmail_send_email" in names
    )
    assert gw.call("list_tools", {"service": "mirror"})["tools"][0]["name"] == "mirror__gmail_search_emails"
    amb = gw.call("call_tool", {"tool_name": "gmail_search_emails", "arguments": {"query": "x"}})
    assert (
        amb["error"]["type"] == "ambiguous_tool" and "mirror__gmail_search_emails" in amb["error"]["message"]
    )
    ok = gw.call("call_tool", {"tool_name": "mirror__gmail_search_emails", "arguments": {"query": "x"}})
    assert ok == {"success": True, "data": {"mirror": "x"}}
    d = gw.call("describe_tool", {"tool": "slack_user_list_channels"})
    assert d["name"] == "slack_user_list_channels" and d["parameters"]["type"] == "object"
    bad = gw.call("list_tools", {"service": "nope"})
    assert bad["success"] is False and bad["error"]["code"] == 404  # failures stay envelopes
    tools = {t["function"]["name"]: t for t in env.tools("openai", "gateway-compat")}
    assert tools["call_tool"]["function"]["parameters"]["required"] == ["tool_name"]


@pytest.fixture(scope="module")
def task() -> Task:
    from compoworld.tasks.pipeline import generate

    tasks = generate(30, 21, Settings(distractors=2))[0]
    return next(t for t in tasks if t.answer)


def test_oracle_and_a_scripted_model_pass_in_gateway_compat_mode(task: Task) -> None:
    ep = asyncio.run(run_episode(task, OracleAgent(), mode="gateway-compat"))
    assert ep.V == 1 and ep.error_class == "ok"
    calls = [s for s in ep.steps if s["tool"] == "call_tool"]
    assert calls and all("tool_name" in s["arguments"] for s in calls)
    script = [tool_calls(*t) for t in oracle_turns(task, True, True)]
    script.append(tool_calls(("finish", {"answer": task.answer or ""})))
    with ScriptedServer(script) as server:
        agent = LLMAgent(LLMClient(LLMConfig(base_url=server.url, model="s", backoff=0.01)))
        ep = asyncio.run(run_episode(task, agent, mode="gateway-compat"))
    assert ep.V == 1 and ep.error_class == "ok"
    assert "call_tool(tool_name, arguments)" in server.requests[0]["messages"][0]["content"]


def test_replay_compat_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from compoworld.cli.main import app

    path = tmp_path / "sample.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n")
    r = CliRunner().invoke(app, ["replay-compat", str(path), "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["in_library"] == 7 and s["accepted"] == 7 and s["accepted_share"] == 1.0
    r = CliRunner().invoke(app, ["replay-compat", str(path)])
    assert "7 accepted (100.0%)" in r.output
    assert CliRunner().invoke(app, ["replay-compat", str(tmp_path / "none.jsonl")]).exit_code == 2
