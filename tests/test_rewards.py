"""The reward formulas against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from compoworld.rewards import compoworld_rewards, group_advantages, wildawm_reward


def test_compoworld_reward_by_hand() -> None:
    # 2 rollouts x 3 checks. p = [1, 0.5, 0]; w = [0.01, 0.51, 1.01]; total = 1.53
    passes = [[True, True, False], [True, False, False]]
    r = compoworld_rewards(passes, lam=0.01)
    assert r[0] == pytest.approx((0.01 + 0.51) / 1.53)
    assert r[1] == pytest.approx(0.01 / 1.53)


def test_compoworld_reward_all_fail_and_all_pass() -> None:
    assert compoworld_rewards([[False, False]] * 3) == [0.0, 0.0, 0.0]
    # every check passes for everyone: p_j = 1, w_j = lambda, so R = 1
    assert compoworld_rewards([[True, True]] * 4) == pytest.approx([1.0] * 4)
    assert compoworld_rewards([]) == []
    with pytest.raises(ValueError):
        compoworld_rewards([[True], [True, False]])


def test_wildawm_reward() -> None:
    assert wildawm_reward(False, True, [True, True]) == -1.0
    assert wildawm_reward(True, False, [True, False, False, True]) == pytest.approx(0.05)
    assert wildawm_reward(True, True, [True, True]) == 1.0  # capped
    assert wildawm_reward(True, False, []) == 0.0


def test_group_advantages() -> None:
    a = group_advantages([1.0, 0.0], delta=0.0)
    assert a == pytest.approx([1.0, -1.0])
    r = [0.2, 0.4, 0.9]
    mean = sum(r) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in r) / 3)
    assert group_advantages(r, delta=1e-6) == pytest.approx([(x - mean) / (std + 1e-6) for x in r])
    assert group_advantages([0.5, 0.5, 0.5]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.5, 0.5], zero_variance="drop") == [None, None]
    assert group_advantages([]) == []
