import pytest
import torch
from conftest import DT, grid, oracle_kernel

from torch_advbandit.exploration import (
    approx_mvr_sequence,
    exploration_distribution,
    exploration_length,
    mvr_sequence,
)
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


def exact_posterior_variance(K, chosen, lam):
    Kc = K[chosen][:, chosen] + lam * torch.eye(len(chosen), dtype=DT)
    kx = K[:, chosen]
    return K.diagonal() - (kx * torch.linalg.solve(Kc, kx.T).T).sum(1)


def test_approx_mvr_equals_mvr_while_the_dictionary_is_everything():
    X = grid(150)
    k = make_kernel("matern52", 1)
    seq = approx_mvr_sequence(k, X, 0.5, 40, generator=torch.Generator().manual_seed(0))
    assert torch.equal(seq, mvr_sequence(k, X, 0.5, 40))


def test_nystrom_posterior_variance_with_full_dictionary_is_exact():
    from torch_advbandit.center_selection import NystromSample
    from torch_advbandit.exploration import _nystrom_posterior_variance
    from torch_advbandit.kernels import kernel_diag

    X = torch.rand(60, 2, generator=torch.Generator().manual_seed(1), dtype=DT)
    k = make_kernel("se", 2)
    chosen = torch.tensor([3, 17, 17, 40, 5, 59])
    full = NystromSample(torch.arange(6), torch.ones(6, dtype=DT))
    got = _nystrom_posterior_variance(k, X, kernel_diag(k, X), chosen, full, 0.3)
    want = exact_posterior_variance(oracle_kernel("se", X, X, 0.3 * 2**0.5), chosen.tolist(), 0.3)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["se", "matern32"])
def test_approx_mvr_max_variance_within_constant_factor_of_exact_mvr(name):
    """Small constants so the Nyström steps run and compress (base case 5·log 10 ≈ 11.5 points)."""
    from torch_advbandit.center_selection import RecursiveRLSSelector

    X = grid(300)
    lam, N = 0.1, 80
    k = make_kernel(name, 1)
    K = oracle_kernel(name, X, X, 0.3)
    consts = dict(base_constant=5.0, oversampling_constant=0.5)
    approx = approx_mvr_sequence(k, X, lam, N, **consts, generator=torch.Generator().manual_seed(2))
    exact = mvr_sequence(k, X, lam, N)
    ones = torch.ones(N, dtype=DT)
    dictionary = RecursiveRLSSelector(**consts).select(k, X[approx], lam, ones, torch.Generator().manual_seed(3))
    assert dictionary.size < N, "the test must exercise real compression"
    v_approx = exact_posterior_variance(K, approx.tolist(), lam).max()
    v_exact = exact_posterior_variance(K, exact.tolist(), lam).max()
    assert v_approx <= 2.0 * v_exact, (float(v_approx), float(v_exact))


def test_approx_mvr_distribution_and_policy_alg6():
    from torch_advbandit import RLSKernelizedExp3

    X = grid(50)
    k = make_kernel("se", 1)
    pi = exploration_distribution("approx_mvr", k, X, noise=1.0, length=10, generator=torch.Generator().manual_seed(0))
    assert float(pi.sum()) == pytest.approx(1.0)
    pol = RLSKernelizedExp3(X, k, 30, eta=0.1, alpha=0.3, lam=1.0, beta=0.1, exploration="approx_mvr")
    pol.update(pol.select(), 1.0)
    assert pol.hyperparameters()["exploration"] == "approx_mvr"
