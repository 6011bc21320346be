"""Rollout throughput: 512 episodes at concurrency 256 against a local instant-answer endpoint.

The endpoint runs in its own process (its CPU is not counted) and answers at once: 8 turns of tool
calls, then `finish`. Prints episodes per second, peak memory, the errors, and CPU per tool step:

- harness CPU per step: the agent loop, environment, verification, rewards and the fsynced log,
  measured by running the same episodes with the same replies in process (no HTTP);
- runner CPU per step over HTTP: everything in the runner process, the openai client included;
- baseline, measured in the same run: the openai client alone sending the same number of requests
  with the same tool lists to the same endpoint (what any harness pays to talk to a model).

Target (issue 5): under 1 ms of harness CPU per step, and no errors.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

STEPS = 8  # tool turns per episode before finish (the generated tasks have L = 7..12)
RESPONSE_TEMPLATE = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "bench",
    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
}


def _answer(body: dict) -> dict:
    turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    tools = body.get("tools") or []
    if turns < STEPS:
        name = next(
            (
                t["function"]["name"]
                for t in tools
                if not t["function"]["parameters"].get("required") and t["function"]["name"] != "finish"
            ),
            "finish",
        )
        calls = [{"id": f"c{turns}", "type": "function", "function": {"name": name, "arguments": "{}"}}]
    else:
        calls = [
            {"id": "cf", "type": "function", "function": {"name": "finish", "arguments": '{"answer": ""}'}}
        ]
    return {
        **RESPONSE_TEMPLATE,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
                "finish_reason": "tool_calls",
            }
        ],
    }


async def _serve(port_q: mp.Queue) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = json.loads(await reader.readexactly(length)) if length else {}
                data = json.dumps(_answer(body)).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                    + str(len(data)).encode()
                    + b"\r\n\r\n"
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionResetError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    port_q.put(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def endpoint(port_q: mp.Queue) -> None:
    asyncio.run(_serve(port_q))


def harness_cpu(tasks, k: int, concurrency: int) -> float:
    """CPU of the same run with the endpoint's replies produced in process (no HTTP)."""
    from compoworld.agents.loop import run_episode
    from compoworld.llm.client import Reply

    class InProcess:
        name = "bench"

        async def act(self, task, messages, tools):
            msg = _answer({"messages": messages, "tools": tools})["choices"][0]["message"]
            return Reply(msg, {"prompt_tokens": 100, "completion_tokens": 10}, "tool_calls", 0)

    async def run() -> None:
        sem = asyncio.Semaphore(concurrency)

        async def one(t, s):
            async with sem:
                await run_episode(t, InProcess(), s)

        await asyncio.gather(*(one(t, s) for t in tasks for s in range(k)))

    asyncio.run(run())  # warm
    c0 = time.process_time()
    asyncio.run(run())
    return time.process_time() - c0


def main(n: int = 512, concurrency: int = 256) -> None:
    from compoworld.agents.policies import LLMAgent
    from compoworld.llm.client import LLMClient, LLMConfig
    from compoworld.rollout.runner import RunConfig, read_jsonl, run_eval
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    tasks, _ = generate(64, seed=77, settings=Settings())
    q: mp.Queue = mp.Queue()
    proc = mp.Process(target=endpoint, args=(q,), daemon=True)
    proc.start()
    port = q.get(timeout=30)
    url = f"http://127.0.0.1:{port}/v1"
    k = n // len(tasks)
    try:
        from compoworld.export.tools import episode_tools
        from compoworld.tasks.prompt import FINISH_TOOL

        async def bare(tasks) -> float:  # baseline: the client alone, same requests count and tool lists
            client = LLMClient(LLMConfig(base_url=url, model="bench", timeout=60))
            sem = asyncio.Semaphore(concurrency)
            tool_lists = [episode_tools(t.all_services, "direct") for t in tasks]
            body = [{"role": "user", "content": "hi"}]

            async def one(i: int) -> None:
                async with sem:
                    await client.chat(body, tool_lists[i % len(tool_lists)])

            c0 = time.process_time()
            await asyncio.gather(*(one(i) for i in range(n * (STEPS + 1))))
            await client.close()
            return time.process_time() - c0

        assert FINISH_TOOL

        bare_cpu = asyncio.run(bare(tasks))
        client = LLMClient(LLMConfig(base_url=url, model="bench", timeout=60))
        with tempfile.TemporaryDirectory() as d:
            tfile = Path(d) / "tasks.jsonl"
            cfg = RunConfig(
                tasks_file=str(tfile),
                tasks_sha="bench",
                agent="bench",
                k=k,
                mode="direct",
                max_turns=10,
                max_tokens=10**6,
                episode_timeout=600,
            )
            c0, t0 = time.process_time(), time.perf_counter()
            asyncio.run(run_eval(tasks, LLMAgent(client), cfg, Path(d) / "run", concurrency))
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
            episodes = read_jsonl(Path(d) / "run" / "episodes.jsonl")
    finally:
        proc.terminate()
    steps = sum(len(e["steps"]) for e in episodes)
    requests = sum(e["turns"] for e in episodes)
    harness = harness_cpu(tasks, k, concurrency) / steps * 1000
    errors = {c: sum(e["error_class"] == c for e in episodes) for c in {e["error_class"] for e in episodes}}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_step = cpu / steps * 1000
    bare_per_req = bare_cpu / (n * (STEPS + 1)) * 1000
    print(f"episodes: {len(episodes)} ({steps} tool steps, {requests} requests) at concurrency {concurrency}")
    print(f"{'episodes per second':34} {len(episodes) / wall:10.1f}")
    print(f"{'harness CPU per tool step':34} {harness:10.3f} ms   (loop, environment, verifier, log)")
    print(f"{'runner CPU per tool step, HTTP':34} {per_step:10.3f} ms   (the openai client included)")
    print(
        f"{'baseline: client CPU per request':34} {bare_per_req:10.3f} ms   runner/baseline = {per_step / bare_per_req:.2f}x"
    )
    print(f"{'peak memory (runner process)':34} {peak:10.0f} MB")
    print(f"{'error classes':34} {errors}")
    ok = harness < 1.0 and set(errors) == {"ok"}
    print("targets (< 1 ms CPU per step, no errors):", "met" if ok else "MISSED")


if __name__ == "__main__":
    main()
