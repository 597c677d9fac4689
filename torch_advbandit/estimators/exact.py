"""The exact kernelized importance-weighted estimator ([Iwazaki2026], Eq. 3; docs/algorithms.rst §1)."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_positive
from ..kernels import kernel_diag, kernel_matrix, prepare_kernel
from ..linalg import WeightedGramFactor
from .base import IPSEstimator


class ExactIPSEstimator(IPSEstimator):
    """Kernelized Exp3's estimator and width in kernel form, ``O(n³)`` per round.

    ``f̂_t(x) = ψ(x)ᵀ G_t⁻¹ ψ(x_t) · y_t = A_t[x, x_t] · y_t`` ([Iwazaki2026], Eq. 3) and
    ``width_t(x) = ‖ψ(x)‖_{G_t⁻¹} = sqrt(A_t[x, x])`` with ``G_t = Σ_x P_t(x)ψ(x)ψ(x)ᵀ + cI``,
    computed through ``A = (1/c)[K − K D^{1/2}(K̃ + cI)⁻¹D^{1/2}K]``: one Cholesky of
    ``K̃ + cI`` and one triangular solve per round (docs/algorithms.rst §1). The kernel matrix ``K``
    (``n × n``) is evaluated once at construction.

    Accuracy: entries of ``A`` carry an absolute rounding error of about ``ε·k_max/c``
    (``ε`` the dtype's unit round-off, ``c`` the ridge); the width is relatively accurate to
    ``ε·(1 + c)/c`` because ``A[x, x] ≥ k(x,x)/(1 + c)``. In float64 with ``c ≥ 1e-8`` that is
    ``≤ 1e-8`` relative; float32 needs ``c ≳ 1e-2`` for three correct digits.

    Args:
        kernel: a GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        ridge: ``c = λ / T > 0``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> est = ExactIPSEstimator(make_kernel("se", 1), X, ridge=1e-3)
        >>> f_hat, width = est.estimate(torch.full((50,), 0.02, dtype=torch.float64), 3, 0.5)
    """

    def __init__(self, kernel: Kernel, candidates: torch.Tensor, ridge: float) -> None:
        self.candidates = check_candidates(candidates)
        self.kernel = prepare_kernel(kernel, self.candidates)
        self.ridge = check_positive(ridge, "ridge")
        self.K = kernel_matrix(self.kernel, self.candidates)
        self.k_diag = kernel_diag(self.kernel, self.candidates)

    def factor(self, probs: torch.Tensor) -> WeightedGramFactor:
        """The ``O(n³)`` part of a round: ``V = chol(K̃ + cI)⁻¹ D^{1/2} K``."""
        return WeightedGramFactor.build(self.K, probs, self.ridge)

    def _estimate(
        self, probs: torch.Tensor, index: int, reward: float, generator: torch.Generator | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        factor = self.factor(probs)
        f_hat = factor.column(self.K, index) * reward
        width = factor.diagonal(self.k_diag, probs).sqrt()
        return f_hat, width

    def _estimate_batch(self, probs, indices, rewards, generator):
        factor = self.factor(probs)  # one factorisation for the q draws
        f_hat = factor.column(self.K, indices) @ rewards / indices.numel()
        return f_hat, factor.diagonal(self.k_diag, probs).sqrt()


def exact_ips_estimate(
    kernel: Kernel,
    candidates: torch.Tensor,
    probs: torch.Tensor,
    index: int,
    reward: float,
    ridge: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Functional form of one exact kernelized-Exp3 estimate ([Iwazaki2026], Eq. 3).

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        probs: ``P_t``, ``Tensor[n]`` (non-negative; zeros allowed).
        index: the drawn candidate ``x_t``.
        reward: ``y_t``.
        ridge: ``c`` (``λ / T`` in Exp3).

    Returns:
        ``(f_hat, width)``: ``f_hat[x] = ψ(x)ᵀG⁻¹ψ(x_index)·reward`` and
        ``width[x] = ‖ψ(x)‖_{G⁻¹}`` with ``G = Σ probs(x)ψψᵀ + ridge·I``, both ``Tensor[n]``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(30, 1, dtype=torch.float64)
        >>> P = torch.full((30,), 1 / 30, dtype=torch.float64)
        >>> f_hat, width = exact_ips_estimate(make_kernel("se", 1), X, P, 0, 1.0, 1e-2)
    """
    return ExactIPSEstimator(kernel, candidates, ridge).estimate(probs, index, reward)
