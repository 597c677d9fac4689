"""Kernelized Exp3's estimator through a fixed low-rank factor of ``K`` (docs/algorithms.rst §1, Woodbury form)."""

from __future__ import annotations

import warnings

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_int, check_positive
from ..kernels import kernel_diag, prepare_kernel
from ..linalg import LowRankKernelFactor, capacitance_solve, low_rank_plus_diagonal
from .base import IPSEstimator

#: Default caps on the factor: rank 2048 (beyond it — Matérn kernels on large sets — the low-rank
#: path is no cheaper than RLS-Nyström) and ``n·r ≤ 2²⁸`` entries (2 GiB in float64).
DEFAULT_MAX_RANK = 2048
DEFAULT_MAX_FACTOR_ENTRIES = 2**28


class LowRankIPSEstimator(IPSEstimator):
    """[Iwazaki2026], Eq. 3 with ``K`` replaced by ``K_r = LLᵀ + diag(e)`` from pivoted Cholesky: ``O(n·r²)`` a round.

    ``L`` (``n × r``) and the residual diagonal ``e(x) = k(x,x) − ‖l(x)‖²`` are computed once per
    candidate set; ``K_r`` has the exact diagonal of ``K`` and differs from it only by the
    off-diagonal part of the pivoted-Cholesky residual. With ``Δ_x = c + P(x)e(x)`` and
    ``C = I + Σ_y (P(y)/Δ_y)·l(y)l(y)ᵀ`` (``r × r``), the Woodbury identity applied to
    ``K̃_r + cI = D^{1/2}LLᵀD^{1/2} + diag(Δ)`` turns ``A = (1/c)[K_r − K_r D^{1/2}(K̃_r + cI)⁻¹D^{1/2}K_r]``
    (docs/algorithms.rst §1) into::

        A[x, x'] = c·l(x)ᵀC⁻¹l(x') / (Δ_x Δ_x') + [x = x']·e(x)/Δ_x
        f̂_t(x)  = y_t·A[x, x_t],      width_t(x) = sqrt(A[x, x])

    (for ``e = 0`` this is the Nyström form ``l(x)ᵀ(LᵀDL + cI)⁻¹l(x')``; the ``e/Δ`` term is the
    residual-diagonal term of [Iwazaki2026] Eq. 7, here for the exact kernel).

    Accuracy against the exact estimator: ``LLᵀ ⪯ K ⪯ LLᵀ + n·diag(e)`` and ``K ↦ A(K)`` is
    operator monotone, so every entry of ``A`` — hence ``f̂_t/y_t`` and ``width_t²`` — is within
    ``n·max(e)/c`` of the exact one. ``tolerance`` bounds ``max(e)``: pick it as
    ``(wanted absolute error of A)·c/n`` (the default ``1e-12`` gives ``≤ 1e-5`` at ``n = 10⁴``,
    ``c = 1e-3``; measured errors are far smaller, see ``benchmarks/RESULTS.md``). The rank ``r``
    needed follows the kernel's spectrum: tens for the SE kernel on ``[0, 1]^d`` grids, far more
    for Matérn kernels, where RLS-Nyström or the exact estimator is the better choice.

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        ridge: ``c = λ / T``.
        tolerance: stop pivoting once ``max_x e(x) ≤ tolerance``.
        max_rank: cap on ``r`` (default ``min(n, 2048, 2²⁸/n)``: memory ``n·r`` numbers, at most
            2 GiB in float64, setup ``O(n·r²)``); if reached first, a ``RuntimeWarning`` states the
            residual attained (``factor.residual.max()``) and the estimator is exact to that
            residual instead.

    Attributes:
        factor: the :class:`~torch_advbandit.linalg.LowRankKernelFactor`.

    Example:
        >>> from torch_advbandit.estimators import exact_ips_estimate
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 500, dtype=torch.float64).unsqueeze(-1)
        >>> P = torch.full((500,), 1 / 500, dtype=torch.float64)
        >>> est = LowRankIPSEstimator(make_kernel("se", 1), X, ridge=1e-3)
        >>> f_hat, width = est.estimate(P, 7, 0.5)
        >>> f_ref, width_ref = exact_ips_estimate(make_kernel("se", 1), X, P, 7, 0.5, 1e-3)
        >>> est.factor.rank < 60, bool(((width - width_ref).abs() / width_ref).max() < 1e-6)
        (True, True)
    """

    def __init__(
        self,
        kernel: Kernel,
        candidates: torch.Tensor,
        ridge: float,
        *,
        tolerance: float = 1e-12,
        max_rank: int | None = None,
    ) -> None:
        self.candidates = check_candidates(candidates)
        self.kernel = prepare_kernel(kernel, self.candidates)
        self.ridge = check_positive(ridge, "ridge")
        self.tolerance = check_positive(tolerance, "tolerance")
        n = self.candidates.shape[0]
        if max_rank is None:
            max_rank = max(1, min(n, DEFAULT_MAX_RANK, DEFAULT_MAX_FACTOR_ENTRIES // n))
        else:
            max_rank = check_int(max_rank, "max_rank", minimum=1)
        self.factor = LowRankKernelFactor.build(
            self.kernel, self.candidates, tolerance=self.tolerance, max_rank=max_rank
        )
        self.k_diag = kernel_diag(self.kernel, self.candidates)
        reached = float(self.factor.residual.max())
        if reached > self.tolerance:
            warnings.warn(
                f"pivoted Cholesky stopped at max_rank={self.factor.rank} with max residual {reached:.3g} > "
                f"tolerance {self.tolerance:.3g}: the estimator is within n·{reached:.3g}/c of exact",
                RuntimeWarning,
                stacklevel=2,
            )

    def diagnostics(self) -> dict[str, float]:
        """``rank``: ``r`` of the low-rank factor."""
        return {"rank": float(self.factor.rank)}

    def _round(self, probs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``G = chol(C)⁻¹Lᵀ`` (``r × n``) and ``Δ`` (``n``): ``A = c·GᵀG/(ΔΔᵀ) + diag(e/Δ)``."""
        L, e = self.factor.L, self.factor.residual
        delta = probs * e + self.ridge
        # LLᵀ + diag(Δ/P) has the capacitance I + Lᵀdiag(P/Δ)L of K̃_r + cI = D^½LLᵀD^½ + diag(Δ)
        op = low_rank_plus_diagonal(L, delta / probs)
        return capacitance_solve(op, L.mT), delta

    def _width(self, G: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        diag = G.square().sum(-2).mul_(self.ridge).div_(delta.square()).add_(self.factor.residual / delta)
        return diag.clamp_min_(0.0).sqrt_()

    def _estimate(self, probs, index, reward, generator):
        G, delta = self._round(probs)
        column = (G.mT @ G[:, index]).mul_(self.ridge).div_(delta * delta[index])  # no host sync
        column[index] += self.factor.residual[index] / delta[index]
        return column * reward, self._width(G, delta)

    def _estimate_batch(self, probs, indices, rewards, generator):
        G, delta = self._round(probs)
        scaled = rewards / delta[indices] / indices.numel()
        f_hat = (G.mT @ (G[:, indices] @ scaled)).mul_(self.ridge).div_(delta)
        # the diagonal term at the drawn points; repeated draws are summed by a q × q matmul rather
        # than index_add_, whose CUDA atomics would add them in a run-dependent order
        drawn, inverse = torch.unique(indices, return_inverse=True)
        same = inverse.unsqueeze(0) == torch.arange(drawn.numel(), device=indices.device).unsqueeze(-1)
        f_hat[drawn] += same.to(scaled.dtype) @ (self.factor.residual[indices] * scaled)
        return f_hat, self._width(G, delta)
