import math

import pytest
import torch
from conftest import DT, grid, oracle_kernel, regret_ratios_to_uniform

from torch_advbandit import APGExp3
from torch_advbandit.estimators import LinearIPSEstimator
from torch_advbandit.kernels import make_kernel
from torch_advbandit.policies import newton_basis


@pytest.mark.parametrize("name", ["se", "matern52"])
def test_newton_basis_is_p_greedy_with_admissible_error(name, device):
    X = grid(150)
    e = 1e-2
    N = newton_basis(make_kernel(name, 1), X.to(device), e).cpu()
    K = oracle_kernel(name, X, X, 0.3)
    residual = K - N @ N.T
    assert float(residual.diagonal().max()) <= e * e + 1e-12
    assert torch.linalg.eigvalsh(residual).min() > -1e-9  # K − NNᵀ stays PSD
    # P-greedy: each new basis function is normalised at the point of largest power function
    power = K.diagonal().clone()
    for j in range(N.shape[1]):
        pivot = int(torch.argmax(power))
        assert float(N[pivot, j]) == pytest.approx(math.sqrt(float(power[pivot])), rel=1e-6)
        power = power - N[:, j] ** 2


def test_a_short_horizon_still_gets_one_basis_function():
    """``e = log(400)/4 ≈ 1.5 ≥ max sqrt(k(x, x)) = 1``: the stopping rule alone gives ``D_T = 0``."""
    X = grid(400)
    k = make_kernel("se", 1)
    N = newton_basis(k, X, 1.5)
    torch.testing.assert_close(N[:, 0], oracle_kernel("se", X, X[:1], 0.3).squeeze(-1))  # N_1 = k(·, x_1)
    assert N.shape[1] == 1
    policy = APGExp3(X, k, 4, generator=torch.Generator().manual_seed(0))  # used to divide by D_T = 0
    for _ in range(4):
        policy.update(policy.select(), 0.5)
    assert policy.features.shape[1] == 1 and torch.isfinite(policy.probabilities()).all()


def test_linear_estimator_is_unbiased_on_the_feature_span():
    gen = torch.Generator().manual_seed(0)
    F = torch.randn(30, 4, generator=gen, dtype=DT)
    theta = torch.randn(4, generator=gen, dtype=DT)
    f = F @ theta
    P = torch.softmax(torch.randn(30, generator=gen, dtype=DT), 0)
    est = LinearIPSEstimator(F, torch.rand(30, 1, dtype=DT))
    expected = sum(P[i] * est.estimate(P, i, float(f[i]))[0] for i in range(30))
    torch.testing.assert_close(expected, f)
    assert torch.equal(est.estimate(P, 0, 1.0)[1], torch.zeros(30, dtype=DT))


def test_apg_exp3_paper_defaults_and_protocol():
    X = grid(200)
    T = 300
    pol = APGExp3(X, make_kernel("se", 1), T, generator=torch.Generator().manual_seed(0))
    D = pol.num_features
    assert 1 <= D < 200
    assert pol.admissible_error == pytest.approx(math.log(200) / T)
    assert pol.eta == pytest.approx(0.5 / math.sqrt(D * T))
    assert pol.alpha == pytest.approx(min(1.0, 0.1 * pol.eta * D))
    P = pol.probabilities()
    assert float(P.sum()) == pytest.approx(1.0) and (P > 0).all()
    for t in range(5):
        pol.update(pol.select(), math.sin(t))
    other = APGExp3(X, make_kernel("se", 1), T, generator=torch.Generator().manual_seed(1))
    other.load_state_dict(pol.state_dict())
    assert other.select() == pol.select()
    with pytest.raises(ValueError, match="admissible_error"):
        APGExp3(X, make_kernel("se", 1), T, admissible_error=0.0)
    with pytest.raises(ValueError, match="alpha"):
        APGExp3(X, make_kernel("se", 1), T, alpha=2.0)


def test_apg_exp3_beats_uniform_against_adaptive_adversary():
    ratios = regret_ratios_to_uniform(lambda X, k, T, g: APGExp3(X, k, T, generator=g), "matern52", seeds=2)
    assert max(ratios) < 0.7, ratios
