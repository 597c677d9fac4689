"""The weighted-kernel factorisation behind every Exp3 estimator (docs/algorithms.rst §1).

With ``D = diag(P)`` and the weighted kernel ``K̃ = D^{1/2} K D^{1/2}``,

    A = Ψ G⁻¹ Ψᵀ = (1/c) · [K − K D^{1/2} (K̃ + cI)⁻¹ D^{1/2} K],   G = Σ_x P(x)ψ(x)ψ(x)ᵀ + cI.

``K̃ + cI`` has every eigenvalue in ``[c, c + Σ P(x)k(x,x)]``, so its Cholesky factor exists and is
well conditioned even when ``K`` is numerically singular (SE kernel on a fine grid) and some
``P(x)`` underflow to zero: no ``D^{-1/2}`` is ever formed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from gpytorch.kernels import Kernel
from linear_operator.operators import (
    ConstantDiagLinearOperator,
    DiagLinearOperator,
    LowRankRootAddedDiagLinearOperator,
    LowRankRootLinearOperator,
)
from linear_operator.utils.cholesky import psd_safe_cholesky
from linear_operator.utils.memoize import add_to_cache

from .kernels import kernel_columns, kernel_diag


def weighted_gram(K: torch.Tensor, probs: torch.Tensor, ridge: float) -> torch.Tensor:
    """``K̃ + cI = D^{1/2} K D^{1/2} + cI`` (shape ``n × n``), the matrix every round factorises.

    Example:
        >>> K = torch.ones(2, 2, dtype=torch.float64)
        >>> weighted_gram(K, torch.tensor([0.25, 0.75], dtype=torch.float64), 0.5)
        tensor([[0.7500, 0.4330],
                [0.4330, 1.2500]], dtype=torch.float64)
    """
    sq = probs.sqrt()
    out = sq.unsqueeze(-1) * K * sq.unsqueeze(-2)
    out.diagonal(dim1=-2, dim2=-1).add_(ridge)
    return out


def symmetric_pinv_sqrt(B: torch.Tensor) -> torch.Tensor:
    """``R`` with ``R Rᵀ = B⁺`` for symmetric PSD ``B`` (``s × s``): ``R = U Λ^{+1/2}`` on kept eigenvalues.

    Eigenvalues below ``s·ε·λ_max`` are treated as zero (the pseudo-inverse of [Iwazaki2026] Eq. 6), so the
    returned ``R`` is ``s × r`` with ``r`` the numerical rank.

    Example:
        >>> B = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)  # rank one
        >>> R = symmetric_pinv_sqrt(B)
        >>> R.shape, torch.allclose(R @ R.mT, torch.linalg.pinv(B))
        (torch.Size([2, 1]), True)
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

    Example:
        >>> from torch_advbandit.kernels import kernel_matrix, make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> K = kernel_matrix(make_kernel("se", 1), X)
        >>> P = torch.full((30,), 1 / 30, dtype=torch.float64)
        >>> factor = WeightedGramFactor.build(K, P, 1e-2)
        >>> A_col = factor.column(K, 7)  # A[:, 7], the estimator's column for x_t = X[7]
        >>> bool(torch.allclose(factor.diagonal(torch.ones(30, dtype=torch.float64), P)[7], A_col[7]))
        True
    """

    V: torch.Tensor
    ridge: float

    @classmethod
    def build(cls, K: torch.Tensor, probs: torch.Tensor, ridge: float) -> WeightedGramFactor:
        """One Cholesky of ``K̃ + cI`` and one triangular solve with ``n`` right-hand sides: ``O(n³)``."""
        L = psd_safe_cholesky(weighted_gram(K, probs, ridge))
        V = torch.linalg.solve_triangular(L, probs.sqrt().unsqueeze(-1) * K, upper=False)
        return cls(V=V, ridge=ridge)

    def column(self, K: torch.Tensor, index: int | torch.Tensor) -> torch.Tensor:
        """``A[:, index]``: shape ``n`` (or ``n × q`` for a ``LongTensor[q]`` of indices)."""
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


def greedy_posterior_columns(
    kernel: Kernel,
    candidates: torch.Tensor,
    noise: float,
    max_steps: int,
    *,
    variance_tol: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Greedy maximum-posterior-variance selection with its normalised covariance columns.

    Step ``i`` picks ``x_i = argmax_x σ²_{i−1}(x)`` (ties: smallest index) and appends the column
    ``c_i(x) = (k(x, x_i) − Σ_{j<i} c_j(x)c_j(x_i)) / sqrt(σ²_{i−1}(x_i) + noise)``, then
    ``σ²_i = σ²_{i−1} − c_i²``. With ``noise = λ > 0`` this is MVR ([Iwazaki2026], Alg. 2; repeats
    allowed); with ``noise = 0`` it is pivoted Cholesky of ``K``, i.e. the P-greedy Newton basis
    ``N_i = c_i`` with power function ``P_i = sqrt(σ²_i)`` ([Takemori2021]). Stops after
    ``max_steps`` or once ``max σ² ≤ variance_tol``. ``O(n·D²)`` time, ``O(n·D)`` memory.

    Returns:
        ``(chosen, columns, variance)``: ``LongTensor[D]``, ``Tensor[n, D]``, ``Tensor[n]``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 200, dtype=torch.float64).unsqueeze(-1)
        >>> chosen, cols, var = greedy_posterior_columns(make_kernel("se", 1), X, 0.0, 50, variance_tol=1e-8)
        >>> chosen.numel() < 50, bool(var.max() <= 1e-8)  # pivoted Cholesky stops at the tolerance
        (True, True)
    """
    n = candidates.shape[0]
    var = kernel_diag(kernel, candidates).clone()
    capacity = min(max_steps, 64)  # grown by doubling: memory O(n·D), never O(n·max_steps)
    cols = torch.empty(n, capacity, dtype=candidates.dtype, device=candidates.device)
    chosen = torch.empty(capacity, dtype=torch.long, device=candidates.device)
    steps = 0
    for i in range(max_steps):
        j = torch.argmax(var)
        if variance_tol is not None and float(var[j]) <= variance_tol:
            break
        if i == capacity:
            capacity = min(max_steps, 2 * capacity)
            cols = torch.cat([cols, cols.new_empty(n, capacity - i)], dim=-1)
            chosen = torch.cat([chosen, chosen.new_empty(capacity - i)])
        chosen[i] = j
        cov = kernel_columns(kernel, candidates, j.reshape(1)).squeeze(-1) - cols[:, :i] @ cols[j, :i]
        cols[:, i] = cov / torch.sqrt(var[j] + noise)
        var = (var - cols[:, i].square()).clamp_min_(0.0)
        steps = i + 1
    return chosen[:steps], cols[:, :steps], var


@dataclass(frozen=True)
class LowRankKernelFactor:
    """``K ≈ L Lᵀ + diag(e)`` from pivoted Cholesky: ``L`` (``Tensor[n, r]``), ``e = diag(K − LLᵀ)``.

    The residual ``E = K − LLᵀ`` is the Schur complement of the pivots, PSD with diagonal ``e``;
    pivoted Cholesky stops once ``max e ≤ tolerance``, so ``LLᵀ ⪯ K ⪯ LLᵀ + n·diag(e)``.

    Attributes:
        pivots: ``LongTensor[r]``, the pivot candidates in order.
        L: ``Tensor[n, r]``, the Newton basis (pivoted Cholesky columns).
        residual: ``Tensor[n]``, ``e(x) = k(x,x) − ‖L[x]‖² ≥ 0`` (0 at the pivots).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 2000, dtype=torch.float64).unsqueeze(-1)
        >>> F = LowRankKernelFactor.build(make_kernel("se", 1), X, tolerance=1e-12)
        >>> F.rank < 60, bool(F.residual.max() <= 1e-12)
        (True, True)
    """

    pivots: torch.Tensor
    L: torch.Tensor
    residual: torch.Tensor

    @property
    def rank(self) -> int:
        """``r``, the number of pivots."""
        return self.L.shape[-1]

    @classmethod
    def build(
        cls, kernel: Kernel, candidates: torch.Tensor, *, tolerance: float, max_rank: int | None = None
    ) -> LowRankKernelFactor:
        """Pivoted Cholesky of ``K`` (read a column at a time, ``O(n·r²)`` time, ``O(n·r)`` memory).

        Stops once ``max_x e(x) ≤ tolerance`` or after ``max_rank`` pivots (default ``n``); check
        :attr:`residual` (``max`` of it) for the accuracy reached.
        """
        n = candidates.shape[0]
        steps = n if max_rank is None else min(max_rank, n)
        pivots, L, residual = greedy_posterior_columns(kernel, candidates, 0.0, steps, variance_tol=tolerance)
        return cls(pivots=pivots, L=L, residual=residual)


def pivoted_cholesky(
    A: torch.Tensor, tol: float, max_rank: int, *, trace: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """``A ≈ LLᵀ`` (``A``: PSD ``s × s``, ``L``: ``s × r``) by greedy pivoting until ``max diag(A − LLᵀ) ≤ tol``.

    Returns ``(pivots, L, residual_diagonal)`` — ``L[pivots]`` is lower triangular — or ``None`` if
    ``max_rank`` pivots will not reach ``tol``. The residual ``A − LLᵀ`` is the Schur complement of
    the pivots: PSD, so its trace ``residual_diagonal.sum()`` bounds its norm. ``O(s·r²)`` time on a
    dense ``A``. A hopeless attempt stops early: at 64 pivots the largest residual is extrapolated
    to ``max_rank`` along the power law it followed since 32 pivots (slower than any smooth kernel's
    decay, so those are never stopped), and if that still misses ``tol`` by 10³ it gives up.
    With ``trace=True`` it stops once ``trace(A − LLᵀ) ≤ tol`` instead (so ``‖A − LLᵀ‖ ≤ tol``),
    without the early give-up.

    Example:
        >>> A = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
        >>> pivots, L, residual = pivoted_cholesky(A, 1e-12, 2)
        >>> torch.allclose(L @ L.mT, A), float(residual.max()) <= 1e-12
        (True, True)
    """
    s = A.shape[-1]
    rank = max(0, min(max_rank, s))
    if trace:
        return _pivoted_cholesky_to_trace(A, tol, rank)
    d = A.diagonal().clone()
    L = A.new_zeros(s, rank)
    pivots = torch.zeros(rank, dtype=torch.long, device=A.device)
    for k in range(rank + 1):
        j = int(torch.argmax(d)) if s else 0
        if s == 0 or float(d[j]) <= tol:
            return pivots[:k], L[:, :k], d
        if k == rank:
            return None
        if k == 32:
            at_32 = float(d[j])
        elif k == 64 and rank > 64:
            slope = math.log(max(float(d[j]), 1e-300) / at_32) / math.log(2.0)
            if float(d[j]) * (rank / 64) ** min(slope, 0.0) > 1e3 * tol:
                return None
        col = (A[:, j] - L[:, :k] @ L[j, :k]) / d[j].sqrt()
        L[:, k] = col
        pivots[k] = j
        d = (d - col.square()).clamp_min_(0.0)
        d[j] = 0.0
    return None


def _pivoted_cholesky_to_trace(A: torch.Tensor, tol: float, rank: int):
    """:func:`pivoted_cholesky` with ``trace=True``: the factor is built row-wise (``r × s``, each new
    column of ``L`` contiguous), and the residual diagonal is updated in place."""
    d = A.diagonal().clone()
    Lt = A.new_zeros(rank, A.shape[-1])
    pivots: list[int] = []
    for k in range(rank + 1):
        if float(d.sum()) <= tol:
            return torch.tensor(pivots, dtype=torch.long, device=A.device), Lt[:k].mT.contiguous(), d
        if k == rank:
            return None
        largest, j = torch.max(d, 0)
        j = int(j)
        row = torch.sub(A[j], Lt[:k, j] @ Lt[:k], out=Lt[k]).mul_(float(largest) ** -0.5)
        pivots.append(j)
        d.addcmul_(row, row, value=-1.0).clamp_min_(0.0)
        d[j] = 0.0
    return None


def low_rank_plus_diagonal(root: torch.Tensor, diag: torch.Tensor | float) -> LowRankRootAddedDiagLinearOperator:
    """``U Uᵀ + diag(δ)`` (``n × n``, never formed) as a ``linear_operator`` operator.

    ``root`` is ``U`` (``Tensor[n, r]``), ``diag`` is ``δ`` (``Tensor[n]``, positive, ``inf``
    allowed: its direction then drops out) or one positive number for ``δ·I``. The operator's
    ``solve`` and ``inv_quad_logdet`` are the Woodbury identity through the capacitance matrix
    ``C = I + Uᵀ diag(δ)⁻¹ U`` (``r × r``); :func:`capacitance_solve` applies the inverse of its
    Cholesky factor. Every low-rank algebra of the package goes through these two functions: the
    low-rank estimator (``LLᵀ + diag(Δ/P)``, the capacitance of ``K̃_r + cI``), the Nyström
    estimator (``ϕϕᵀ + c·D⁻¹``, whose capacitance is the Nyström-projected ``G_t/c``), the leverage
    scores' rank-``r`` stand-in and approximate MVR.

    The factor of ``C`` is computed here, from one ``n × r`` scaled copy ``diag(δ)^{-1/2}U`` (freed
    at once), one ``r × r`` product and one PSD-safe Cholesky, and placed in the operator's cache
    (``chol_cap_mat``), where the library's Woodbury solve finds it. The library's own path builds
    ``Uᵀ(Δ⁻¹U)`` through lazy operators: it measured slower and kept a second ``n × r`` copy alive
    (benchmarks/RESULTS.md, section 7).

    Example:
        >>> U = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
        >>> op = low_rank_plus_diagonal(U, 0.5)
        >>> op.to_dense()
        tensor([[1.5000, 2.0000],
                [2.0000, 4.5000]], dtype=torch.float64)
        >>> b = torch.ones(2, 1, dtype=torch.float64)
        >>> torch.allclose(op.solve(b), torch.linalg.solve(op.to_dense(), b))
        True
    """
    n = root.shape[-2]
    if isinstance(diag, torch.Tensor):
        diagonal = DiagLinearOperator(diag)
        scaled = root * diag.reciprocal().sqrt().unsqueeze(-1)
    else:
        value = torch.tensor([float(diag)], dtype=root.dtype, device=root.device)
        diagonal = ConstantDiagLinearOperator(value, diag_shape=n)
        scaled = root * float(diag) ** -0.5
    capacitance = scaled.mT @ scaled
    del scaled
    capacitance.diagonal().add_(1.0)
    op = LowRankRootAddedDiagLinearOperator(LowRankRootLinearOperator(root), diagonal)
    add_to_cache(op, "chol_cap_mat", psd_safe_cholesky(capacitance))
    return op


def capacitance_solve(op: LowRankRootAddedDiagLinearOperator, rhs: torch.Tensor) -> torch.Tensor:
    """``R⁻¹ rhs`` with ``R Rᵀ = I + Uᵀ diag(δ)⁻¹ U``, the capacitance matrix of ``op = UUᵀ + diag(δ)``.

    ``rhs`` is ``Tensor[r, b]``. The Woodbury identity reduces every quadratic form of the inverse
    to it: ``xᵀ(UUᵀ + Δ)⁻¹y = xᵀΔ⁻¹y − (R⁻¹UᵀΔ⁻¹x)ᵀ(R⁻¹UᵀΔ⁻¹y)``. ``R`` is the operator's cached
    ``chol_cap_mat``.

    Example:
        >>> U = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
        >>> op = low_rank_plus_diagonal(U, 0.5)
        >>> x = torch.tensor([1.0, -1.0], dtype=torch.float64)
        >>> w = capacitance_solve(op, U.mT @ x.unsqueeze(-1) / 0.5)
        >>> woodbury = float(x @ x / 0.5 - w.square().sum())
        >>> round(woodbury, 10) == round(float(x @ torch.linalg.solve(op.to_dense(), x)), 10)
        True
    """
    return torch.linalg.solve_triangular(op.chol_cap_mat, rhs, upper=False)
