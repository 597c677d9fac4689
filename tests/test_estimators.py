import pytest
import torch
from conftest import DT, grid, oracle_A, oracle_kernel

from torch_advbandit.estimators import ExactIPSEstimator, exact_ips_estimate
from torch_advbandit.kernels import make_kernel


def random_probs(n, gen, floor=1e-3):
    p = torch.rand(n, generator=gen, dtype=DT) ** 3 + floor
    return p / p.sum()


@pytest.mark.parametrize("name", ["se", "matern52", "matern32"])
@pytest.mark.parametrize("ridge", [1e-1, 1e-3])
def test_exact_estimate_matches_feature_space_definition(name, ridge, device):
    gen = torch.Generator().manual_seed(1)
    X = torch.rand(70, 2, generator=gen, dtype=DT)
    P = random_probs(70, gen)
    i, y = 13, -1.7
    f_hat, width = exact_ips_estimate(make_kernel(name, 2), X.to(device), P.to(device), i, y, ridge)
    assert f_hat.device.type == device.type and f_hat.dtype == DT
    A = oracle_A(oracle_kernel(name, X, X, 0.3 * 2**0.5), P, ridge)
    torch.testing.assert_close(f_hat.cpu(), A[:, i] * y, rtol=1e-7, atol=1e-9 * A.abs().max())
    torch.testing.assert_close(width.cpu() ** 2, A.diagonal(), rtol=1e-7, atol=0)


def test_exact_estimate_with_probabilities_down_to_1e30_and_zero():
    gen = torch.Generator().manual_seed(2)
    X = torch.rand(50, 1, generator=gen, dtype=DT)
    P = random_probs(50, gen)
    P[:10] = 1e-30
    P[10] = 0.0
    P = P / P.sum()
    f_hat, width = exact_ips_estimate(make_kernel("matern32", 1), X, P, 20, 0.8, 1e-2)
    A = oracle_A(oracle_kernel("matern32", X, X, 0.3), P, 1e-2)
    torch.testing.assert_close(f_hat, A[:, 20] * 0.8, rtol=1e-7, atol=1e-9 * A.abs().max())
    torch.testing.assert_close(width**2, A.diagonal(), rtol=1e-7, atol=0)


def test_exact_estimate_on_singular_kernel_is_finite_and_within_provable_bounds():
    X = grid(400)
    P = torch.softmax(torch.randn(400, generator=torch.Generator().manual_seed(3), dtype=DT) * 30, 0)
    c = 1e-3
    f_hat, width = exact_ips_estimate(make_kernel("se", 1), X, P, 5, 1.0, c)
    assert torch.isfinite(f_hat).all() and torch.isfinite(width).all()
    # eigenvalues of G lie in [c, 1 + c]: k(x,x)/(1+c) ≤ A[x,x] ≤ k(x,x)/c
    assert (width**2 >= 1 / (1 + c) - 1e-12).all() and (width**2 <= 1 / c + 1e-9).all()
    # f_hat(x_t) = A[x_t, x_t] y_t
    assert float(f_hat[5]) == pytest.approx(float(width[5] ** 2), rel=1e-9)


def test_estimator_object_reuses_kernel_matrix_and_validates():
    X = grid(30)
    est = ExactIPSEstimator(make_kernel("se", 1), X, ridge=1e-2)
    P = torch.full((30,), 1 / 30, dtype=DT)
    f1, w1 = est.estimate(P, 3, 2.0)
    f2, _ = est.estimate(P, 3, 1.0)
    torch.testing.assert_close(f1, 2 * f2)
    with pytest.raises(ValueError, match="probs"):
        est.estimate(P[:-1], 3, 1.0)
    with pytest.raises(ValueError, match="probs"):
        est.estimate(-P, 3, 1.0)
    with pytest.raises(ValueError, match="index"):
        est.estimate(P, 30, 1.0)
    with pytest.raises(ValueError, match="reward"):
        est.estimate(P, 3, float("inf"))
    with pytest.raises(ValueError, match="ridge"):
        ExactIPSEstimator(make_kernel("se", 1), X, ridge=0.0)


def test_float32_is_accurate_to_documented_tolerance():
    """float32 is an explicit choice: with ridge ≥ 1e-2 it keeps three significant digits."""
    gen = torch.Generator().manual_seed(4)
    X = torch.rand(100, 1, generator=gen, dtype=DT)
    P = random_probs(100, gen)
    f64, w64 = exact_ips_estimate(make_kernel("matern52", 1), X, P, 7, 1.0, 1e-2)
    f32, w32 = exact_ips_estimate(make_kernel("matern52", 1), X.float(), P.float(), 7, 1.0, 1e-2)
    assert f32.dtype == torch.float32
    torch.testing.assert_close(w32.double(), w64, rtol=1e-3, atol=0)
    torch.testing.assert_close(f32.double(), f64, rtol=1e-3, atol=1e-3 * f64.abs().max())


TF32_UNIT_ROUNDOFF = 2.0**-11  # TF32 keeps 10 explicit mantissa bits of each matmul input


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("estimator", ["exact", "lowrank", "nystrom"])
def test_tf32_float32_keeps_the_documented_accuracy(estimator):
    """docs/performance.rst: with TF32 matmuls errors grow like ``u/c`` (``u = 2⁻¹¹``); at ``c = 0.1``
    ``f̂`` stays within ``5·10⁻²`` of its maximum and the width within ``5·10⁻²`` relative
    (``10·u/c ≈ 4.9·10⁻²``)."""
    from torch_advbandit.center_selection import FixedSelector, NystromSample
    from torch_advbandit.estimators import LowRankIPSEstimator, NystromIPSEstimator

    n, c = 500, 1e-1
    X = grid(n)
    P = random_probs(n, torch.Generator().manual_seed(2))
    k = make_kernel("matern52", 1)

    def build(X):
        if estimator == "exact":
            return ExactIPSEstimator(k, X, c)
        if estimator == "lowrank":
            return LowRankIPSEstimator(k, X, c, tolerance=1e-6 if X.dtype == torch.float32 else 1e-12)
        full = NystromSample(torch.arange(n, device=X.device), torch.ones(n, dtype=X.dtype, device=X.device))
        return NystromIPSEstimator(k, X, c, selector=FixedSelector(full))

    f64, w64 = build(X).estimate(P, 11, 1.0)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")  # TF32
    try:
        X32 = X.to("cuda", torch.float32)
        f32, w32 = build(X32).estimate(P.to(X32), 11, 1.0)
    finally:
        torch.set_float32_matmul_precision(previous)
    assert float((f32.double().cpu() - f64).abs().max() / f64.abs().max()) < 5e-2
    assert float(((w32.double().cpu() - w64) / w64).abs().max()) < 5e-2
