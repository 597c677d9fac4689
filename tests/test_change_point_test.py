"""TV-GP-UCB's change-point test: the candidate splits by brute force, the split and the statistic against dense
Gaussian log-densities, the segment model's posterior against a dense one on the user's scale, and the test on
toy sequences (no change on a stationary one; two jumps, each found within two rounds)."""

import math

import pytest
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import RBFKernel

from torch_advbandit import TimeVaryingGPUCB
from torch_advbandit.policies.change_point_test import (
    MIN_AFTER,
    _segment,
    best_split,
    detect_change,
    markov_p_value,
    split_candidates,
)
from torch_advbandit.policies.time_varying_gp_ucb import critical_value

DT = torch.float64


def test_split_candidates_are_the_round_starts_with_warmup_rounds_before_and_two_rows_after():
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        rounds = torch.randint(0, 3, (int(torch.randint(1, 25, (1,), generator=g)),), generator=g).cumsum(0)
        start = int(torch.randint(0, rounds.numel(), (1,), generator=g))
        warmup = int(torch.randint(1, 5, (1,), generator=g))
        expected = [
            s
            for s in range(start + 1, rounds.numel())
            if rounds[s] != rounds[s - 1]
            and torch.unique(rounds[start:s]).numel() >= warmup
            and rounds.numel() - s >= MIN_AFTER
        ]
        assert split_candidates(rounds, start, warmup) == expected


def _dense_log_density(y, mean, K):
    return float(torch.distributions.MultivariateNormal(mean, K).log_prob(y))


def test_best_split_maximises_the_dense_two_segment_log_density():
    g = torch.Generator().manual_seed(1)
    X = torch.rand(16, 2, dtype=DT, generator=g)
    y = torch.cat([torch.sin(5 * X[:9, 0]), -torch.sin(5 * X[9:, 0])]).unsqueeze(-1)
    gp = SingleTaskGP(X, y, covar_module=RBFKernel(ard_num_dims=2).to(DT))
    gp.covar_module.lengthscale = torch.tensor([[0.3, 0.7]], dtype=DT)
    gp.likelihood.noise = 0.02
    gp.mean_module.constant.data.fill_(0.3)
    gp.eval()
    z = gp.train_targets
    r = ((X.unsqueeze(1) - X.unsqueeze(0)) / torch.tensor([0.3, 0.7], dtype=DT)).square().sum(-1)
    K = torch.exp(-r / 2) + 0.02 * torch.eye(16, dtype=DT)
    candidates = list(range(3, 14))
    scores = [
        _dense_log_density(z[:s], torch.full((s,), 0.3, dtype=DT), K[:s, :s])
        + _dense_log_density(z[s:], torch.full((16 - s,), 0.3, dtype=DT), K[s:, s:])
        for s in candidates
    ]
    assert best_split(X, z, gp, gp, candidates) == candidates[max(range(len(scores)), key=scores.__getitem__)] == 9


def _objective(gp):
    """BoTorch's fitting objective times n, densely: ``log N(z; μ, K + σ²I)`` plus the hyperparameters' log-priors."""
    Z, z = gp.train_inputs[0], gp.train_targets
    with torch.no_grad():
        k_x = gp.covar_module.space(Z[:, :-1]).to_dense()  # ε = 0: the time factor is 1
        K = k_x + float(gp.likelihood.noise) * torch.eye(len(z), dtype=DT)
        value = _dense_log_density(z, torch.full_like(z, float(gp.mean_module.constant)), K)
        for _, module, prior, closure, _ in gp.named_priors():
            value += float(prior.log_prob(closure(module)).sum())
    return value


def _jump_policy(rows=14, flip_at=6, **options):
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)
    policy = TimeVaryingGPUCB(X, RBFKernel().to(DT), 20, warmup=3, significance=0.01, change_points=True,
                              beta=2.0, generator=torch.Generator().manual_seed(0), **options)  # fmt: skip
    order = [3, 20, 11, 27, 6, 9, 24, 15, 18, 0, 29, 13, 22, 4][:rows]
    for t, i in enumerate(order):
        policy.observe(X[[i]], (1.0 if t < flip_at else -1.0) * torch.sin(6 * X[[i]]) + 0.5)
    return X, policy


def test_the_change_statistic_is_the_dense_log_density_ratio_and_the_model_the_rows_since_on_the_users_scale():
    X, policy = _jump_policy()
    null = policy._gp(math.inf)
    result = detect_change(policy, null, 0.01)
    assert result.since == 6 and result.p_value < 0.01  # the first row of the new function
    before, after = _segment(policy, null, 0, 6), _segment(policy, null, 6, None)  # the fits are seeded by t
    refit = _segment(policy, null, 0, None, start_from=after)  # the one-segment fit from the longer segment
    statistic = 2 * (_objective(before) + _objective(after) - max(_objective(null), _objective(refit)))
    assert result.statistic == pytest.approx(statistic, rel=1e-6, abs=1e-6)
    k = 3  # the RBF lengthscale, the noise, the constant mean
    candidates = split_candidates(policy.row_rounds, 0, policy.warmup)
    from scipy.stats import chi2

    assert result.p_value == pytest.approx(len(candidates) * chi2.sf(statistic, k), rel=1e-6)
    # the model of the rows since the change: vanilla BoTorch's on them (Standardize over those 8 outcomes)
    after = result.model
    torch.testing.assert_close(after.train_inputs[0][:, 0], policy.train_X[6:, 0])
    y = policy.rewards[6:]
    mu, sd = float(y.mean()), float(y.std())
    x = policy.train_X[6:, 0]
    ell = float(after.covar_module.space.lengthscale)
    noise, c = float(after.likelihood.noise), float(after.mean_module.constant)

    def k_x(a, b):
        return torch.exp(-((a.unsqueeze(1) - b.unsqueeze(0)) ** 2) / (2 * ell**2))

    A = k_x(x, x) + noise * torch.eye(len(x), dtype=DT)
    cross = k_x(X[:, 0], x)
    mean = c + cross @ torch.linalg.solve(A, (y - mu) / sd - c)
    var = 1 - (cross * torch.linalg.solve(A, cross.T).T).sum(-1)
    posterior = policy.model().posterior(X)
    assert policy.diagnostics()["since"] == 6.0
    torch.testing.assert_close(posterior.mean.squeeze(-1), mu + sd * mean, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(posterior.variance.squeeze(-1), sd**2 * var, rtol=1e-6, atol=1e-7)


def test_the_model_after_a_change_is_fitted_from_the_kernel_fitted_before_it():
    X, policy = _jump_policy()
    null = policy._gp(math.inf)
    result = detect_change(policy, null, 0.01)
    before = _segment(policy, null, 0, 6)  # the segment before the change, as the test fitted it (seeded by t)
    start = policy._gp(math.inf, rows=slice(6, 7), kernel_from=before)  # one row: no fit, the start itself
    assert float(start.covar_module.space.lengthscale) == float(before.covar_module.space.lengthscale)
    assert float(start.likelihood.noise) != pytest.approx(float(before.likelihood.noise))  # noise: BoTorch's start
    ell = float(result.model.covar_module.space.lengthscale)
    fitted = policy._gp(math.inf, rows=slice(6, None), kernel_from=before)
    assert ell == pytest.approx(float(fitted.covar_module.space.lengthscale), rel=1e-9)
    fresh = policy._gp(math.inf, rows=slice(6, None))  # from BoTorch's start: L-BFGS stops elsewhere
    assert ell != pytest.approx(float(fresh.covar_module.space.lengthscale), rel=1e-9)


def test_without_a_change_the_model_is_the_tested_epsilons():
    X, policy = _jump_policy(flip_at=100)
    result = detect_change(policy, policy._gp(math.inf), 0.01)
    assert result.since == 0 and result.p_value >= 0.01
    plain = TimeVaryingGPUCB(X, RBFKernel().to(DT), 20, warmup=3, significance=0.01, beta=2.0)
    plain.load_state_dict({**policy.state_dict(), "hyperparameters": plain.hyperparameters()})
    assert policy.select() == plain.select()
    assert policy.diagnostics()["since"] == 0.0 and policy.diagnostics()["change_statistic"] == result.statistic


def test_the_markov_p_value_is_the_boundary_mixture_tail():
    for level in (0.001, 0.01, 0.2):
        assert markov_p_value(critical_value(level)) == pytest.approx(level, rel=1e-9)
    assert markov_p_value(0.0) == 1.0 and markov_p_value(float("nan")) == 1.0


def _run_with_change_points(f):
    """``since`` at each of 36 rounds of TV-GP-UCB with ε and change points tested at level 0.01 on ``f(t, x)``."""
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    noise = torch.randn(36, generator=torch.Generator().manual_seed(5), dtype=DT) * 0.05
    policy = TimeVaryingGPUCB(X, RBFKernel().to(DT), 36, warmup=5, significance=0.01, beta=2.0, change_points=True,
                              generator=torch.Generator().manual_seed(0))  # fmt: skip
    since = []
    for t in range(36):
        i = policy.select()
        since.append(policy.diagnostics()["since"])
        policy.update(i, float(f(t, X[i, 0])) + float(noise[t]))
    return since


@pytest.mark.slow
def test_change_points_are_not_found_on_a_stationary_sequence():
    since = _run_with_change_points(lambda t, x: torch.sin(6 * x))
    assert since == [0.0] * 36  # no change: the model of every round is the tested ε's


@pytest.mark.slow
def test_two_jumps_are_found_within_two_rounds():
    def two_jumps(t, x):
        return torch.sin(6 * x) if t < 12 else (-torch.sin(6 * x) if t < 24 else torch.cos(6 * x))

    since = _run_with_change_points(two_jumps)
    # each found with the second row of the new function (a split leaves two rows after it), then at the jump
    assert since[:13] == [0.0] * 13 and since[13] in (11.0, 12.0) and since[14:25] == [12.0] * 11
    assert since[25] in (23.0, 24.0) and since[26:] == [24.0] * 10


def test_binary_segmentation_finds_the_newest_of_two_changes():
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)
    policy = TimeVaryingGPUCB(X, RBFKernel().to(DT), 40, warmup=3, significance=0.01, change_points=True, beta=2.0)
    cycle = [3, 20, 11, 27, 6, 15]  # the same six points in every segment
    for t in range(30):
        f = torch.sin(6 * X[[cycle[t % 6]]])
        policy.observe(X[[cycle[t % 6]]], f if t < 12 else (-f if t < 22 else f + 1.0))
    result = detect_change(policy, policy._gp(math.inf), 0.01)
    assert result.since == 22 and result.p_value < 1e-6
    assert result.model.train_inputs[0].shape[0] == 8  # the model of the last segment alone


def test_the_change_point_test_follows_the_candidates_device(device):
    """The test's tensors (the segments' Gram matrices, the splits) follow the candidates' device: on CUDA, and on
    the CPU under the device audit."""
    X = torch.linspace(0, 1, 30, dtype=DT, device=device).unsqueeze(-1)
    policy = TimeVaryingGPUCB(X, RBFKernel().to(DT), 20, warmup=3, significance=0.01, change_points=True,
                              beta=2.0, generator=torch.Generator(device=device).manual_seed(0))  # fmt: skip
    for t, i in enumerate([3, 20, 11, 27, 6, 9, 24, 15, 18, 0, 29, 13, 22, 4]):
        policy.observe(X[[i]], (1.0 if t < 6 else -1.0) * torch.sin(6 * X[[i]]) + 0.5)
    model = policy.model()
    assert policy.diagnostics()["since"] > 0 and model.posterior(X).mean.device == X.device
