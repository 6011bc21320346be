"""The runner against servers as they behave (issue 17): llama.cpp, vLLM, SGLang, Ollama, OpenAI.

Each scripted profile reproduces the quirks real servers showed: tools ignored without tool_choice,
500 on `content: null`, their own 400 on a context overflow, slowness. The scripted model plays the
task's reference; the runner must pass it, or classify the failure correctly.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from compoworld.agents.loop import Limits, compact, run_episode
from compoworld.agents.policies import LLMAgent, oracle_turns
from compoworld.llm.client import ContextOverflow, LLMClient, LLMConfig
from compoworld.llm.profiles import detect
from compoworld.tasks.generator import Settings
from compoworld.tasks.model import Task
from tests.scripted_server import ScriptedServer, tool_calls


@pytest.fixture(scope="module")
def task() -> Task:
    from compoworld.tasks.pipeline import generate

    tasks = generate(30, 21, Settings(distractors=2))[0]
    return next(t for t in tasks if t.answer and len(oracle_turns(t)) >= 3)


def agent_for(server: ScriptedServer, **kw) -> LLMAgent:
    kw.setdefault("backoff", 0.01)
    cfg = LLMConfig(base_url=server.url, model="scripted", api_key="k", **kw)
    return LLMAgent(LLMClient(cfg))


def reference_script(task: Task, mode: str = "direct") -> list[dict]:
    turns = oracle_turns(task, mode != "direct", mode == "gateway-compat")
    return [*(tool_calls(*t) for t in turns), tool_calls(("finish", {"answer": task.answer or ""}))]


@pytest.mark.parametrize("profile", ["llamacpp", "vllm", "sglang", "ollama", "openai", "unknown-llamacpp"])
def test_the_reference_passes_against_every_profile(task: Task, profile: str) -> None:
    with ScriptedServer(reference_script(task), profile=profile, context=200_000) as server:
        agent = agent_for(server)
        ep = asyncio.run(run_episode(task, agent))
    assert ep.error_class == "ok" and ep.V == 1 and ep.answer == task.answer, ep.error
    assert all(
        r["tool_choice"] == "auto" and r.get("max_tokens", r.get("max_completion_tokens")) == 4096
        for r in server.requests
    )
    assert "tools ignored" not in server.quirks_hit
    info = agent.client.info()
    expected = "generic" if profile == "unknown-llamacpp" else profile
    assert info["profile"] == expected and info["chosen"] == "detected"
    if profile in ("vllm", "sglang"):
        assert info["context_window"] == 200_000  # from /models' max_model_len
    if profile == "unknown-llamacpp":  # learned from the server's 500 on turn 2, once
        assert server.quirks_hit == ["null content"] and "string_content" in info["learned"][0]
    if profile in ("llamacpp", "unknown-llamacpp", "ollama"):
        sent = server.requests[2:] if profile == "unknown-llamacpp" else server.requests[1:]  # after the 500
        later = [m for r in sent for m in r["messages"] if m["role"] == "assistant"]
        assert later and all(m["content"] == "" for m in later)
    assert [r["finish_reason"] for r in ep.requests][-1] == "tool_calls" and len(ep.requests) == ep.turns


def test_without_tool_choice_llamacpp_ignores_the_tools(task: Task) -> None:
    """The failure the issue saw, reproduced: the same server with a generic profile that sends no
    tool_choice would get text only. Our profiles all send it; prove the scripted quirk bites."""
    from compoworld.llm.profiles import PROFILES, Profile

    with ScriptedServer(reference_script(task), profile="llamacpp") as server:
        PROFILES["no_tool_choice"] = Profile("no_tool_choice", tool_choice=False, string_content=True)
        try:
            ep = asyncio.run(run_episode(task, agent_for(server, profile="no_tool_choice")))
        finally:
            del PROFILES["no_tool_choice"]
    assert server.quirks_hit == ["tools ignored"] and ep.V == 0 and ep.answer == "I will help with that."


def test_vllm_without_auto_tool_choice_fails_with_the_fix(task: Task) -> None:
    with ScriptedServer(reference_script(task), profile="vllm", tool_choice_ok=False) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert ep.error_class == "endpoint_error" and "--enable-auto-tool-choice" in ep.error
    assert len(server.requests) == 1  # a 400 is not retried


@pytest.mark.parametrize("profile", ["llamacpp", "vllm", "sglang", "openai"])
def test_overflow_is_context_overflow_and_the_window_is_learned(task: Task, profile: str) -> None:
    with ScriptedServer(reference_script(task), profile=profile, context=1500) as server:
        agent = agent_for(server)
        ep = asyncio.run(run_episode(task, agent))
    assert ep.error_class == "context_overflow" and ep.V == 0
    assert agent.client.context_window == 1500 and len(server.requests) == 1  # never retried
    assert ep.abandoned["attempts"] == 1 and ep.abandoned["prompt_tokens_est"] > 1500


def test_compaction_keeps_an_episode_under_the_window(task: Task) -> None:
    script = reference_script(task)
    sizes = {}
    for on in (False, True):
        with ScriptedServer(list(script), profile="vllm", context=10**6) as server:
            ep = asyncio.run(
                run_episode(task, agent_for(server), limits=Limits(compact_history=on, keep_results=1))
            )
        assert ep.V == 1
        sizes[on] = max(server.prompt_tokens)
    assert sizes[True] < sizes[False]
    window = (sizes[True] + sizes[False]) // 2
    with ScriptedServer(list(script), profile="vllm", context=window) as server:
        ep = asyncio.run(run_episode(task, agent_for(server)))
    assert ep.error_class == "context_overflow"
    with ScriptedServer(list(script), profile="vllm", context=window) as server:
        ep = asyncio.run(
            run_episode(task, agent_for(server), limits=Limits(compact_history=True, keep_results=1))
        )
    assert ep.error_class == "ok" and ep.V == 1 and ep.compacted > 0
    summaries = [
        m["content"] for m in ep.messages if m["role"] == "tool" and m["content"].startswith("[compacted]")
    ]
    assert summaries and all("->" in s and len(s) < 400 for s in summaries)


def test_compact_replaces_old_results_by_one_line_per_call() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        tool_calls(("email__search", {"q": "x"}))["message"],
        {
            "role": "tool",
            "tool_call_id": "call_0_email__search",
            "content": json.dumps({"success": True, "data": [1, 2, 3]}),
        },
        tool_calls(("crm__get", {"id": "A"}))["message"],
        {
            "role": "tool",
            "tool_call_id": "call_0_crm__get",
            "content": json.dumps(
                {"success": False, "error": {"code": 404, "type": "not_found", "message": "no A"}}
            ),
        },
    ]
    assert compact(msgs, 1) == 1
    assert msgs[2]["content"] == '[compacted] email__search({"q": "x"}) -> ok, 3 items'
    assert msgs[4]["content"].startswith('{"success"')  # the last turn keeps its result
    assert (
        compact(msgs, 0) == 1 and msgs[4]["content"] == '[compacted] crm__get({"id": "A"}) -> error 404: no A'
    )
    assert compact(msgs, 0) == 0  # idempotent


def test_a_slow_server_times_out_once_then_answers(task: Task) -> None:
    # margins wide enough for a loaded 2-core machine: a normal answer takes milliseconds
    with ScriptedServer(reference_script(task), profile="llamacpp", slow=6.0, slow_requests=1) as server:
        agent = agent_for(server, timeout=2.0, max_backoff=0.05)
        ep = asyncio.run(run_episode(task, agent))
    assert ep.error_class == "ok" and ep.V == 1
    assert ep.abandoned["attempts"] == 1 and ep.requests[0]["retries"] == 1
    with ScriptedServer(reference_script(task), profile="llamacpp", slow=4.0) as server:
        agent = agent_for(server, timeout=1.0, max_backoff=0.05, timeout_retries=1)
        ep = asyncio.run(run_episode(task, agent))
    assert ep.error_class == "timeout" and len(server.requests) == 2  # one retry after a timeout, no more
    assert ep.abandoned["attempts"] == 2


def test_retry_after_is_honoured(task: Task) -> None:
    script = [{"status": 429, "headers": {"Retry-After": "1"}}, tool_calls(("finish", {"answer": "x"}))]
    with ScriptedServer(script) as server:
        t0 = time.perf_counter()
        ep = asyncio.run(run_episode(task, agent_for(server, backoff=0.01)))
        waited = time.perf_counter() - t0
    assert ep.error_class == "ok" and waited >= 1.0 and ep.abandoned["attempts"] == 1


def test_gateway_calls_that_go_nowhere_end_as_agent_format(task: Task) -> None:
    junk = tool_calls(("list_tools", {"service": "nope"}), ("describe_tool", {"tool": "nope__x"}))
    with ScriptedServer(default=junk) as server:
        ep = asyncio.run(run_episode(task, agent_for(server), mode="gateway"))
    assert ep.error_class == "agent_format" and ep.turns == 3 and ep.malformed_calls == 6


def test_overflow_error_carries_the_limit() -> None:
    async def go(url: str) -> None:
        client = LLMClient(LLMConfig(base_url=url, model="m", profile="llamacpp"))
        try:
            await client.chat([{"role": "user", "content": "x" * 20_000}])
        finally:
            await client.close()

    with ScriptedServer(profile="llamacpp", context=1000) as server, pytest.raises(ContextOverflow) as e:
        asyncio.run(go(server.url))
    assert e.value.limit == 1000 and e.value.status == 400


def test_detect_reads_each_servers_models_answer() -> None:
    assert detect({"data": [{"owned_by": "vllm", "max_model_len": 8192}]}) == ("vllm", 8192)
    assert detect({"data": [{"owned_by": "llamacpp", "meta": {"n_ctx_train": 2048}}]}) == ("llamacpp", 2048)
    assert detect({"data": [{"owned_by": "me"}]}) == ("llamacpp", None)
    assert detect({"data": [{"owned_by": "library"}]}) == ("ollama", None)
    assert detect({"data": []}) == ("generic", None)
    with pytest.raises(ValueError, match="unknown server profile 'x'"):
        LLMConfig(base_url="http://h", model="m", profile="x")
