"""The Nyström embedding ``ϕ(x) = [(SᵀKS)^{1/2}]⁺ Sᵀk(x)`` ([Iwazaki2026], Eq. 6), built in one place.

Used by the Nyström estimator (:mod:`~torch_advbandit.estimators.nystrom`) and by approximate MVR
(:func:`~torch_advbandit.exploration.approx_mvr_sequence`). Positive weights on the dictionary do
not change the span of its features, so the embedding is computed from the *unweighted* kernel
matrix of the dictionary points: the same inner products, and accurate when the weights span
hundreds of orders of magnitude.
"""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .center_selection import NystromSample
from .kernels import DEFAULT_BLOCK_ENTRIES, kernel_matrix, reusable_blocks
from .linalg import pivoted_cholesky, symmetric_pinv_sqrt


def nystrom_embedding(
    kernel: Kernel, candidates: torch.Tensor, landmarks: torch.Tensor, *, block_entries: int = DEFAULT_BLOCK_ENTRIES
) -> torch.Tensor:
    """``ϕ(x)`` for every candidate, ``Tensor[n, r]``: ``ϕ(x)ᵀϕ(x') = k_S(x)ᵀK_SS⁺k_S(x')``, the inner
    product of the projections of ``ψ(x)``, ``ψ(x')`` onto the span of the landmarks' features.

    ``landmarks`` (``Tensor[s, d]``) are the dictionary points; the basis comes from
    :func:`dictionary_basis` (``r`` pivots for smooth kernels, ``r ≤ s``). Rows are computed in
    blocks of ``block_entries`` kernel entries: besides the result the memory is one kernel block
    and the ``s × s`` dictionary matrix.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 100, dtype=torch.float64).unsqueeze(-1)
        >>> phi = nystrom_embedding(make_kernel("se", 1), X, X[::5])
        >>> phi.shape[0], phi.shape[1] <= 20
        (100, True)
    """
    S, R = dictionary_basis(kernel, landmarks, block_entries=block_entries)
    return _embed(kernel, candidates, S, R, block_entries)


def _embed(kernel: Kernel, candidates: torch.Tensor, S: torch.Tensor, R: torch.Tensor, block_entries: int):
    """``K(candidates, S)·R`` (``Tensor[n, r]``) in row blocks of about ``block_entries`` kernel entries."""
    n = candidates.shape[0]
    out = torch.empty(n, R.shape[-1], dtype=candidates.dtype, device=candidates.device)
    step = max(1, block_entries // max(1, S.shape[0]))
    block = reusable_blocks(min(step, n), S.shape[0], candidates)
    for start in range(0, n, step):
        rows = candidates[start : start + step]
        out[start : start + step] = kernel_matrix(kernel, rows, S, out=block(rows.shape[0])) @ R
    return out


def nystrom_features(
    kernel: Kernel,
    candidates: torch.Tensor,
    probs: torch.Tensor,
    sample: NystromSample,
    *,
    energy: float = 0.0,
    block_entries: int = DEFAULT_BLOCK_ENTRIES,
) -> torch.Tensor:
    """``ϕ(x) = φ_t(x) / sqrt(P(x))`` for every candidate, ``Tensor[n, r]`` ([Iwazaki2026], Eq. 6), up to a rotation.

    With ``energy = 0`` (the default) ``ϕ`` spans the dictionary's features at float64's numerical
    rank, as below. With ``energy > 0`` it is truncated (:func:`truncated_basis`): ``ϕ(x)`` are the
    coordinates of ``ψ(x)``'s projection onto a subspace ``V`` of that span which leaves out at most
    ``energy`` of the weighted dictionary's features, ``‖(I − Π_V)C_S(I − Π_V)‖ ≤ energy`` with
    ``C_S = Σ_{j∈S} w_j²P_jψ(x_j)ψ(x_j)ᵀ`` (docs/algorithms.rst §5).

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
        >>> X = torch.linspace(0, 1, 100, dtype=torch.float64).unsqueeze(-1)
        >>> P = torch.full((100,), 0.01, dtype=torch.float64)
        >>> S = NystromSample(torch.arange(0, 100, 5), torch.ones(20, dtype=torch.float64))
        >>> phi = nystrom_features(make_kernel("se", 1), X, P, S)
        >>> phi.shape[0], phi.shape[1] <= 20
        (100, True)
    """
    live = probs[sample.indices] > 0  # zero-weight points span nothing in K̃
    idx = sample.indices[live]
    if energy <= 0:
        return nystrom_embedding(kernel, candidates, candidates[idx], block_entries=block_entries)
    scale = sample.weights[live] * probs[idx].sqrt()
    S, R = truncated_basis(kernel, candidates[idx], scale, energy, block_entries=block_entries)
    return _embed(kernel, candidates, S, R, block_entries)


def truncated_basis(
    kernel: Kernel,
    S: torch.Tensor,
    scale: torch.Tensor,
    energy: float,
    *,
    block_entries: int = DEFAULT_BLOCK_ENTRIES,
    max_pivots: int = 512,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(S_J, R)`` with ``ϕ(x) = Rᵀk(S_J, x)``: orthonormal coordinates of ``ψ(x)`` projected onto ``V``.

    ``V`` is a subspace of the span of the dictionary's features that keeps all but ``energy`` of
    the weighted features ``e_jψ(x_j)`` (``e = scale``, ``Tensor[s]``): with ``B = E K_SS E`` their
    Gram matrix and ``C_S = Σ_j e_j²ψ(x_j)ψ(x_j)ᵀ``, ``‖(I − Π_V)C_S(I − Π_V)‖ ≤ energy``.

    - Pivoted Cholesky of ``B`` until the trace of its Schur complement (the Gram matrix of
      ``(I − Π_J)e_jψ(x_j)``, whose norm is the one above) is at most ``energy``; ``V`` is the span
      of the pivots ``J`` and ``ϕ(x) = L_JJ⁻¹E_Jk_J(x)`` (``r`` kernel columns per point).
    - If ``max_pivots`` do not suffice, the eigenvectors ``UΛUᵀ = B`` with ``λ > energy``:
      ``ϕ(x) = Λ^{-1/2}UᵀEk_S(x)``.

    Directions of tiny weight carry tiny energy, so ``B``'s own scaling is the right one here
    (unlike :func:`dictionary_basis`, which keeps every direction to rounding).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> S = torch.linspace(0, 1, 500, dtype=torch.float64).unsqueeze(-1)
        >>> e = torch.full((500,), 500**-0.5, dtype=torch.float64)
        >>> S_J, R = truncated_basis(make_kernel("matern32", 1), S, e, 1e-5)  # τc = 10⁻⁵
        >>> S_J.shape[0], dictionary_basis(make_kernel("matern32", 1), S)[0].shape[0]  # against float64's rank
        (88, 500)
    """
    s = S.shape[0]
    if s == 0:
        return S, S.new_zeros(0, 0)
    B = kernel_matrix(kernel, S, block_entries=block_entries).mul_(scale.unsqueeze(-1)).mul_(scale.unsqueeze(-2))
    factor = pivoted_cholesky(B, energy, min(s, max_pivots), trace=True)
    if factor is not None:
        pivots, L, _ = factor
        R = torch.linalg.solve_triangular(L[pivots], torch.diag(scale[pivots]), upper=False)
        return S[pivots], R.mT
    evals, evecs = torch.linalg.eigh(B)
    keep = evals > energy
    return S, evecs[:, keep].mul_(scale.unsqueeze(-1)).mul_(evals[keep].rsqrt())


def dictionary_basis(
    kernel: Kernel, S: torch.Tensor, *, block_entries: int = DEFAULT_BLOCK_ENTRIES, max_pivots: int = 256
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(S_J, R)`` with ``ϕ(x) = Rᵀk(S_J, x)`` spanning the dictionary's features to rounding.

    Pivoted Cholesky of ``K_SS`` stops once every dictionary feature is within ``s·ε·max k(x,x)``
    (squared) of the span of the pivots ``J`` — the numerical rank, ``r ≪ s`` for smooth kernels —
    and then ``ϕ(x) = L_JJ⁻¹k_J(x)`` reads only ``r`` kernel columns per point. If ``max_pivots``
    pivots do not reach that tolerance (rough kernels) it falls back to the eigendecomposition
    ``R = U Λ^{-1/2}`` of ``K_SS`` over all ``S`` (:func:`~torch_advbandit.linalg.symmetric_pinv_sqrt`,
    same eigenvalue cut). Both give the pseudo-inverse projection of [Iwazaki2026] Eq. 6 at float64's
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
