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
    with pytest.warns(RuntimeWarning, match="max leverage"):
        g_optimal_feature_design(F, tol=1e-6, max_iter=3)
    pi = g_optimal_feature_design(F, tol=1e-2, max_iter=5000)  # converges: no warning
    assert float(feature_leverage(F, pi).max()) <= 6 * 1.01


def test_away_steps_reach_the_tolerance_where_plain_frank_wolfe_stalls():
    """APG-Exp3's Newton features of setting 1 with Matérn-3/2 (83 of them on 400 points): Frank–Wolfe
    without away steps stopped at a max leverage of 1.06·D after 1000 iterations; with away steps the
    design reaches (1 + 1e-2)·D, and its log-determinant is at least the plain method's."""
    import math
    import warnings

    from torch_advbandit.designs import frank_wolfe_design
    from torch_advbandit.experiments.settings import SETTINGS
    from torch_advbandit.policies.apg_exp3 import newton_basis

    X = SETTINGS[1].candidates()
    F = newton_basis(make_kernel("matern32", 1), X, math.log(400) / 1000)
    D = F.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no max_iter warning
        pi = g_optimal_feature_design(F, tol=1e-2)
    assert float(feature_leverage(F, pi).max()) <= (1 + 1e-2) * D
    assert float(pi.sum()) == pytest.approx(1.0) and (pi >= 0).all()

    def exact_step(k, w, j):
        return (float(w[j]) / D - 1.0) / (float(w[j]) - 1.0)

    uniform = torch.full((400,), 1 / 400, dtype=DT)
    with pytest.warns(RuntimeWarning, match="duality gap"):
        plain = frank_wolfe_design(lambda p: feature_leverage(F, p), uniform, step=exact_step, tol=1e-2, max_iter=1000)
    assert float(feature_leverage(F, plain).max()) > (1 + 1e-2) * D

    def logdet(p):
        return float(torch.logdet(F.T @ (p.unsqueeze(-1) * F)))

    assert logdet(pi) >= logdet(plain) - 1e-9


def _refactorising_design(F, tol, max_iter=10_000):
    """The away-step Frank–Wolfe of g_optimal_feature_design with the leverage refactorised every iteration."""
    n, D = F.shape
    pi = torch.full((n,), 1.0 / n, dtype=F.dtype)
    for _ in range(max_iter):
        w = (F @ torch.linalg.inv(F.T @ (pi.unsqueeze(-1) * F)) * F).sum(-1)
        j = int(torch.argmax(w))
        if float(w[j]) <= (1 + tol) * D:
            break
        i = int(torch.argmin(torch.where(pi > 0, w, torch.inf)))
        if float(w[j]) - D >= D - float(w[i]):
            k, gamma = j, (float(w[j]) / D - 1) / (float(w[j]) - 1)
        else:
            g_min = -float(pi[i]) / (1 - float(pi[i]))
            k, gamma = i, g_min if float(w[i]) <= 1 else max(g_min, (float(w[i]) / D - 1) / (float(w[i]) - 1))
        pi.mul_(1 - gamma)
        pi[k] += gamma
        pi.clamp_(min=0.0)
    return pi


@pytest.mark.parametrize("n,D", [(200, 12), (120, 40)])
def test_rank_one_leverage_updates_follow_the_refactorised_design(n, D):
    """The Sherman–Morrison leverage (refactorised every 100 steps) takes the same steps as a fresh
    inverse every iteration: the same design to rounding, on skewed features whose design needs
    hundreds of steps."""
    gen = torch.Generator().manual_seed(3)
    F = torch.randn(n, D, generator=gen, dtype=DT) * torch.linspace(0.05, 3.0, D, dtype=DT)
    F[: n // 4] *= 4.0  # a few long rows pull the design toward them
    reference = _refactorising_design(F, 1e-3)
    pi = g_optimal_feature_design(F, tol=1e-3)
    torch.testing.assert_close(pi, reference, atol=1e-9, rtol=0)
    assert float(feature_leverage(F, pi).max()) <= (1 + 1e-3) * D
