"""The one-factor GP posterior the GP-UCB policies select with, against BoTorch's SingleTaskGP."""

import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from conftest import DT, grid
from gpytorch.kernels import MaternKernel, ScaleKernel

from torch_advbandit import IGPUCB, WGPUCB, RestartingGPUCB, SlidingWindowGPUCB
from torch_advbandit.factored_gp import CholeskyCache, FactoredGP, bordered_cholesky
from torch_advbandit.kernels import kernel_matrix, make_kernel
from torch_advbandit.models import fixed_noise_gp, frozen_kernel


def ard_kernel(d, device="cpu"):
    k = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d)).to(device=device, dtype=DT)
    k.outputscale = 1.8
    k.base_kernel.lengthscale = torch.linspace(0.2, 0.5, d, dtype=DT, device=device)
    return frozen_kernel(k, torch.zeros(1, d, dtype=DT, device=device))


@pytest.mark.parametrize("constant", [None, 0.7])
def test_factored_posterior_equals_single_task_gp(device, constant):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(40, 3, generator=g, dtype=DT).to(device)
    Y = torch.randn(40, generator=g, dtype=DT).to(device)
    noise = (0.01 + 0.5 * torch.rand(40, generator=g, dtype=DT)).to(device)
    k = ard_kernel(3, device)
    L = torch.linalg.cholesky(kernel_matrix(k, X) + torch.diag(noise))
    ours = FactoredGP(X, Y, k, L, mean_constant=constant, new_noise=0.02)
    ref = fixed_noise_gp(X, Y.unsqueeze(-1), noise.unsqueeze(-1), k, constant)
    test = torch.rand(7, 4, 3, generator=g, dtype=DT).to(device)  # 7 batches of q = 4: joint covariances
    for noisy in (False, True):
        a = ours.posterior(test, observation_noise=noisy)
        b = ref.posterior(test)
        covar_b = b.mvn.covariance_matrix + noisy * 0.02 * torch.eye(4, dtype=DT, device=device)
        torch.testing.assert_close(a.mean, b.mean.detach(), atol=1e-10, rtol=1e-9)
        torch.testing.assert_close(a.mvn.covariance_matrix, covar_b.detach(), atol=1e-10, rtol=1e-9)
    assert a.mean.shape == (7, 4, 1) and a.mean.device.type == device.type
    half = float(torch.linalg.slogdet(kernel_matrix(k, X) + torch.diag(noise))[1]) / 2
    assert ours.half_log_det() == pytest.approx(half, rel=1e-12)
    with pytest.raises(ValueError, match="output_indices"):
        ours.posterior(test, output_indices=[1])


def test_bordered_cholesky_matches_a_fresh_factor_and_refuses_an_unsafe_pivot():
    g = torch.Generator().manual_seed(1)
    B = torch.randn(30, 30, generator=g, dtype=DT)
    A = B @ B.mT + 0.1 * torch.eye(30, dtype=DT)
    L = bordered_cholesky(torch.linalg.cholesky(A[:29, :29]), A[29, :29], float(A[29, 29]))
    torch.testing.assert_close(L, torch.linalg.cholesky(A), atol=1e-10, rtol=1e-10)
    x = torch.ones(2, 1, dtype=DT)  # [[1, 1], [1, 1]]: singular, the new pivot is 0
    assert bordered_cholesky(torch.ones(1, 1, dtype=DT), x[1], 1.0) is None


def test_cholesky_cache_borders_only_an_unchanged_leading_block():
    g = torch.Generator().manual_seed(2)
    X = torch.rand(12, 1, generator=g, dtype=DT)
    K = kernel_matrix(make_kernel("se", 1), X)
    noise = torch.full((12,), 0.1, dtype=DT)
    cache = CholeskyCache()
    for m in range(1, 13):  # grown a row at a time: bordered from the second on
        L = cache.factor(K[:m, :m], noise[:m])
        torch.testing.assert_close(L @ L.mT, K[:m, :m] + torch.diag(noise[:m]), atol=1e-12, rtol=1e-12)
    changed = noise.clone()
    changed[0] = 0.2  # every noise changes (WGP-UCB): factorised anew, not bordered
    cache = CholeskyCache()
    cache.factor(K[:5, :5], noise[:5])
    L = cache.factor(K[:6, :6], changed[:6])
    torch.testing.assert_close(L @ L.mT, K[:6, :6] + torch.diag(changed[:6]), atol=1e-12, rtol=1e-12)
    L = cache.factor(K[1:7, 1:7], noise[:6])  # a window that slid: anew
    torch.testing.assert_close(L @ L.mT, K[1:7, 1:7] + torch.diag(noise[:6]), atol=1e-12, rtol=1e-12)


def policies(X, T, gen):
    k = make_kernel("se", 1, lengthscale=0.2)
    common = dict(noise_bound=0.05, generator=gen)
    return {
        "wgp": WGPUCB(X, k, T, discount=0.9, lam=1.0, **common),
        "wgp_auto": WGPUCB(X, k, T, discount="auto", lam=0.01, **common),
        "igp": IGPUCB(X, k, T, **common),
        "sw": SlidingWindowGPUCB(X, k, T, window=8, **common),
        "restart": RestartingGPUCB(X, k, T, period=9, **common),
        "fitted": IGPUCB(X, k, T, lam=0.01, fit_hyperparameters=True, fit_every=5, **common),
    }


@pytest.mark.parametrize("name", ["wgp", "wgp_auto", "igp", "sw", "restart", "fitted"])
def test_selections_are_those_of_the_single_task_gp(name):
    """Every round's UCB over the candidates and ``β_t`` equal those of the policy's ``SingleTaskGP`` and
    ``γ_t`` factorised on its own; the factored policy and one selecting with ``model()`` play the same points."""
    X = grid(60)
    T = 30
    fast = policies(X, T, torch.Generator().manual_seed(3))[name]
    slow = policies(X, T, torch.Generator().manual_seed(3))[name]
    slow.selection_model = slow.model  # the BoTorch model, factorised by GPyTorch
    g = torch.Generator().manual_seed(4)
    for t in range(T):
        i, j = fast.select(), slow.select()
        assert i == j, f"round {t}"
        model = fast.selection_model()
        if model is not None:  # none in the first round and right after a restart
            beta = fast.confidence_width(model)
            assert beta == pytest.approx(slow.confidence_width(), rel=1e-12)
            with torch.no_grad():
                ucb = UpperConfidenceBound(model, beta=beta**2)(X.unsqueeze(-2))
                ref = UpperConfidenceBound(slow.model(), beta=beta**2)(X.unsqueeze(-2))
            torch.testing.assert_close(ucb, ref, atol=1e-9, rtol=1e-9)
        y = float(torch.sin(6 * X[i, 0]) + 0.05 * torch.randn((), generator=g, dtype=DT))
        fast.update(i, y)
        slow.update(j, y)
