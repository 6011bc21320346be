"""The real agent loop and client over HTTP, against a local scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json

import pytest

from compoworld.agents.loop import Limits, run_episode
from compoworld.agents.policies import LLMAgent
from compoworld.llm.client import EndpointError, LLMClient, LLMConfig
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task
from tests.scripted_server import ScriptedServer, say, tool_calls


@pytest.fixture(scope="module")
def task() -> Task:
    from compoworld.tasks.pipeline import generate

    tasks = generate(30, 21, Settings(distractors=2))[0]
    return next(t for t in tasks if t.answer)  # one that asks for a reply


def agent_for(server: ScriptedServer, **kw) -> LLMAgent:
    cfg = LLMConfig(base_url=server.url, model="scripted", api_key="k", backoff=0.01, **kw)
    return LLMAgent(LLMClient(cfg))


def reference_script(task: Task) -> list[dict]:
    from compoworld.agents.policies import oracle_turns

    script = [tool_calls(*turn) for turn in oracle_turns(task)]
    return [*script, tool_calls(("finish", {"answer": task.answer or ""}))]


def test_a_solved_task_over_http(task: Task) -> None:
    with ScriptedServer(reference_script(task)) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert ep.V == 1 and ep.score == 1.0 and ep.error_class == "ok" and ep.answer == task.answer
    first = server.requests[0]
    assert first["model"] == "scripted" and any(t["function"]["name"] == "finish" for t in first["tools"])
    assert (
        "2026-03-02T09:00:00Z" in first["messages"][0]["content"]
    )  # the simulated date is in the system prompt
    assert len(server.requests) == len(reference_script(task))
    assert [s["tool"] for s in ep.steps] == [c.tool for c in task.reference_solution]
    assert all(len(s["state_hash"]) == 32 for s in ep.steps) and ep.usage["prompt_tokens"] == 10 * len(
        server.requests
    )


def test_malformed_arguments_and_unknown_tools_get_envelopes_and_the_episode_goes_on(task: Task) -> None:
    script = [
        tool_calls(("email__gmail_search_emails", "{not json"), ("nope__tool", {})),
        tool_calls(("finish", {"answer": ""})),
    ]
    with ScriptedServer(script) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    tool_msgs = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    envelopes = [json.loads(m["content"]) for m in tool_msgs]
    assert [e["error"]["code"] for e in envelopes] == [400, 404]
    assert "not valid JSON" in envelopes[0]["error"]["message"]
    assert ep.error_class == "ok" and ep.malformed_calls == 2 and ep.V == 0


def test_several_calls_in_one_turn_and_null_content(task: Task) -> None:
    calls = [(c.tool, c.arguments) for c in task.reference_solution]
    with ScriptedServer([tool_calls(*calls), say("All done.")]) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert ep.turns == 2 and len(ep.steps) == len(calls) and ep.answer == "All done."
    assert server.requests[1]["messages"][2]["content"] is None  # content: null went back as sent


def test_429_then_success_is_retried_with_backoff(task: Task) -> None:
    with ScriptedServer(
        [{"status": 429}, {"status": 503}, tool_calls(("finish", {"answer": "x"}))]
    ) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert len(server.requests) == 3 and ep.error_class == "ok" and ep.answer == "x"


def test_timeouts_and_endpoint_errors_are_classified(task: Task) -> None:
    with ScriptedServer([{"sleep": 1.5, **say("late")}]) as server:
        ep = asyncio.run(run_episode(task, agent_for(server, timeout=0.3, max_retries=0)))
    assert ep.error_class == "timeout" and ep.V == 0
    with ScriptedServer([{"status": 401, "error": "bad key"}]) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert (
        ep.error_class == "endpoint_error" and "401" in ep.error and len(server.requests) == 1
    )  # 4xx is not retried
    with ScriptedServer([{"status": 500}] * 3) as server, pytest.raises(EndpointError):
        asyncio.run(agent_for(server, max_retries=2).client.chat([{"role": "user", "content": "hi"}]))


def test_turn_limit_and_repeated_malformed_turns(task: Task) -> None:
    bad = tool_calls(("email__gmail_search_emails", "{"))
    with ScriptedServer(default=bad) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert ep.error_class == "agent_format" and ep.turns == 3
    env = task.environment()
    free = next(n for n in env.tool_names if not env.tool_spec(n).required and not env.tool_spec(n).mutates)
    search = tool_calls((free, {}))
    with ScriptedServer(default=search) as server:
        ep = asyncio.run(run_episode(task, agent_for(server), limits=Limits(max_turns=4)))
    assert ep.error_class == "agent_limit" and ep.turns == 4


def test_config_from_environment(monkeypatch) -> None:
    monkeypatch.setenv("COMPOWORLD_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("COMPOWORLD_MODEL", "m")
    cfg = LLMConfig.from_env()
    assert cfg.base_url == "http://127.0.0.1:9/v1" and cfg.model == "m" and cfg.api_key == "EMPTY"
    monkeypatch.delenv("COMPOWORLD_MODEL")
    with pytest.raises(ValueError, match="COMPOWORLD_MODEL"):
        LLMConfig.from_env()
