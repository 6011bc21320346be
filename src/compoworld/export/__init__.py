"""Datasets for trainers (layer 6, with `serve`, `integrations` and `view`): SFT conversations (OpenAI,
TRL) and RL prompts with rewards (verl, TRL).

May import: every layer below, and `integrations`. Never `cli`.
"""

from compoworld.export.rl import export_rl, score_completion
from compoworld.export.sft import export_sft, sft_record

__all__ = ["export_rl", "export_sft", "score_completion", "sft_record"]
