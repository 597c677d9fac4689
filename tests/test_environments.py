import math

import pytest
import torch
from conftest import DT, grid, oracle_kernel

from torch_advbandit.environments import (
    AdaptiveAdversary,
    ObliviousEnvironment,
    random_rkhs_functions,
    rkhs_functions_from_centres,
)
from torch_advbandit.kernels import make_kernel


def test_rkhs_functions_match_the_definition(device):
    X = torch.rand(60, 2, generator=torch.Generator().manual_seed(0), dtype=DT)
    gen = torch.Generator().manual_seed(1)
    idx = torch.randint(60, (7, 9), generator=gen)
    coef = torch.rand(7, 9, generator=gen, dtype=DT) * 2 - 1
    B = 0.5
    got = rkhs_functions_from_centres(
        make_kernel("matern32", 2, device=device), X.to(device), idx.to(device), coef.to(device), B
    )
    K = oracle_kernel("matern32", X, X, 0.3 * 2**0.5)
    for j in range(7):
        f = K[:, idx[j]] @ coef[j]
        norm = torch.sqrt(coef[j] @ K[idx[j]][:, idx[j]] @ coef[j])
        torch.testing.assert_close(got[j].cpu(), min(1.0, B / float(norm)) * f)
        assert float(torch.sqrt(coef[j] @ K[idx[j]][:, idx[j]] @ coef[j]) * min(1.0, B / float(norm))) <= B + 1e-12


def test_random_functions_are_reproducible_and_blocking_invariant():
    X = grid(50)
    k = make_kernel("se", 1)
    a = random_rkhs_functions(k, X, num_functions=30, num_centres=10, generator=torch.Generator().manual_seed(3))
    b = random_rkhs_functions(k, X, num_functions=30, num_centres=10, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.shape == (30, 50)
    assert float(a.abs().max()) <= 2.0 + 1e-12  # |f(x)| ≤ ‖f‖_k sqrt(k(x,x)) ≤ B


def test_adaptive_adversary_maximises_expected_instantaneous_regret():
    F = torch.rand(20, 15, generator=torch.Generator().manual_seed(4), dtype=DT)
    env = AdaptiveAdversary(F)
    P = torch.softmax(torch.randn(15, generator=torch.Generator().manual_seed(5), dtype=DT), 0)
    gaps = [float(F[j].max() - F[j] @ P) for j in range(20)]
    best = max(range(20), key=lambda j: gaps[j])
    assert torch.equal(env.rewards(0, P), F[best])
    with pytest.raises(ValueError, match="probs"):
        env.rewards(0, None)
    with pytest.raises(ValueError, match="probs"):
        env.rewards(0, P[:-1])


def test_oblivious_environment_plays_its_sequence():
    F = torch.arange(12, dtype=DT).reshape(3, 4)
    env = ObliviousEnvironment(F)
    assert torch.equal(env.rewards(1, None), F[1])
    with pytest.raises(ValueError, match="t must be"):
        env.rewards(3, None)
    with pytest.raises(ValueError, match="functions"):
        ObliviousEnvironment(torch.tensor([[float("nan")]]))


def test_lower_bound_environment_matches_its_definition():
    from torch_advbandit.environments import LowerBoundEnvironment

    X = torch.rand(40, 2, generator=torch.Generator().manual_seed(7), dtype=DT)
    T = 4000
    env = LowerBoundEnvironment(make_kernel("matern52", 2), X, T, generator=torch.Generator().manual_seed(8))
    k0 = oracle_kernel("matern52", X, torch.zeros(1, 2, dtype=DT), 0.3 * 2**0.5).squeeze(-1)
    F = torch.stack([env.rewards(t, None) for t in range(T)])
    shocks = (F - env.mean_function) @ k0 / (k0 @ k0)
    torch.testing.assert_close(F, env.mean_function + shocks[:, None] * k0)  # f_t − f ∝ k(0, ·)
    # [Iwazaki2026] App. 13, instance 2: σ² = B²/(8 log(2T²)), |s_t| ≤ B/2 (B = 2)
    sigma2 = 4.0 / (8.0 * math.log(2.0 * T**2))
    assert env.sigma**2 == pytest.approx(sigma2)
    assert abs(float(shocks.var()) / sigma2 - 1) < 0.1  # 4000 draws: s.e. of the ratio ≈ 0.022
    assert abs(float(shocks.mean())) < 4 * sigma2**0.5 / T**0.5
    assert float(shocks.abs().max()) <= 1.0 + 1e-12
    assert float(env.mean_function.abs().max()) <= 1.0 + 1e-12  # |f(x)| ≤ ‖f‖_k ≤ B/2
    with pytest.raises(ValueError, match="t must be"):
        env.rewards(T, None)
    with pytest.raises(ValueError, match="horizon"):
        LowerBoundEnvironment(make_kernel("se", 2), X, 1)


def test_lower_bound_shocks_are_truncated_at_the_papers_threshold():
    """Shocks whose Gaussian draw passes τ = sqrt(2 log(2T²)) become sign(η)·B/2 (instance 2 of
    [Iwazaki2026] App. 13), so ‖f_t‖_k ≤ B. The shocks are recomputed from the same generator stream;
    at T = 2 the threshold is about 2.04, which about 4 % of the draws pass."""
    from torch_advbandit.environments import LowerBoundEnvironment

    X = torch.rand(10, 1, generator=torch.Generator().manual_seed(1), dtype=DT)
    B = 3.0
    env = LowerBoundEnvironment(
        make_kernel("se", 1), X, 2, rkhs_bound=B, num_centres=5, generator=torch.Generator().manual_seed(2)
    )
    tau = math.sqrt(2 * math.log(8.0))
    assert env.threshold == pytest.approx(tau) and env.sigma == pytest.approx(B / (2 * tau))
    # the draws: the mean function's expansion first, then the T standard normals
    gen = torch.Generator().manual_seed(2)
    from torch_advbandit.environments.adversarial import random_rkhs_functions

    random_rkhs_functions(make_kernel("se", 1), X, num_functions=1, num_centres=5, rkhs_bound=B / 2, generator=gen)
    eta = torch.randn(2, generator=gen, dtype=DT)
    expected = torch.where(eta.abs() < tau, B * eta / (2 * tau), torch.sign(eta) * B / 2)
    torch.testing.assert_close(env.shocks, expected)
    big = 0
    for seed in range(200):
        gen = torch.Generator().manual_seed(seed)
        e = LowerBoundEnvironment(make_kernel("se", 1), X, 2, rkhs_bound=B, num_centres=5, generator=gen)
        big += int((e.shocks.abs() == B / 2).sum())
        assert float(e.shocks.abs().max()) <= B / 2
    assert big > 0  # P(|η| ≥ 2.04) ≈ 0.041: about 16 of 400 draws are truncated
