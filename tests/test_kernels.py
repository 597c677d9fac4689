import math

import gpytorch
import pytest
import torch
from conftest import DT, oracle_kernel

from torch_advbandit.kernels import kernel_columns, kernel_diag, kernel_matrix, make_kernel, prepare_kernel


@pytest.mark.parametrize("name", ["se", "matern52", "matern32"])
def test_make_kernel_matches_closed_form(name, device):
    X = torch.rand(40, 3, generator=torch.Generator().manual_seed(0), dtype=DT).to(device)
    k = make_kernel(name, 3, device=device)
    K = kernel_matrix(k, X)
    assert K.dtype == DT and K.device.type == device.type
    assert torch.allclose(K, oracle_kernel(name, X, X, 0.3 * math.sqrt(3)), atol=1e-10)
    assert torch.allclose(kernel_diag(k, X), torch.ones(40, dtype=DT, device=device))


def test_make_kernel_has_fixed_float64_hyperparameters():
    k = make_kernel("se", 2, lengthscale=0.5)
    assert all(not p.requires_grad for p in k.parameters())
    assert k.lengthscale.dtype == DT
    assert float(k.lengthscale) == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(name="rbf", d=1), ValueError),
        (dict(name="se", d=0), ValueError),
        (dict(name="se", d=1, lengthscale=-1.0), ValueError),
        (dict(name="se", d=1, lengthscale=float("nan")), ValueError),
        (dict(name="se", d=1, lengthscale="0.3"), TypeError),
    ],
)
def test_make_kernel_rejects_bad_input(kwargs, error):
    with pytest.raises(error, match=r"name|d |d must|lengthscale"):
        make_kernel(**kwargs)


def test_blocked_evaluation_equals_one_block():
    X = torch.rand(300, 2, generator=torch.Generator().manual_seed(1), dtype=DT)
    k = make_kernel("matern32", 2)
    full = kernel_matrix(k, X)
    assert torch.allclose(kernel_matrix(k, X, block_entries=1000), full, atol=1e-14)
    idx = torch.tensor([5, 0, 299])
    assert torch.allclose(kernel_columns(k, X, idx, block_entries=77), full[:, idx], atol=1e-14)


def test_prepare_kernel_copies_to_candidates_and_checks_bound():
    X32 = torch.rand(10, 1, dtype=torch.float32)
    k = make_kernel("se", 1)
    k32 = prepare_kernel(k, X32)
    assert k32 is not k and k32.lengthscale.dtype == torch.float32
    assert k.lengthscale.dtype == DT  # the caller's kernel is untouched
    big = gpytorch.kernels.ScaleKernel(make_kernel("se", 1)).to(DT)
    big.outputscale = 2.0
    with pytest.raises(ValueError, match=r"k\(x, x\) ≤ 1 on the candidates, max is 2 \(.*pass its base_kernel"):
        prepare_kernel(big, X32.double())
    assert prepare_kernel(big.base_kernel, X32.double()) is not None  # what the message proposes is accepted
    with pytest.raises(TypeError, match="kernel must be a gpytorch"):
        prepare_kernel(lambda a, b: a @ b.T, X32)


@pytest.mark.parametrize("nu", [1.5, 2.5])
@pytest.mark.parametrize("d", [1, 2, 6])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_matern_blocks_equal_gpytorch_bit_for_bit(nu, d, dtype):
    """kernel_matrix's copy-free Matérn path gives the same bits as the kernel's own forward (records depend on it)."""
    g = torch.Generator().manual_seed(d)
    X, Y = torch.rand(300, d, generator=g, dtype=DT).to(dtype), torch.rand(170, d, generator=g, dtype=DT).to(dtype)
    kernel = gpytorch.kernels.MaternKernel(nu=nu).to(dtype)
    kernel.lengthscale = 0.37
    with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
        blocks = torch.cat([kernel(X[i : i + 64], Y).to_dense() for i in range(0, 300, 64)])  # the same row blocks
        assert torch.equal(kernel_matrix(kernel, X, Y, block_entries=170 * 64), blocks)
        buffer = torch.full((300, 170), float("nan"), dtype=dtype)
        assert kernel_matrix(kernel, X, Y, block_entries=170 * 64, out=buffer) is buffer
        assert torch.equal(buffer, blocks)
        square = kernel(X, X).to_dense()  # one block
        square.diagonal().copy_(kernel(X, X, diag=True))
        assert torch.equal(kernel_matrix(kernel, X), square)
    ard = gpytorch.kernels.MaternKernel(nu=nu, ard_num_dims=d).to(dtype)  # another path of GPyTorch's: its forward
    with torch.no_grad():
        torch.testing.assert_close(kernel_matrix(ard, X, Y), ard(X, Y).to_dense())
