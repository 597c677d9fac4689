"""Property-based tests of the public API, over random but adversarial inputs.

Candidate sets of 1 to 200 points in 1 to 6 dimensions, with exact and near duplicates; the three
kernel families at random lengthscales; sampling distributions from uniform to extreme skew with
exact zeros; rewards anywhere in ``[-B, B]``. Profiles: ``ci`` (default, 100 examples a property)
and ``long`` (2 000): ``HYPOTHESIS_PROFILE=long pytest tests/test_properties.py``.
"""

import math

import torch
from conftest import DT
from hypothesis import given
from hypothesis import strategies as st

from torch_advbandit import KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.center_selection import NystromSample
from torch_advbandit.embedding import nystrom_features
from torch_advbandit.estimators import LowRankIPSEstimator, exact_ips_estimate, nystrom_ips_estimate
from torch_advbandit.kernels import kernel_diag, make_kernel
from torch_advbandit.models import discounted_gp
from torch_advbandit.sampling import exponential_race, fine_uniform

B = 2.0
seeds = st.integers(0, 2**31 - 1)
kernel_names = st.sampled_from(["se", "matern52", "matern32"])
lengthscales = st.floats(0.05, 2.0)
ridges = st.sampled_from([1e-1, 1e-2, 1e-3])
rewards = st.floats(-B, B, allow_nan=False)


@st.composite
def candidate_sets(draw, max_n=200):
    """``Tensor[n, d]`` in ``[0, 1]^d``; some rows exact or near (``1e-9``) copies of others."""
    n, d, seed = draw(st.integers(1, max_n)), draw(st.integers(1, 6)), draw(seeds)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=DT)
    copies = draw(st.sampled_from(["none", "exact", "near"]))
    if copies != "none" and n > 1:
        m = draw(st.integers(1, n - 1))
        X[:m] = X[torch.randint(m, n, (m,), generator=g)]
        if copies == "near":
            X[:m] += 1e-9 * torch.rand(m, d, generator=g, dtype=DT)
    return X


@st.composite
def distributions(draw, n):
    """A distribution on ``n`` points: ``softmax(skew·z)`` with ``skew`` up to 200, some entries exactly 0."""
    g = torch.Generator().manual_seed(draw(seeds))
    skew = draw(st.sampled_from([0.0, 1.0, 20.0, 200.0]))
    log_p = torch.log_softmax(skew * torch.randn(n, generator=g, dtype=DT), 0)
    if n > 1 and draw(st.booleans()):
        log_p[torch.rand(n, generator=g) < 0.3] = -math.inf
        if torch.isinf(log_p).all():
            log_p[0] = 0.0
    return torch.softmax(log_p, 0)


def kernel_of(name, d, ell):
    return make_kernel(name, d, lengthscale=ell)


def round_inputs(data, X, name, ell, *, drawn_from_support=False):
    """``(P, i, kernel)`` of one estimator call; ``i`` from ``P``'s support when ``x_t ~ P_t`` matters."""
    P = data.draw(distributions(X.shape[0]))
    choices = torch.nonzero(P > 0).reshape(-1).tolist() if drawn_from_support else range(X.shape[0])
    return P, data.draw(st.sampled_from(list(choices))), kernel_of(name, X.shape[-1], ell)


@given(X=candidate_sets(), name=kernel_names, ell=lengthscales, c=ridges, y=rewards, data=st.data())
def test_exact_estimate_is_finite_and_widths_within_their_provable_range(X, name, ell, c, y, data):
    P, i, k = round_inputs(data, X, name, ell)
    f_hat, width = exact_ips_estimate(k, X, P, i, y, c)
    assert bool(torch.isfinite(f_hat).all()) and bool(torch.isfinite(width).all())
    kd = kernel_diag(k, X)
    w2 = width.square()
    assert bool((w2 >= kd / ((P * kd).sum() + c) * (1 - 1e-9)).all())
    assert bool((w2 <= kd / c * (1 + 1e-9)).all())
    assert float(f_hat.abs().max()) <= abs(y) / c * (1 + 1e-9)  # |A[x, x']| ≤ sqrt(A[x,x]A[x',x']) ≤ 1/c


@given(X=candidate_sets(max_n=80), name=kernel_names, ell=lengthscales, c=ridges, y=rewards, data=st.data())
def test_nystrom_with_the_full_dictionary_equals_exact(X, name, ell, c, y, data):
    """Also when positive ``P`` span hundreds of decades (the embedding uses the unweighted ``K_SS``)."""
    n = X.shape[0]
    P, i, k = round_inputs(data, X, name, ell, drawn_from_support=True)  # Eq. 6: no residual term at x_t
    full = NystromSample(torch.arange(n), torch.ones(n, dtype=DT))
    f_ref, w_ref = exact_ips_estimate(k, X, P, i, y, c)
    f_hat, width = nystrom_ips_estimate(k, X, P, i, y, c, full)
    assert float((f_hat - f_ref).abs().max()) <= 1e-7 * abs(y) / c
    assert float(((width - w_ref).abs() / w_ref).max()) <= 1e-6


@given(
    X=candidate_sets(max_n=80),
    name=kernel_names,
    ell=lengthscales,
    c=ridges,
    y=rewards,
    tau=st.sampled_from([1e-1, 1e-2, 1e-4]),
    data=st.data(),
)
def test_truncated_nystrom_with_the_full_dictionary_is_within_its_documented_bound(X, name, ell, c, y, tau, data):
    """docs/algorithms.rst §5: ``K̃ − K̃_V ⪯ τc·I``; squared widths within ``1 + √τ + τ`` of exact; ``f̃`` in its bound."""
    n = X.shape[0]
    P, i, k = round_inputs(data, X, name, ell, drawn_from_support=True)
    full = NystromSample(torch.arange(n), torch.ones(n, dtype=DT))
    f_ref, w_ref = exact_ips_estimate(k, X, P, i, y, c)
    f_hat, width = nystrom_ips_estimate(k, X, P, i, y, c, full, embedding_tolerance=tau)
    phi = nystrom_features(k, X, P, full, energy=tau * c)
    sq = P.sqrt()
    K = k(X, X).to_dense()
    dropped = sq[:, None] * (K - phi @ phi.mT) * sq[None, :]
    assert float(torch.linalg.eigvalsh(dropped).max()) <= tau * c * (1 + 1e-6) + 1e-12
    eps = math.sqrt(tau) + tau
    ratio = width.square() / w_ref.square()
    assert float(ratio.max()) <= (1 + eps) * (1 + 1e-6) and float(ratio.min()) >= (1 - 1e-6) / (1 + eps)
    residual = (kernel_diag(k, X) - phi.square().sum(-1)).clamp_min(0.0).sqrt()
    bound = abs(y) * (eps * w_ref * w_ref[i] + residual * residual[i] / c) + 1e-7 * abs(y) / c
    assert bool(((f_hat - f_ref).abs() <= bound).all())


@given(X=candidate_sets(), name=kernel_names, ell=lengthscales, c=ridges, y=rewards, data=st.data())
def test_lowrank_estimate_is_within_its_documented_bound_of_exact(X, name, ell, c, y, data):
    n = X.shape[0]
    P, i, k = round_inputs(data, X, name, ell)
    est = LowRankIPSEstimator(k, X, c, tolerance=1e-10)
    f_hat, width = est.estimate(P, i, y)
    f_ref, w_ref = exact_ips_estimate(k, X, P, i, y, c)
    assert bool(torch.isfinite(f_hat).all()) and bool((width >= 0).all())
    bound = n * max(float(est.factor.residual.max()), 0.0) / c + 1e-8 / c  # + rounding of both paths
    assert float((f_hat - f_ref).abs().max()) <= abs(y) * bound + 1e-12
    assert float((width.square() - w_ref.square()).abs().max()) <= bound


@given(
    X=candidate_sets(max_n=60),
    name=kernel_names,
    rls=st.booleans(),
    seed=seeds,
    ys=st.lists(rewards, min_size=1, max_size=6),
)
def test_policy_probabilities_stay_a_distribution(X, name, rls, seed, ys):
    cls = RLSKernelizedExp3 if rls else KernelizedExp3
    policy = cls(
        X,
        make_kernel(name, X.shape[-1]),
        50,
        eta=0.5,
        alpha=0.1,
        lam=1.0,
        beta=0.05,
        generator=torch.Generator().manual_seed(seed),
    )
    for y in ys:
        P = policy.probabilities()
        assert bool(torch.isfinite(P).all()) and bool((P >= 0).all())
        assert abs(float(P.sum()) - 1.0) < 1e-12
        policy.update(policy.select(), y)


@given(
    X=candidate_sets(max_n=40),
    name=kernel_names,
    ell=lengthscales,
    discount=st.floats(0.5, 1.0),
    lam=st.sampled_from([1e-4, 1e-2, 1.0]),
    seed=seeds,
)
def test_gp_posterior_variance_lies_in_zero_to_prior(X, name, ell, discount, lam, seed):
    g = torch.Generator().manual_seed(seed)
    Y = torch.rand(X.shape[0], 1, generator=g, dtype=DT) * 2 * B - B
    k = kernel_of(name, X.shape[-1], ell)
    model = discounted_gp(X, Y, k, discount=discount, lam=lam)
    test = torch.cat([X, torch.rand(20, X.shape[-1], generator=g, dtype=DT)])
    with torch.no_grad():
        var = model.posterior(test.unsqueeze(-2)).variance.reshape(-1)
    prior = kernel_diag(k, test)
    assert bool(torch.isfinite(var).all())
    assert bool((var >= -1e-9).all()) and bool((var <= prior + 1e-9).all())


@given(data=st.data(), n=st.integers(1, 500))
def test_sampler_never_draws_an_impossible_point(data, n):
    P = data.draw(distributions(n))
    v = fine_uniform(64, n, torch.Generator().manual_seed(data.draw(seeds)), torch.device("cpu"))
    draws = exponential_race(P.log(), v)
    assert bool((draws >= 0).all()) and bool((draws < n).all())
    assert bool((P[draws] > 0).all())
