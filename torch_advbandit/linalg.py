"""The weighted-kernel factorisation behind every Exp3 estimator (ALGORITHMS.md §1).

With ``D = diag(P)`` and the weighted kernel ``K̃ = D^{1/2} K D^{1/2}``,

    A = Ψ G⁻¹ Ψᵀ = (1/c) · [K − K D^{1/2} (K̃ + cI)⁻¹ D^{1/2} K],   G = Σ_x P(x)ψ(x)ψ(x)ᵀ + cI.

``K̃ + cI`` has every eigenvalue in ``[c, c + Σ P(x)k(x,x)]``, so its Cholesky factor exists and is
well conditioned even when ``K`` is numerically singular (SE kernel on a fine grid) and some
``P(x)`` underflow to zero: no ``D^{-1/2}`` is ever formed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky


def weighted_gram(K: torch.Tensor, probs: torch.Tensor, ridge: float) -> torch.Tensor:
    """``K̃ + cI = D^{1/2} K D^{1/2} + cI`` (shape ``n × n``), the matrix every round factorises."""
    sq = probs.sqrt()
    out = sq.unsqueeze(-1) * K * sq.unsqueeze(-2)
    out.diagonal(dim1=-2, dim2=-1).add_(ridge)
    return out


def symmetric_pinv_sqrt(B: torch.Tensor) -> torch.Tensor:
    """``R`` with ``R Rᵀ = B⁺`` for symmetric PSD ``B`` (``s × s``): ``R = U Λ^{+1/2}`` on kept eigenvalues.

    Eigenvalues below ``s·ε·λ_max`` are treated as zero (the pseudo-inverse of seed Eq. 6), so the
    returned ``R`` is ``s × r`` with ``r`` the numerical rank.
    """
    evals, evecs = torch.linalg.eigh(B)
    if evals.numel() == 0:
        return evecs
    cutoff = evals.max().clamp_min(0) * B.shape[-1] * torch.finfo(B.dtype).eps
    keep = evals > cutoff
    return evecs[:, keep] * evals[keep].rsqrt()


@dataclass(frozen=True)
class WeightedGramFactor:
    """The solved factor ``V = L⁻¹ D^{1/2} K`` of one round, ``L = chol(K̃ + cI)``.

    From it: ``A[:, i] = (K[:, i] − Vᵀ V[:, i]) / c`` in ``O(n²)`` and
    ``A[x, x] = (k(x,x) − ‖V[:, x]‖²) / c`` in ``O(n²)`` for all ``x``.

    Attributes:
        V: ``Tensor[n, n]``.
        ridge: the ridge ``c``.
    """

    V: torch.Tensor
    ridge: float

    @classmethod
    def build(cls, K: torch.Tensor, probs: torch.Tensor, ridge: float) -> WeightedGramFactor:
        """One Cholesky of ``K̃ + cI`` and one triangular solve with ``n`` right-hand sides: ``O(n³)``."""
        L = psd_safe_cholesky(weighted_gram(K, probs, ridge))
        V = torch.linalg.solve_triangular(L, probs.sqrt().unsqueeze(-1) * K, upper=False)
        return cls(V=V, ridge=ridge)

    def column(self, K: torch.Tensor, index: int) -> torch.Tensor:
        """``A[:, index]``, shape ``n``."""
        return (K[:, index] - self.V.mT @ self.V[:, index]) / self.ridge

    def diagonal(self, k_diag: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        """``A[x, x]`` for every ``x``, shape ``n``, clamped to its provable range.

        ``k(x,x) / (Σ_y P(y)k(y,y) + c) ≤ A[x, x] ≤ k(x,x) / c`` (the eigenvalues of ``G`` lie in
        ``[c, Σ P k + c]``); the clamp removes only rounding from the subtraction, whose relative
        error is at most ``ε·(Σ P k + c)/c`` with ``ε`` the unit round-off of the dtype.
        """
        raw = (k_diag - torch.linalg.vector_norm(self.V, dim=-2).square()) / self.ridge
        mass = (probs * k_diag).sum()
        return torch.minimum(torch.maximum(raw, k_diag / (mass + self.ridge)), k_diag / self.ridge)
