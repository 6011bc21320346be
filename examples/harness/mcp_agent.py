"""A minimal external harness: an MCP client over streamable HTTP driving any OpenAI-compatible model.

It is what OpenCode or Codex CLI do, in 100 lines, and what `collect.py` runs by default when no
other harness is installed. It knows nothing of CompoWorld: it lists the MCP server's tools, offers
them to the model, runs each tool call through MCP, and stops at `finish` or a final message.

    python examples/harness/mcp_agent.py --mcp-url=URL --token=AGENT_TOKEN \
        --base-url http://127.0.0.1:8080/v1 --model smollm2 --instruction-file task.txt
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI


async def run(args: argparse.Namespace) -> int:
    instruction = Path(args.instruction_file).read_text()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=60)
    llm = AsyncOpenAI(base_url=args.base_url, api_key=args.api_key, max_retries=1, timeout=args.timeout)
    async with Client(streamable_http_client(args.mcp_url, http_client=http)) as mcp:
        listed = (await mcp.list_tools()).tools
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.input_schema,
                },
            }
            for t in listed
        ]
        messages: list[dict] = [
            {
                "role": "system",
                "content": "Complete the user's task with the tools. Call `finish` when done.",
            },
            {"role": "user", "content": instruction},
        ]
        for _ in range(args.max_turns):
            r = await llm.chat.completions.create(
                model=args.model,
                messages=messages,
                tools=tools,
                tool_choice="auto",
                max_tokens=args.max_tokens,
            )
            msg = r.choices[0].message
            calls = msg.tool_calls or []
            messages.append(
                {
                    "role": "assistant",
                    "content": msg.content or "",
                    **({"tool_calls": [c.model_dump() for c in calls]} if calls else {}),
                }
            )
            if not calls:
                await mcp.call_tool("finish", {"answer": msg.content or ""})
                return 0
            for c in calls:
                try:
                    arguments = json.loads(c.function.arguments or "{}")
                except json.JSONDecodeError:
                    arguments = {}
                res = await mcp.call_tool(c.function.name, arguments if isinstance(arguments, dict) else {})
                content = json.dumps(res.structured_content) if res.structured_content else str(res.content)
                messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
                if c.function.name == "finish":
                    return 0
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mcp-url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--api-key", default="EMPTY")
    p.add_argument("--instruction-file", required=True)
    p.add_argument("--max-turns", type=int, default=30)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--timeout", type=float, default=120.0)
    return p


def main() -> None:
    raise SystemExit(asyncio.run(run(parser().parse_args())))


if __name__ == "__main__":
    main()
