"""RLS-kernelized Exp3 ([Iwazaki2026], Alg. 5): the Exp3 loop given a Nyström estimator (fresh RLS dictionaries)."""

from __future__ import annotations

from functools import partial

import torch
from gpytorch.kernels import Kernel

from ..center_selection import RecursiveRLSSelector
from ..estimators import NystromIPSEstimator
from ..estimators.nystrom import DEFAULT_EMBEDDING_TOLERANCE
from ..kernels import DEFAULT_BLOCK_ENTRIES
from .exp3 import KernelizedExp3


class RLSKernelizedExp3(KernelizedExp3):
    """RLS-kernelized Exp3 ([Iwazaki2026], Alg. 5): the loop of Alg. 1 with the Nyström estimator of Eqs. 6–7.

    Each round a dictionary of the probability-weighted kernel ``k̃_t = sqrt(P_t P_t')·k`` is drawn
    by recursive ridge-leverage-score sampling (Alg. 3, ridge ``c = λ/T``, failure probability
    ``δ``), then ``f̃_t`` and ``σ̃_t`` come from the Nyström embedding, truncated to the directions
    that carry all but ``embedding_tolerance·c`` of the weighted dictionary's energy
    (:class:`~torch_advbandit.estimators.NystromIPSEstimator`), in ``O(n·r²)`` time and ``O(n·r)``
    memory after the dictionary. Theory: ``β = B(1 + √2)·sqrt(λ/T)`` (Thm. 3;
    ``paper_parameters(..., algorithm="rls_kernelized_exp3")``). On sets smaller than
    ``192·log(1/δ)`` points the dictionary is the whole set and the policy equals
    :class:`KernelizedExp3` (up to ``β``).

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        horizon: ``T ≥ 1``, or ``None`` for an anytime policy (:class:`KernelizedExp3`'s doubling
            epochs, each with Thm. 3's parameters for twice the round it ends at).
        delta: ``δ ∈ (0, 1)`` of Alg. 3 (0.1 in the paper).
        base_constant, oversampling_constant: Alg. 3's constants (192 and 16).
        block_entries: kernel entries evaluated at once (memory budget: ``8·block_entries`` bytes
            per block in float64); the round holds ``O(n·r + block_entries + s²)`` numbers, so
            ``n = 10⁶`` fits a GPU or this machine's RAM.
        embedding_tolerance: ``τ ∈ [0, 1)``: the dictionary's guarantee ``K̃ − K̃_S ⪯ c·I`` becomes
            ``(1 + 2τ)c·I`` (docs/algorithms.rst §5); default ``10⁻⁴``. ``0`` keeps Eq. 6's embedding
            at float64's rank, as the paper computes it (``O(n·s_t·r + s_t³)``; slower for rough kernels).
        pivot_rule: how the leverage scores' pivoted stand-in stops, ``"ridge"`` (default) or
            ``"ridge_squared"`` (:func:`~torch_advbandit.center_selection.approximate_leverage_scores`);
            both keep Alg. 3's guarantee.
        **kwargs: ``eta``, ``alpha``, ``lam``, ``beta`` (derived when omitted), ``exploration`` (``"approx_mvr"``,
            Alg. 4, makes this Alg. 6) and ``generator`` (draws and dictionaries), as
            :class:`KernelizedExp3`; the estimator is this class's own.

    Example:
        >>> from torch_advbandit import RLSKernelizedExp3
        >>> from torch_advbandit.kernels import make_kernel
        >>> from torch_advbandit.parameters import paper_parameters
        >>> X = torch.linspace(0, 1, 1000, dtype=torch.float64).unsqueeze(-1)
        >>> params = paper_parameters("se", 100, 1, algorithm="rls_kernelized_exp3")
        >>> policy = RLSKernelizedExp3(X, make_kernel("se", 1), 100, **params,
        ...                            generator=torch.Generator().manual_seed(0))
        >>> policy.update(policy.select(), 0.3)
        >>> policy.estimator.last_sample.size < 1000
        True
    """

    _algorithm = "rls_kernelized_exp3"  # Thm. 3's β = B(1 + √2)·sqrt(λ/T) when β is derived

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        delta: float = 0.1,
        base_constant: float = 192.0,
        oversampling_constant: float = 16.0,
        block_entries: int = DEFAULT_BLOCK_ENTRIES,
        embedding_tolerance: float = DEFAULT_EMBEDDING_TOLERANCE,
        pivot_rule: str = "ridge",
        **kwargs,
    ) -> None:
        if "estimator" in kwargs:
            raise TypeError("RLSKernelizedExp3 builds its own Nyström estimator; pass estimator= to KernelizedExp3")
        selector = RecursiveRLSSelector(
            delta, base_constant, oversampling_constant, pivot_rule=pivot_rule, block_entries=block_entries
        )
        estimator = partial(
            NystromIPSEstimator,
            selector=selector,
            block_entries=selector.block_entries,
            embedding_tolerance=embedding_tolerance,
        )
        super().__init__(candidates, kernel, horizon, estimator=estimator, **kwargs)
        self.selector = selector
