"""Long horizons: no overflow, no NaN, probabilities stay a distribution.

CI runs ``T = 2 000`` rounds per policy plus a state-injection check at ``t ≈ 10⁵`` magnitudes;
``TORCH_ADVBANDIT_LONG=1`` runs the full ``T = 10⁵`` (Exp3 family) and ``T = 10⁴`` (WGP-UCB) loops
(docs/robustness.rst; 10 min 40 s on one CPU thread).
"""

import math
import os

import pytest
import torch
from conftest import DT, grid

from torch_advbandit import WGPUCB, APGExp3, KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.confidence import weighted_information_gain
from torch_advbandit.kernels import kernel_diag, kernel_matrix, make_kernel
from torch_advbandit.models import age_log_weights

LONG = os.environ.get("TORCH_ADVBANDIT_LONG") == "1"
T_EXP3 = 100_000 if LONG else 2_000
N = 8
B = 2.0
EXP3 = dict(eta=0.5, alpha=0.01, lam=1.0, beta=0.05)


def make(kind, horizon, seed=0):
    X, k = grid(N), make_kernel("se", 1)
    g = torch.Generator().manual_seed(seed)
    if kind == "apg":
        return APGExp3(X, k, horizon, generator=g)
    if kind == "rls":
        return RLSKernelizedExp3(X, k, horizon, **EXP3, generator=g)
    return KernelizedExp3(X, k, horizon, **EXP3, estimator=kind, generator=g)


def reward(kind, t, i):
    if kind == "constant":
        return B
    return B if (i + t // 50) % N < N // 2 else -B  # the good half moves every 50 rounds


def check_distribution(policy):
    P = policy.probabilities()
    assert bool(torch.isfinite(P).all()) and abs(float(P.sum()) - 1.0) < 1e-12
    floor = policy.alpha * policy.exploration_probs  # P_t = (1 − α)·softmax + α·π never underflows
    assert bool((P >= floor * (1 - 1e-12)).all())


@pytest.mark.parametrize("rewards", ["adversarial", "constant"])
@pytest.mark.parametrize("kind", ["exact", "lowrank", "rls", "apg"])
def test_exp3_family_over_a_long_horizon(kind, rewards):
    policy = make(kind, T_EXP3)
    growth = 0.0  # the largest per-round change of the cumulative optimistic reward
    for t in range(T_EXP3):
        before = policy.cumulative_reward.clone()
        i = policy.select()
        policy.update(i, reward(rewards, t, i))
        growth = max(growth, float((policy.cumulative_reward - before).abs().max()))
        if t % 500 == 0 or t == T_EXP3 - 1:
            check_distribution(policy)
    S = policy.cumulative_reward
    assert bool(torch.isfinite(S).all()) and bool(torch.isfinite(policy.log_probabilities()).all())
    assert float(S.abs().max()) <= T_EXP3 * growth * (1 + 1e-9)
    assert policy.eta * float(S.abs().max()) < 1e300  # log-space weights: η·S is all that is exponentiated


@pytest.mark.parametrize("kind", ["exact", "lowrank", "rls", "apg"])
def test_state_at_t_1e5_with_huge_cumulative_rewards_keeps_working(kind):
    """Jump to ``t = 99 900`` with ``|S|`` up to ``1e12`` (what ``η·t·max|f̂|`` reaches) and play on."""
    policy = make(kind, 100_000)
    state = policy.state_dict()
    spread = torch.linspace(-1e12, 1e12, N, dtype=DT)
    state.update(t=99_900, cumulative_reward=spread.flip(0))
    policy.load_state_dict(state)
    for t in range(100):
        i = policy.select()
        policy.update(i, reward("adversarial", t, i))
        check_distribution(policy)
    assert int(torch.argmax(policy.probabilities())) == 0  # the huge lead is not lost to rounding


def discounted_posterior(train_X, k, rewards, discount, lam, test):
    """Oracle: GP posterior with noise ``λ·η^{-age}``, old points (``η^{-age}`` beyond 1e300) left out."""
    t = train_X.shape[0]
    ages = torch.arange(t - 1, -1, -1, dtype=DT)
    log_noise = math.log(lam) - ages * math.log(discount)
    keep = log_noise < math.log(1e300)
    Xs, ys, noise = train_X[keep], rewards[keep], torch.exp(log_noise[keep])
    Kss = kernel_matrix(k, Xs) + torch.diag(noise)
    Kxs = kernel_matrix(k, test, Xs)
    mean = Kxs @ torch.linalg.solve(Kss, ys)
    var = kernel_diag(k, test) - (Kxs * torch.linalg.solve(Kss, Kxs.T).T).sum(-1)
    return mean, var


def test_wgp_ucb_where_eta_to_the_minus_t_overflows():
    """``discount = 0.9``: ``0.9^{-t}`` overflows float64 past ``t ≈ 6 700``; the model must stay exact."""
    T = 10_000
    X, k = grid(N), make_kernel("se", 1, 0.2)
    policy = WGPUCB(X, k, T, discount=0.9, lam=0.01, generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(1)
    start = 0 if LONG else T - 100
    if start:
        state = policy.state_dict()
        idx = torch.randint(0, N, (start,), generator=g)
        state.update(
            t=start, train_X=X[idx], rewards=torch.sin(6 * X[idx, 0]) + 0.05 * torch.randn(start, generator=g, dtype=DT)
        )
        policy.load_state_dict(state)
    assert math.isinf(torch.tensor(0.9, dtype=DT).pow(-T).item())  # η^{-T} is not a float64
    for _ in range(start, T):
        i = policy.select()
        policy.update(i, math.sin(6 * float(X[i, 0])) + 0.05 * float(torch.randn((), generator=g, dtype=DT)))
    posterior = policy.model().posterior(X.unsqueeze(-2))
    mean, var = posterior.mean.reshape(-1), posterior.variance.reshape(-1)
    ref_mean, ref_var = discounted_posterior(policy.train_X, k, policy.rewards, 0.9, 0.01, X)
    assert bool(torch.isfinite(mean).all()) and bool(torch.isfinite(var).all())
    torch.testing.assert_close(mean.detach(), ref_mean, rtol=1e-6, atol=1e-8)
    torch.testing.assert_close(var.detach(), ref_var, rtol=1e-6, atol=1e-10)


def test_wgp_ucb_forgets_old_points_without_changing_beta_or_the_model():
    """After ``MAX_LOG_AGE_WEIGHT / log(1/η)`` rounds points leave the model and γ̄_t: same numbers as all."""
    X, k = grid(N), make_kernel("matern52", 1, 0.2)
    policy = WGPUCB(X, k, 400, discount=0.5, lam=0.01, generator=torch.Generator().manual_seed(3))
    for _ in range(250):
        i = policy.select()
        policy.update(i, math.sin(6 * float(X[i, 0])))
    t = policy.train_X.shape[0]
    assert policy.training_set().numel() < t and policy._gram.shape[0] < t  # ~104 rounds of memory
    ages = torch.arange(t - 1, -1, -1, dtype=DT)
    full = weighted_information_gain(kernel_matrix(k, policy.train_X), age_log_weights(ages, 0.5), 0.01)
    assert abs(policy.information_gain() - full) <= 1e-12 * max(1.0, abs(full))
    mean = policy.model().posterior(X.unsqueeze(-2)).mean.reshape(-1).detach()
    ref_mean, _ = discounted_posterior(policy.train_X, k, policy.rewards, 0.5, 0.01, X)
    torch.testing.assert_close(mean, ref_mean, rtol=1e-8, atol=1e-10)
