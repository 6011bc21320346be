"""The computer interface served: over MCP (`serve stdio`, the official client) screenshots come as
image content blocks, and through the agent loop (a scripted OpenAI-compatible server) as image parts;
the screen-only task's pointer-action reference scores V = 1 both ways."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from compoworld.interfaces.computer import chromium_path
from compoworld.tasks.generator import Settings, generate_task
from compoworld.tasks.model import Task, save_tasks

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="no Chromium (apt-get install chromium, or set COMPOWORLD_CHROMIUM)"
)


@pytest.fixture(scope="module")
def task() -> Task:
    return Task.model_validate(
        generate_task(100, 0, Settings(families=("computer.escalation_contact_on_card",)))
    )


def test_mcp_serves_screenshots_as_images_and_the_pointer_reference_passes(
    task: Task, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.jsonl"
    save_tasks([task], path)
    result_file = tmp_path / "result.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "compoworld.cli.main", "serve", "stdio", "--tasks", str(path), "--task-id", task.id]
        + ["--result", str(result_file)],
    )

    async def run() -> None:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"computer__screenshot", "computer__click", "computer__type", "computer__key"} <= names
            for c in task.reference_solution:
                r = await client.call_tool(c.tool, c.arguments)
                assert not r.is_error, r.structured_content
                if c.tool.startswith("computer__"):
                    image = r.content[0]
                    assert image.type == "image" and image.mime_type == "image/png"
                    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
                    assert "marks" in json.loads(r.content[1].text)
            await client.call_tool("finish", {"answer": ""})

    asyncio.run(run())
    for _ in range(200):
        if result_file.exists():
            break
        time.sleep(0.05)
    result = json.loads(result_file.read_text())
    assert result["V"] == 1 and result["task_id"] == task.id


def test_the_agent_loop_shows_screenshots_as_image_parts_and_the_reference_passes(
    task: Task, tmp_path: Path
) -> None:
    from compoworld.agents.loop import KEEP_SCREENSHOTS, run_episode
    from compoworld.agents.policies import LLMAgent, oracle_turns
    from compoworld.llm.client import LLMClient, LLMConfig
    from tests.scripted_server import ScriptedServer, tool_calls

    script = [tool_calls(*turn) for turn in oracle_turns(task)] + [tool_calls(("finish", {"answer": ""}))]
    with ScriptedServer(script) as server:
        cfg = LLMConfig(base_url=server.url, model="scripted", api_key="k", backoff=0.01)
        ep = asyncio.run(run_episode(task, LLMAgent(LLMClient(cfg))))
    assert ep.V == 1, [c for c in ep.checks if not c["passed"]]
    last = server.requests[-1]["messages"]
    tool_msgs = [m for m in last if m["role"] == "tool"]
    assert tool_msgs and all("iVBORw0KGgo" not in m["content"] for m in tool_msgs)  # no PNG in tool text
    images = [p for m in last if m["role"] == "user" and isinstance(m["content"], list) for p in m["content"]]
    shown = [p for p in images if p["type"] == "image_url"]
    assert 1 <= len(shown) <= KEEP_SCREENSHOTS
    assert shown[-1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert any(p.get("text") == "[earlier screenshot omitted]" for p in images)
    # SFT export writes the image messages (OpenAI's vision fine-tuning form), for both tool choices
    from compoworld.export.sft import sft_record

    for tools in ("gateway", "task"):
        rec = sft_record(_as_dict(ep), "openai", tools=tools)
        parts = [p for m in rec["messages"] if isinstance(m.get("content"), list) for p in m["content"]]
        assert any(
            p["type"] == "image_url" and p["image_url"]["url"].startswith("data:image/png") for p in parts
        )

    # a run keeps each distinct screenshot once, beside the episode, and the steps point at them
    from compoworld.interfaces.computer import screenshots_beside

    rec = screenshots_beside(_as_dict(ep), tmp_path)
    files = [s["envelope"]["data"]["file"] for s in rec["steps"] if s["tool"].startswith("computer__")]
    assert files and all((tmp_path / f).read_bytes()[:4] == b"\x89PNG" for f in files)
    assert len(set(files)) == len(list((tmp_path / "screenshots").iterdir()))
    assert "iVBORw0KGgo" not in json.dumps(rec["steps"])


def _as_dict(ep) -> dict:
    return ep.model_dump() if hasattr(ep, "model_dump") else dict(vars(ep))
