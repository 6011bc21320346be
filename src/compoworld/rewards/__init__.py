"""Rewards: CompoWorld's rubric reward, WildAWM's format-aware reward, GRPO group advantages."""

from compoworld.rewards.formulas import compoworld_rewards, group_advantages, wildawm_reward

__all__ = ["compoworld_rewards", "group_advantages", "wildawm_reward"]
