import pytest
import torch
from conftest import DT, grid, oracle_kernel

from torch_advbandit.exploration import exploration_distribution, exploration_length, mvr_sequence
from torch_advbandit.kernels import make_kernel


def brute_force_mvr(K, lam, length):
    chosen = []
    for _ in range(length):
        if chosen:
            Kc = K[chosen][:, chosen] + lam * torch.eye(len(chosen), dtype=DT)
            kx = K[:, chosen]
            var = K.diagonal() - (kx * torch.linalg.solve(Kc, kx.T).T).sum(1)
        else:
            var = K.diagonal().clone()
        chosen.append(int(torch.argmax(var)))
    return chosen, var


@pytest.mark.parametrize("name", ["se", "matern52", "matern32"])
@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_mvr_equals_brute_force_greedy(name, lam, device):
    X = torch.rand(80, 2, generator=torch.Generator().manual_seed(5), dtype=DT)
    seq = mvr_sequence(make_kernel(name, 2), X.to(device), lam, 30)
    assert seq.device.type == device.type and seq.dtype == torch.long
    expected, _ = brute_force_mvr(oracle_kernel(name, X, X, 0.3 * 2**0.5), lam, 30)
    assert seq.cpu().tolist() == expected


def test_mvr_allows_repeats_when_length_exceeds_n():
    seq = mvr_sequence(make_kernel("se", 1), grid(5), 0.1, 12)
    assert len(seq) == 12 and len(set(seq.tolist())) <= 5


def test_exploration_distributions():
    X = grid(40)
    k = make_kernel("matern32", 1)
    pi = exploration_distribution("mvr", k, X, noise=1.0, length=10)
    seq = mvr_sequence(k, X, 1.0, 10)
    assert torch.equal(pi, torch.bincount(seq, minlength=40).double() / 10)
    assert float(pi.sum()) == pytest.approx(1.0)
    u = exploration_distribution("uniform", k, X, noise=1.0, length=10)
    assert torch.allclose(u, torch.full((40,), 1 / 40, dtype=DT))
    with pytest.raises(ValueError, match="exploration must be one of"):
        exploration_distribution("greedy", k, X, noise=1.0, length=10)
    with pytest.raises(ValueError, match="noise"):
        mvr_sequence(k, X, 0.0, 3)
    with pytest.raises(ValueError, match="length"):
        mvr_sequence(k, X, 1.0, 0)


def test_exploration_length_is_ceil_t_alpha():
    assert exploration_length(1000, 0.0786) == 79
    assert exploration_length(100, 0.5) == 50
    assert exploration_length(10, 1e-6) == 1
