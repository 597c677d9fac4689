"""Non-stationary GP-UCB on BoTorch: WGP-UCB, IGP-UCB, sliding-window and restarting GP-UCB.

One loop (:class:`GPUCBPolicy`); the four algorithms differ only in which past observations,
with which noise, they hand the model (ALGORITHMS.md §8). Each round the model is a BoTorch
``SingleTaskGP`` built by :func:`~torch_advbandit.models.discounted_gp`, and the next point is
the maximiser of BoTorch's ``UpperConfidenceBound`` over the candidate set by
``optimize_acqf_discrete`` (evaluated in chunks of ``N × 1 × d``, without gradients).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.acquisition import UpperConfidenceBound
from botorch.optim import optimize_acqf_discrete
from gpytorch.kernels import Kernel, MaternKernel, RBFKernel, ScaleKernel

from .._validation import check_int, check_positive, check_unit_interval
from ..confidence import igp_beta, weighted_information_gain, wgp_beta
from ..kernels import kernel_matrix
from ..models import MAX_LOG_AGE_WEIGHT, age_log_weights, discounted_noise, fixed_noise_gp, frozen_kernel
from ..parameters import nonstationary_memory
from .base import Policy, check_hyperparameters


def kernel_name_of(kernel: Kernel) -> str | None:
    """``"se"``, ``"matern52"`` or ``"matern32"`` for those GPyTorch kernels (also inside a ``ScaleKernel``).

    Example:
        >>> from gpytorch.kernels import MaternKernel, ScaleKernel
        >>> kernel_name_of(ScaleKernel(MaternKernel(nu=1.5))), kernel_name_of(MaternKernel(nu=0.5))
        ('matern32', None)
    """
    base = kernel.base_kernel if isinstance(kernel, ScaleKernel) else kernel
    if isinstance(base, RBFKernel):
        return "se"
    if isinstance(base, MaternKernel):
        return {2.5: "matern52", 1.5: "matern32"}.get(float(base.nu))
    return None


class GPUCBPolicy(Policy):
    """The GP-UCB loop shared by the non-stationary algorithms (docs/API.md protocol).

    Round ``t``: hand the model the observations :meth:`training_set` picks, with the ages
    that set their noise ``λ·η^{-age}``; ``x_t = argmax_x μ̃(x) + β_t σ̃(x)`` (BoTorch's
    ``UpperConfidenceBound`` takes ``β_t²``). With no usable observation (the first round, right
    after a restart) ``x_t`` is drawn uniformly with the policy's generator. Rewards are the
    noisy observations; the policy never sees anything else.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1`` (hyperparameters are frozen).
        horizon: ``T``.
        lam: ``λ > 0``, regulariser / noise variance of the newest observation.
        beta: fixed ``β`` (overrides the theory value); ``None`` for the theory value.
        beta_scale: multiplies ``β_t`` (practical implementations shrink it).
        rkhs_bound: ``B``; noise_bound: ``R`` (sub-Gaussian constant); delta: ``δ``.
        chunk_size: candidates per batch of the acquisition evaluation.
        generator: ``torch.Generator`` (first-round and post-restart draws).

    Example:
        >>> from torch_advbandit import SlidingWindowGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> policy = SlidingWindowGPUCB(X, make_kernel("se", 1, 0.2), 20, lam=0.0025, window=10)
        >>> isinstance(policy, GPUCBPolicy)
        True
        >>> policy.update(policy.select(), 0.4)
    """

    discount: float = 1.0

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int,
        *,
        lam: float,
        beta: float | None = None,
        beta_scale: float = 1.0,
        rkhs_bound: float = 2.0,
        noise_bound: float = 0.05,
        delta: float = 0.1,
        chunk_size: int = 4096,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(candidates, horizon, generator=generator)
        self.kernel = frozen_kernel(kernel, self.candidates)
        self.lam = check_positive(lam, "lam")
        self.beta = None if beta is None else check_positive(beta, "beta")
        self.beta_scale = check_positive(beta_scale, "beta_scale")
        self.rkhs_bound = check_positive(rkhs_bound, "rkhs_bound")
        self.noise_bound = check_positive(noise_bound, "noise_bound")
        if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        self.delta = float(delta)
        self.chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
        like = self.candidates
        self.indices = torch.empty(0, dtype=torch.long, device=like.device)
        self.rewards = torch.empty(0, dtype=like.dtype, device=like.device)
        # K of the past points any future round can still use (history positions ≥ _gram_start):
        # grown by a row a round, trimmed as observations leave every future training set.
        self._gram = torch.empty(0, 0, dtype=like.dtype, device=like.device)
        self._gram_start = 0
        self.last_beta = float("nan")

    # -- what distinguishes the algorithms ---------------------------------------------------------
    def training_set(self) -> torch.Tensor:
        """Positions (into the observation history) handed to the model.

        All of them for ``discount = 1``; with ``η < 1`` those whose weight ratio ``η^{age}`` is at
        least ``exp(−MAX_LOG_AGE_WEIGHT) = ε²`` (older ones change neither the posterior nor
        ``γ̄_t`` beyond float64 rounding), so a round costs ``O(memory³)`` however long the run.
        """
        m = self.indices.numel()
        first = 0
        if self.discount < 1.0:
            first = max(0, m - 1 - math.floor(MAX_LOG_AGE_WEIGHT / math.log(1.0 / self.discount)))
        return torch.arange(first, m, device=self.indices.device)

    def theory_beta(self, info_gain: float) -> float:
        """IGP-UCB's ``β = B + R·sqrt(2(γ + 1 + ln(1/δ)))`` (Chowdhury & Gopalan 2017)."""
        return igp_beta(info_gain, rkhs_bound=self.rkhs_bound, noise_bound=self.noise_bound, delta=self.delta)

    # -- the shared loop -----------------------------------------------------------------------
    def ages(self, positions: torch.Tensor) -> torch.Tensor:
        """Age ``t − 1 − s`` of each chosen observation relative to the newest one."""
        return (self.indices.numel() - 1 - positions).to(self.candidates.dtype)

    def information_gain(self, positions: torch.Tensor | None = None) -> float:
        """``½ log det(I + λ⁻¹ U K U)``, ``U = diag(η^{age})``, on the chosen observations (data-dependent γ).

        With ``η < 1`` this is WGP-UCB's double-weighted ``γ̄_t``; with ``η = 1`` the ordinary one
        (:func:`~torch_advbandit.confidence.weighted_information_gain`).
        """
        positions = self.training_set() if positions is None else positions
        if positions.numel() and int(positions.min()) < self._gram_start:
            raise ValueError(f"positions before {self._gram_start} left every future training set")
        rows = positions - self._gram_start
        K = self._gram[rows][:, rows]
        return weighted_information_gain(K, age_log_weights(self.ages(positions), self.discount), self.lam)

    def confidence_width(self) -> float:
        """``β_t`` for the next selection (``beta`` override or theory), times ``beta_scale``."""
        base = self.beta if self.beta is not None else self.theory_beta(self.information_gain())
        return self.beta_scale * base

    def model(self):
        """The BoTorch ``SingleTaskGP`` of this round, or ``None`` when no observation is handed over."""
        positions = self.training_set()
        if positions.numel() == 0:
            return None
        keep, noise = discounted_noise(self.ages(positions), self.discount, self.lam)
        positions = positions[keep]
        X = self.candidates[self.indices[positions]]
        return fixed_noise_gp(X, self.rewards[positions].unsqueeze(-1), noise, self.kernel)

    def _draw(self) -> int:
        model = self.model()
        if model is None:
            self.last_beta = float("nan")
            return int(torch.randint(self.n, (), generator=self.generator, device=self.candidates.device))
        beta = self.confidence_width()
        self.last_beta = beta
        acqf = UpperConfidenceBound(model, beta=beta**2)
        with torch.no_grad():
            best, _ = optimize_acqf_discrete(acqf, q=1, choices=self.candidates, max_batch_size=self.chunk_size)
        hits = (self.candidates == best.to(self.candidates)).all(-1).nonzero()
        return int(hits[0, 0])

    def _first_needed(self) -> int:
        """The earliest history position in this round's training set (all positions if it is empty)."""
        positions = self.training_set()
        return int(positions[0]) if positions.numel() else self.indices.numel()

    def _update(self, index: int, reward: float) -> None:
        indices = torch.cat([self.indices, torch.tensor([index], device=self.indices.device)])
        rewards = torch.cat(
            [self.rewards, torch.tensor([reward], dtype=self.rewards.dtype, device=self.rewards.device)]
        )
        self.indices, self.rewards = indices, rewards
        first = self._first_needed()  # never decreases: no later round needs earlier points
        keep = self._gram[first - self._gram_start :, first - self._gram_start :]
        self._gram_start = first
        if first == indices.numel():  # a restart boundary: no point is needed yet
            self._gram = keep[:0, :0]
            return
        past = self.candidates[indices[first:]]
        row = kernel_matrix(self.kernel, past[-1:], past).squeeze(0)  # k(x_new, kept points and itself)
        m = keep.shape[0]
        gram = torch.empty(m + 1, m + 1, dtype=self._gram.dtype, device=self._gram.device)
        gram[:m, :m] = keep
        gram[m, :] = row
        gram[:, m] = row
        self._gram = gram

    def diagnostics(self) -> dict[str, float]:
        """``beta`` used by the latest selection and ``model_size`` (observations handed to the model)."""
        return {"beta": self.last_beta, "model_size": float(self.training_set().numel())}

    def hyperparameters(self) -> dict[str, Any]:
        return {
            "horizon": self.horizon,
            "lam": self.lam,
            "beta": self.beta,
            "beta_scale": self.beta_scale,
            "rkhs_bound": self.rkhs_bound,
            "noise_bound": self.noise_bound,
            "delta": self.delta,
            "discount": self.discount,
        }

    def _extra_state(self) -> dict[str, Any]:
        return {
            "hyperparameters": self.hyperparameters(),
            "indices": self.indices.clone(),
            "rewards": self.rewards.clone(),
        }

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        check_hyperparameters(state, self.hyperparameters())
        indices, rewards = state.get("indices"), state.get("rewards")
        if not isinstance(indices, torch.Tensor) or not isinstance(rewards, torch.Tensor):
            raise ValueError("state must hold tensors 'indices' and 'rewards'")
        if indices.shape != rewards.shape or indices.ndim != 1 or indices.numel() != state["t"]:
            raise ValueError("state['indices'] and state['rewards'] must both have length state['t']")
        if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= self.n):
            raise ValueError(f"state['indices'] must lie in [0, {self.n})")
        if not bool(torch.isfinite(rewards).all()):
            raise ValueError("state['rewards'] must be finite")
        indices = indices.to(device=self.candidates.device, dtype=torch.long)
        self.indices = indices.clone()
        self.rewards = rewards.to(self.candidates).clone()
        self._gram_start = self._first_needed()
        X = self.candidates[indices[self._gram_start :]]
        self._gram = kernel_matrix(self.kernel, X, X) if X.shape[0] else self._gram[:0, :0]


class WGPUCB(GPUCBPolicy):
    """WGP-UCB (seed 2, Alg. 1): weighted GP-UCB with weights ``w_s = η^{-s}`` (discount ``η``).

    Model: :func:`~torch_advbandit.models.discounted_gp` on every past observation (noise
    ``λ·η^{-age}``). ``β_t = B + (R/√λ)·sqrt(2·log(1/δ) + 2·γ̄_t)`` with ``γ̄_t`` the
    double-weighted information gain on the observed points; ``time_uniform=True`` uses
    ``log(T/δ)`` instead of ``log(1/δ)`` (the published correction).

    The other arguments (``candidates``, ``kernel``, ``horizon``, ``lam``, ``beta``,
    ``beta_scale``, ``rkhs_bound``, ``noise_bound``, ``delta``, ``chunk_size``, ``generator``) are
    those of :class:`GPUCBPolicy`.

    Args:
        discount: ``η ∈ (0, 1]``; ``1`` is the unweighted GP (see
            :func:`~torch_advbandit.parameters.nonstationary_discount` for a theory-order value).
        time_uniform: use ``log(T/δ)`` in ``β_t``.

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
        horizon: int,
        *,
        discount: float,
        lam: float,
        beta: float | None = None,
        beta_scale: float = 1.0,
        rkhs_bound: float = 2.0,
        noise_bound: float = 0.05,
        delta: float = 0.1,
        time_uniform: bool = False,
        chunk_size: int = 4096,
        generator: torch.Generator | None = None,
    ) -> None:
        self.discount = check_unit_interval(discount, "discount")
        self.time_uniform = bool(time_uniform)
        super().__init__(
            candidates,
            kernel,
            horizon,
            lam=lam,
            beta=beta,
            beta_scale=beta_scale,
            rkhs_bound=rkhs_bound,
            noise_bound=noise_bound,
            delta=delta,
            chunk_size=chunk_size,
            generator=generator,
        )

    def theory_beta(self, info_gain: float) -> float:
        return wgp_beta(
            info_gain,
            lam=self.lam,
            rkhs_bound=self.rkhs_bound,
            noise_bound=self.noise_bound,
            delta=self.delta,
            horizon=self.horizon if self.time_uniform else None,
        )

    def hyperparameters(self) -> dict[str, Any]:
        return {**super().hyperparameters(), "time_uniform": self.time_uniform}


class IGPUCB(GPUCBPolicy):
    """IGP-UCB (Chowdhury & Gopalan 2017): GP-UCB on every observation, ``λ = 1 + 2/T`` by default.

    ``β_t = B + R·sqrt(2(γ_{t−1} + 1 + ln(1/δ)))`` with the data-dependent information gain.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> policy = IGPUCB(X, make_kernel("se", 1), 20, generator=torch.Generator().manual_seed(0))
        >>> policy.lam == 1 + 2 / 20
        True
    """

    def __init__(self, candidates: torch.Tensor, kernel: Kernel, horizon: int, *, lam: float | None = None, **kwargs):
        horizon = check_int(horizon, "horizon", minimum=1)
        super().__init__(candidates, kernel, horizon, lam=1.0 + 2.0 / horizon if lam is None else lam, **kwargs)


class _ForgettingGPUCB(GPUCBPolicy):
    """GP-UCB that forgets by a memory length: ``λ = 1 + 2/T`` and IGP-UCB's ``β_t`` by default.

    ``memory`` (the window or the restart period) defaults to ``⌈γ̄_T^{1/4}(T/B_T)^{1/2}⌉``
    (:func:`~torch_advbandit.parameters.nonstationary_memory`; SE and Matérn kernels only).
    """

    memory_name = "memory"

    def __init__(self, candidates, kernel, horizon, memory, variation_budget, lam, kwargs) -> None:
        horizon = check_int(horizon, "horizon", minimum=1)
        if memory is None:
            name = kernel_name_of(kernel)
            if name is None or horizon < 3:
                raise ValueError(
                    f"give {self.memory_name} explicitly: the theory default needs an SE/Matérn kernel and horizon ≥ 3"
                )
            memory = nonstationary_memory(name, horizon, candidates.shape[-1], variation_budget=variation_budget)
        self.memory = check_int(memory, self.memory_name, minimum=1)
        super().__init__(candidates, kernel, horizon, lam=1.0 + 2.0 / horizon if lam is None else lam, **kwargs)

    def hyperparameters(self) -> dict[str, Any]:
        return {**super().hyperparameters(), self.memory_name: self.memory}


class SlidingWindowGPUCB(_ForgettingGPUCB):
    """SW-GP-UCB (Zhou & Shroff 2021): GP-UCB on the last ``window`` observations.

    ``window`` defaults to ``⌈γ̄_T^{1/4}(T/B_T)^{1/2}⌉``
    (:func:`~torch_advbandit.parameters.nonstationary_memory`, SE/Matérn kernels); ``λ = 1 + 2/T``
    and IGP-UCB's ``β_t`` on the window's data by default; other arguments as :class:`GPUCBPolicy`.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> SlidingWindowGPUCB(X, make_kernel("se", 1), 500).window
        48
    """

    memory_name = "window"

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int,
        *,
        window: int | None = None,
        variation_budget: float = 1.0,
        lam: float | None = None,
        **kwargs,
    ):
        super().__init__(candidates, kernel, horizon, window, variation_budget, lam, kwargs)

    @property
    def window(self) -> int:
        return self.memory

    def training_set(self) -> torch.Tensor:
        m = self.indices.numel()
        return torch.arange(max(0, m - self.memory), m, device=self.indices.device)


class RestartingGPUCB(_ForgettingGPUCB):
    """R-GP-UCB (Zhou & Shroff 2021): GP-UCB restarted every ``period`` rounds.

    Rounds ``kH, …, (k+1)H − 1`` see only the observations made since round ``kH``; ``period``
    defaults as :class:`SlidingWindowGPUCB`'s window.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> RestartingGPUCB(X, make_kernel("se", 1), 500, period=100).period
        100
    """

    memory_name = "period"

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int,
        *,
        period: int | None = None,
        variation_budget: float = 1.0,
        lam: float | None = None,
        **kwargs,
    ):
        super().__init__(candidates, kernel, horizon, period, variation_budget, lam, kwargs)

    @property
    def period(self) -> int:
        return self.memory

    def training_set(self) -> torch.Tensor:
        m = self.indices.numel()
        return torch.arange((m // self.memory) * self.memory, m, device=self.indices.device)
