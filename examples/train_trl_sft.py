"""SFT with TRL on CompoWorld's verified trajectories: the loss on assistant tokens only.

    python examples/train_trl_sft.py                       # CPU: 8 new tasks, oracle rows, a tiny model
    python examples/train_trl_sft.py --run runs/oracle     # rows of a run (`compoworld eval ...`)
    python examples/train_trl_sft.py --rows sft.jsonl --model Qwen/Qwen2.5-0.5B-Instruct --bf16   # GPU

Rows are `compoworld export sft --format trl` (by default in gateway form: 5 tools a row, the first
assistant token under 1k tokens in). `max_length` is set from the rows' exact token lengths,
so no assistant token is truncated away; `assistant_only_loss=True` masks everything else. A model
of your own needs a chat template that TRL can give `{% generation %}` markers (Qwen2.5, Qwen3,
Llama 3, ...; see TRL's training templates).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def oracle_rows(n: int, seed: int) -> list[dict]:
    """Generate n verified tasks and replay their references through the gateway (SFT rows)."""
    from compoworld.agents.loop import run_episode
    from compoworld.agents.policies import OracleAgent
    from compoworld.export.sft import sft_rows
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    tasks = generate(n, seed, Settings())[0]
    episodes = []
    for t in tasks:
        rec = asyncio.run(run_episode(t, OracleAgent(), mode="gateway")).record()
        rec["all_services"] = t.all_services
        episodes.append(rec)
    return sft_rows(episodes, "trl")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--rows", type=Path, help="SFT rows (compoworld export sft --format trl)")
    src.add_argument("--run", type=Path, help="a run directory (compoworld eval --out ...)")
    ap.add_argument("--tasks", type=int, default=8, help="tasks to generate when no rows are given")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", help="a model id or folder (default: a tiny random model built here)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "compoworld-trl-sft")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=-1)
    ap.add_argument(
        "--lr", type=float, help="learning rate (default: 1e-5 with --model, 3e-3 for the tiny one)"
    )
    ap.add_argument("--bf16", action="store_true")
    args = ap.parse_args()

    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from compoworld.export.sft import length_summary, sft_rows, write_rows
    from compoworld.integrations.tiny import build_tiny, row_texts

    args.out.mkdir(parents=True, exist_ok=True)
    if args.rows:
        rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    elif args.run:
        from compoworld.rollout.runner import load_run

        rows = sft_rows(load_run(args.run)[1], "trl")
    else:
        rows = oracle_rows(args.tasks, args.seed)
    if not rows:
        raise SystemExit("no SFT rows: the run has no episode with score 1")
    data = args.out / "sft.jsonl"
    write_rows(rows, data)
    model_path = args.model or str(build_tiny(args.out / "tiny", row_texts(rows)))
    tok = AutoTokenizer.from_pretrained(model_path)
    lengths = length_summary(rows, tok)
    print(f"{len(rows)} rows, at most {lengths['tools_max']} tools; tokens: {lengths}")

    config = SFTConfig(
        output_dir=str(args.out / "checkpoints"),
        assistant_only_loss=True,
        max_length=lengths["tokens_max"],  # every row whole: no assistant token cut off
        per_device_train_batch_size=1,
        gradient_accumulation_steps=1,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        learning_rate=args.lr or (1e-5 if args.model else 3e-3),
        bf16=args.bf16,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
    )
    model = AutoModelForCausalLM.from_pretrained(model_path)
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=load_dataset("json", data_files=str(data), split="train"),
        processing_class=tok,
    )
    trained = sum(sum(lab != -100 for lab in ex["labels"]) for ex in trainer.train_dataset)
    total = sum(len(ex["input_ids"]) for ex in trainer.train_dataset)
    print(f"loss on {trained} of {total} tokens (the assistant's)")
    trainer.train()
    trainer.save_model(str(args.out / "final"))
    print(f"saved -> {args.out / 'final'}")


if __name__ == "__main__":
    main()
