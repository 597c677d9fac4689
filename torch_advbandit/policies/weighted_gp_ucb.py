"""WGP-UCB ([Deng2022], Alg. 1: the discounted GP) and IGP-UCB ([Chowdhury2017]): the GP-UCB loop
with every observation, weighted by age or alike; they differ only in ``β_t``."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from ..confidence import wgp_beta
from .gp_ucb import GPUCBPolicy


class WGPUCB(GPUCBPolicy):
    """WGP-UCB ([Deng2022], Alg. 1): weighted GP-UCB with weights ``w_s = η^{-s}`` (discount ``η``).

    Model: :func:`~torch_advbandit.models.discounted_gp` on every past observation (noise
    ``λ·η^{-age}``). ``β_t = B + (R/√λ)·sqrt(2·log(1/δ) + 2·γ̄_t)`` with ``γ̄_t`` the
    double-weighted information gain on the observed points; ``time_uniform=True`` uses
    ``log(T/δ)`` instead of ``log(1/δ)`` (the published correction).

    The other arguments (``candidates``, ``kernel``, ``horizon``, ``beta``, ``beta_scale``,
    ``rkhs_bound``, ``noise_bound``, ``delta``, ``chunk_size``, ``generator``) are those of
    :class:`GPUCBPolicy`.

    Args:
        discount: ``η ∈ (0, 1]`` (required); ``1`` is the unweighted GP (see
            :func:`~torch_advbandit.parameters.nonstationary_discount` for a theory-order value).
        lam: ``λ > 0``; ``None`` for :class:`GPUCBPolicy`'s default (``1 + 2/T``; with
            ``fit_hyperparameters=True`` it is the noise until the first fit only).
        time_uniform: use ``log(T/δ)`` in ``β_t`` (needs a ``horizon``).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 20, discount=0.9, lam=1.0,
        ...                 generator=torch.Generator().manual_seed(0))
        >>> for _ in range(3):
        ...     i = policy.select(); policy.update(i, float(torch.sin(6 * X[i, 0])))
    """

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        discount: float | str,
        lam: float | None = None,
        time_uniform: bool = False,
        **kwargs,
    ) -> None:
        if not isinstance(time_uniform, bool):
            raise TypeError(f"time_uniform must be True or False, got {time_uniform!r}")
        if time_uniform and horizon is None:
            raise ValueError("time_uniform=True uses log(T/δ): it needs a horizon, got horizon=None")
        super().__init__(candidates, kernel, horizon, discount=discount, lam=lam, **kwargs)
        self.time_uniform = time_uniform

    def theory_beta(self, info_gain: float) -> float:
        horizon = self.horizon if self.time_uniform else None
        return wgp_beta(info_gain, lam=self.lam, confidence=self.confidence, horizon=horizon)


class IGPUCB(GPUCBPolicy):
    """IGP-UCB ([Chowdhury2017]): GP-UCB on every observation, ``λ = 1 + 2/T`` by default.

    ``β_t = B + R·sqrt(2(γ_{t−1} + 1 + ln(1/δ)))`` with the data-dependent information gain. The
    arguments are :class:`GPUCBPolicy`'s with ``discount`` fixed at 1.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> policy = IGPUCB(X, make_kernel("se", 1), 20, generator=torch.Generator().manual_seed(0))
        >>> policy.lam == 1 + 2 / 20
        True
    """

    def __init__(self, candidates: torch.Tensor, kernel: Kernel, horizon: int | None, **kwargs) -> None:
        if "discount" in kwargs:
            raise TypeError("IGPUCB weighs every observation alike; for a discount use WGPUCB")
        super().__init__(candidates, kernel, horizon, **kwargs)
