"""The reward formulas against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from compoworld.rewards import (
    compoworld_group_rewards,
    compoworld_rewards,
    episode_wildawm_reward,
    goal_outcomes,
    group_advantages,
    wildawm_advantages,
    wildawm_reward,
)


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
    # the sample std by default, as TRL and verl: [1, 0] -> +-0.707; the paper's population std: +-1
    assert group_advantages([1.0, 0.0], delta=0.0) == pytest.approx([0.5**0.5, -(0.5**0.5)])
    assert group_advantages([1.0, 0.0], delta=0.0, std="population") == pytest.approx([1.0, -1.0])
    r = [0.2, 0.4, 0.9]
    mean = sum(r) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in r) / 2)
    assert group_advantages(r, delta=1e-6) == pytest.approx([(x - mean) / (std + 1e-6) for x in r])
    pop = math.sqrt(sum((x - mean) ** 2 for x in r) / 3)
    assert group_advantages(r, 1e-6, std="population") == pytest.approx(
        [(x - mean) / (pop + 1e-6) for x in r]
    )
    with pytest.raises(ValueError, match="std must be one of"):
        group_advantages(r, std="biased")
    assert group_advantages([0.5, 0.5, 0.5]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.5, 0.5], zero_variance="drop") == [None, None]
    assert group_advantages([]) == []


def _checks(goals: list[bool], guards: list[bool]) -> list[dict]:
    return [{"passed": p, "kind": "goal"} for p in goals] + [{"passed": p, "kind": "guard"} for p in guards]


def test_wildawm_subtasks_are_goal_checks_never_guards() -> None:
    # 1 of 2 goals met, the collateral guard passes: N = 2 (not 3), bonus 0.1 / 2
    assert episode_wildawm_reward(True, False, _checks([True, False], [True])) == pytest.approx(0.05)
    # doing nothing passes every guard but earns no bonus
    assert episode_wildawm_reward(True, False, _checks([False, False], [True, True])) == 0.0
    assert goal_outcomes([{"passed": True}]) == [True]  # a check with no kind is a goal


def test_wildawm_advantages_zero_variance_and_format_rule() -> None:
    assert wildawm_advantages([0.0, 0.0, 0.0]) == [0.0, 0.0, 0.0]
    assert wildawm_advantages([1.0, 1.0], [False, False]) == [0.0, 0.0]
    # every rollout failed on format: -K^(-1/2) each
    assert wildawm_advantages([-1.0] * 4, [True] * 4) == pytest.approx([-0.5] * 4)
    # one format failure among passes is an ordinary group
    a = wildawm_advantages([1.0, -1.0], [False, True], delta=0.0)
    assert a == pytest.approx([0.5**0.5, -(0.5**0.5)])
    a = wildawm_advantages([1.0, -1.0], [False, True], delta=0.0, std="population")
    assert a == pytest.approx([1.0, -1.0])
    with pytest.raises(ValueError):
        wildawm_advantages([1.0], [True, False])


def test_compoworld_reward_weighs_goals_and_zeroes_a_failed_guard() -> None:
    # rollout 0 meets both goals but broke a guard; rollout 1 meets one goal cleanly
    group = [_checks([True, True], [False]), _checks([True, False], [True]), _checks([False, False], [True])]
    r = compoworld_group_rewards(group)
    assert r[0] == 0.0
    # goals only: p = [2/3, 1/3]; w = [0.01 + 1/3, 0.01 + 2/3]
    w = [0.01 + 1 / 3, 0.01 + 2 / 3]
    assert r[1] == pytest.approx(w[0] / sum(w))
    assert r[2] == 0.0


def test_advantages_match_trl_and_verl_normalisation() -> None:
    torch = pytest.importorskip("torch")
    r = [0.25, 1.0, 0.0, 0.5]
    t = torch.tensor(r)
    # TRL's GRPOTrainer and verl's GRPO outcome advantage: (r - mean) / (torch.std(r) + eps)
    expect = ((t - t.mean()) / (t.std() + 1e-6)).tolist()
    assert group_advantages(r, delta=1e-6) == pytest.approx(expect, rel=1e-5)


def test_a_task_with_only_guards_gets_the_verifiers_score() -> None:
    from compoworld.verify.verifier import verify_checks

    # two guards (answer_contains stands in for any predicate), no goal check
    rubric = [
        {
            "id": f"g{i}",
            "description": "guard",
            "kind": "guard",
            "check": {"predicate": "answer_contains", "value": v},
        }
        for i, v in enumerate(["alpha", "beta"])
    ]
    results = [verify_checks(rubric, {}, {}, a) for a in ("alpha beta", "alpha")]
    rewards = compoworld_group_rewards([[c.model_dump() for c in r.checks] for r in results])
    assert [r.score for r in results] == [1.0, 0.0]
    assert rewards == [r.score for r in results]


def test_one_definition_of_format_failure() -> None:
    from compoworld.rewards import MAX_MALFORMED_TURNS, format_failed, longest_malformed_run

    assert not format_failed(True, 0)
    assert format_failed(False, 0)  # never called finish: prose, a parse failure, a cut generation
    assert format_failed(True, MAX_MALFORMED_TURNS)
    assert not format_failed(True, MAX_MALFORMED_TURNS - 1)
    assert longest_malformed_run([True, False, False, True, False]) == 2
    assert longest_malformed_run([]) == 0
