"""Kernels: construction with the papers' fixed hyperparameters and blocked, gradient-free evaluation.

Every algorithm in this package reads the kernel only through the three helpers here
(``kernel_matrix``, ``kernel_columns``, ``kernel_diag``), so any GPyTorch kernel with
``k(x, x) ≤ 1`` works wherever a kernel is taken.
"""

from __future__ import annotations

import copy
import math

import gpytorch
import torch
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel, ScaleKernel

KERNEL_NAMES = ("se", "matern52", "matern32")

#: Upper bound on the number of entries one kernel block may hold (rows × columns); keeps
#: GPyTorch's distance temporaries bounded when ``n`` is large.
DEFAULT_BLOCK_ENTRIES = 2**24


def make_kernel(
    name: str,
    d: int,
    lengthscale: float | None = None,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Kernel:
    """Build the papers' kernel with fixed hyperparameters and ``k(x, x) = 1``.

    ``se``: ``k(x, x') = exp(-r²/2)``; ``matern52``: ``(1 + √5 r + 5r²/3) exp(-√5 r)``;
    ``matern32``: ``(1 + √3 r) exp(-√3 r)``; ``r = ‖x − x'‖ / ℓ`` ([Iwazaki2026], Sec. 2 and App. 17).
    No output scale, so the kernel is bounded by one as the regret analysis assumes.

    Args:
        name: one of ``"se"``, ``"matern52"``, ``"matern32"``.
        d: input dimension (used for the default lengthscale).
        lengthscale: ``ℓ``; default ``0.3·sqrt(d)`` ([Iwazaki2026], App. 17).
        dtype, device: where the (gradient-free) hyperparameters live; float64 by default.

    Returns:
        A ``gpytorch.kernels.Kernel`` whose parameters do not require gradients.

    Example:
        >>> k = make_kernel("matern52", d=2)
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> k(X, X).to_dense().shape
        torch.Size([5, 5])
    """
    if not isinstance(name, str) or name not in KERNEL_NAMES:
        raise ValueError(f"name must be one of {KERNEL_NAMES}, got {name!r}")
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if lengthscale is None:
        lengthscale = 0.3 * math.sqrt(d)
    if isinstance(lengthscale, bool) or not isinstance(lengthscale, (int, float)):
        raise TypeError(f"lengthscale must be a float, got {type(lengthscale).__name__}")
    if not math.isfinite(lengthscale) or lengthscale <= 0:
        raise ValueError(f"lengthscale must be a finite positive number, got {lengthscale}")
    kernel = RBFKernel() if name == "se" else MaternKernel(nu=2.5 if name == "matern52" else 1.5)
    kernel = kernel.to(dtype=dtype, device=device)
    kernel.lengthscale = torch.tensor(float(lengthscale), dtype=dtype, device=device)
    kernel.requires_grad_(False)
    kernel.eval()
    return kernel


def prepare_kernel(kernel: object, candidates: torch.Tensor, name: str = "kernel", *, bounded: bool = True) -> Kernel:
    """Return a copy of ``kernel`` on ``candidates``' device and dtype, checked to satisfy k(x,x) ≤ 1.

    The caller's kernel is never modified. Raises ``TypeError`` for a non-GPyTorch kernel and
    ``ValueError`` when ``k(x, x) > 1`` somewhere on the candidate set (unless ``bounded=False``:
    the GP-UCB family accepts any positive ``k(x, x)``, e.g. a fitted ``ScaleKernel``).

    Example:
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> k = prepare_kernel(make_kernel("se", 2, dtype=torch.float32), X)
        >>> k.lengthscale.dtype
        torch.float64
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{name} must be a gpytorch.kernels.Kernel, got {type(kernel).__name__}")
    kernel = copy.deepcopy(kernel).to(dtype=candidates.dtype, device=candidates.device)
    kernel.requires_grad_(False)
    kernel.eval()
    diag = kernel_diag(kernel, candidates)
    tol = 1e-6 if candidates.dtype == torch.float32 else 1e-10
    finite = bool(torch.isfinite(diag).all())
    if not finite or (bounded and float(diag.max()) > 1.0 + tol):
        bound = "≤ 1" if bounded else "finite"
        hint = (  # finite here means bounded and above 1
            " (the Exp3 family and the adversarial environments assume it: for a fitted ScaleKernel pass its "
            "base_kernel, with the rewards divided by sqrt(outputscale))"
            if finite
            else ""
        )
        raise ValueError(f"{name} must satisfy k(x, x) {bound} on the candidates, max is {float(diag.max()):.6g}{hint}")
    if float(diag.min()) <= 0:
        raise ValueError(f"{name} must satisfy k(x, x) > 0 on the candidates")
    check_psd_sample(kernel, candidates, name)
    return kernel


#: Points of the candidate set on which :func:`check_psd_sample` evaluates the kernel matrix.
PSD_SAMPLE_SIZE = 64


def check_psd_sample(kernel: Kernel, candidates: torch.Tensor, name: str = "kernel") -> None:
    """Raise ``ValueError`` unless ``K`` on an evenly spaced sample of at most 64 candidates is finite,
    symmetric and positive semi-definite (smallest eigenvalue ``≥ −m·√ε·max k``): a cheap check, at
    construction, for kernels that would fail rounds later.

    Example:
        >>> X = torch.linspace(0, 1, 200, dtype=torch.float64).unsqueeze(-1)
        >>> check_psd_sample(make_kernel("matern32", 1), X)  # a kernel: no error
    """
    n = candidates.shape[0]
    idx = torch.linspace(0, n - 1, min(n, PSD_SAMPLE_SIZE), dtype=torch.float64, device=candidates.device)
    idx = idx.round().long().unique()
    S = candidates[idx]
    K = kernel_matrix(kernel, S, S)
    if not bool(torch.isfinite(K).all()):
        raise ValueError(f"{name} must be finite on the candidates (its matrix on a sample has NaN or inf)")
    scale = float(K.diagonal().abs().max())
    eps = torch.finfo(K.dtype).eps
    if float((K - K.mT).abs().max()) > 1e3 * eps * scale:
        raise ValueError(f"{name} must be symmetric: k(x, y) ≠ k(y, x) on a sample of the candidates")
    smallest = float(torch.linalg.eigvalsh(K)[0])
    if smallest < -K.shape[0] * eps**0.5 * scale:
        raise ValueError(
            f"{name} must be positive semi-definite: its matrix on a sample of the candidates has eigenvalue "
            f"{smallest:.3g}"
        )


def _block_rows(num_cols: int, block_entries: int) -> int:
    return max(1, block_entries // max(1, num_cols))


def reusable_blocks(rows: int, cols: int, like: torch.Tensor):
    """A function ``b ↦ Tensor[b, cols]`` (``b ≤ rows``): contiguous views of one buffer, allocated once.

    Example:
        >>> block = reusable_blocks(4, 3, torch.zeros(1, dtype=torch.float64))
        >>> block(4).shape, block(2).is_contiguous()
        (torch.Size([4, 3]), True)
    """
    flat = like.new_empty(rows * cols)
    return lambda b: flat[: b * cols].view(b, cols)


def _matern_nu(kernel: Kernel) -> float | None:
    """``ν`` when ``kernel`` is exactly GPyTorch's ``MaternKernel`` with ``ν`` 3/2 or 5/2 and one lengthscale
    on all input dimensions (its ``MaternCovariance`` path), else ``None``."""
    if type(kernel) is not MaternKernel or "forward" in vars(kernel):  # a replaced forward is used as given
        return None
    if kernel.active_dims is not None or kernel.batch_shape != torch.Size([]):
        return None
    nu = float(kernel.nu)
    return nu if nu in (1.5, 2.5) and kernel.lengthscale.numel() == 1 else None


def _matern_block(kernel: MaternKernel, nu: float, X: torch.Tensor, Y: torch.Tensor, out: torch.Tensor) -> None:
    """``out = kernel(X, Y)`` with GPyTorch's own steps and their order (``MaternCovariance``: the same
    bits), minus the copies: the distances are clamped and scaled in place and the terms are formed in
    ``out``, two kernel-sized buffers fewer (three for ν = 5/2)."""
    mean = X.mean(dim=-2, keepdim=True)
    x1, x2 = (X - mean).div(kernel.lengthscale), (Y - mean).div(kernel.lengthscale)
    if torch.equal(x1, x2):  # GPyTorch's squared-distance path: its own forward
        out.copy_(kernel(X, Y).to_dense())
        return
    t = torch.cdist(x1, x2).clamp_min_(1e-15).mul_(math.sqrt(2 * nu))  # √(2ν)·r
    torch.add(t, 1, out=out)  # 1 + t
    if nu == 2.5:
        out.add_(t.pow(2).div_(3))  # + t²/3
    out.mul_(t.neg_().exp_())  # × e^{−t}


def kernel_matrix(
    kernel: Kernel,
    X: torch.Tensor,
    Y: torch.Tensor | None = None,
    *,
    block_entries: int = DEFAULT_BLOCK_ENTRIES,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Dense ``K[i, j] = k(X[i], Y[j])``, shape ``n × m``, evaluated in row blocks without gradients.

    ``out`` (``Tensor[n, m]``) receives the result: a buffer reused across calls is written without
    the page faults of fresh memory (about 0.05 s per 10⁸ bytes here).

    GPyTorch's Matérn-3/2 and -5/2 kernels with one lengthscale are evaluated with their ``forward``'s
    own steps minus its copies (the same bits, ``tests/test_kernels.py``; faster, benchmarks/RESULTS.md
    §3); every other kernel through its ``forward``.

    Example:
        >>> K = kernel_matrix(make_kernel("se", 1), torch.rand(4, 1, dtype=torch.float64))
    """
    Y = X if Y is None else Y
    rows = _block_rows(Y.shape[0], block_entries)
    if out is None:
        out = torch.empty(X.shape[0], Y.shape[0], dtype=X.dtype, device=X.device)
    nu = _matern_nu(kernel)
    with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
        for start in range(0, X.shape[0], rows):
            if nu is not None:
                _matern_block(kernel, nu, X[start : start + rows], Y, out[start : start + rows])
            else:
                out[start : start + rows] = kernel(X[start : start + rows], Y).to_dense()
    if Y is X:
        out.diagonal().copy_(kernel_diag(kernel, X))
    return out


def bordered_gram(K: torch.Tensor, kernel: Kernel, X: torch.Tensor) -> torch.Tensor:
    """The kernel matrix of ``X`` (``Tensor[k + 1, d]``) from ``K`` (``Tensor[k, k]``), that of ``X[:-1]``: one new
    row and column, ``k(x_new, X)``.

    Example:
        >>> k, X = make_kernel("se", 1), torch.rand(4, 1, dtype=torch.float64)
        >>> torch.allclose(bordered_gram(kernel_matrix(k, X[:3], X[:3]), k, X), kernel_matrix(k, X, X))
        True
    """
    row = kernel_matrix(kernel, X[-1:], X).squeeze(0)
    m = K.shape[0]
    grown = K.new_empty(m + 1, m + 1)
    grown[:m, :m] = K
    grown[m, :] = row
    grown[:, m] = row
    return grown


def kernel_columns(
    kernel: Kernel, X: torch.Tensor, index: torch.Tensor, *, block_entries: int = DEFAULT_BLOCK_ENTRIES
) -> torch.Tensor:
    """Columns ``K[:, index]`` (shape ``n × len(index)``) without forming ``K``.

    Example:
        >>> X = torch.rand(6, 1, dtype=torch.float64)
        >>> kernel_columns(make_kernel("se", 1), X, torch.tensor([1, 4])).shape
        torch.Size([6, 2])
    """
    return kernel_matrix(kernel, X, X[index], block_entries=block_entries)


def kernel_diag(kernel: Kernel, X: torch.Tensor) -> torch.Tensor:
    """Diagonal ``k(x_i, x_i)``, shape ``n``.

    Example:
        >>> kernel_diag(make_kernel("matern32", 2), torch.rand(3, 2, dtype=torch.float64)).tolist()
        [1.0, 1.0, 1.0]
    """
    with torch.no_grad(), gpytorch.settings.lazily_evaluate_kernels(False):
        return kernel(X, X, diag=True).to_dense().reshape(X.shape[0])


def kernel_name_of(kernel: Kernel) -> str | None:
    """``"se"``, ``"matern52"`` or ``"matern32"`` for those GPyTorch kernels (also inside a ``ScaleKernel``).

    Example:
        >>> from gpytorch.kernels import MaternKernel, ScaleKernel
        >>> kernel_name_of(ScaleKernel(MaternKernel(nu=1.5))), kernel_name_of(MaternKernel(nu=0.5))
        ('matern32', None)
    """
    base = kernel.base_kernel if isinstance(kernel, ScaleKernel) else kernel
    if isinstance(base, RBFKernel):
        return "se"
    if isinstance(base, MaternKernel):
        return {2.5: "matern52", 1.5: "matern32"}.get(float(base.nu))
    return None
