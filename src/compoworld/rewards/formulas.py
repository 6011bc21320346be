"""The papers' reward formulas as pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence


def compoworld_rewards(passes: Sequence[Sequence[bool]], lam: float = 0.01) -> list[float]:
    """CompoWorld's completion-focused rubric reward for a group of rollouts of one task.

    For rollout i and check j with b_ij = 1 if the check passed:

        p_j = (1/G) * sum_i b_ij            (the group pass rate of check j)
        w_j = lambda + (1 - p_j)            (checks the group finds hard weigh more)
        R_i = sum_j w_j * b_ij / sum_j w_j

    `passes[i][j]` is b_ij; every rollout must have the same checks. Default lambda = 0.01.
    """
    if not passes:
        return []
    n = len(passes[0])
    if any(len(row) != n for row in passes):
        raise ValueError("every rollout of a group must have the same number of checks")
    if n == 0:
        return [0.0] * len(passes)
    g = len(passes)
    p = [sum(bool(row[j]) for row in passes) / g for j in range(n)]
    w = [lam + (1.0 - pj) for pj in p]
    total = sum(w)
    return [sum(wj for wj, b in zip(w, row, strict=True) if b) / total for row in passes]


def wildawm_reward(format_ok: bool, verified: bool, subtasks: Sequence[bool]) -> float:
    """WildAWM's format-aware reward:

        r = -1                                  on a format failure
        r = min(1, V + (0.1 / N) * sum_i v_i)   otherwise

    with V the verifier's 0/1 outcome and v_i the N subtask outcomes (0 bonus when N = 0).
    """
    if not format_ok:
        return -1.0
    n = len(subtasks)
    bonus = 0.1 / n * sum(bool(v) for v in subtasks) if n else 0.0
    return min(1.0, float(bool(verified)) + bonus)


def group_advantages(
    rewards: Sequence[float], delta: float = 1e-6, zero_variance: str = "zero"
) -> list[float | None]:
    """Group-normalised advantages A_i = (r_i - mean) / (std + delta), std the population std.

    WildAWM's rule for zero-variance groups (every reward equal, so no learning signal):
    zero_variance="zero" gives every rollout advantage 0; "drop" returns None for each, marking the
    group to be left out of the batch.
    """
    if not rewards:
        return []
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    if std <= 1e-12:
        if zero_variance not in ("zero", "drop"):
            raise ValueError("zero_variance must be 'zero' or 'drop'")
        return [0.0 if zero_variance == "zero" else None for _ in rewards]
    return [(r - mean) / (std + delta) for r in rewards]
