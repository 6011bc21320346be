"""GRPO with TRL on CompoWorld tasks: `GRPOTrainer(environment_factory=CompoWorldEnv)`.

    python examples/train_trl_grpo.py                      # CPU: 2 new tasks, the tiny model, scripted
    python examples/train_trl_grpo.py --rows rl.parquet --model Qwen/Qwen2.5-1.5B-Instruct --bf16   # GPU
    python examples/train_trl_grpo.py --reward compoworld  # CompoWorld's group rubric reward

Rows are `compoworld export rl --format trl --mode gateway`: TRL renders the environment's five
tools (the four meta-tools and `finish`) into each prompt, parses the model's tool calls, runs them
in a fresh copy of the task per rollout, and scores the end state with the verifier.

On the tiny model (no `--model`) the policy is scripted (`integrations.tiny.scripted_model`): the
first rollout of each prompt replays the task's reference, the second does nothing, so the step
shows the learning signal (rewards 1 and 0, `frac_reward_zero_std` 0) through TRL's real loop.
`--random` samples the random tiny model instead (rewards then all fail: no signal, as expected).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=Path, help="RL rows (compoworld export rl --format trl --mode gateway)")
    ap.add_argument("--tasks", type=int, default=2, help="tasks to generate when no rows are given")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="a model id or folder (default: the tiny model, scripted)")
    ap.add_argument("--random", action="store_true", help="sample the tiny model instead of scripting it")
    ap.add_argument("--reward", default="score", choices=["score", "V", "wildawm", "compoworld"])
    ap.add_argument("--num-generations", type=int, default=2)
    ap.add_argument("--max-steps", type=int, default=None, help="default: one per task")
    ap.add_argument(
        "--max-completion-length", type=int, default=None, help="tokens (default 16384, tiny 16384)"
    )
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--vllm", action="store_true", help="generate with vLLM (colocate), on a GPU")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "compoworld-trl-grpo")
    args = ap.parse_args()

    import pyarrow.parquet as pq
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from compoworld.export.rl import export_rl
    from compoworld.integrations.tiny import build_tiny, row_texts, scripted_model
    from compoworld.integrations.trl import compoworld_env, compoworld_reward, task_of_row

    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.rows
    if rows_path is None:
        from compoworld.tasks.generator import Settings
        from compoworld.tasks.pipeline import generate

        rows_path = args.out / "rl.parquet"
        export_rl(generate(args.tasks, args.seed, Settings())[0], rows_path, "trl", "gateway")
    rows = pq.read_table(str(rows_path)).to_pylist()
    tasks = [task_of_row(r) for r in rows]
    if args.model:
        model_path = args.model
        model = AutoModelForCausalLM.from_pretrained(model_path)
    else:
        model_path = str(build_tiny(args.out / "tiny", row_texts(rows)))
        model = (
            AutoModelForCausalLM.from_pretrained(model_path)
            if args.random
            else scripted_model(model_path, tasks)
        )
    tok = AutoTokenizer.from_pretrained(model_path)

    g = args.num_generations
    config = GRPOConfig(
        output_dir=str(args.out / "checkpoints"),
        num_generations=g,
        # one group per generation batch, on one process: what the group reward (compoworld) needs
        per_device_train_batch_size=1,
        steps_per_generation=g,
        max_steps=args.max_steps or len(rows) * g,  # a generation batch (one task's group) feeds g steps
        # the whole multi-turn rollout, tool results included (a random model rarely stops: keep it short)
        max_completion_length=args.max_completion_length or (256 if args.random else 16384),
        max_tool_calling_iterations=64,  # the longest default task's reference takes ~26 turns
        learning_rate=args.lr,
        bf16=args.bf16,
        use_cpu=not _has_gpu(),  # transformers wants it said on a machine without a GPU
        use_vllm=args.vllm,
        vllm_mode="colocate",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
    )
    env = compoworld_env(args.reward)
    trainer = GRPOTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tok,
        environment_factory=env,
        reward_funcs=[compoworld_reward] if args.reward == "compoworld" else None,
    )
    trainer.train()
    name = "compoworld_reward" if args.reward == "compoworld" else env.__name__
    rewards = list(trainer._logs["rewards"][name])
    print(f"rewards ({args.reward}) of the last {len(rewards)} rollouts: {rewards}")
    for h in trainer.state.log_history:
        if "reward" in h:
            print(
                f"step {h['step']}: reward {h['reward']:.3f}, reward_std {h['reward_std']:.3f}, "
                f"frac_reward_zero_std {h['frac_reward_zero_std']:.2f}, tool calls {h.get('tools/call_frequency')}"
            )


if __name__ == "__main__":
    main()
