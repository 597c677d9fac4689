"""The lower-bound instance of [Iwazaki2026], Sec. 5 (docs/algorithms.rst §9), as an environment."""

from __future__ import annotations

import math

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_generator, check_int, check_positive
from ..kernels import kernel_matrix, prepare_kernel
from .adversarial import random_rkhs_functions
from .base import Environment


class LowerBoundEnvironment(Environment):
    """Problem instance 2 of [Iwazaki2026] App. 13: ``f_t = f + s_t·k(0, ·)`` with ``‖f_t‖_k ≤ B``.

    A stochastic environment every algorithm here must handle ([Iwazaki2026], Sec. 5): a fixed
    ``f`` with ``‖f‖_k ≤ B/2`` (a random kernel expansion as in App. 17, capped at ``B/2``) plus a
    random multiple of the kernel section at the origin. With ``η_t ~ N(0, 1)`` and
    ``τ = sqrt(2 log(2T²))`` the shock is ``s_t = B·η_t/(2τ)`` while ``|η_t| < τ`` — a Gaussian of
    variance ``σ² = B²/(8 log(2T²))`` — and ``sign(η_t)·B/2`` otherwise (the truncation that keeps
    ``‖f_t‖_k ≤ ‖f‖_k + |s_t| ≤ B``, which the proof needs; docs/algorithms.rst §9). The shocks of
    all rounds are drawn at construction, so the sequence is reproducible from the generator and
    independent of the learner (an oblivious environment).

    Args:
        kernel: GPyTorch kernel with ``k(0, 0) ≤ 1``.
        candidates: ``Tensor[n, d]``.
        horizon: ``T ≥ 2``.
        rkhs_bound: ``B`` (``f`` has norm at most ``B/2``).
        num_centres: centres of the expansion of ``f``.
        generator: ``torch.Generator`` on the candidates' device.

    Attributes:
        sigma: ``σ = B/(2τ)``, the standard deviation of the untruncated shock.
        threshold: ``τ = sqrt(2 log(2T²))``.
        shocks: ``Tensor[T]``, the ``s_t``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> env = LowerBoundEnvironment(make_kernel("se", 1), X, 100, generator=torch.Generator().manual_seed(0))
        >>> env.rewards(5, None).shape
        torch.Size([30])
        >>> bool(env.shocks.abs().max() <= 1.0)  # |s_t| ≤ B/2
        True
    """

    def __init__(
        self,
        kernel: Kernel,
        candidates: torch.Tensor,
        horizon: int,
        *,
        rkhs_bound: float = 2.0,
        num_centres: int = 100,
        generator: torch.Generator | None = None,
    ) -> None:
        candidates = check_candidates(candidates)
        kernel = prepare_kernel(kernel, candidates)
        self.horizon = check_int(horizon, "horizon", minimum=2)
        rkhs_bound = check_positive(rkhs_bound, "rkhs_bound")
        self.threshold = math.sqrt(2.0 * math.log(2.0 * self.horizon**2))
        self.sigma = rkhs_bound / (2.0 * self.threshold)
        generator = check_generator(generator, candidates.device)
        self.mean_function = random_rkhs_functions(
            kernel, candidates, num_functions=1, num_centres=num_centres, rkhs_bound=rkhs_bound / 2, generator=generator
        )[0]
        origin = torch.zeros(1, candidates.shape[1], dtype=candidates.dtype, device=candidates.device)
        self.origin_section = kernel_matrix(kernel, candidates, origin).squeeze(-1)
        eta = torch.randn(self.horizon, generator=generator, dtype=candidates.dtype, device=candidates.device)
        self.shocks = torch.where(eta.abs() < self.threshold, self.sigma * eta, torch.sign(eta) * (rkhs_bound / 2.0))

    @property
    def num_candidates(self) -> int:
        return self.mean_function.shape[0]

    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t = f + s_t·k(0, ·)``, ``Tensor[n]``."""
        t = check_int(t, "t", minimum=0)
        if t >= self.horizon:
            raise ValueError(f"t must be < horizon {self.horizon}, got {t}")
        return self.mean_function + self.shocks[t] * self.origin_section
