import math
import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import DT, grid, oracle_kernel

from torch_advbandit import KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.center_selection import (
    NystromSample,
    RecursiveRLSSelector,
    UniformSelector,
    approximate_leverage_scores,
    recursive_rls_nystrom,
)
from torch_advbandit.embedding import dictionary_basis, truncated_basis
from torch_advbandit.estimators import NystromIPSEstimator, exact_ips_estimate, nystrom_ips_estimate
from torch_advbandit.kernels import make_kernel
from torch_advbandit.parameters import paper_parameters


def random_probs(n, seed, floor=1e-3):
    p = torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=DT) ** 3 + floor
    return p / p.sum()


@pytest.mark.parametrize("name", ["se", "matern52", "matern32"])
def test_full_dictionary_reproduces_the_exact_estimator(name, device):
    X = torch.rand(90, 2, generator=torch.Generator().manual_seed(0), dtype=DT).to(device)
    P = random_probs(90, 1).to(device)
    k = make_kernel(name, 2)
    full = NystromSample(torch.arange(90, device=device), torch.ones(90, dtype=DT, device=device))
    f1, w1 = exact_ips_estimate(k, X, P, 17, -0.6, 1e-2)
    f2, w2 = nystrom_ips_estimate(k, X, P, 17, -0.6, 1e-2, full)
    torch.testing.assert_close(f2, f1, rtol=1e-6, atol=1e-8 * float(f1.abs().max()))
    torch.testing.assert_close(w2, w1, rtol=1e-6, atol=0)


def test_spectral_guarantee_with_real_compression():
    n, c = 2500, 1e-3
    X = grid(n)
    P = random_probs(n, 2)
    sample = recursive_rls_nystrom(
        make_kernel("matern52", 1), X, c, probs=P, generator=torch.Generator().manual_seed(3)
    )
    assert sample.size < n // 2
    sq = P.sqrt()
    Kt = sq[:, None] * oracle_kernel("matern52", X, X, 0.3) * sq[None, :]
    KS = Kt[:, sample.indices] * sample.weights
    SKS = KS[sample.indices] * sample.weights[:, None]
    approx = KS @ torch.linalg.pinv(SKS, hermitian=True, rtol=1e-12) @ KS.T
    assert torch.linalg.eigvalsh(Kt - approx).max().item() <= c


@pytest.mark.parametrize("rule", ["ridge", "ridge_squared"])
@pytest.mark.parametrize("name", ["se", "matern32"])
@pytest.mark.parametrize("m", [60, 600], ids=["cholesky-path", "eigen-path"])
def test_leverage_scores_match_the_dense_definition_and_truncation_only_raises_them(name, m, rule, device):
    """Dense ``(3/2c)(K̃_ii − K̃_iS W (W K̃_SS W + cI)⁻¹ W K̃_Si)``; the ``m ≥ 4s`` path cuts eigenvalues."""
    n, c = 600, 1e-3
    X = grid(n).to(device)
    P = random_probs(n, 4).to(device)
    g = torch.Generator().manual_seed(5)
    S = torch.randperm(n, generator=g)[:100].to(device)
    w = (torch.rand(100, generator=g, dtype=DT) + 0.5).to(device)
    rows = torch.arange(m, device=device)
    sq = P.sqrt()
    Kt = sq[:, None] * oracle_kernel(name, X, X, 0.3) * sq[None, :]
    C = w[:, None] * Kt[S][:, rows]
    inner = w[:, None] * Kt[S][:, S] * w[None, :] + c * torch.eye(100, dtype=DT, device=device)
    dense = 1.5 / c * (Kt.diagonal()[rows] - (C * torch.linalg.solve(inner, C)).sum(0)).clamp_min(0)
    k, sample, wd = make_kernel(name, 1), NystromSample(S, w), P * torch.ones(n, dtype=DT, device=device)
    exact = approximate_leverage_scores(k, X, sq, wd, rows, sample, c, eigen_tolerance=0.0)
    torch.testing.assert_close(exact, dense, rtol=1e-7, atol=1e-9 * float(dense.max()))
    tol = 1e-2
    cut = approximate_leverage_scores(k, X, sq, wd, rows, sample, c, eigen_tolerance=tol, pivot_rule=rule)
    bound = 1.5 * tol * wd[rows] / c
    slack = 1e-9 * float(dense.max())
    assert bool((cut >= exact - slack).all()) and bool((cut <= exact + bound + slack).all())
    if m >= 400 and name == "se":
        assert float((cut - exact).abs().max()) > 0  # the cut did drop directions


def test_dictionary_size_follows_effective_dimension_not_n():
    """With P uniform the weighted kernel K/n has an n-independent spectrum: s must not grow with n."""
    sizes = []
    for n in (2000, 8000):
        X = grid(n)
        P = torch.full((n,), 1.0 / n, dtype=DT)
        s = [
            recursive_rls_nystrom(
                make_kernel("se", 1), X, 1e-3, probs=P, generator=torch.Generator().manual_seed(k)
            ).size
            for k in range(3)
        ]
        sizes.append(sum(s) / 3)
    assert sizes[1] < 1.5 * sizes[0] and sizes[1] < 2000, sizes


def test_nystrom_path_never_allocates_n_by_n():
    """n = 40 000: an n × n float64 matrix is 12.8 GB; the whole round must stay under 2.5 GB."""
    code = textwrap.dedent(
        """
        import resource, torch
        from torch_advbandit.estimators import NystromIPSEstimator
        from torch_advbandit.kernels import make_kernel
        n = 40_000
        X = torch.linspace(0, 1, n, dtype=torch.float64).unsqueeze(-1)
        P = torch.full((n,), 1.0 / n, dtype=torch.float64)
        est = NystromIPSEstimator(make_kernel("matern32", 1), X, ridge=1e-2)
        f, w = est.estimate(P, 7, 1.0, generator=torch.Generator().manual_seed(0))
        assert torch.isfinite(f).all() and torch.isfinite(w).all()
        print(est.last_sample.size, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    size, peak_kb = map(int, out.stdout.split())
    assert size < 40_000 and peak_kb < 2.5 * 2**20, (size, peak_kb)


def test_rls_exp3_regret_close_to_exact_where_compression_happens():
    from torch_advbandit.environments import AdaptiveAdversary
    from torch_advbandit.experiments import play

    X, T = grid(800), 150
    k = make_kernel("se", 1)
    env = AdaptiveAdversary.from_kernel(k, X, num_functions=100, generator=torch.Generator().manual_seed(0))
    exact = KernelizedExp3(X, k, T, **paper_parameters("se", T, 1), generator=torch.Generator().manual_seed(1))
    rls = RLSKernelizedExp3(
        X,
        k,
        T,
        **paper_parameters("se", T, 1, algorithm="rls_kernelized_exp3"),
        generator=torch.Generator().manual_seed(1),
    )
    sizes = []
    r_exact = play(exact, env, T).expected_regret[-1]
    r_rls = play(rls, env, T, on_round=lambda t: sizes.append(rls.estimator.last_sample.size)).expected_regret[-1]
    uniform_regret = T * float((env.functions.max(1).values - env.functions.mean(1)).max())
    assert max(sizes) < 800, "no compression happened"
    assert r_rls < 2.0 * r_exact + 0.05 * uniform_regret, (r_rls, r_exact)


def test_rls_policy_state_round_trip_includes_dictionary_randomness():
    X = grid(500)
    params = paper_parameters("matern32", 60, 1, algorithm="rls_kernelized_exp3")
    a = RLSKernelizedExp3(X, make_kernel("matern32", 1), 60, **params, generator=torch.Generator().manual_seed(0))
    for t in range(3):
        a.update(a.select(), math.sin(t))
    b = RLSKernelizedExp3(X, make_kernel("matern32", 1), 60, **params, generator=torch.Generator().manual_seed(5))
    b.load_state_dict(a.state_dict())
    for t in range(3):
        i, j = a.select(), b.select()
        assert i == j
        a.update(i, math.cos(t))
        b.update(j, math.cos(t))
    assert torch.equal(a.probabilities(), b.probabilities())


def test_uniform_selector_is_a_baseline_strategy():
    X = grid(300)
    P = torch.full((300,), 1 / 300, dtype=DT)
    est = NystromIPSEstimator(make_kernel("se", 1), X, 1e-2, selector=UniformSelector(50))
    f, w = est.estimate(P, 0, 1.0, generator=torch.Generator().manual_seed(0))
    assert est.last_sample.size == 50 and torch.isfinite(f).all() and (w > 0).all()


@pytest.mark.parametrize(
    "build, error",
    [
        (lambda: NystromSample(torch.tensor([0.0]), torch.ones(1)), TypeError),
        (lambda: NystromSample(torch.tensor([0]), torch.ones(2)), ValueError),
        (lambda: NystromSample(torch.tensor([0]), torch.tensor([-1.0])), ValueError),
        (lambda: RecursiveRLSSelector(delta=1.5), ValueError),
        (lambda: recursive_rls_nystrom(make_kernel("se", 1), grid(10), 0.0), ValueError),
        (
            lambda: recursive_rls_nystrom(make_kernel("se", 1), grid(10), 0.1, probs=-torch.ones(10, dtype=DT)),
            ValueError,
        ),
        (
            lambda: RLSKernelizedExp3(
                grid(10), make_kernel("se", 1), 10, eta=1.0, alpha=0.5, lam=1.0, beta=0.1, delta=0
            ),
            ValueError,
        ),
    ],
)
def test_bad_input(build, error):
    with pytest.raises(error):
        build()


def test_block_budget_changes_memory_not_results():
    """Tiny blocks (a few rows at a time) give the same dictionary, estimate and width."""
    n = 3000
    X = grid(n)
    P = random_probs(n, 7)
    out = []
    for block in (2**24, 5000):
        est = NystromIPSEstimator(
            make_kernel("matern52", 1), X, 1e-3, selector=RecursiveRLSSelector(block_entries=block), block_entries=block
        )
        f_hat, width = est.estimate(P, 11, 0.4, generator=torch.Generator().manual_seed(2))
        out.append((est.last_sample.indices, f_hat, width))
    assert torch.equal(out[0][0], out[1][0])
    scale = float(out[0][1].abs().max())  # kernel blocks of other shapes round differently
    torch.testing.assert_close(out[1][1], out[0][1], rtol=0, atol=1e-10 * scale)
    torch.testing.assert_close(out[1][2], out[0][2], rtol=1e-10, atol=0)


@pytest.mark.parametrize("name", ["se", "matern52", "matern32"])
def test_float32_nystrom_estimate_is_close_to_float64(name):
    """float32 is an explicit choice: with ``c ≥ 1e-2``, ``f̂`` to 5e-3 of its maximum, widths to 1e-3."""
    X = grid(300)
    P = random_probs(300, 8)
    full = NystromSample(torch.arange(300), torch.ones(300, dtype=DT))
    k = make_kernel(name, 1)
    f64, w64 = nystrom_ips_estimate(k, X, P, 5, 1.0, 1e-2, full)
    full32 = NystromSample(full.indices, full.weights.float())
    f32, w32 = nystrom_ips_estimate(k, X.float(), P.float(), 5, 1.0, 1e-2, full32)
    assert f32.dtype == torch.float32
    assert float((f32.double() - f64).abs().max() / f64.abs().max()) < 5e-3
    assert float(((w32.double() - w64) / w64).abs().max()) < 1e-3


@pytest.mark.parametrize("rule, n, size, tol", [("ridge_squared", 1500, 300, 1e-6), ("ridge", 3000, 700, 1e-12)])
def test_leverage_scores_eigen_fallback_when_the_pivoted_rank_exceeds_its_cap(monkeypatch, rule, n, size, tol):
    """Matérn-3/2 with a strict cut needs more pivots than the cap: the eigenbasis path runs, still one-sided."""
    import torch_advbandit.nystrom as nystrom_module

    calls = []
    real = nystrom_module.pivoted_cholesky

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out is None)
        return out

    monkeypatch.setattr(nystrom_module, "pivoted_cholesky", spy)
    c = 1e-3
    X = grid(n)
    P = random_probs(n, 9)
    g = torch.Generator().manual_seed(4)
    sample = NystromSample(torch.randperm(n, generator=g)[:size], torch.ones(size, dtype=DT))
    k, rows = make_kernel("matern32", 1), torch.arange(n)
    exact = approximate_leverage_scores(k, X, P.sqrt(), P, rows, sample, c, eigen_tolerance=0.0)
    cut = approximate_leverage_scores(k, X, P.sqrt(), P, rows, sample, c, eigen_tolerance=tol, pivot_rule=rule)
    assert calls == [True]  # the pivoted attempt gave up; the eigenbasis path produced `cut`
    slack = 1e-9 * float(exact.max())
    assert bool((cut >= exact - slack).all()) and bool((cut <= exact + 1.5 * tol * P / c + slack).all())


@pytest.mark.parametrize("max_pivots", [512, 4])  # pivoted Cholesky, and the eigenvalue cut when pivots run out
def test_truncated_basis_leaves_out_at_most_its_energy(max_pivots):
    """docs/algorithms.rst §5: ``‖(I − Π_V)C_S(I − Π_V)‖ ≤ τc`` for a real weighted RLS dictionary."""
    n, c, tau = 2000, 5e-3, 1e-3
    X = grid(n)
    P = random_probs(n, 4)
    k = make_kernel("matern32", 1)
    sample = recursive_rls_nystrom(k, X, c, probs=P, generator=torch.Generator().manual_seed(5))
    S = X[sample.indices]
    scale = sample.weights * P[sample.indices].sqrt()
    S_J, R = truncated_basis(k, S, scale, tau * c, max_pivots=max_pivots)
    K_SS = oracle_kernel("matern32", S, S, 0.3)
    B = scale[:, None] * K_SS * scale[None, :]
    projected = scale[:, None] * (oracle_kernel("matern32", S, S_J, 0.3) @ R)  # E·ϕ(S): coordinates on V
    dropped = torch.linalg.eigvalsh(B - projected @ projected.mT)
    assert float(dropped.max()) <= tau * c * (1 + 1e-8) and float(dropped.min()) >= -1e-12
    _, R_full = dictionary_basis(k, S)
    assert R.shape[-1] < R_full.shape[-1] / 4  # far fewer directions than the dictionary's numerical rank
