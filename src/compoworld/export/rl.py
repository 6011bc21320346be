"""RL export: one prompt per task with everything the reward needs, as verl and TRL read datasets.

- verl: parquet columns `data_source`, `prompt` (chat messages), `ability`, `reward_model`
  ({"style": "rule", "ground_truth": ...}), `agent_name` ("tool_agent": verl's ToolAgentLoop) and
  `extra_info` (task id, index, tools, the task JSON, the mode, `tools_kwargs` for
  `integrations.verl.CompoWorldTool` and, in direct mode, `tool_selection`); the tool config is
  `compoworld export verl-tools`, the reward `integrations.verl.compute_score`.
- trl: parquet columns `prompt` (chat messages), `task_id`, `tools` and `task` (JSON text);
  TRL passes extra columns to reward functions, which can call `score_completion`.

`score_completion(task_json, messages)` replays the tool calls of a completion in the task's
environment and returns the verifier's score: the reward, computed from state, not from text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compoworld.export.tools import episode_tools
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH, task_system_prompt
from compoworld.verify.verifier import verify


def prompt_messages(task: Task, mode: str = "direct") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": task_system_prompt(task, mode)},
        {
            "role": "user",
            "content": task.instruction
            + "\n\nWhen you are finished, call `finish` with your final answer (empty if none).",
        },
    ]


def score_completion(
    task_json: str | bytes | dict[str, Any] | Task, messages: list[dict[str, Any]]
) -> dict[str, Any]:
    """Replay a completion's tool calls on a fresh copy of the task and verify the end state. The task
    is a `Task`, its dict, or its JSON: a full task or a line of a task file (s0 as a patch)."""
    from compoworld.integrations.verl import load_task

    task = load_task(task_json)
    env = task.environment()
    answer = None
    finished = False
    for m in messages:
        if finished:
            break  # the episode ends at `finish`: nothing after it counts (as in the environments)
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls") or []
        if not calls and m.get("content"):
            answer = m["content"]
        for tc in calls:
            fn = tc.get("function", {})
            args = fn.get("arguments")
            try:
                args = json.loads(args) if isinstance(args, str) else (args or {})
            except (ValueError, RecursionError):
                continue
            if fn.get("name") == FINISH:
                answer = args.get("answer") if isinstance(args, dict) else None
                finished = True
                break
            env.call(fn.get("name", ""), args)
    r = verify(task, env.snapshot(), answer)
    return {"V": int(r.passed), "score": r.score, "checks": [c.model_dump() for c in r.checks]}


def export_rl(tasks: list[Task], out: str | Path, fmt: str, mode: str = "gateway") -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if fmt not in ("verl", "trl"):
        raise ValueError(f"unknown RL format {fmt!r}: expected verl or trl")
    if fmt == "verl":
        from compoworld.integrations.verl import row_columns
    rows = []
    for i, t in enumerate(tasks):
        tools = json.dumps(episode_tools(t.all_services, mode))
        task_json = t.to_json().decode()
        if fmt == "verl":
            cols = row_columns(t, mode)
            rows.append(
                {
                    "data_source": "compoworld",
                    "prompt": prompt_messages(t, mode),
                    "ability": "agent",
                    "reward_model": {
                        "style": "rule",
                        "ground_truth": json.dumps(
                            {"rubric": [r.model_dump() for r in t.rubric], "answer": t.answer}
                        ),
                    },
                    "agent_name": cols["agent_name"],
                    "extra_info": {
                        "index": i,
                        "task_id": t.id,
                        "tools": tools,
                        "task": task_json,
                        **cols["extra_info"],
                    },
                }
            )
        else:
            rows.append(
                {"prompt": prompt_messages(t, mode), "task_id": t.id, "tools": tools, "task": task_json}
            )
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), str(out))
    return len(rows)
