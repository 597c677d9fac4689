"""Landmark (Nyström centre) selection: recursive ridge-leverage-score sampling ([Iwazaki2026], Alg. 3; [Musco2017]).

Everything here reads the kernel only through column blocks and the diagonal: memory
``O(n·s)``, never an ``n × n`` matrix.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky

from ._validation import check_candidates, check_choice, check_generator, check_int, check_positive, check_probs
from .kernels import DEFAULT_BLOCK_ENTRIES, kernel_diag, kernel_matrix, prepare_kernel, reusable_blocks
from .linalg import capacitance_solve, low_rank_plus_diagonal, pivoted_cholesky

PIVOT_RULES = ("ridge", "ridge_squared")  #: the stand-in's stopping rules (:func:`approximate_leverage_scores`)


@dataclass(frozen=True)
class NystromSample:
    """A weighted Nyström dictionary: the selection matrix ``S`` (``n × s``) in sparse form.

    Column ``j`` of ``S`` is ``weights[j]·e_{indices[j]}``, so ``SᵀK̃S = W K̃[idx, idx] W``.

    Attributes:
        indices: ``LongTensor[s]``, candidate indices (repeats allowed).
        weights: ``Tensor[s]``, positive weights (``1/sqrt(p_i)`` for RLS sampling).

    Example:
        >>> NystromSample(torch.tensor([0, 4]), torch.tensor([1.0, 2.0], dtype=torch.float64)).size
        2
    """

    indices: torch.Tensor
    weights: torch.Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.indices, torch.Tensor) or self.indices.dtype != torch.long or self.indices.ndim != 1:
            raise TypeError("indices must be a 1-D LongTensor")
        if not isinstance(self.weights, torch.Tensor) or self.weights.shape != self.indices.shape:
            raise ValueError(f"weights must be a tensor of shape {tuple(self.indices.shape)}")
        if self.weights.numel() and not bool((self.weights > 0).all() & torch.isfinite(self.weights).all()):
            raise ValueError("weights must be finite and positive")

    @property
    def size(self) -> int:
        """``s``, the dictionary size."""
        return self.indices.numel()


def approximate_leverage_scores(
    kernel: Kernel,
    candidates: torch.Tensor,
    sqrt_probs: torch.Tensor,
    weighted_diag: torch.Tensor,
    rows: torch.Tensor,
    sample: NystromSample,
    ridge: float,
    *,
    eigen_tolerance: float = 1e-4,
    pivot_rule: str = "ridge",
    block_entries: int = DEFAULT_BLOCK_ENTRIES,
) -> torch.Tensor:
    """``l̃_i = (3/(2c))·(K̃_ii − K̃_{i,S} W (W K̃_{S,S} W + cI)⁻¹ W K̃_{S,i})`` for ``i ∈ rows`` (Alg. 3).

    With ``E = diag(w·sqrt(P_S))`` and ``LLᵀ = W K̃_{S,S} W + cI`` the subtracted term is
    ``P_i·‖L⁻¹ E k_S(x_i)‖²``: the weights act on the ``s``-long side and on the result, never on an
    ``m × s`` block. Cost ``O(m·s² + s³)``, memory ``O(block·s)``. Returns ``Tensor[m]`` (clamped at 0).

    With ``eigen_tolerance > 0``, ``B = W K̃_{S,S} W`` is replaced by a rank-``r`` stand-in that can
    only *raise* the scores, by at most ``1.5·eigen_tolerance·K̃_ii/c`` (that fraction of a score's
    largest value), so [Musco2017]'s guarantee holds (over-estimates only enlarge the expected
    dictionary, here by at most ``1.5·eigen_tolerance·Σ_i K̃_ii/c`` scores in total):

    - pivoted Cholesky ``B = LLᵀ + Δ`` with ``t = trace Δ ≤ eigen_tolerance·c`` (``pivot_rule="ridge"``,
      up to 512 pivots). With ``c_i = E k_S(x_i)``, ``M₁ = B + cI ⪯ LLᵀ + (c + t)I = M₂``: the Woodbury
      form of ``c_iᵀM₂⁻¹c_i`` under-states ``c_iᵀM₁⁻¹c_i`` by ``c_iᵀM₁⁻¹(tI − Δ)M₂⁻¹c_i ≤ t·k(x_i, x_i)/c``,
      since ``0 ⪯ tI − Δ ⪯ tI`` and ``‖M⁻¹c_i‖² ≤ c_iᵀB⁺c_i/c ≤ k(x_i, x_i)/c`` for both (the Gram
      matrix of the dictionary's features and ``ψ(x_i)`` is PSD); times ``3P_i/(2c)``, the bound
      above. ``"ridge_squared"`` stops at ``t ≤ eigen_tolerance·c²/trace B`` (up to 256 pivots), from
      the cruder ``t·‖c_i‖²/c² ≤ t·K̃_ii·trace(B)/c²``: more pivots, and the eigenbasis below for
      rough kernels. Cost ``O(m·s·r + s·r²)``: tens of pivots for SE, a few hundred for Matérn-3/2;
    - otherwise, when ``m ≥ 4s`` (the top of the recursion), the eigenbasis ``UΛUᵀ = B``
      restricted to eigenvalues ``> eigen_tolerance·c`` (else the exact Cholesky form above):
      ``(u_jᵀ W K̃_{S,i})² ≤ λ_j·K̃_ii`` (the weighted Gram matrix of ``S ∪ {i}`` is PSD) bounds
      what each dropped direction removes. Cost ``O(m·s·r + s³)``.

    Args:
        kernel: GPyTorch kernel already on the candidates' device and dtype.
        candidates: ``Tensor[n, d]``.
        sqrt_probs: ``sqrt(P)``, ``Tensor[n]``.
        weighted_diag: ``K̃_ii = P_i·k(x_i, x_i)``, ``Tensor[n]``.
        rows: ``LongTensor[m]``, the points to score.
        sample: the dictionary ``S`` (indices into the candidates) and its weights ``W``.
        ridge: ``c > 0``.
        eigen_tolerance: the largest score increase allowed, as a fraction of a score's maximum
            ``1.5·K̃_ii/c`` (``0``: exact scores, no rank-``r`` stand-in).
        pivot_rule: ``"ridge"`` (default) or ``"ridge_squared"`` (the experiments' records), as above.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> P = torch.full((50,), 0.02, dtype=torch.float64)
        >>> full = NystromSample(torch.arange(50), torch.ones(50, dtype=torch.float64))
        >>> l = approximate_leverage_scores(make_kernel("se", 1), X, P.sqrt(), P, torch.arange(50), full, 1e-3)
        >>> bool((l >= 0).all()) and float(l.sum()) < 1.5 * 50
        True
    """
    check_choice(pivot_rule, PIVOT_RULES, "pivot_rule")
    diag = weighted_diag[rows]
    if sample.size == 0:
        return 1.5 * diag / ridge
    S = candidates[sample.indices]
    scale = sample.weights * sqrt_probs[sample.indices]
    B = kernel_matrix(kernel, S, block_entries=block_entries).mul_(scale.unsqueeze(-1)).mul_(scale.unsqueeze(-2))
    whiten = L = None
    trace = float(B.diagonal().sum())
    if pivot_rule == "ridge":
        tau = eigen_tolerance * ridge if trace > 0 else 0.0
        low_rank = pivoted_cholesky(B, tau, min(sample.size, 512), trace=True) if tau > 0 else None
    else:
        tau = eigen_tolerance * ridge**2 / trace if trace > 0 else 0.0
        low_rank = pivoted_cholesky(B, tau / sample.size, min(sample.size, 256)) if tau > 0 else None
    if low_rank is not None:  # B ⪯ LLᵀ + τI: (B + cI)⁻¹ ⪰ (LLᵀ + c'I)⁻¹, c' = c + trace(B − LLᵀ)
        _, Lb, residual = low_rank
        shifted = ridge + float(residual.sum())
        op = low_rank_plus_diagonal(Lb, shifted)  # LLᵀ + c'I; whiten = chol(LᵀL + c'I)⁻¹Lᵀ
        whiten = capacitance_solve(op, Lb.mT).mul_(shifted**-0.5)  # r × s
    elif rows.numel() >= 4 * sample.size and tau > 0:  # many points, small dictionary: eigenbasis cut
        evals, evecs = torch.linalg.eigh(B)
        keep = evals > eigen_tolerance * ridge
        whiten = (evecs[:, keep] * (evals[keep] + ridge).rsqrt()).mT  # r × s: (Λ+c)^{-1/2} Uᵀ
    else:
        B.diagonal().add_(ridge)
        L = psd_safe_cholesky(B)
    out = torch.empty_like(diag)
    step = max(1, block_entries // max(1, sample.size))
    buffer = reusable_blocks(min(step, rows.numel()), sample.size, diag)  # one allocation for the s × b blocks
    for start in range(0, rows.numel(), step):
        blk = rows[start : start + step]
        C = buffer(blk.numel()).view(sample.size, -1)
        kernel_matrix(kernel, S, candidates[blk], block_entries=block_entries, out=C).mul_(scale.unsqueeze(-1))
        Q = torch.linalg.solve_triangular(L, C, upper=False) if L is not None else whiten @ C
        quad = Q.mul_(Q).sum(-2)
        if low_rank is not None:  # Woodbury: cᵀ(LLᵀ + c'I)⁻¹c = (‖c‖² − ‖R⁻¹Lᵀc‖²)/c'
            quad = torch.linalg.vector_norm(C, dim=-2).square_().sub_(quad).div_(shifted)
        out[start : start + step] = quad.mul_(sqrt_probs[blk].square())
    out = torch.sub(diag, out, out=out)
    return out.clamp_min_(0.0).mul_(1.5 / ridge)


class LandmarkSelector(ABC):
    """Strategy choosing a Nyström dictionary for the weighted kernel (as Falkon's ``CenterSelector``).

    Example:
        >>> class EveryOther(LandmarkSelector):  # a user strategy: every second candidate, unit weights
        ...     def select(self, kernel, candidates, ridge, probs, generator):
        ...         idx = torch.arange(0, candidates.shape[0], 2, device=candidates.device)
        ...         return NystromSample(idx, torch.ones(idx.numel(), dtype=candidates.dtype, device=candidates.device))
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> EveryOther().select(None, X, 1e-2, None, None).size
        5
    """

    @abstractmethod
    def select(
        self,
        kernel: Kernel,
        candidates: torch.Tensor,
        ridge: float,
        probs: torch.Tensor,
        generator: torch.Generator,
    ) -> NystromSample:
        """A dictionary for ``k̃ = sqrt(P P')·k`` with ridge ``c``; ``kernel`` already on the candidates."""


@dataclass(frozen=True)
class RecursiveRLSSelector(LandmarkSelector):
    """Recursive ridge-leverage-score sampling, theory version ([Iwazaki2026], Alg. 3; [Musco2017] Alg. 2).

    Target ([Iwazaki2026], Eq. 30; [Musco2017] Thm. 3): ``K̃ − K̃_S ⪯ c·I`` with probability
    ``≥ 1 − 3δ``, where ``K̃_S = K̃S(SᵀK̃S)⁺SᵀK̃``; expected size ``O(d_eff(c)·log(d_eff/δ))``.

    Attributes:
        delta: failure probability ``δ ∈ (0, 1)``.
        base_constant: the recursion returns every point once ``m ≤ base_constant·log(1/δ)`` (192).
        oversampling_constant: ``p_i = min(1, l̃_i·oversampling_constant·log(Σ l̃/δ))`` (16).
        eigen_tolerance: scores are computed against a rank-``r`` stand-in for ``W K̃_{S,S} W``
            that can raise each by at most ``eigen_tolerance`` of its maximum and never lowers it
            (see :func:`approximate_leverage_scores`), so the guarantee is kept. ``0`` disables it.
        pivot_rule: the stand-in's pivoting rule, ``"ridge"`` (default) or ``"ridge_squared"``
            (:func:`approximate_leverage_scores`).
        block_entries: entries per kernel block (memory bound).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 3000, dtype=torch.float64).unsqueeze(-1)
        >>> P = torch.full((3000,), 1 / 3000, dtype=torch.float64)
        >>> selector = RecursiveRLSSelector(delta=0.1)
        >>> S = selector.select(make_kernel("se", 1), X, 1e-3, P, torch.Generator().manual_seed(0))
        >>> S.size < 3000
        True
    """

    delta: float = 0.1
    base_constant: float = 192.0
    oversampling_constant: float = 16.0
    eigen_tolerance: float = 1e-4
    pivot_rule: str = "ridge"
    block_entries: int = DEFAULT_BLOCK_ENTRIES

    def __post_init__(self) -> None:
        if not (isinstance(self.delta, (int, float)) and 0.0 < self.delta < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        check_positive(self.base_constant, "base_constant")
        check_positive(self.oversampling_constant, "oversampling_constant")
        if not isinstance(self.eigen_tolerance, (int, float)) or not 0.0 <= self.eigen_tolerance < 1.0:
            raise ValueError(f"eigen_tolerance must lie in [0, 1), got {self.eigen_tolerance!r}")
        check_choice(self.pivot_rule, PIVOT_RULES, "pivot_rule")
        check_int(self.block_entries, "block_entries", minimum=1)

    def select(self, kernel, candidates, ridge, probs, generator) -> NystromSample:
        if generator is None:
            raise ValueError("generator is required: recursive RLS sampling is random")
        sqrt_probs = probs.sqrt()
        weighted_diag = probs * kernel_diag(kernel, candidates)
        rows = torch.arange(candidates.shape[0], device=candidates.device)
        return self._recurse(kernel, candidates, sqrt_probs, weighted_diag, rows, ridge, self.delta, generator)

    def _recurse(self, kernel, candidates, sqrt_probs, weighted_diag, rows, ridge, delta, generator) -> NystromSample:
        m = rows.numel()
        if m <= self.base_constant * math.log(1.0 / delta):
            return NystromSample(rows, torch.ones(m, dtype=candidates.dtype, device=candidates.device))
        half = torch.rand(m, generator=generator, dtype=torch.float32, device=rows.device) < 0.5  # fair coins
        inner = self._recurse(kernel, candidates, sqrt_probs, weighted_diag, rows[half], ridge, delta / 3, generator)
        scores = approximate_leverage_scores(
            kernel,
            candidates,
            sqrt_probs,
            weighted_diag,
            rows,
            inner,
            ridge,
            eigen_tolerance=self.eigen_tolerance,
            pivot_rule=self.pivot_rule,
            block_entries=self.block_entries,
        )
        total = float(scores.sum())
        factor = self.oversampling_constant * math.log(total / delta) if total > 0 else 0.0
        p = (scores * factor).clamp(0.0, 1.0)
        keep = torch.rand(m, generator=generator, dtype=p.dtype, device=p.device) < p
        return NystromSample(rows[keep], p[keep].rsqrt())


@dataclass(frozen=True)
class FixedSelector(LandmarkSelector):
    """Always returns the given dictionary (e.g. the full set ``S = I`` or one drawn elsewhere).

    Example:
        >>> full = NystromSample(torch.arange(4), torch.ones(4, dtype=torch.float64))
        >>> FixedSelector(full).select(None, torch.rand(4, 1, dtype=torch.float64), 1e-2, None, None).size
        4
    """

    sample: NystromSample

    def select(self, kernel, candidates, ridge, probs, generator) -> NystromSample:
        n = candidates.shape[0]
        idx = self.sample.indices
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise ValueError(f"sample.indices must lie in [0, {n})")
        return NystromSample(idx.to(candidates.device), self.sample.weights.to(candidates))


@dataclass(frozen=True)
class UniformSelector(LandmarkSelector):
    """Baseline: ``size`` landmarks uniformly without replacement, weights ``sqrt(n/size)``.

    Example:
        >>> X = torch.rand(100, 1, dtype=torch.float64)
        >>> S = UniformSelector(10).select(None, X, 1e-2, None, torch.Generator().manual_seed(0))
        >>> S.size, round(float(S.weights[0]) ** 2, 6)
        (10, 10.0)
    """

    size: int

    def __post_init__(self) -> None:
        check_int(self.size, "size", minimum=1)

    def select(self, kernel, candidates, ridge, probs, generator) -> NystromSample:
        n = candidates.shape[0]
        s = min(self.size, n)
        idx = torch.randperm(n, generator=generator, device=candidates.device)[:s]
        return NystromSample(idx, torch.full((s,), math.sqrt(n / s), dtype=candidates.dtype, device=candidates.device))


def recursive_rls_nystrom(
    kernel: Kernel,
    candidates: torch.Tensor,
    ridge: float,
    *,
    probs: torch.Tensor | None = None,
    delta: float = 0.1,
    generator: torch.Generator | None = None,
    base_constant: float = 192.0,
    oversampling_constant: float = 16.0,
) -> NystromSample:
    """Recursive RLS-Nyström dictionary of the (weighted) kernel ([Iwazaki2026], Alg. 3).

    With ``probs`` it samples for ``k̃(x, x') = sqrt(p(x)p(x'))·k(x, x')`` (RLS-kernelized Exp3,
    Alg. 5); without, for ``k`` itself. See :class:`RecursiveRLSSelector` for the guarantee and
    the constants. Reads only kernel column blocks and the diagonal: memory ``O(n·s)``.

    Args:
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        ridge: ``c > 0``.
        probs: optional ``Tensor[n]`` of non-negative weights.
        delta: failure probability (0.1 in the paper).
        generator: ``torch.Generator`` on the candidates' device.

    Returns:
        :class:`NystromSample` with ``s`` indices and weights.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 2000, dtype=torch.float64).unsqueeze(-1)
        >>> S = recursive_rls_nystrom(make_kernel("se", 1), X, 1e-2, generator=torch.Generator().manual_seed(0))
        >>> S.size < 2000
        True
    """
    candidates = check_candidates(candidates)
    kernel = prepare_kernel(kernel, candidates)
    ridge = check_positive(ridge, "ridge")
    n = candidates.shape[0]
    if probs is None:
        probs = torch.ones(n, dtype=candidates.dtype, device=candidates.device)
    else:
        probs = check_probs(probs, n, candidates, normalized=False)
    generator = check_generator(generator, candidates.device)
    selector = RecursiveRLSSelector(delta, base_constant, oversampling_constant)
    return selector.select(kernel, candidates, ridge, probs, generator)
