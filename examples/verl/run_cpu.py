"""verl's side of a CompoWorld rollout, on a CPU, with a scripted policy (no model, no GPU).

    python examples/verl/run_cpu.py [--tasks runs/tasks.jsonl] [--mode gateway] [--out runs/verl]

It writes the RL rows (`export rl --format verl`) and the tool config (`export verl-tools`), then, per
task, runs two policies the way verl's `ToolAgentLoop` runs a rollout: rows read by verl's
`RLHFDataset`, tools built by verl's tool registry from the YAML, every call as `_call_tool` makes it
(create with the row's create_kwargs, execute with the rollout's AgentData, release; step rewards
into `tool_rewards`). The policies are the task's reference and a no-op (`finish` at once). Then
`compute_score` scores each rollout from the hermes text verl would decode, and from the tool's
verdict. Expect reference 1.0 and no-op 0.0 in every column.

What needs a GPU is the model: verl's PPO/GRPO trainer generates with vLLM or SGLang (see README.md).
Everything this script runs is what that trainer runs around the model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
from pathlib import Path

from omegaconf import OmegaConf
from verl.tools.tool_registry import initialize_tools_from_config
from verl.utils.dataset.rl_dataset import RLHFDataset

from compoworld.agents.policies import oracle_turns
from compoworld.export.rl import export_rl
from compoworld.integrations.verl import compute_score, format_tool_call, tool_config, write_tool_config
from compoworld.tasks.model import load_tasks

try:  # verl's own AgentData and call path (needs cachetools and fastapi, which verl leaves out)
    from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
except ImportError:
    AgentData = ToolAgentLoop = None


class _AgentData:  # the fields of verl's AgentData that tools read and the loop fills
    def __init__(self, request_id: str, tools_kwargs: dict) -> None:
        self.request_id, self.tools_kwargs = request_id, tools_kwargs
        self.extra_fields: dict = {}
        self.tool_rewards: list[float] = []
        self.assistant_turns = 0


def new_agent_data(request_id: str, tools_kwargs: dict):
    if AgentData is None:
        return _AgentData(request_id, tools_kwargs)
    return AgentData([], None, None, None, None, {}, request_id, tools_kwargs)


async def call_tool(tools: dict, data, name: str, args: dict) -> str:
    """tool_agent_loop.py `_call_tool`: create -> execute(agent_data=) -> release; reward collected."""
    if ToolAgentLoop is not None:
        from verl.experimental.agent_loop.tool_parser import FunctionCall

        loop = ToolAgentLoop.__new__(ToolAgentLoop)  # only what _call_tool reads
        loop.tools, loop.max_tool_response_length, loop.tool_response_truncate_side = tools, 1 << 20, "middle"
        resp, reward, _ = await loop._call_tool(
            FunctionCall(name=name, arguments=json.dumps(args)), data.tools_kwargs, data
        )
    else:
        if name not in tools:
            return f"Unknown function '{name}'"
        tool = tools[name]
        iid, _ = await tool.create(create_kwargs=data.tools_kwargs.get(name, {}).get("create_kwargs", {}))
        try:
            resp, reward, _ = await tool.execute(iid, args, agent_data=data)
        finally:
            await tool.release(iid)
    if reward is not None:
        data.tool_rewards.append(reward)
    return resp.text


async def run_policy(tools: dict, data, turns) -> str:
    """Runs the turns; returns the response text verl decodes (hermes template, special tokens off)."""
    text = []
    for calls in turns:
        data.assistant_turns += 1
        results = [await call_tool(tools, data, n, a) for n, a in calls]
        text.append("\n".join(format_tool_call(n, a) for n, a in calls) + "\nuser\n")
        text.append("\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in results) + "\nassistant\n")
    return "".join(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, help="JSONL task file (default: 3 tasks generated here)")
    ap.add_argument("--mode", default="gateway", choices=["gateway", "direct"])
    ap.add_argument("--out", type=Path, default=Path("runs/verl"))
    ap.add_argument("--n", type=int, default=3, help="tasks to run")
    a = ap.parse_args()

    if a.tasks is not None:
        tasks = load_tasks(a.tasks)[: a.n]
    else:
        from compoworld.tasks.generator import Settings
        from compoworld.tasks.pipeline import generate

        tasks = generate(a.n, 7, Settings())[0]
    a.out.mkdir(parents=True, exist_ok=True)
    rows_path, cfg_path = a.out / f"train_{a.mode}.parquet", a.out / f"tool_config_{a.mode}.yaml"
    export_rl(tasks, rows_path, "verl", a.mode)
    write_tool_config(cfg_path, tool_config(a.mode, tasks))
    with contextlib.redirect_stdout(io.StringIO()):  # verl prints every tool schema and the dataset size
        tools = {t.name: t for t in initialize_tools_from_config(str(cfg_path))}
        ds = RLHFDataset(str(rows_path), None, OmegaConf.create({"filter_overlong_prompts": False}))
    print(f"{len(ds)} rows <- {rows_path}; {len(tools)} tools <- {cfg_path}")
    print(
        f"agent loop call path: {'ToolAgentLoop._call_tool' if ToolAgentLoop else 'its steps (see call_tool)'}"
    )
    print(
        f"{'task':<16} {'policy':<10} {'calls':>5} {'tool reward':>11} {'score(text)':>11} {'score(tool)':>11}"
    )
    for i, task in enumerate(tasks):
        row = ds[i]
        reference = oracle_turns(task, gateway=a.mode == "gateway")
        finish = [[("finish", {"answer": task.answer or ""})]]
        for policy, turns in (("reference", [*reference, *finish]), ("no-op", finish)):
            data = new_agent_data(f"{task.id}-{policy}", row["tools_kwargs"])
            text = asyncio.run(run_policy(tools, data, turns))
            info = {**row["extra_info"], **data.extra_fields, "tool_rewards": data.tool_rewards}
            by_text = compute_score("compoworld", text, None, row["extra_info"], source="text")
            by_tool = compute_score("compoworld", text, None, info)
            calls = sum(len(t) for t in turns)
            print(
                f"{task.id:<16} {policy:<10} {calls:>5} {sum(data.tool_rewards):>11.2f} "
                f"{by_text['score']:>11.2f} {by_tool['score']:>11.2f}"
            )


if __name__ == "__main__":
    main()
