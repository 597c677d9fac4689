"""``reward_scale``: the Exp3 family learns from ``y / s``, so rewards in other units with the matching scale
make the same choices."""

import pytest
import torch

from torch_advbandit import APGExp3, KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.kernels import make_kernel

X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
K = make_kernel("se", 1)
F = torch.sin(6 * X[:, 0])

POLICIES = {
    "exact": lambda **kw: KernelizedExp3(X, K, 30, **kw),
    "anytime": lambda **kw: KernelizedExp3(X, K, None, **kw),
    "rls": lambda **kw: RLSKernelizedExp3(X, K, 30, **kw),
    "apg": lambda **kw: APGExp3(X, K, 30, **kw),
}


def _run(make, units, q=None, **kw):
    policy = make(generator=torch.Generator().manual_seed(0), **kw)
    chosen = []
    for _ in range(12):
        i = policy.select(q)
        policy.update(i, units * F[i] if q else units * float(F[i]))
        chosen.append(i.tolist() if q else i)
    return chosen, policy.probabilities()


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("q", [None, 3])
def test_rewards_in_other_units_with_the_matching_scale_make_the_same_choices(name, q):
    make = POLICIES[name]
    chosen, probs = _run(make, 1.0, q)
    chosen_scaled, probs_scaled = _run(make, 250.0, q, reward_scale=250.0)
    assert chosen == chosen_scaled
    torch.testing.assert_close(probs, probs_scaled)


def test_the_scale_changes_what_the_policy_learns():
    # the same rewards read in a 100 times smaller unit: η·S is 100 times larger, so P̃ concentrates faster
    _, probs = _run(POLICIES["exact"], 1.0)
    _, probs_small_unit = _run(POLICIES["exact"], 1.0, reward_scale=0.01)
    assert float(probs_small_unit.max()) > float(probs.max())


def test_the_scale_is_a_setting_of_the_saved_state():
    a = KernelizedExp3(X, K, 30, reward_scale=2.0, generator=torch.Generator().manual_seed(0))
    assert a.hyperparameters()["reward_scale"] == 2.0
    b = KernelizedExp3(X, K, 30, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="hyperparameters"):
        b.load_state_dict(a.state_dict())


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("q", [None, 3])
def test_auto_makes_the_same_choices_for_rewards_in_any_unit_and_offset(name, q):
    make = POLICIES[name]
    chosen, probs = _run(make, 1.0, q, reward_scale="auto")
    policy = make(generator=torch.Generator().manual_seed(0), reward_scale="auto")
    chosen_affine = []
    for _ in range(12):  # the same rewards in another unit, shifted: 1000 + 37·y
        i = policy.select(q)
        policy.update(i, 1000.0 + 37.0 * F[i] if q else 1000.0 + 37.0 * float(F[i]))
        chosen_affine.append(i.tolist() if q else i)
    assert chosen == chosen_affine
    torch.testing.assert_close(probs, policy.probabilities())


def test_auto_learns_from_rewards_centred_and_scaled_by_the_range_seen_before():
    from torch_advbandit.estimators import ExactIPSEstimator
    from torch_advbandit.policies.exp3 import Exp3Policy

    est = ExactIPSEstimator(K, X, ridge=1e-2)
    pi = torch.full((40,), 1 / 40, dtype=torch.float64)
    kw = dict(estimator=est, exploration_probs=pi, eta=0.3, alpha=0.2, beta=0.05)
    policy = Exp3Policy(X, 20, reward_scale="auto", generator=torch.Generator().manual_seed(1), **kw)
    first = policy.probabilities().clone()
    S, seen = torch.zeros(40, dtype=torch.float64), []
    for t in range(8):
        i = policy.select()
        y = 5.0 + 3.0 * float(F[i]) + 0.1 * t
        P = policy.probabilities()
        if len(set(seen)) >= 2:  # the unit of the rewards before this round: midpoint, quarter of the range
            c, s = (min(seen) + max(seen)) / 2, (max(seen) - min(seen)) / 4
            f_hat, w = est._estimate(P, i, y - c, None)
            S = S + f_hat + 0.05 * s * w
        policy.update(i, y)
        seen.append(y)
        if t == 0:  # one reward: no unit yet, nothing learnt
            torch.testing.assert_close(policy.probabilities(), first)
    s = (max(seen) - min(seen)) / 4
    torch.testing.assert_close(policy.cumulative_reward, S)
    expected = 0.8 * torch.softmax(0.3 / s * S, 0) + 0.2 * pi
    torch.testing.assert_close(policy.probabilities(), expected)


def test_auto_state_round_trips_and_a_bad_range_is_refused():
    a = KernelizedExp3(X, K, 30, reward_scale="auto", generator=torch.Generator().manual_seed(0))
    for _ in range(5):
        i = a.select()
        a.update(i, 10.0 * float(F[i]))
    state = a.state_dict()
    b = KernelizedExp3(X, K, 30, reward_scale="auto", generator=torch.Generator().manual_seed(9))
    b.load_state_dict(state)
    for _ in range(5):
        i, j = a.select(), b.select()
        assert i == j
        a.update(i, 10.0 * float(F[i]))
        b.update(j, 10.0 * float(F[j]))
    bad = {**state, "reward_range": [3.0, 1.0]}
    fresh = KernelizedExp3(X, K, 30, reward_scale="auto", generator=torch.Generator().manual_seed(9))
    before = fresh.state_dict()
    with pytest.raises(ValueError, match="reward_range"):
        fresh.load_state_dict(bad)
    after = fresh.state_dict()
    assert before["reward_range"] == after["reward_range"] == [float("inf"), float("-inf")] and after["t"] == 0
    with pytest.raises(ValueError, match="reward_range"):
        fresh.load_state_dict({**state, "reward_range": [1.0]})
