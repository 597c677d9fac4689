"""Hyperparameters fitted on two segments of the history that share them (docs/algorithms.rst §8).

After a change point ``τ`` the objective is a new draw of the same kind: the rows before ``τ`` and the rows
from ``τ`` on are two independent GPs with one kernel, one noise variance and one constant mean, each segment's
outcomes standardised by its own mean and standard deviation, as in GP change-point models [Saatci2010]. The
joint covariance is block-diagonal, ``K_seg = blockdiag(K(X_A, X_A), K(X_B, X_B)) + λI``, so the marginal
likelihood is ``log p(z_A | θ) + log p(z_B | θ)``: every row informs the lengthscales and amplitude, and the jump
itself is neither fitted as noise (one GP on every row) nor left to the few rows since the change (a GP on
those alone). :class:`SegmentKernel` is that covariance as a GPyTorch kernel on inputs with a segment label,
so the fit is BoTorch's ``fit_gpytorch_mll`` on one ``SingleTaskGP``.
"""

from __future__ import annotations

import warnings

import torch
from botorch.exceptions import ModelFittingError
from gpytorch.kernels import Kernel

from .discount_selection import weighted_stats
from .fitting import seeded_fit
from .models import fitted_triple, trainable_kernel, weighted_gp


class SegmentKernel(Kernel):
    """``k((x, s), (x', s')) = base(x, x')·[s = s']`` on inputs ``Tensor[..., n, d + 1]`` whose last column is a
    segment label: rows of different segments are independent ([Saatci2010]; module docstring).

    Args:
        base: any GPyTorch kernel on ``d`` inputs (its hyperparameters are this kernel's).

    Example:
        >>> from gpytorch.kernels import RBFKernel
        >>> Z = torch.tensor([[0.0, 0.0], [0.1, 0.0], [0.1, 1.0]], dtype=torch.float64)
        >>> with torch.no_grad():
        ...     K = SegmentKernel(RBFKernel().double())(Z).to_dense()
        >>> bool(K[0, 1] > 0), float(K[1, 2]), K.diagonal().tolist()
        (True, 0.0, [1.0, 1.0, 1.0])
    """

    def __init__(self, base: Kernel) -> None:
        super().__init__()
        self.base = base

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, diag: bool = False, **params) -> torch.Tensor:
        k = self.base(x1[..., :-1], x2[..., :-1], diag=diag, **params).to_dense()
        same = x1[..., -1] == x2[..., -1] if diag else x1[..., -1:] == x2[..., -1].unsqueeze(-2)
        return k * same.to(k)


def fit_segments(
    X: torch.Tensor,
    Y: torch.Tensor,
    since: int,
    kernel: Kernel,
    *,
    standardize: bool,
    like: torch.Tensor,
    seed: int = 0,
) -> tuple[Kernel, float, float] | None:
    """``(kernel, λ, c)`` maximising ``log p(z_A | θ) + log p(z_B | θ)``, the rows ``X[:since]`` and ``X[since:]``
    (``Tensor[m, d]``, outcomes ``Y``, ``Tensor[m]``, ``0 < since < m``) as two independent GPs sharing the
    kernel's hyperparameters, ``λ`` and the constant mean (module docstring).

    With ``standardize`` each segment's outcomes are standardised by their own mean and standard deviation
    (``z = (y − ȳ)/s``; one row, or no spread, only centres) and ``λ`` is returned in the units of the rows since
    ``since`` (``λ_z·s_B²``), the memory the policy keeps after a change point; ``c`` is on the standardised
    scale. The fit starts from ``kernel`` and BoTorch's initial noise, as a new ``SingleTaskGP`` does, its
    restarts drawn under ``seed``; the kernel is returned frozen on ``like``'s device and dtype. If BoTorch's fit
    fails or gives a non-finite ``λ`` or ``c``: ``None``, with a ``RuntimeWarning``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(16, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        >>> Y = torch.cat([torch.sin(6 * X[:10, 0]), 5 - torch.sin(6 * X[10:, 0])])
        >>> kernel, lam, c = fit_segments(X, Y, 10, make_kernel("se", 1), standardize=True, like=X)
        >>> lam < 0.1, kernel.raw_lengthscale.requires_grad
        (True, False)
    """
    m = X.shape[0]
    if not 0 < since < m:
        raise ValueError(f"since must be in [1, {m - 1}], got {since}")
    Z, scales = [], []
    for rows in (slice(0, since), slice(since, m)):
        mean, std = weighted_stats(Y[rows], torch.zeros_like(Y[rows])) if standardize else (0.0, 1.0)
        Z.append((Y[rows] - mean) / std)
        scales.append(std)
    label = (torch.arange(m, device=X.device) >= since).to(X).unsqueeze(-1)
    z = torch.cat(Z).unsqueeze(-1)
    segments = SegmentKernel(trainable_kernel(kernel, like))
    model = weighted_gp(torch.cat([X, label], -1), z, torch.ones_like(z[:, 0]), segments, None)
    try:
        seeded_fit(model, seed)
    except ModelFittingError as exc:
        warnings.warn(f"hyperparameter fit failed ({exc}); keeping the previous ones", RuntimeWarning, stacklevel=4)
        return None
    lam = float(model.likelihood.lam.detach()) * scales[1] ** 2
    fitted = fitted_triple(model, lam, like, kernel=model.covar_module.base)
    if fitted is None:
        constant = float(model.mean_module.constant.detach())
        message = f"hyperparameter fit gave λ = {lam}, c = {constant}; keeping the previous ones"
        warnings.warn(message, RuntimeWarning, stacklevel=4)
    return fitted
