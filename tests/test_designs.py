import pytest
import torch
from conftest import DT, grid, oracle_A, oracle_kernel

from torch_advbandit.designs import feature_leverage, g_optimal_design, g_optimal_feature_design
from torch_advbandit.exploration import exploration_distribution
from torch_advbandit.kernels import make_kernel


def test_feature_design_reaches_the_kiefer_wolfowitz_optimum(device):
    F = torch.randn(60, 5, generator=torch.Generator().manual_seed(0), dtype=DT).to(device)
    pi = g_optimal_feature_design(F, tol=1e-2)
    assert float(pi.sum()) == pytest.approx(1.0) and (pi >= 0).all()
    w = feature_leverage(F, pi)
    # Kiefer–Wolfowitz: min_π max_x w = D, attained by the D-optimal design
    assert 5.0 - 1e-9 <= float(w.max()) <= 5.0 * (1 + 1e-2)
    uniform = torch.full((60,), 1 / 60, dtype=DT, device=device)
    assert float(w.max()) < float(feature_leverage(F, uniform).max())
    # independent leverage: N(x)ᵀ(Nᵀ diag(π) N)⁻¹N(x)
    Q = F.T @ torch.diag(pi) @ F
    torch.testing.assert_close(w, (F @ torch.linalg.inv(Q) * F).sum(-1))


@pytest.mark.parametrize("name", ["se", "matern32"])
def test_kernel_g_optimal_design_closes_the_duality_gap(name):
    X = grid(120)
    c = 0.02
    pi = g_optimal_design(make_kernel(name, 1), X, c, tol=1e-2, max_iter=2000)
    A = oracle_A(oracle_kernel(name, X, X, 0.3), pi, c)
    w = A.diagonal()
    gap = float(w.max() - pi @ w)
    assert gap <= 1e-2 * float(pi @ w) * 1.0001
    uniform = torch.full((120,), 1 / 120, dtype=DT)
    assert float(w.max()) < float(oracle_A(oracle_kernel(name, X, X, 0.3), uniform, c).diagonal().max())


def test_g_optimal_exploration_distribution():
    X = grid(40)
    pi = exploration_distribution("g_optimal", make_kernel("se", 1), X, noise=1.0, length=20)
    assert pi.shape == (40,) and float(pi.sum()) == pytest.approx(1.0) and (pi >= 0).all()


def test_frank_wolfe_warns_when_it_stops_at_max_iter_above_its_tolerance():
    F = torch.randn(50, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with pytest.warns(RuntimeWarning, match="duality gap"):
        g_optimal_feature_design(F, tol=1e-6, max_iter=3)
    pi = g_optimal_feature_design(F, tol=1e-2, max_iter=5000)  # converges: no warning
    assert float(feature_leverage(F, pi).max()) <= 6 * 1.01
