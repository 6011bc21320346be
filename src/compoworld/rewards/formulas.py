"""The papers' reward formulas as pure functions.

Where a paper is silent, the choice made here (and why):
- **CompoWorld over guards.** The paper's rubric items are the work asked for. Our rubrics also hold
  guards (a trap left alone, nothing else changed). `compoworld_rewards` weighs the goal checks only
  and gives 0 to a rollout that failed a guard, as the verifier's score does; otherwise an agent that
  does nothing would collect every guard's weight.
- **WildAWM's subtasks.** `v_i` are the task's goal checks; guards and the collateral check are never
  subtasks (doing nothing passes them). A task with no goal check gets no bonus (N = 0).
- **A task with only guards.** With no goal check, `compoworld_rewards` gives 1 to a rollout whose
  guards all pass and 0 otherwise, as the verifier's score does (the two never disagree).
- **WildAWM's advantages.** A zero-variance group gets advantage 0 for every rollout, except a group
  in which every rollout failed on format: each gets -K^(-1/2), K the group size, so the policy is
  still pushed away from malformed output. What a format failure is: `rewards.format`.
- **The std of the advantages.** `std="sample"` (the default) divides by the sample std (n - 1), as
  TRL's and verl's GRPO do (`torch.std`): the group [1, 0] gets +-0.707. `std="population"` (n)
  gives the paper's formula as written, +-1.0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

GOAL = "goal"


def goal_outcomes(checks: Sequence[Mapping[str, Any]]) -> list[bool]:
    """The pass/fail of the goal checks among a verifier's checks (the subtasks of the papers)."""
    return [bool(c["passed"]) for c in checks if (c.get("kind") or GOAL) == GOAL]


def guards_passed(checks: Sequence[Mapping[str, Any]]) -> bool:
    return all(bool(c["passed"]) for c in checks if (c.get("kind") or GOAL) != GOAL)


def compoworld_rewards(
    passes: Sequence[Sequence[bool]], lam: float = 0.01, guards_ok: Sequence[bool] | None = None
) -> list[float]:
    """CompoWorld's completion-focused rubric reward for a group of rollouts of one task.

    For rollout i and check j with b_ij = 1 if the check passed:

        p_j = (1/G) * sum_i b_ij            (the group pass rate of check j)
        w_j = lambda + (1 - p_j)            (checks the group finds hard weigh more)
        R_i = sum_j w_j * b_ij / sum_j w_j

    `passes[i][j]` is b_ij over the goal checks; every rollout must have the same checks. Default
    lambda = 0.01. `guards_ok[i]` False sets R_i = 0 (see the module's note).
    """
    if not passes:
        return []
    n = len(passes[0])
    if any(len(row) != n for row in passes):
        raise ValueError("every rollout of a group must have the same number of checks")
    if guards_ok is not None and len(guards_ok) != len(passes):
        raise ValueError("guards_ok needs one flag per rollout")
    if n == 0:  # only guards: the verifier's score (1 when they pass)
        return [1.0 if guards_ok is None or ok else 0.0 for ok in (guards_ok or [True] * len(passes))]
    g = len(passes)
    p = [sum(bool(row[j]) for row in passes) / g for j in range(n)]
    w = [lam + (1.0 - pj) for pj in p]
    total = sum(w)
    rewards = [sum(wj for wj, b in zip(w, row, strict=True) if b) / total for row in passes]
    if guards_ok is not None:
        rewards = [r if ok else 0.0 for r, ok in zip(rewards, guards_ok, strict=True)]
    return rewards


def compoworld_group_rewards(checks: Sequence[Sequence[Mapping[str, Any]]], lam: float = 0.01) -> list[float]:
    """`compoworld_rewards` from each rollout's verifier checks (dicts with passed and kind)."""
    return compoworld_rewards(
        [goal_outcomes(c) for c in checks], lam, guards_ok=[guards_passed(c) for c in checks]
    )


def wildawm_reward(format_ok: bool, verified: bool, subtasks: Sequence[bool]) -> float:
    """WildAWM's format-aware reward:

        r = -1                                  on a format failure
        r = min(1, V + (0.1 / N) * sum_i v_i)   otherwise

    with V the verifier's 0/1 outcome and v_i the N subtask outcomes (0 bonus when N = 0). Pass the
    goal checks as subtasks (`goal_outcomes`), never the guards.
    """
    if not format_ok:
        return -1.0
    n = len(subtasks)
    bonus = 0.1 / n * sum(bool(v) for v in subtasks) if n else 0.0
    return min(1.0, float(bool(verified)) + bonus)


def episode_wildawm_reward(format_ok: bool, verified: bool, checks: Sequence[Mapping[str, Any]]) -> float:
    """`wildawm_reward` from a verifier's checks: N counts the goal checks only."""
    return wildawm_reward(format_ok, verified, goal_outcomes(checks))


STDS = ("sample", "population")


def _mean_std(rewards: Sequence[float], std: str = "sample") -> tuple[float, float]:
    if std not in STDS:
        raise ValueError(f"std must be one of {', '.join(STDS)}, got {std!r}")
    n = len(rewards)
    mean = sum(rewards) / n
    dof = n - 1 if std == "sample" else n
    sq = sum((r - mean) ** 2 for r in rewards)
    return mean, (math.sqrt(sq / dof) if dof > 0 else 0.0)


def group_advantages(
    rewards: Sequence[float], delta: float = 1e-6, zero_variance: str = "zero", std: str = "sample"
) -> list[float | None]:
    """Group-normalised advantages A_i = (r_i - mean) / (std + delta): `std="sample"` (default, as
    TRL and verl) or `"population"` (the paper's formula as written).

    For a zero-variance group (every reward equal, no learning signal): zero_variance="zero" gives
    every rollout advantage 0; "drop" returns None for each, marking the group to be left out of the
    batch. WildAWM's own rule, with its format case, is `wildawm_advantages`.
    """
    if zero_variance not in ("zero", "drop"):
        raise ValueError("zero_variance must be 'zero' or 'drop'")
    if not rewards:
        return []
    mean, sd = _mean_std(rewards, std)
    if sd <= 1e-12:
        return [0.0 if zero_variance == "zero" else None for _ in rewards]
    return [(r - mean) / (sd + delta) for r in rewards]


def wildawm_advantages(
    rewards: Sequence[float],
    format_failed: Sequence[bool] | None = None,
    delta: float = 1e-6,
    std: str = "sample",
) -> list[float]:
    """WildAWM's group advantages: group-normalised (`std` as in `group_advantages`), 0 for a
    zero-variance group, and -K^(-1/2) for each of the K rollouts when every one of them failed on
    format."""
    if not rewards:
        return []
    if format_failed is not None and len(format_failed) != len(rewards):
        raise ValueError("format_failed needs one flag per rollout")
    k = len(rewards)
    if format_failed is not None and all(format_failed):
        return [-(k**-0.5)] * k
    mean, sd = _mean_std(rewards, std)
    if sd <= 1e-12:
        return [0.0] * k
    return [(r - mean) / (sd + delta) for r in rewards]
