import math

import pytest
import torch

DT = torch.float64

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=[pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")],
    ),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device-aware test runs on the CPU and, when present, on CUDA."""
    return torch.device(request.param)


def oracle_kernel(name, X, Y, ell):
    """Closed-form SE / Matérn kernels, independent of GPyTorch."""
    r = torch.cdist(X, Y) / ell
    if name == "se":
        return torch.exp(-0.5 * r * r)
    if name == "matern52":
        s = math.sqrt(5.0) * r
        return (1 + s + s * s / 3) * torch.exp(-s)
    if name == "matern32":
        s = math.sqrt(3.0) * r
        return (1 + s) * torch.exp(-s)
    raise ValueError(name)


def oracle_A(K, P, c):
    """A = Ψ G⁻¹ Ψᵀ with the explicit feature map Ψ = chol(K) (definitional feature-space form)."""
    n = K.shape[0]
    L = torch.linalg.cholesky(K + 1e-11 * torch.eye(n, dtype=K.dtype, device=K.device))
    G = L.T @ torch.diag(P) @ L + c * torch.eye(n, dtype=K.dtype, device=K.device)
    return L @ torch.linalg.solve(G, L.T)


def grid(n, device="cpu"):
    return torch.linspace(0, 1, n, dtype=DT, device=device).unsqueeze(-1)
