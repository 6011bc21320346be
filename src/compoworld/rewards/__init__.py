"""Rewards (layer 5, with `agents` and `rollout`): CompoWorld's rubric reward, WildAWM's format-aware
reward, GRPO group advantages.

May import: `core` through layer 4. Never layer 6 or `cli`.
"""

from compoworld.rewards.format import MAX_MALFORMED_TURNS, format_failed, longest_malformed_run
from compoworld.rewards.formulas import (
    compoworld_group_rewards,
    compoworld_rewards,
    episode_wildawm_reward,
    goal_outcomes,
    group_advantages,
    guards_passed,
    wildawm_advantages,
    wildawm_reward,
)

__all__ = [
    "MAX_MALFORMED_TURNS",
    "format_failed",
    "longest_malformed_run",
    "compoworld_group_rewards",
    "compoworld_rewards",
    "episode_wildawm_reward",
    "goal_outcomes",
    "group_advantages",
    "guards_passed",
    "wildawm_advantages",
    "wildawm_reward",
]
