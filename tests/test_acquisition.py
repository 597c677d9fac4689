"""The BoTorch face (sampling strategy, acquisitions), continuous domains, batch draws."""

import math
from functools import partial

import pytest
import torch
from botorch.acquisition import qUpperConfidenceBound
from botorch.generation.sampling import SamplingStrategy
from botorch.optim import optimize_acqf_discrete
from conftest import DT, grid
from test_gp_ucb import weighted_posterior

from torch_advbandit import WGPUCB, KernelizedExp3, RLSKernelizedExp3, UniformRandom
from torch_advbandit.acquisition import (
    CandidateIndex,
    Exp3LogProbability,
    Exp3SamplingStrategy,
    discounted_qucb,
    discounted_ucb,
)
from torch_advbandit.domains import discretize
from torch_advbandit.kernels import make_kernel
from torch_advbandit.parameters import paper_parameters


def exp3(X, T=50, seed=0, cls=KernelizedExp3):
    algorithm = "rls_kernelized_exp3" if cls is RLSKernelizedExp3 else "kernelized_exp3"
    params = paper_parameters("se", T, X.shape[-1], algorithm=algorithm)
    gen = torch.Generator(device=X.device).manual_seed(seed)
    return cls(X, make_kernel("se", X.shape[-1], device=X.device), T, **params, generator=gen)


def warm(policy, rounds, f):
    for _ in range(rounds):
        i = policy.select()
        policy.update(i, float(f[i]))


def test_sampling_strategy_frequencies_match_p_t(device):
    X = grid(12, device)
    policy = exp3(X)
    warm(policy, 20, torch.sin(6 * X[:, 0]))
    P = policy.probabilities()
    strategy = Exp3SamplingStrategy(policy)
    assert isinstance(strategy, SamplingStrategy)
    draws = strategy(X.unsqueeze(0), num_samples=40_000)
    assert draws.shape == (1, 40_000, 1) and draws.device.type == device.type
    counts = torch.bincount(CandidateIndex(X)(draws[0]), minlength=12).to(DT)
    expected = 40_000 * P
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 31.3, chi2  # χ²(11) 0.999 quantile; the seed is fixed
    assert torch.equal(strategy(X.unsqueeze(0), num_samples=40_000), draws)  # pending until updated


def test_strategy_draw_becomes_the_pending_selection_and_observe_continues(device):
    X = grid(25, device)
    policy = exp3(X)
    strategy = Exp3SamplingStrategy(policy)
    for _ in range(5):
        x = strategy(X.unsqueeze(0), num_samples=1)[0]
        assert torch.equal(x, X[policy.pending].unsqueeze(0))
        policy.observe(x, torch.sin(6 * x))
    assert policy.t == 5 and policy.pending is None
    batch = strategy(X, num_samples=4)[0]
    policy.observe(batch, torch.cos(3 * batch))
    assert policy.t == 6
    with pytest.raises(ValueError, match="candidates"):
        strategy(X[:10].unsqueeze(0))
    with pytest.raises(ValueError, match="num_samples"):
        strategy(X.unsqueeze(0), num_samples=0)
    with pytest.raises(TypeError, match="Exp3-family"):
        Exp3SamplingStrategy(WGPUCB(X, make_kernel("se", 1, device=device), 10, discount=0.9, lam=1.0))


def test_strategy_handles_more_than_2_pow_24_candidates(device):
    n = 2**24 + 3
    X = torch.linspace(0, 1, n, dtype=DT, device=device).unsqueeze(-1)
    policy = UniformRandom(X, None, 5, generator=torch.Generator(device=device).manual_seed(0))
    out = Exp3SamplingStrategy(policy)(X.unsqueeze(0), num_samples=2)
    assert out.shape == (1, 2, 1) and int(policy.select(2).max()) < n


def test_log_probability_acquisition_gives_the_mode(device):
    X = grid(40, device)
    policy = exp3(X)
    warm(policy, 30, torch.sin(5 * X[:, 0]))
    acqf = Exp3LogProbability(policy)
    values = acqf(X.unsqueeze(-2))
    torch.testing.assert_close(values, policy.log_probabilities())
    best, _ = optimize_acqf_discrete(acqf, q=1, choices=X, max_batch_size=7)
    assert torch.equal(best[0], X[int(policy.probabilities().argmax())])
    with pytest.raises(ValueError, match="rows of the policy's candidates"):
        acqf(torch.full((1, 1, 1), 0.123456, dtype=DT, device=device))


def test_candidate_index_is_exact_in_several_dimensions(device):
    X = torch.rand(500, 3, generator=torch.Generator().manual_seed(0), dtype=DT).to(device)
    lookup = CandidateIndex(X)
    perm = torch.randperm(500, generator=torch.Generator().manual_seed(1)).to(device)
    assert torch.equal(lookup(X[perm]), perm)
    assert torch.equal(lookup(X[perm].reshape(50, 10, 3)), perm.reshape(50, 10))


def test_discounted_ucb_picks_the_argmax_of_mean_plus_beta_sigma(device):
    gen = torch.Generator().manual_seed(3)
    Xtr = torch.rand(20, 1, generator=gen, dtype=DT).to(device)
    Ytr = torch.sin(6 * Xtr) + 0.05 * torch.randn(20, 1, generator=gen, dtype=DT).to(device)
    kernel = make_kernel("se", 1, device=device)
    acqf = discounted_ucb(Xtr, Ytr, kernel, discount=0.9, lam=0.5)
    candidates = grid(101, device)
    best, _ = optimize_acqf_discrete(acqf, q=1, choices=candidates, max_batch_size=16)
    mean, var = weighted_posterior(Xtr, Ytr, candidates, torch.arange(19, -1, -1), 0.9, 0.5)
    beta = math.sqrt(acqf.beta)
    ucb = mean + beta * var.clamp_min(0).sqrt()
    assert torch.equal(best[0], candidates[int(ucb.argmax())])
    # β is WGP-UCB's: the same as the policy's after the same observations
    policy = WGPUCB(candidates, kernel, 50, discount=0.9, lam=0.5)
    for x, y in zip(Xtr, Ytr, strict=True):
        policy._pending = int((candidates - x).abs().argmin())  # nearest grid point
        policy.update(policy._pending, float(y))
    acq_grid = discounted_ucb(policy.train_X, policy.rewards.unsqueeze(-1), kernel, discount=0.9, lam=0.5)
    assert math.sqrt(acq_grid.beta) == pytest.approx(policy.confidence_width(), rel=1e-7)  # grams built differently
    fixed = discounted_ucb(Xtr, Ytr, kernel, discount=0.9, lam=0.5, beta=0.3, beta_scale=2.0)
    assert fixed.beta == pytest.approx(0.36)


def test_discounted_qucb_batches_with_pending_points(device):
    gen = torch.Generator().manual_seed(4)
    Xtr = torch.rand(15, 2, generator=gen, dtype=DT).to(device)
    Ytr = Xtr.sum(-1, keepdim=True)
    pending = torch.rand(2, 2, generator=gen, dtype=DT).to(device)
    kernel = make_kernel("se", 2, device=device)
    acqf = discounted_qucb(Xtr, Ytr, kernel, discount=0.95, lam=0.5, X_pending=pending)
    assert isinstance(acqf, qUpperConfidenceBound) and torch.equal(acqf.X_pending, pending)
    choices = torch.rand(60, 2, generator=gen, dtype=DT).to(device)
    batch, value = optimize_acqf_discrete(acqf, q=3, choices=choices)
    assert batch.shape == (3, 2) and len({tuple(r.tolist()) for r in batch}) == 3


@pytest.mark.parametrize("method", ["grid", "sobol"])
def test_discretize_round_trips_bounds(device, method):
    bounds = torch.tensor([[-5.0, 0.0, 1.0], [10.0, 15.0, 2.0]], dtype=DT, device=device)
    D = discretize(bounds, 1000, method, seed=0)
    assert D.unit.shape == (1000, 3) and D.unit.device.type == device.type
    assert bool((D.unit >= 0).all() & (D.unit <= 1).all())
    assert bool((D.points >= bounds[0]).all() & (D.points <= bounds[1]).all())
    torch.testing.assert_close(D.to_unit(D.points), D.unit)
    torch.testing.assert_close(D.from_unit(D.unit), D.points)
    if method == "grid":
        torch.testing.assert_close(D.points.min(0).values, bounds[0])
        torch.testing.assert_close(D.points.max(0).values, bounds[1])


def test_discretize_rejects_bad_input():
    with pytest.raises(ValueError, match="bounds"):
        discretize(torch.tensor([[1.0], [0.0]], dtype=DT), 10)
    with pytest.raises(ValueError, match="method"):
        discretize(torch.tensor([[0.0], [1.0]], dtype=DT), 10, "lhs")
    with pytest.raises(ValueError, match="n must"):
        discretize(torch.tensor([[0.0], [1.0]], dtype=DT), 0)
    assert discretize(torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=DT), 99).unit.shape == (81, 2)


def test_discretize_draws_its_scrambling_from_the_generator_only(device):
    bounds = torch.tensor([[0.0] * 5, [1.0] * 5], dtype=DT, device=device)
    torch.manual_seed(1)
    before = torch.get_rng_state()
    A = discretize(bounds, 64, generator=torch.Generator().manual_seed(3)).unit
    assert torch.equal(torch.get_rng_state(), before)  # the global generator is untouched
    torch.manual_seed(2)
    B = discretize(bounds, 64, generator=torch.Generator().manual_seed(3)).unit
    C = discretize(bounds, 64, generator=torch.Generator().manual_seed(4)).unit
    assert torch.equal(A, B) and not torch.equal(A, C)
    assert A.shape == (64, 5) and A.device.type == device.type
    g = torch.Generator().manual_seed(3)
    seed = int(torch.randint(0, 2**62, (1,), generator=g))
    assert torch.equal(A, discretize(bounds, 64, seed=seed).unit)  # one integer drawn: the seed
    with pytest.raises(ValueError, match="seed must be"):
        discretize(bounds, 64, seed=-1)


@pytest.mark.parametrize(
    "cls",
    [KernelizedExp3, partial(KernelizedExp3, estimator="lowrank"), RLSKernelizedExp3],
    ids=["exact", "lowrank", "rls"],
)
def test_batch_update_averages_the_q_estimates(cls, device):
    X = grid(30, device)
    a, b = exp3(X, cls=cls), exp3(X, cls=cls)
    idx = a.select(4)
    assert idx.shape == (4,) and idx.device.type == device.type
    rewards = torch.sin(6 * X[idx, 0])
    P = a.probabilities()
    a.update(idx, rewards)
    # reference: the average of the four single-draw estimates under the same P_t, plus β·width once
    est = b.estimator
    fs = [
        est._estimate(P, int(i), float(y), torch.Generator(device=device))[0] for i, y in zip(idx, rewards, strict=True)
    ]
    width = est._estimate(P, int(idx[0]), 0.0, torch.Generator(device=device))[1]
    expected = torch.stack(fs).mean(0) + b.beta * width
    torch.testing.assert_close(a.cumulative_reward, expected, rtol=1e-9, atol=1e-9)
    assert a.t == 1


def test_batch_protocol_errors_leave_the_policy_unchanged_and_state_round_trips(device):
    X = grid(20, device)
    policy = exp3(X)
    idx = policy.select(3)
    state = policy.state_dict()
    assert state["pending"] == idx.tolist()
    for index, reward in [(idx.tolist(), [0.1, 0.2]), (idx.flip(0), [0.1, 0.2, 0.3]), (idx, [0.1, float("nan"), 0.3])]:
        with pytest.raises(ValueError):
            policy.update(index, reward)
    with pytest.raises(ValueError, match="batch of 3"):
        policy.select()
    with pytest.raises(ValueError, match="another selection"):
        policy.select(2)
    after = policy.state_dict()
    assert after["t"] == 0 and torch.equal(after["cumulative_reward"], state["cumulative_reward"])
    clone = exp3(X, seed=99)
    clone.load_state_dict(state)
    for p in (policy, clone):
        p.update(idx, [0.1, 0.2, 0.3])
    torch.testing.assert_close(policy.cumulative_reward, clone.cumulative_reward)
    assert torch.equal(policy.select(2), clone.select(2))
    wgp = WGPUCB(X, make_kernel("se", 1, device=device), 10, discount=0.9, lam=1.0)
    asks = wgp.select(2)  # the GP-UCB family asks for q distinct points (no pending-batch rule)
    assert asks.shape == (2,) and int(asks[0]) != int(asks[1]) and wgp.pending == tuple(asks.tolist())


def test_candidate_lookup_is_exact_for_duplicates_signed_zeros_other_d_and_hash_collisions(monkeypatch):
    from torch_advbandit.acquisition import CandidateIndex

    X = torch.tensor([[0.0, 1.0], [0.5, 0.5], [0.0, 1.0], [-0.0, 0.25]], dtype=torch.float64)
    index = CandidateIndex(X)
    assert index.num_groups == 3 and index(X).tolist() == [0, 1, 0, 3]
    assert index(torch.tensor([[0.0, 0.25]], dtype=torch.float64)).tolist() == [3]  # -0.0 is 0.0
    with pytest.raises(ValueError, match="d = 2"):
        index(torch.zeros(1, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="rows of the policy's candidates"):
        index(torch.tensor([[0.1, 0.1]], dtype=torch.float64))
    monkeypatch.setattr(
        CandidateIndex, "_keys", staticmethod(lambda rows: torch.zeros(rows.shape[:-1], dtype=torch.long))
    )
    colliding = CandidateIndex(X)  # every row shares one key: only the exact comparison can tell them apart
    assert colliding(X[[3, 1, 2]]).tolist() == [3, 1, 0]


def test_log_probability_of_a_duplicated_candidate_sums_its_copies():
    X = torch.tensor([[0.1], [0.1], [0.6], [0.9]], dtype=torch.float64)
    policy = KernelizedExp3(X, make_kernel("se", 1), 20, eta=0.5, alpha=0.2, lam=1.0, beta=0.1, exploration="uniform")
    policy.update(policy.select(), 0.8)
    P = policy.probabilities()
    got = Exp3LogProbability(policy)(X.unsqueeze(-2)).exp()
    torch.testing.assert_close(got, torch.stack([P[0] + P[1], P[0] + P[1], P[2], P[3]]))
