"""Datasets for trainers: SFT conversations (OpenAI, TRL) and RL prompts with rewards (verl, TRL)."""

from compoworld.export.rl import export_rl, score_completion
from compoworld.export.sft import export_sft, sft_record

__all__ = ["export_rl", "export_sft", "score_completion", "sft_record"]
