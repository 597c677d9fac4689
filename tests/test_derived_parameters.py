"""Parameters from the candidate set: the empirical information-gain bound and the Exp3 parameters built on it."""

import itertools
import math
import warnings

import pytest
import torch
from torch.quasirandom import SobolEngine

from torch_advbandit import APGExp3, KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.domains import discretize
from torch_advbandit.kernels import KERNEL_NAMES, kernel_matrix, make_kernel
from torch_advbandit.parameters import (
    DERIVED_CONSTANTS,
    derived_parameters,
    empirical_information_gain,
    information_gain_bound,
    paper_parameters,
)

DT = torch.float64


def brute_force_max_gain(kernel, X, T, noise):
    """``max ½ log det(I + K_A/λ)`` over every multiset ``A`` of ``T`` candidates."""
    K = kernel_matrix(kernel, X, X)
    best = 0.0
    for A in itertools.combinations_with_replacement(range(X.shape[0]), T):
        idx = torch.tensor(A)
        M = torch.eye(T, dtype=DT) + K[idx][:, idx] / noise
        best = max(best, 0.5 * float(torch.logdet(M)))
    return best


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("T, noise", [(1, 1.0), (2, 0.1), (3, 1.0), (4, 0.05)])
def test_empirical_gain_upper_bounds_the_brute_force_maximum(name, T, noise):
    X = torch.rand(7, 2, dtype=DT, generator=torch.Generator().manual_seed(T))
    k = make_kernel(name, 2, lengthscale=0.4)
    exact = brute_force_max_gain(k, X, T, noise)
    bound = empirical_information_gain(k, X, T, noise)
    assert exact <= bound + 1e-12
    assert bound * (1 - math.exp(-1)) <= exact + 1e-12  # the greedy gain itself never exceeds the maximum


def test_empirical_gain_adds_the_steps_it_skips_once_the_variance_vanishes():
    X = torch.linspace(0, 1, 5, dtype=DT).unsqueeze(-1)
    k = make_kernel("se", 1)
    short, long = empirical_information_gain(k, X, 5, 1e-3), empirical_information_gain(k, X, 500, 1e-3)
    assert long >= short and math.isfinite(long)


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("d", [1, 2, 3, 6, 10, 20])
def test_derived_parameters_are_finite_and_in_range_in_any_dimension(name, d):
    X = SobolEngine(d, scramble=True, seed=d).draw(64, dtype=DT)
    for algorithm in ("kernelized_exp3", "rls_kernelized_exp3"):
        p = derived_parameters(make_kernel(name, d), X, 200, algorithm=algorithm)
        assert all(math.isfinite(v) for v in p.values())
        assert p["eta"] > 0 and 0 < p["alpha"] < 1 and p["lam"] > 0 and p["beta"] > 0
    # APG-Exp3's η = 0.5/sqrt(D_T·T), α = 0.1·η·D_T come from the set's Newton basis: never clipped
    apg = APGExp3(X, make_kernel(name, d), 200, generator=torch.Generator().manual_seed(0))
    D = apg.num_features
    assert 1 <= D <= 64 and 0 < apg.alpha < 1
    assert apg.eta == pytest.approx(0.5 / math.sqrt(D * 200)) and apg.alpha == pytest.approx(0.1 * apg.eta * D)


def test_derived_parameters_are_the_papers_formulas_with_the_smaller_gain_bound():
    X = torch.linspace(0, 1, 400, dtype=DT).unsqueeze(-1)
    k = make_kernel("matern52", 1)
    lam = 10.0  # the paper's λ for Matérn-5/2
    gamma = min(empirical_information_gain(k, X, 1000, lam), information_gain_bound("matern52", 1000, 1))
    p = derived_parameters(k, X, 1000)
    c3, c4 = DERIVED_CONSTANTS  # one pair for every kernel; λ stays the kernel's
    assert (c3, c4) == (5.0, 0.1)
    assert p["lam"] == lam
    assert p["eta"] == pytest.approx(c3 / math.sqrt(1000 * gamma), rel=1e-12)
    assert p["alpha"] == pytest.approx(min(1.0, c4 * p["eta"] * gamma), rel=1e-12)
    assert p["beta"] == pytest.approx(2.0 * math.sqrt(lam / 1000), rel=1e-12)
    tuned = derived_parameters(k, X, 1000, constants=(10.0, 0.1))  # the paper's Matérn-5/2 pair
    assert tuned["eta"] == pytest.approx(10.0 / math.sqrt(1000 * gamma), rel=1e-12)
    with pytest.raises(ValueError, match="constants"):
        derived_parameters(k, X, 1000, constants=(0.0, 0.1))


def test_paper_parameters_warn_when_alpha_clips_and_a_policy_without_them_learns_in_6d():
    with pytest.warns(RuntimeWarning, match="clipped at 1"):
        assert paper_parameters("se", 400, 6)["alpha"] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paper_parameters("se", 1000, 1)  # the paper's settings: no clipping, no warning
    X = SobolEngine(6, scramble=True, seed=0).draw(128, dtype=DT)
    for cls in (KernelizedExp3, RLSKernelizedExp3):
        policy = cls(X, make_kernel("se", 6), 30, generator=torch.Generator().manual_seed(0))
        assert policy.alpha < 1.0
        for t in range(5):
            policy.update(policy.select(), math.sin(t))
        assert bool(torch.isfinite(policy.probabilities()).all())


@pytest.mark.parametrize("horizon, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError)])
def test_bad_horizon_is_a_clear_error_before_any_derivation(horizon, error):
    with pytest.raises(error, match="horizon"):
        KernelizedExp3(torch.rand(10, 2, dtype=DT), make_kernel("se", 2), horizon)


def test_discretize_uses_sobol_in_higher_dimension_and_warns_when_the_size_differs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert discretize(torch.tensor([[0.0] * 6, [1.0] * 6], dtype=DT), 4000).unit.shape == (4000, 6)
        assert discretize(torch.tensor([[0.0] * 10, [1.0] * 10], dtype=DT), 3000).unit.shape == (3000, 10)
        assert discretize(torch.tensor([[0.0] * 2, [1.0] * 2], dtype=DT), 1024).unit.shape == (1024, 2)  # a grid
    with pytest.warns(RuntimeWarning, match="729 returned for n = 4000"):
        discretize(torch.tensor([[0.0] * 6, [1.0] * 6], dtype=DT), 4000, "grid")


def test_unknown_horizon_runs_doubling_epochs_with_derived_parameters():
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    k = make_kernel("se", 1)
    policy = KernelizedExp3(X, k, None, generator=torch.Generator().manual_seed(0))
    assert (policy.epoch, policy.horizon) == (0, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an anytime policy never runs past its horizon
        for t in range(64 + 128 + 5):
            policy.update(policy.select(), math.sin(t))
    assert (policy.epoch, policy.horizon) == (2, 448)
    expected = derived_parameters(k, X, 2 * 448)  # epoch 2 ends at round 64 + 128 + 256 = 448: derived for 896
    assert policy.eta == expected["eta"] and policy.alpha == expected["alpha"] and policy.beta == expected["beta"]
    assert policy.estimator.ridge == pytest.approx(expected["lam"] / 896)
    etas = [derived_parameters(k, X, 2 * 64 * (2 ** (e + 1) - 1))["eta"] for e in range(3)]
    assert etas == sorted(etas, reverse=True)  # η only decreases from epoch to epoch
    assert_restored_mid_epoch_plays_on_alike(
        policy, KernelizedExp3(X, k, None, generator=torch.Generator().manual_seed(9))
    )
    with pytest.raises(ValueError, match="omit them"):
        KernelizedExp3(X, k, None, eta=0.1)


def assert_restored_mid_epoch_plays_on_alike(policy, twin):
    """``twin`` loads ``policy``'s state mid-epoch 2 (the epoch is rebuilt, then the scores restored);
    both then play the same 260 rounds, across the boundary at round 448."""
    twin.load_state_dict(policy.state_dict())
    for t in range(260):
        i, j = policy.select(), twin.select()
        assert i == j
        policy.update(i, math.cos(t))
        twin.update(j, math.cos(t))
    assert policy.epoch == twin.epoch == 3 and torch.equal(policy.probabilities(), twin.probabilities())


def test_unknown_horizon_keeps_the_scores_across_an_epoch_boundary():
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    policy = KernelizedExp3(X, make_kernel("matern52", 1), None, generator=torch.Generator().manual_seed(1))
    for t in range(63):
        policy.update(policy.select(), math.sin(3 * t))
    before = policy.cumulative_reward.clone()
    probs = policy.probabilities()
    i = policy.select()
    f_hat, width = policy.estimator._estimate(probs, i, 0.5, torch.Generator().manual_seed(0))
    policy.update(i, 0.5)  # round 64 closes epoch 0
    assert policy.epoch == 1 and policy.horizon == 192
    # S_64 = S_63 + f̂ + β₀·w with epoch 0's β (derived for 2·64 rounds): not reset to zero
    beta0 = derived_parameters(make_kernel("matern52", 1), X, 128)["beta"]
    assert policy.beta != beta0 and torch.allclose(policy.cumulative_reward, before + f_hat + beta0 * width)
    assert float(policy.cumulative_reward.abs().max()) > 0


def test_apg_exp3_without_a_horizon_runs_epochs_with_the_basis_and_parameters_of_twice_their_end():
    X = torch.linspace(0, 1, 50, dtype=DT).unsqueeze(-1)
    k = make_kernel("matern52", 1)
    policy = APGExp3(X, k, None, generator=torch.Generator().manual_seed(0))
    for t in range(64 + 128 + 5):
        policy.update(policy.select(), math.sin(t))
    assert (policy.epoch, policy.horizon) == (2, 448)
    known = APGExp3(X, k, 896)  # epoch 2 ends at round 448: its basis, η, α and π are those of T = 896
    assert (policy.eta, policy.alpha, policy.admissible_error) == (known.eta, known.alpha, known.admissible_error)
    assert torch.equal(policy.features, known.features) and policy.num_features > APGExp3(X, k, 128).num_features
    assert torch.equal(policy.exploration_probs, known.exploration_probs)
    assert float(policy.cumulative_reward.abs().max()) > 0  # the scores carried across two boundaries
    assert_restored_mid_epoch_plays_on_alike(policy, APGExp3(X, k, None, generator=torch.Generator().manual_seed(5)))
    with pytest.raises(ValueError, match="omit them"):
        APGExp3(X, k, None, admissible_error=0.1)


def test_rls_kernelized_exp3_without_a_horizon_uses_theorem_3_parameters_for_twice_each_epoch_end():
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    k = make_kernel("se", 1)
    policy = RLSKernelizedExp3(X, k, None, generator=torch.Generator().manual_seed(0))
    assert policy.eta == derived_parameters(k, X, 128, algorithm="rls_kernelized_exp3")["eta"]
    for t in range(64):
        policy.update(policy.select(), math.sin(t))
    expected = derived_parameters(k, X, 384, algorithm="rls_kernelized_exp3")
    assert (policy.epoch, policy.eta, policy.beta) == (1, expected["eta"], expected["beta"])
    assert policy.estimator.ridge == pytest.approx(expected["lam"] / 384)


def test_a_fixed_horizon_policy_run_past_its_horizon_warns_once():
    X = torch.linspace(0, 1, 20, dtype=DT).unsqueeze(-1)
    policy = KernelizedExp3(X, make_kernel("se", 1), 3, eta=0.1, alpha=0.5, lam=1.0, beta=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(6):
            policy.update(policy.select(), 0.2)
    past = [w for w in caught if "past its horizon" in str(w.message)]
    assert len(past) == 1
