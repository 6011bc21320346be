"""verl's own `ToolAgentLoop.run`, on a CPU, with a scripted model in place of vLLM / SGLang.

`run_loop(...)` builds the real agent loop (its state machine, hermes tool parser, tool dispatch,
`max_parallel_calls` cap, tool-response truncation, token merging through the tiny Qwen2.5-template
tokenizer) and a server manager whose `generate` returns the tokens of the next scripted turn. It
returns what verl's reward loop hands `compute_score` (`reward_loop/reward_manager/naive.py`): the
response decoded with special tokens skipped, and `extra_info` merged with the rollout's
`extra_fields` plus `num_turns`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
from verl.workers.rollout.replica import TokenOutput


class ScriptedServer:
    """`server_manager.generate`: the next turn from `script(turn_index, prompt_text)`."""

    def __init__(self, tokenizer: Any, script: Callable[[int, str], str]) -> None:
        self.tokenizer, self.script, self.turn = tokenizer, script, 0

    async def generate(self, request_id: str, prompt_ids: list[int], sampling_params: dict, **_: Any):
        text = self.script(self.turn, self.tokenizer.decode(prompt_ids))
        self.turn += 1
        ids = self.tokenizer.encode(text + "<|im_end|>", add_special_tokens=False)
        return TokenOutput(token_ids=ids, log_probs=None)


def loop_config(
    max_parallel_calls: int = 1,
    max_tool_response_length: int = 1 << 20,
    max_assistant_turns: int = 64,
    response_length: int = 1 << 20,
    truncate_side: str = "middle",
) -> Any:
    return OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {
                    "prompt_length": 1 << 20,
                    "response_length": response_length,
                    "full_determinism": False,
                    "multi_turn": {
                        "max_user_turns": 64,
                        "max_assistant_turns": max_assistant_turns,
                        "max_parallel_calls": max_parallel_calls,
                        "max_tool_response_length": max_tool_response_length,
                        "tool_response_truncate_side": truncate_side,
                        "format": "hermes",
                    },
                },
                "model": {},
            }
        }
    )


def run_loop(row: dict, tools: list, tokenizer: Any, script: Callable[[int, str], str], **config: Any):
    """One rollout of `row` (a row of verl's RLHFDataset) through ToolAgentLoop; returns
    (solution_str, extra_info) as the reward loop passes them, and the loop's output."""
    kwargs = {
        "raw_prompt": list(row["prompt"]) if "raw_prompt" not in row else list(row["raw_prompt"]),
        "tools_kwargs": row["extra_info"]["tools_kwargs"],
        "extra_info": row["extra_info"],
    }

    async def go() -> Any:  # the loop binds the running event loop when it is built
        loop = ToolAgentLoop(
            trainer_config=DictConfigWrap(loop_config(**config)),
            server_manager=ScriptedServer(tokenizer, script),
            tokenizer=tokenizer,
            processor=None,
            dataset_cls=None,
            data_config=DictConfigWrap(OmegaConf.create({})),
            tools=ToolListWrap(tools),
        )
        return await loop.run({}, **kwargs)

    out = asyncio.run(go())
    text = tokenizer.decode(out.response_ids, skip_special_tokens=True)
    info = {**row["extra_info"], **out.extra_fields, "num_turns": out.num_turns}
    return text, info, out
