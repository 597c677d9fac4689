"""Exploration distributions ``π`` mixed into ``P_t`` by the Exp3 family ([Iwazaki2026], Alg. 2, App. 16)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch
from gpytorch.kernels import Kernel

from ._validation import check_candidates, check_generator, check_int, check_positive, check_probs
from .center_selection import RecursiveRLSSelector
from .designs import g_optimal_design
from .embedding import nystrom_embedding
from .kernels import kernel_diag, prepare_kernel
from .linalg import capacitance_solve, greedy_posterior_columns, low_rank_plus_diagonal

EXPLORATION_NAMES = ("mvr", "approx_mvr", "g_optimal", "uniform")


def mvr_sequence(kernel: Kernel, candidates: torch.Tensor, noise: float, length: int) -> torch.Tensor:
    """Maximum variance reduction ([Iwazaki2026], Alg. 2): greedily pick the point of largest posterior variance.

    ``x̃_i = argmax_x σ²(x; x̃_1..x̃_{i−1}, λ)`` with the GP posterior variance of [Iwazaki2026] Eq. 1,
    ``σ²(x; X_i, λ) = k(x,x) − k(x,X_i)ᵀ(K(X_i,X_i) + λI)⁻¹k(x,X_i)``; ties go to the smallest
    index and repeats are allowed. Incremental: the normalised posterior-covariance columns of
    the chosen points are kept (a pivoted Cholesky of ``K(X_i, X_i) + λI``), so the cost is
    ``O(n·N²)`` time and ``O(n·N)`` memory; no ``n × n`` matrix is formed.

    Args:
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        noise: ``λ > 0``.
        length: ``N ≥ 1``, the number of greedy steps (``ceil(T·α)`` in Exp3).

    Returns:
        ``LongTensor[N]`` of candidate indices.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> mvr_sequence(make_kernel("se", 1), X, 1.0, 3).tolist()
        [0, 19, 9]
    """
    kernel, candidates, noise, length = _sequence_inputs(kernel, candidates, noise, length)
    return greedy_posterior_columns(kernel, candidates, noise, length)[0]


def _sequence_inputs(kernel, candidates, noise, length) -> tuple[Kernel, torch.Tensor, float, int]:
    """The checked arguments of the MVR sequences (kernel copied to the candidates' device and dtype)."""
    candidates = check_candidates(candidates)
    noise, length = check_positive(noise, "noise"), check_int(length, "length", minimum=1)
    return prepare_kernel(kernel, candidates), candidates, noise, length


def approx_mvr_sequence(
    kernel: Kernel,
    candidates: torch.Tensor,
    noise: float,
    length: int,
    *,
    delta: float = 0.1,
    generator: torch.Generator | None = None,
    base_constant: float = 192.0,
    oversampling_constant: float = 16.0,
) -> torch.Tensor:
    """Approximate MVR ([Iwazaki2026], Alg. 4, App. 14): MVR with Nyström posterior variances.

    At step ``i`` a dictionary ``S`` of the chosen points ``D = (x̃_1..x̃_{i−1})`` is drawn by
    recursive RLS sampling (Alg. 3; unweighted ``k``, ridge ``λ``), every candidate is embedded
    as ``z(x) = [(SᵀK_D S)^{1/2}]⁺ Sᵀ k_D(x)``, and the next point maximises
    ``σ̃²(x) = (k(x,x) − ‖z(x)‖²) + λ·z(x)ᵀ(Z_iᵀZ_i + λI)⁻¹z(x)`` (``Z_i`` the embedded chosen
    points); ties go to the smallest index. Cost per step ``O(i·s² + n·s²)``.

    While ``i − 1 ≤ base_constant·log(1/δ)`` Alg. 3 returns every chosen point with weight one,
    and then ``σ̃²`` *equals* the exact posterior variance; those steps use the ``O(n)``
    incremental update of :func:`mvr_sequence` (same result, no sampling).

    Args:
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        noise: ``λ > 0``.
        length: ``N ≥ 1``.
        delta, base_constant, oversampling_constant: Alg. 3's parameters.
        generator: ``torch.Generator`` on the candidates' device (for the dictionaries).

    Returns:
        ``LongTensor[N]`` of candidate indices.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> approx_mvr_sequence(make_kernel("se", 1), X, 1.0, 3).tolist()
        [0, 19, 9]
    """
    kernel, candidates, noise, length = _sequence_inputs(kernel, candidates, noise, length)
    generator = check_generator(generator, candidates.device)
    selector = RecursiveRLSSelector(delta, base_constant, oversampling_constant)
    exact_steps = min(length, math.floor(base_constant * math.log(1.0 / delta)) + 1)
    chosen = mvr_sequence(kernel, candidates, noise, exact_steps)
    if exact_steps == length:
        return chosen
    k_diag = kernel_diag(kernel, candidates)
    picks = [chosen]
    for _ in range(length - exact_steps):
        D = torch.cat(picks)
        ones = torch.ones(D.numel(), dtype=candidates.dtype, device=candidates.device)
        sample = selector.select(kernel, candidates[D], noise, ones, generator)
        picks.append(torch.argmax(_nystrom_posterior_variance(kernel, candidates, k_diag, D, sample, noise)).reshape(1))
    return torch.cat(picks)


def _nystrom_posterior_variance(kernel, candidates, k_diag, chosen, sample, noise) -> torch.Tensor:
    """``σ̃²(x)`` of Alg. 4 for every candidate, ``Tensor[n]``."""
    z = nystrom_embedding(kernel, candidates, candidates[chosen[sample.indices]])  # n × r
    op = low_rank_plus_diagonal(z[chosen], noise)  # Z Zᵀ + λI; λ·z(ZᵀZ + λI)⁻¹z = ‖R⁻¹z‖², R Rᵀ = I + ZᵀZ/λ
    return (k_diag - z.square().sum(-1)).clamp_min(0.0) + capacitance_solve(op, z.mT).square().sum(-2)


def exploration_distribution(
    name: str,
    kernel: Kernel,
    candidates: torch.Tensor,
    *,
    noise: float,
    length: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The exploration distribution ``π`` over the candidates, by name.

    - ``"mvr"``: the empirical distribution of :func:`mvr_sequence` ([Iwazaki2026], Alg. 2):
      ``π(x) = #{i : x̃_i = x} / N``.
    - ``"approx_mvr"``: the empirical distribution of :func:`approx_mvr_sequence` (Alg. 4; uses
      ``generator``).
    - ``"g_optimal"``: the kernel-form G-optimal design with ridge ``λ/N`` (= ``λ/(Tα)`` for
      ``N = Tα``; [Iwazaki2026], App. 16), by Frank–Wolfe (:func:`~torch_advbandit.designs.g_optimal_design`).
    - ``"uniform"``: ``π(x) = 1/n`` ([Iwazaki2026], App. 16).

    Args:
        name: one of :data:`EXPLORATION_NAMES`.
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        noise: ``λ`` of the MVR posterior.
        length: ``N = ceil(T·α)``.
        generator: randomness for ``"approx_mvr"``.

    Returns:
        ``Tensor[n]`` summing to one, on the candidates' device and dtype.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> exploration_distribution("uniform", make_kernel("se", 1), X, noise=1.0, length=5).sum()
        tensor(1., dtype=torch.float64)
    """
    candidates = check_candidates(candidates)
    n = candidates.shape[0]
    if name == "uniform":
        check_positive(noise, "noise")
        check_int(length, "length", minimum=1)
        return torch.full((n,), 1.0 / n, dtype=candidates.dtype, device=candidates.device)
    if name == "g_optimal":
        check_positive(noise, "noise")
        return g_optimal_design(kernel, candidates, noise / check_int(length, "length", minimum=1))
    if name in ("mvr", "approx_mvr"):
        if name == "mvr":
            seq = mvr_sequence(kernel, candidates, noise, length)
        else:
            seq = approx_mvr_sequence(kernel, candidates, noise, length, generator=generator)
        return torch.bincount(seq, minlength=n).to(candidates.dtype) / len(seq)
    raise ValueError(f"exploration must be one of {EXPLORATION_NAMES}, got {name!r}")


#: A strategy ``(kernel, candidates, *, noise, length, generator) -> Tensor[n]`` giving ``π``.
ExplorationStrategy = Callable[..., torch.Tensor]


def exploration_strategy(exploration: str | torch.Tensor | ExplorationStrategy) -> ExplorationStrategy:
    """What a policy's ``exploration=`` means: a name of :data:`EXPLORATION_NAMES`, a fixed
    distribution ``π`` (``Tensor[n]``), or a strategy called like :func:`exploration_distribution`
    without the name.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> pi = exploration_strategy("mvr")(make_kernel("se", 1), X, noise=1.0, length=4, generator=None)
        >>> float(pi.sum()), int((pi > 0).sum())
        (1.0, 4)
        >>> fixed = torch.full((20,), 0.05, dtype=torch.float64)
        >>> torch.equal(exploration_strategy(fixed)(None, X, noise=1.0, length=4, generator=None), fixed)
        True
    """
    if isinstance(exploration, str):
        if exploration not in EXPLORATION_NAMES:
            raise ValueError(f"exploration must be one of {EXPLORATION_NAMES}, got {exploration!r}")
        return partial(exploration_distribution, exploration)
    if isinstance(exploration, torch.Tensor):
        fixed = exploration

        def given(kernel, candidates, *, noise, length, generator=None):
            return check_probs(fixed, candidates.shape[0], candidates, "exploration")

        return given
    if not callable(exploration):
        raise TypeError(f"exploration must be a name, a Tensor[n] or a strategy, got {type(exploration).__name__}")
    return exploration


def exploration_length(horizon: int, alpha: float) -> int:
    """``N = ceil(T·α)``, the length of the MVR sequence used by Exp3 ([Iwazaki2026], Alg. 1).

    Example:
        >>> exploration_length(1000, 0.05)
        50
    """
    return max(1, math.ceil(horizon * alpha - 1e-9))
