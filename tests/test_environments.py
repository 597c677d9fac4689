import pytest
import torch
from conftest import DT, grid, oracle_kernel

from torch_advbandit.environments import (
    AdaptiveAdversary,
    ObliviousEnvironment,
    random_rkhs_functions,
    rkhs_functions_from_centres,
)
from torch_advbandit.kernels import make_kernel


def test_rkhs_functions_match_the_definition(device):
    X = torch.rand(60, 2, generator=torch.Generator().manual_seed(0), dtype=DT)
    gen = torch.Generator().manual_seed(1)
    idx = torch.randint(60, (7, 9), generator=gen)
    coef = torch.rand(7, 9, generator=gen, dtype=DT) * 2 - 1
    B = 0.5
    got = rkhs_functions_from_centres(
        make_kernel("matern32", 2, device=device), X.to(device), idx.to(device), coef.to(device), B
    )
    K = oracle_kernel("matern32", X, X, 0.3 * 2**0.5)
    for j in range(7):
        f = K[:, idx[j]] @ coef[j]
        norm = torch.sqrt(coef[j] @ K[idx[j]][:, idx[j]] @ coef[j])
        torch.testing.assert_close(got[j].cpu(), min(1.0, B / float(norm)) * f)
        assert float(torch.sqrt(coef[j] @ K[idx[j]][:, idx[j]] @ coef[j]) * min(1.0, B / float(norm))) <= B + 1e-12


def test_random_functions_are_reproducible_and_blocking_invariant():
    X = grid(50)
    k = make_kernel("se", 1)
    a = random_rkhs_functions(k, X, num_functions=30, num_centres=10, generator=torch.Generator().manual_seed(3))
    b = random_rkhs_functions(k, X, num_functions=30, num_centres=10, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.shape == (30, 50)
    assert float(a.abs().max()) <= 2.0 + 1e-12  # |f(x)| ≤ ‖f‖_k sqrt(k(x,x)) ≤ B


def test_adaptive_adversary_maximises_expected_instantaneous_regret():
    F = torch.rand(20, 15, generator=torch.Generator().manual_seed(4), dtype=DT)
    env = AdaptiveAdversary(F)
    P = torch.softmax(torch.randn(15, generator=torch.Generator().manual_seed(5), dtype=DT), 0)
    gaps = [float(F[j].max() - F[j] @ P) for j in range(20)]
    best = max(range(20), key=lambda j: gaps[j])
    assert torch.equal(env.rewards(0, P), F[best])
    with pytest.raises(ValueError, match="probs"):
        env.rewards(0, None)
    with pytest.raises(ValueError, match="probs"):
        env.rewards(0, P[:-1])


def test_oblivious_environment_plays_its_sequence():
    F = torch.arange(12, dtype=DT).reshape(3, 4)
    env = ObliviousEnvironment(F)
    assert torch.equal(env.rewards(1, None), F[1])
    with pytest.raises(ValueError, match="t must be"):
        env.rewards(3, None)
    with pytest.raises(ValueError, match="functions"):
        ObliviousEnvironment(torch.tensor([[float("nan")]]))
