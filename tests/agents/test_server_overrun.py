"""A server that overruns `max_tokens`, or then a deadline (issue 27): the episode is classed
`server_overrun` (not a timeout that a rerun retries), and the client says what it learned."""

from __future__ import annotations

import asyncio

import pytest

from compoworld.agents.loop import ENDPOINT_FAILURES, ERROR_CLASSES, run_episode
from compoworld.agents.policies import LLMAgent
from compoworld.llm.client import LLMClient, LLMConfig, ServerOverrun
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task
from tests.scripted_server import ScriptedServer, tool_calls


@pytest.fixture(scope="module")
def task() -> Task:
    return Task.model_validate(generate_task(31, 0, Settings(k=3, distractors=1, walk_min=4, walk_max=5)))


def _client(server: ScriptedServer, **kw) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.url, model="m", api_key="k", backoff=0.01, **kw))


def test_a_reply_past_max_tokens_ends_the_episode_as_server_overrun(task) -> None:
    step = {**tool_calls(("finish", {"answer": ""})), "completion_tokens": 1995}
    with ScriptedServer([step]) as server:
        client = _client(server, max_tokens=256)
        ep = asyncio.run(run_episode(task, LLMAgent(client)))
    assert "server_overrun" in ERROR_CLASSES and "server_overrun" not in ENDPOINT_FAILURES
    assert ep.error_class == "server_overrun"
    assert "1995 completion tokens against a cap of 256" in ep.error
    assert server.requests[0]["max_tokens"] == 256
    assert any("ignores max_tokens" in x for x in client.info()["learned"])


def test_a_timeout_after_an_overrun_is_the_servers_overrun_not_a_timeout(task) -> None:
    script = [
        {**tool_calls(("email__gmail_search_emails", {"query": "x"})), "completion_tokens": 700},
        {**tool_calls(("finish", {"answer": ""})), "sleep": 2.0},
    ]
    with ScriptedServer(script) as server:
        client = _client(server, max_tokens=256, timeout=0.5)
        with pytest.raises(ServerOverrun, match="ignored max_tokens"):
            asyncio.run(client.chat([{"role": "user", "content": "hi"}]))
        with pytest.raises(ServerOverrun, match="deadline"):
            asyncio.run(client.chat([{"role": "user", "content": "hi"}]))


def test_a_reply_within_max_tokens_is_fine(task) -> None:
    with ScriptedServer([{**tool_calls(("finish", {"answer": ""})), "completion_tokens": 256}]) as server:
        ep = asyncio.run(run_episode(task, LLMAgent(_client(server, max_tokens=256))))
    assert ep.error_class == "ok"


def test_a_tool_list_past_the_window_is_caught_before_the_first_episode(tmp_path) -> None:
    """llama.cpp's /models names no window: the 400 of a one-token probe with the largest tool list
    gives it, and eval warns before any episode request (no --context-window needed)."""
    from typer.testing import CliRunner

    from compoworld.cli.main import app
    from compoworld.tasks.model import save_tasks

    t = Task.model_validate(generate_task(31, 0, Settings(k=3, distractors=4, walk_min=4, walk_max=5)))
    save_tasks([t], tmp_path / "t.jsonl")
    with ScriptedServer(
        default=tool_calls(("finish", {"answer": ""})), profile="llamacpp", context=8192
    ) as server:
        r = CliRunner().invoke(
            app,
            [
                "eval",
                "--tasks",
                str(tmp_path / "t.jsonl"),
                "--mode",
                "direct",
                "--base-url",
                server.url,
                "--model",
                "m",
                "--out",
                str(tmp_path / "run"),
            ],
        )
    out = r.output
    assert "over the model's context window of 8192" in out and "use --mode gateway" in out, out
    probe = server.requests[0]
    assert probe["max_tokens"] == 1 and len(probe["messages"]) == 1 and len(probe["tools"]) > 100
    assert out.index("warning") < out.index("ran ") if "ran " in out else True
