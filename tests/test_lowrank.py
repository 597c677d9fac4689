"""The low-rank exact path: pivoted Cholesky of K + the Woodbury form of [Iwazaki2026] Eq. 3."""

import pytest
import torch
from conftest import DT, grid, oracle_kernel
from linear_operator.operators import DiagLinearOperator, LowRankRootAddedDiagLinearOperator, LowRankRootLinearOperator

from torch_advbandit import KernelizedExp3
from torch_advbandit.estimators import LowRankIPSEstimator, exact_ips_estimate
from torch_advbandit.kernels import make_kernel
from torch_advbandit.linalg import LowRankKernelFactor
from torch_advbandit.parameters import paper_parameters


def skewed_probs(n, seed):
    p = torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=DT) ** 6 + 1e-9
    return p / p.sum()


def dense_A(L, e, P, c):
    """``A = (1/c)[K_r − K_r D^½ (K̃_r + cI)⁻¹ D^½ K_r]`` for ``K_r = LLᵀ + diag(e)``, solved by linear_operator."""
    sq = P.sqrt()
    op = LowRankRootAddedDiagLinearOperator(LowRankRootLinearOperator(sq[:, None] * L), DiagLinearOperator(P * e + c))
    K = L @ L.T + torch.diag(e)
    Y = sq[:, None] * K
    return (K - Y.T @ op.solve(Y)) / c


def test_factor_is_pivoted_cholesky_with_psd_residual():
    X = grid(300)
    F = LowRankKernelFactor.build(make_kernel("matern52", 1), X, tolerance=1e-6)
    K = oracle_kernel("matern52", X, X, 0.3)
    E = K - F.L @ F.L.T
    torch.testing.assert_close(E.diagonal(), F.residual, rtol=0, atol=1e-12)
    assert float(F.residual.max()) <= 1e-6 and float(F.residual[F.pivots].abs().max()) < 1e-12
    assert torch.linalg.eigvalsh(E).min() > -1e-10  # Schur complement: PSD
    assert F.rank < 300


@pytest.mark.parametrize("rank", [5, 25])
def test_woodbury_closed_form_equals_dense_linear_operator_solve(rank, device):
    """A truncated factor (large e) so that every term of the closed form matters."""
    n, c, i, y = 120, 1e-2, 17, -0.8
    X = torch.rand(n, 2, generator=torch.Generator().manual_seed(0), dtype=DT).to(device)
    P = skewed_probs(n, 1).to(device)
    with pytest.warns(RuntimeWarning, match="max_rank"):
        est = LowRankIPSEstimator(make_kernel("matern32", 2), X, c, tolerance=1e-14, max_rank=rank)
    f_hat, width = est.estimate(P, i, y)
    assert f_hat.device.type == device.type and f_hat.dtype == DT
    A = dense_A(est.factor.L, est.factor.residual, P, c)
    torch.testing.assert_close(f_hat, A[:, i] * y, rtol=1e-9, atol=1e-12 * float(A.abs().max()))
    torch.testing.assert_close(width.square(), A.diagonal(), rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", ["se", "matern52"])
def test_lowrank_estimator_matches_exact_within_the_documented_bound(name, device):
    n, c, i, y = 400, 1e-3, 33, 0.7
    X = grid(n).to(device)
    P = skewed_probs(n, 2).to(device)
    k = make_kernel(name, 1)
    tol = 1e-9
    est = LowRankIPSEstimator(k, X, c, tolerance=tol)
    f_hat, width = est.estimate(P, i, y)
    f_ref, w_ref = exact_ips_estimate(k, X, P, i, y, c)
    bound = n * float(est.factor.residual.max()) / c + 1e-9  # entries of A; rounding of the exact path
    assert float((f_hat - f_ref).abs().max()) <= abs(y) * bound
    assert float((width.square() - w_ref.square()).abs().max()) <= bound
    assert est.factor.rank < n // 2


def test_se_default_tolerance_gives_widths_to_1e_6_relative_with_small_rank():
    n, c = 3000, 1e-3
    X = grid(n)
    P = skewed_probs(n, 3)
    k = make_kernel("se", 1)
    est = LowRankIPSEstimator(k, X, c)
    _, width = est.estimate(P, 5, 1.0)
    _, w_ref = exact_ips_estimate(k, X, P, 5, 1.0, c)
    assert float(((width - w_ref).abs() / w_ref).max()) < 1e-6
    assert est.factor.rank < 40


def test_batch_estimate_is_the_average_of_single_estimates(device):
    """A repeated draw adds its residual-diagonal term twice, deterministically."""
    X = grid(80).to(device)
    P = skewed_probs(80, 4).to(device)
    est = LowRankIPSEstimator(make_kernel("matern52", 1), X, 1e-2, tolerance=1e-8)
    j = int(est.factor.residual.argmax())  # pivots have a zero residual; which ones depends on rounding
    assert float(est.factor.residual[j]) > 0  # the term is there to be counted
    idx = torch.tensor([j, (j + 37) % 80, j], device=device)
    ys = torch.tensor([0.5, -1.0, 0.25], dtype=DT, device=device)
    f_batch, w_batch = est._estimate_batch(P, idx, ys, None)
    assert torch.equal(f_batch, est._estimate_batch(P, idx, ys, None)[0])
    singles = [est.estimate(P, int(j), float(v)) for j, v in zip(idx, ys, strict=True)]
    torch.testing.assert_close(f_batch, sum(f for f, _ in singles) / 3)
    torch.testing.assert_close(w_batch, singles[0][1])


def test_kernelized_exp3_lowrank_follows_the_exact_trajectory():
    X = grid(200)
    k = make_kernel("se", 1)
    params = paper_parameters("se", 60, 1)
    policies = [
        KernelizedExp3(X, k, 60, **params, estimator=e, generator=torch.Generator().manual_seed(7))
        for e in ("exact", "lowrank")
    ]
    for t in range(60):
        probs = [p.probabilities() for p in policies]
        torch.testing.assert_close(probs[1], probs[0], rtol=1e-6, atol=1e-12)
        chosen = [p.select() for p in policies]
        assert chosen[0] == chosen[1], t
        for p in policies:
            p.update(chosen[0], float(torch.sin(5 * X[chosen[0], 0])))
    assert policies[1].diagnostics()["rank"] < 40


def test_lowrank_policy_state_round_trip_and_configuration_check():
    X = grid(60)
    k = make_kernel("se", 1)
    params = paper_parameters("se", 20, 1)
    a = KernelizedExp3(X, k, 20, **params, estimator="lowrank", generator=torch.Generator().manual_seed(1))
    for _ in range(5):
        a.update(a.select(), 0.3)
    b = KernelizedExp3(X, k, 20, **params, estimator="lowrank", generator=torch.Generator().manual_seed(9))
    b.load_state_dict(a.state_dict())
    for _ in range(5):
        i = a.select()
        assert b.select() == i
        a.update(i, -0.2)
        b.update(i, -0.2)
    exact = KernelizedExp3(X, k, 20, **params, generator=torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="hyperparameters"):
        exact.load_state_dict(a.state_dict())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(tolerance=0.0), "tolerance"),
        (dict(tolerance=float("nan")), "tolerance"),
        (dict(max_rank=0), "max_rank"),
        (dict(max_rank=2.5), "max_rank"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        LowRankIPSEstimator(make_kernel("se", 1), grid(10), 1e-2, **kwargs)
    with pytest.raises(ValueError, match="estimator"):
        KernelizedExp3(grid(10), make_kernel("se", 1), 10, **paper_parameters("se", 10, 1), estimator="dense")


def test_float32_lowrank_estimate_is_close_to_float64():
    X = grid(500)
    P = skewed_probs(500, 5)
    k = make_kernel("se", 1)
    f64, w64 = LowRankIPSEstimator(k, X, 1e-2).estimate(P, 9, 1.0)
    with pytest.warns(RuntimeWarning):  # float32 cannot reach 1e-12: the residual it attains is reported
        est32 = LowRankIPSEstimator(k, X.float(), 1e-2, max_rank=40)
    f32, w32 = est32.estimate(P.float(), 9, 1.0)
    assert f32.dtype == torch.float32
    assert float((f32.double() - f64).abs().max() / f64.abs().max()) < 1e-3
    assert float(((w32.double() - w64) / w64).abs().max()) < 1e-3
