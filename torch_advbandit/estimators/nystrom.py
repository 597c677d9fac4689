"""The Nyström kernelized estimator of RLS-kernelized Exp3 (seed 1, Eqs. 6–7; ALGORITHMS.md §5)."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky

from .._validation import check_candidates, check_int, check_positive
from ..center_selection import FixedSelector, LandmarkSelector, NystromSample, RecursiveRLSSelector
from ..kernels import DEFAULT_BLOCK_ENTRIES, kernel_diag, kernel_matrix, prepare_kernel
from ..linalg import pivoted_cholesky, symmetric_pinv_sqrt
from .base import IPSEstimator


def nystrom_features(
    kernel: Kernel,
    candidates: torch.Tensor,
    probs: torch.Tensor,
    sample: NystromSample,
    *,
    block_entries: int = DEFAULT_BLOCK_ENTRIES,
) -> torch.Tensor:
    """``ϕ(x) = φ_t(x) / sqrt(P(x))`` for every candidate, ``Tensor[n, r]`` (seed 1, Eq. 6), up to a rotation.

    ``φ_t(x) = [(SᵀK̃S)^{1/2}]⁺ Sᵀk̃(x)`` with ``k̃ = sqrt(P P')·k``, so
    ``ϕ(x)ᵀϕ(x') = k_S(x)ᵀ E(E K_SS E)⁺E k_S(x')`` with ``E = diag(w·sqrt(P_S))``: the inner product
    of the projections of ``ψ(x)``, ``ψ(x')`` onto the span of the dictionary's features. A positive
    scaling ``E`` does not change that span, so the same inner products come from the *unweighted*
    ``K_SS`` of the dictionary points with ``P > 0``: ``ϕ(x) = [K_SS^{1/2}]⁺ k_S(x)``. Every later
    formula uses ``ϕ`` only through inner products, so this is Eq. 6 exactly, and it stays accurate
    when ``P`` spans hundreds of orders of magnitude (the weighted form would drop, as numerically
    zero eigenvalues, the directions of the tiny weights). The basis comes from
    :func:`dictionary_basis` (``r`` pivots for smooth kernels). Rows are computed in blocks of
    ``block_entries`` kernel entries: besides the result (``n × r``) the memory is one kernel block
    and the ``s × s`` dictionary matrix.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> from torch_advbandit.center_selection import NystromSample
        >>> X = torch.linspace(0, 1, 100, dtype=torch.float64).unsqueeze(-1)
        >>> P = torch.full((100,), 0.01, dtype=torch.float64)
        >>> S = NystromSample(torch.arange(0, 100, 5), torch.ones(20, dtype=torch.float64))
        >>> phi = nystrom_features(make_kernel("se", 1), X, P, S)
        >>> phi.shape[0], phi.shape[1] <= 20
        (100, True)
    """
    idx = sample.indices[probs[sample.indices] > 0]  # zero-weight points span nothing in K̃
    S, R = dictionary_basis(kernel, candidates[idx], block_entries=block_entries)
    n = candidates.shape[0]
    out = torch.empty(n, R.shape[-1], dtype=candidates.dtype, device=candidates.device)
    step = max(1, block_entries // max(1, S.shape[0]))
    for start in range(0, n, step):
        out[start : start + step] = kernel_matrix(kernel, candidates[start : start + step], S) @ R
    return out


def dictionary_basis(
    kernel: Kernel, S: torch.Tensor, *, block_entries: int = DEFAULT_BLOCK_ENTRIES, max_pivots: int = 256
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(S_J, R)`` with ``ϕ(x) = Rᵀk(S_J, x)`` spanning the dictionary's features to rounding.

    Pivoted Cholesky of ``K_SS`` stops once every dictionary feature is within ``s·ε·max k(x,x)``
    (squared) of the span of the pivots ``J`` — the numerical rank, ``r ≪ s`` for smooth kernels —
    and then ``ϕ(x) = L_JJ⁻¹k_J(x)`` reads only ``r`` kernel columns per point. If ``max_pivots``
    pivots do not reach that tolerance (rough kernels) it falls back to the eigendecomposition
    ``R = U Λ^{-1/2}`` of ``K_SS`` over all ``S`` (:func:`~torch_advbandit.linalg.symmetric_pinv_sqrt`,
    same eigenvalue cut). Both give the pseudo-inverse projection of seed Eq. 6 at float64's
    numerical rank.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> S = torch.linspace(0, 1, 500, dtype=torch.float64).unsqueeze(-1)
        >>> S_J, R = dictionary_basis(make_kernel("se", 1), S)
        >>> S_J.shape[0] < 30, R.shape[0] == R.shape[1]
        (True, True)
    """
    s = S.shape[0]
    if s == 0:
        return S, S.new_zeros(0, 0)
    K_SS = kernel_matrix(kernel, S, block_entries=block_entries)
    tol = s * torch.finfo(S.dtype).eps * float(K_SS.diagonal().max())
    factor = pivoted_cholesky(K_SS, tol, min(s, max_pivots))
    if factor is not None:
        pivots, L, _ = factor
        L_JJ = L[pivots]  # lower triangular: row k of the Newton basis vanishes after pivot k
        R = torch.linalg.solve_triangular(L_JJ, torch.eye(L_JJ.shape[0], dtype=S.dtype, device=S.device), upper=False)
        return S[pivots], R.mT
    return S, symmetric_pinv_sqrt(K_SS)


class NystromIPSEstimator(IPSEstimator):
    """RLS-kernelized Exp3's estimator: a fresh Nyström dictionary each round, then seed 1, Eqs. 6–7.

    With ``ϕ(x) = φ_t(x)/sqrt(P(x))`` and ``M_t = Σ_x P(x)ϕ(x)ϕ(x)ᵀ + cI`` (= ``Σ φφᵀ + cI``)::

        f̃_t(x)  = y_t · ϕ(x)ᵀ M_t⁻¹ ϕ(x_t)
        σ̃_t²(x) = (k(x,x) − ‖ϕ(x)‖²)/c + ϕ(x)ᵀ M_t⁻¹ ϕ(x)

    which are seed Eqs. 6–7 with the ``1/sqrt(P)`` factors cancelled. Cost ``O(n·s² + s³)`` per
    round, memory ``O(n·s)``; never an ``n × n`` matrix. With the full dictionary (``S = I``)
    both equal the exact estimator to rounding.

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        ridge: ``c = λ / T``.
        selector: a :class:`~torch_advbandit.center_selection.LandmarkSelector`; default
            :class:`~torch_advbandit.center_selection.RecursiveRLSSelector` with ``δ = 0.1``.

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
    ) -> None:
        self.candidates = check_candidates(candidates)
        self.kernel = prepare_kernel(kernel, self.candidates)
        self.ridge = check_positive(ridge, "ridge")
        self.selector = RecursiveRLSSelector() if selector is None else selector
        self.block_entries = check_int(block_entries, "block_entries", minimum=1)
        self.k_diag = kernel_diag(self.kernel, self.candidates)
        self.last_sample: NystromSample | None = None

    def diagnostics(self) -> dict[str, float]:
        """``dictionary_size``: ``s_t`` of the latest round's dictionary (nothing before the first round)."""
        return {} if self.last_sample is None else {"dictionary_size": float(self.last_sample.size)}

    def _estimate(self, probs, index, reward, generator):
        sample = self.selector.select(self.kernel, self.candidates, self.ridge, probs, generator)
        self.last_sample = sample
        return self.estimate_with_sample(probs, index, reward, sample)

    def _estimate_batch(self, probs, indices, rewards, generator):
        sample = self.selector.select(self.kernel, self.candidates, self.ridge, probs, generator)  # one dictionary
        self.last_sample = sample
        return self.estimate_with_sample(probs, indices, rewards / indices.numel(), sample)

    def estimate_with_sample(
        self, probs: torch.Tensor, index: int | torch.Tensor, reward: float | torch.Tensor, sample: NystromSample
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Seed 1, Eqs. 6–7 for a given dictionary; returns ``(f_hat, width)``, both ``Tensor[n]``.

        ``index``/``reward`` may be ``LongTensor[q]``/``Tensor[q]``: ``f_hat`` is then ``Σ_j f̂(·; x_j, y_j)``.
        """
        phi = nystrom_features(self.kernel, self.candidates, probs, sample, block_entries=self.block_entries)
        residual = (self.k_diag - torch.linalg.vector_norm(phi, dim=-1).square()).clamp_min_(0.0).div_(self.ridge)
        if phi.shape[-1] == 0:
            return torch.zeros_like(self.k_diag), residual.sqrt_()
        weighted = phi * probs.sqrt().unsqueeze(-1)
        M = weighted.mT @ weighted
        del weighted
        M.diagonal().add_(self.ridge)
        G = torch.linalg.solve_triangular(psd_safe_cholesky(M), phi.mT, upper=False)  # r × n
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
) -> tuple[torch.Tensor, torch.Tensor]:
    """Functional form of one Nyström estimate (seed 1, Eqs. 6–7) with a given dictionary.

    Args:
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        probs: ``P_t``, ``Tensor[n]``.
        index: the drawn candidate ``x_t``.
        reward: ``y_t``.
        ridge: ``c`` (``λ / T``).
        sample: the :class:`~torch_advbandit.center_selection.NystromSample`.

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
    return NystromIPSEstimator(kernel, candidates, ridge, selector=FixedSelector(sample)).estimate(probs, index, reward)
