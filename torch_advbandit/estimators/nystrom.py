"""The Nyström kernelized estimator of RLS-kernelized Exp3 ([Iwazaki2026], Eqs. 6–7; docs/algorithms.rst §5).

The embedding ``ϕ`` comes from :mod:`~torch_advbandit.embedding`; ``__all__`` keeps
``nystrom_features``, ``dictionary_basis`` and ``truncated_basis`` importable from here.
"""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_int, check_positive, check_real
from ..center_selection import FixedSelector, LandmarkSelector, NystromSample, RecursiveRLSSelector
from ..embedding import dictionary_basis, nystrom_features, truncated_basis
from ..kernels import DEFAULT_BLOCK_ENTRIES, kernel_diag, prepare_kernel
from ..linalg import capacitance_solve, low_rank_plus_diagonal
from .base import IPSEstimator

__all__ = [
    "DEFAULT_EMBEDDING_TOLERANCE",
    "NystromIPSEstimator",
    "dictionary_basis",
    "nystrom_features",
    "nystrom_ips_estimate",
    "truncated_basis",
]

DEFAULT_EMBEDDING_TOLERANCE = 1e-4
"""``τ``: the embedding may leave out ``τ·c`` of the weighted dictionary's energy (docs/algorithms.rst §5)."""


class NystromIPSEstimator(IPSEstimator):
    """RLS-kernelized Exp3's estimator: a fresh Nyström dictionary each round, then [Iwazaki2026], Eqs. 6–7.

    With ``ϕ(x) = φ_t(x)/sqrt(P(x))`` and ``M_t = Σ_x P(x)ϕ(x)ϕ(x)ᵀ + cI`` (= ``Σ φφᵀ + cI``)::

        f̃_t(x)  = y_t · ϕ(x)ᵀ M_t⁻¹ ϕ(x_t)
        σ̃_t²(x) = (k(x,x) − ‖ϕ(x)‖²)/c + ϕ(x)ᵀ M_t⁻¹ ϕ(x)

    which are [Iwazaki2026] Eqs. 6–7 with the ``1/sqrt(P)`` factors cancelled. Memory ``O(n·r)``;
    never an ``n × n`` matrix.

    ``ϕ`` is truncated to a subspace ``V`` of the dictionary's span that leaves out at most ``τ·c``
    of its weighted features' energy (``τ = embedding_tolerance``, docs/algorithms.rst §5): the
    guarantee of the dictionary, ``K̃ − K̃_S ⪯ c·I``, becomes ``K̃ − K̃_V ⪯ (1 + 2τ)c·I``. Then
    ``r`` follows the weighted kernel's spectrum above ``τc`` (tens to a few hundred directions)
    instead of the dictionary's numerical rank (``r ≈ s`` for Matérn-3/2), and a round costs
    ``O(n·r² + s·r²)`` after the dictionary. ``τ = 0`` keeps every direction to float64's rank
    (Eq. 6 as written; ``O(n·s·r + s³)``): with the full dictionary (``S = I``) both quantities then
    equal the exact estimator to rounding, and with ``τ > 0`` the squared widths stay within a factor
    ``1 + √τ + τ`` of it.

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        ridge: ``c = λ / T``.
        selector: a :class:`~torch_advbandit.center_selection.LandmarkSelector`; default
            :class:`~torch_advbandit.center_selection.RecursiveRLSSelector` with ``δ = 0.1``.
        block_entries: kernel entries evaluated at once (memory bound).
        embedding_tolerance: ``τ ∈ [0, 1)`` (default ``10⁻⁴``).

    Attributes:
        last_sample: the dictionary drawn in the latest round (for diagnostics).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 600, dtype=torch.float64).unsqueeze(-1)
        >>> est = NystromIPSEstimator(make_kernel("se", 1), X, ridge=1e-3)
        >>> P = torch.full((600,), 1 / 600, dtype=torch.float64)
        >>> f_hat, width = est.estimate(P, 3, 0.5, generator=torch.Generator().manual_seed(0))
    """

    def __init__(
        self,
        kernel: Kernel,
        candidates: torch.Tensor,
        ridge: float,
        *,
        selector: LandmarkSelector | None = None,
        block_entries: int = DEFAULT_BLOCK_ENTRIES,
        embedding_tolerance: float = DEFAULT_EMBEDDING_TOLERANCE,
    ) -> None:
        self.candidates = check_candidates(candidates)
        self.kernel = prepare_kernel(kernel, self.candidates)
        self.ridge = check_positive(ridge, "ridge")
        self.embedding_tolerance = check_real(embedding_tolerance, "embedding_tolerance")
        if not 0.0 <= self.embedding_tolerance < 1.0:
            raise ValueError(f"embedding_tolerance must lie in [0, 1), got {self.embedding_tolerance}")
        self.selector = RecursiveRLSSelector() if selector is None else selector
        self.block_entries = check_int(block_entries, "block_entries", minimum=1)
        self.k_diag = kernel_diag(self.kernel, self.candidates)
        self.last_sample: NystromSample | None = None

    def diagnostics(self) -> dict[str, float]:
        """``dictionary_size``: ``s_t`` of the latest round's dictionary (nothing before the first round)."""
        return {} if self.last_sample is None else {"dictionary_size": float(self.last_sample.size)}

    def _estimate(self, probs, index, reward, generator):
        sample = self.selector.select(self.kernel, self.candidates, self.ridge, probs, generator)
        out = self.estimate_with_sample(probs, index, reward, sample)
        self.last_sample = sample  # only once the round succeeded
        return out

    def _estimate_batch(self, probs, indices, rewards, generator):
        sample = self.selector.select(self.kernel, self.candidates, self.ridge, probs, generator)  # one dictionary
        out = self.estimate_with_sample(probs, indices, rewards / indices.numel(), sample)
        self.last_sample = sample
        return out

    def estimate_with_sample(
        self, probs: torch.Tensor, index: int | torch.Tensor, reward: float | torch.Tensor, sample: NystromSample
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """[Iwazaki2026], Eqs. 6–7 for a given dictionary; returns ``(f_hat, width)``, both ``Tensor[n]``.

        ``index``/``reward`` may be ``LongTensor[q]``/``Tensor[q]``: ``f_hat`` is then ``Σ_j f̂(·; x_j, y_j)``.
        """
        energy = self.embedding_tolerance * self.ridge
        blocks = self.block_entries
        phi = nystrom_features(self.kernel, self.candidates, probs, sample, energy=energy, block_entries=blocks)
        residual = (self.k_diag - torch.linalg.vector_norm(phi, dim=-1).square()).clamp_min_(0.0).div_(self.ridge)
        if phi.shape[-1] == 0:
            return torch.zeros_like(self.k_diag), residual.sqrt_()
        # ϕϕᵀ + c·D⁻¹ = D^{-1/2}(K̃_S + cI)D^{-1/2}: its capacitance I + ϕᵀDϕ/c is M/c, M = ϕᵀDϕ + cI
        op = low_rank_plus_diagonal(phi, self.ridge / probs)
        G = capacitance_solve(op, phi.mT).mul_(self.ridge**-0.5)  # r × n, GᵀG = ϕM⁻¹ϕᵀ
        f_hat = G.mT @ (G[:, index] @ reward) if isinstance(index, torch.Tensor) else (G.mT @ G[:, index]) * reward
        width = residual.add_(G.mul_(G).sum(-2)).sqrt_()
        return f_hat, width


def nystrom_ips_estimate(
    kernel: Kernel,
    candidates: torch.Tensor,
    probs: torch.Tensor,
    index: int,
    reward: float,
    ridge: float,
    sample: NystromSample,
    *,
    embedding_tolerance: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Functional form of one Nyström estimate ([Iwazaki2026], Eqs. 6–7) with a given dictionary.

    By default the embedding spans the dictionary at float64's rank (Eq. 6 as written); pass
    ``embedding_tolerance`` for the truncated embedding of :class:`NystromIPSEstimator`.

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        probs: ``P_t``, ``Tensor[n]``.
        index: the drawn candidate ``x_t``.
        reward: ``y_t``.
        ridge: ``c`` (``λ / T``).
        sample: the :class:`~torch_advbandit.center_selection.NystromSample`.
        embedding_tolerance: ``τ ∈ [0, 1)``; ``0`` keeps every direction of the dictionary.

    Returns:
        ``(f_hat, width)``, both ``Tensor[n]``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> from torch_advbandit.center_selection import NystromSample
        >>> X = torch.rand(20, 1, dtype=torch.float64)
        >>> P = torch.full((20,), 0.05, dtype=torch.float64)
        >>> full = NystromSample(torch.arange(20), torch.ones(20, dtype=torch.float64))
        >>> f_hat, width = nystrom_ips_estimate(make_kernel("se", 1), X, P, 0, 1.0, 1e-2, full)
    """
    if not isinstance(sample, NystromSample):
        raise TypeError(f"sample must be a NystromSample, got {type(sample).__name__}")
    estimator = NystromIPSEstimator(
        kernel, candidates, ridge, selector=FixedSelector(sample), embedding_tolerance=embedding_tolerance
    )
    return estimator.estimate(probs, index, reward)
