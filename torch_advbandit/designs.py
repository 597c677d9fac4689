"""G-optimal experimental designs by Frank–Wolfe ([Iwazaki2026], App. 16; Kiefer–Wolfowitz).

A design ``π`` over the candidates is improved by Frank–Wolfe on the concave objective
``f(π) = log det(Σ_x π(x) ψ(x)ψ(x)ᵀ + cI)``: its gradient is the leverage
``w(x) = ψ(x)ᵀ G(π)⁻¹ ψ(x)``, the linear step moves mass to ``argmax_x w(x)``, and the duality gap
``max_x w(x) − Σ_x π(x)w(x)`` certifies optimality (at the optimum ``max w = Σ π w``, which is
``D`` for ``D`` linearly independent features and ``c = 0``: the Kiefer–Wolfowitz theorem, so the
D-optimal design is also G-optimal).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import torch
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky

from ._validation import check_candidates, check_int, check_positive
from .kernels import kernel_diag, kernel_matrix, prepare_kernel
from .linalg import WeightedGramFactor

StepRule = Callable[[int, torch.Tensor, int], float]


def frank_wolfe_design(
    leverage: Callable[[torch.Tensor], torch.Tensor],
    init: torch.Tensor,
    *,
    step: StepRule | None = None,
    tol: float = 1e-3,
    max_iter: int = 1000,
) -> torch.Tensor:
    """Frank–Wolfe for ``max_π log det G(π)`` on the simplex, stopped on the relative duality gap.

    Args:
        leverage: ``π ↦ w``, both ``Tensor[n]``, the gradient ``w(x) = ψ(x)ᵀG(π)⁻¹ψ(x)``.
        init: the starting design, ``Tensor[n]`` (uniform in the paper).
        step: ``(k, w, j) ↦ γ``; default ``1/(k + 2)`` (docs/algorithms.rst §2).
        tol: stop once ``max w − Σ π w ≤ tol · Σ π w``.
        max_iter: iteration cap; the design reached is returned either way, with a
            ``RuntimeWarning`` stating the duality gap when it is above ``tol``.

    Returns:
        ``Tensor[n]``, the design, summing to one.

    Example:
        >>> N = torch.eye(3, dtype=torch.float64)  # orthonormal features: the D-optimal design is uniform
        >>> init = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64)
        >>> pi = frank_wolfe_design(lambda p: feature_leverage(N, p), init, tol=1e-2)
        >>> bool((pi - 1 / 3).abs().max() < 0.02)
        True
    """
    pi = init.clone()
    for k in range(max_iter):
        w = leverage(pi)
        j = int(torch.argmax(w))
        mean = float(pi @ w)
        if float(w[j]) - mean <= tol * mean:
            return pi
        gamma = 1.0 / (k + 2) if step is None else step(k, w, j)
        pi.mul_(1.0 - gamma)
        pi[j] += gamma
    w = leverage(pi)
    mean = float(pi @ w)
    gap = (float(w.max()) - mean) / mean
    if gap > tol:
        warnings.warn(
            f"Frank–Wolfe design stopped at max_iter={max_iter} with relative duality gap {gap:.3g} > tol {tol:g}: "
            "the design is that far from optimal (raise max_iter for a tighter one)",
            RuntimeWarning,
            stacklevel=2,
        )
    return pi


def feature_leverage(features: torch.Tensor, pi: torch.Tensor, ridge: float = 0.0) -> torch.Tensor:
    """``w(x) = N(x)ᵀ(Σ_y π(y)N(y)N(y)ᵀ + ridge·I)⁻¹N(x)`` for features ``N`` (``Tensor[n, D]``).

    Example:
        >>> N = torch.eye(3, dtype=torch.float64)
        >>> [round(w, 9) for w in feature_leverage(N, torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)).tolist()]
        [2.0, 4.0, 4.0]
    """
    return _leverage_factor(features, pi, ridge)[1]


def _leverage_factor(features: torch.Tensor, pi: torch.Tensor, ridge: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(L, w)``: the Cholesky factor of ``Σ π N Nᵀ + ridge·I`` and the leverage :func:`feature_leverage` returns."""
    Q = features.mT @ (pi.unsqueeze(-1) * features)
    Q.diagonal().add_(ridge)
    L = psd_safe_cholesky(Q)
    return L, torch.linalg.solve_triangular(L, features.mT, upper=False).square().sum(-2)


class _RankOneLeverage:
    """``w(x) = N(x)ᵀM⁻¹N(x)``, ``M = Σ π N Nᵀ``, kept through Frank–Wolfe's rank-one steps (Fedorov–Wynn).

    A step ``π ← (1 − γ)π + γe_k`` makes ``M ← (1 − γ)(M + g·N_kN_kᵀ)``, ``g = γ/(1 − γ)``, so by
    Sherman–Morrison, with ``u = M⁻¹N_k``::

        M⁻¹ ← (M⁻¹ − g·uuᵀ/(1 + g·w_k)) / (1 − γ),   w ← (w − g·(Nu)²/(1 + g·w_k)) / (1 − γ)

    ``O(n·D + D²)`` a step instead of a factorisation's ``O(n·D² + D³)``. The inverse is rebuilt
    from a Cholesky factor every :attr:`REFRESH` steps, when ``1 + g·w_k`` nears zero (an away step
    that empties the design of a needed direction), and before a design is accepted.
    """

    REFRESH = 100

    def __init__(self, features: torch.Tensor, pi: torch.Tensor) -> None:
        self.features = features
        self.refresh(pi)

    def refresh(self, pi: torch.Tensor) -> None:
        L, self.w = _leverage_factor(self.features, pi)
        self.inverse = torch.cholesky_inverse(L)
        self.steps = 0

    @property
    def exact(self) -> bool:
        """Whether :attr:`w` comes from a factorisation of the current design (no step since)."""
        return self.steps == 0

    def step(self, k: int, gamma: float, pi: torch.Tensor) -> None:
        """Follow the step ``π ← (1 − γ)π + γe_k`` (``pi`` is the design after it)."""
        self.steps += 1
        g = gamma / (1.0 - gamma) if gamma < 1.0 else math.inf  # γ = 1: all mass on one point
        denom = 1.0 + g * float(self.w[k])
        if self.steps >= self.REFRESH or not 1e-6 < denom < math.inf:
            self.refresh(pi)
            return
        u = self.inverse @ self.features[k]
        v = self.features @ u
        self.inverse.addr_(u, u, alpha=-g / denom).div_(1.0 - gamma)
        self.w.sub_(v.square_(), alpha=g / denom).div_(1.0 - gamma)


def g_optimal_feature_design(features: torch.Tensor, *, tol: float = 1e-2, max_iter: int = 10_000) -> torch.Tensor:
    """G-optimal design over explicit features (APG-Exp3's ``π_G``, [Takemori2021]), with away steps.

    Unregularised D-optimal design (Kiefer–Wolfowitz: it is also G-optimal) by the Frank–Wolfe
    method with away steps of Todd and Yildirim [Todd2007]: each iteration either moves mass toward
    ``j = argmax_x w(x)`` or away from ``i = argmin_{π(x)>0} w(x)``, whichever gap ``w_j − D`` or
    ``D − w_i`` is larger, with the exact line search of ``log det`` (Fedorov–Wynn),
    ``γ = (w/D − 1)/(w − 1)``, clipped so ``π`` stays a distribution (an away step may drop a point
    from the support). Away steps converge linearly where plain Frank–Wolfe only converges as
    ``1/k``; it stops when ``max_x w(x) ≤ (1 + tol)·D`` and warns with the gap reached if
    ``max_iter`` comes first. The leverage follows each step by a rank-one (Sherman–Morrison)
    update, ``O(n·D + D²)`` an iteration, refactorised every 100 steps and before it stops.

    Args:
        features: ``Tensor[n, D]`` of rank ``D``.
        tol: relative tolerance on ``max_x w(x) / D − 1``.
        max_iter: iteration cap.

    Returns:
        ``Tensor[n]`` summing to one.

    Example:
        >>> F = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
        >>> pi = g_optimal_feature_design(F)
        >>> bool(feature_leverage(F, pi).max() <= 2 * 1.01)
        True
    """
    n, D = features.shape
    pi = torch.full((n,), 1.0 / n, dtype=features.dtype, device=features.device)
    lev = _RankOneLeverage(features, pi)
    for _ in range(max_iter):
        w = lev.w
        j = int(torch.argmax(w))
        w_max = float(w[j])
        if w_max <= (1.0 + tol) * D:
            if lev.exact:
                return pi
            lev.refresh(pi)  # confirm on the leverage of a fresh factorisation
            continue
        support = pi > 0
        i = int(torch.argmin(torch.where(support, w, torch.inf)))
        w_min = float(w[i])
        if w_max - D >= D - w_min:  # toward step: γ ∈ (0, 1)
            gamma = (w_max / D - 1.0) / (w_max - 1.0)
            pi.mul_(1.0 - gamma)
            pi[j] += gamma
            lev.step(j, gamma, pi)
            continue
        # away step: γ ∈ [γ_min, 0), γ_min = −π_i/(1 − π_i) removes i from the support
        gamma_min = -float(pi[i]) / (1.0 - float(pi[i]))
        gamma = gamma_min if w_min <= 1.0 else max(gamma_min, (w_min / D - 1.0) / (w_min - 1.0))
        pi.mul_(1.0 - gamma)
        pi[i] += gamma
        if gamma == gamma_min:
            pi[i] = 0.0
        pi.clamp_(min=0.0)
        lev.step(i, gamma, pi)
    w = feature_leverage(features, pi)
    gap = float(w.max()) / D - 1.0
    if gap > tol:
        warnings.warn(
            f"G-optimal design stopped at max_iter={max_iter} with max leverage (1 + {gap:.3g})·D "
            f"> (1 + tol {tol:g})·D: the design is that far from optimal (raise max_iter for a tighter one)",
            RuntimeWarning,
            stacklevel=2,
        )
    return pi


def g_optimal_design(
    kernel: Kernel,
    candidates: torch.Tensor,
    ridge: float,
    *,
    tol: float = 1e-2,
    max_iter: int = 500,
) -> torch.Tensor:
    """Kernel-form G-optimal exploration design ([Iwazaki2026], App. 16; docs/algorithms.rst §2).

    ``π* ≈ argmin_π max_x ψ(x)ᵀ(Σ_y π(y)ψ(y)ψ(y)ᵀ + cI)⁻¹ψ(x)`` with ``c = λ/(Tα)``, through
    Frank–Wolfe on the regularised log-determinant (its optimum equalises the leverage on its
    support) with ``γ_k = 1/(k+2)``, started uniform, stopped at a relative duality gap ``tol``.
    Each iteration is the kernel form of docs/algorithms.rst §1 with ``P := π``: one Cholesky,
    ``O(n³)``; memory ``O(n²)``.

    Args:
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        ridge: ``c > 0``.

    Returns:
        ``Tensor[n]`` summing to one.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> round(float(g_optimal_design(make_kernel("se", 1), X, 0.1).sum()), 12)
        1.0
    """
    candidates = check_candidates(candidates)
    kernel = prepare_kernel(kernel, candidates)
    ridge = check_positive(ridge, "ridge")
    check_int(max_iter, "max_iter", minimum=1)
    K = kernel_matrix(kernel, candidates)
    k_diag = kernel_diag(kernel, candidates)

    def leverage(pi: torch.Tensor) -> torch.Tensor:
        return WeightedGramFactor.build(K, pi, ridge).diagonal(k_diag, pi)

    init = torch.full((candidates.shape[0],), 1.0 / candidates.shape[0], dtype=K.dtype, device=K.device)
    return frank_wolfe_design(leverage, init, tol=tol, max_iter=max_iter)
