"""GP-UCB on BoTorch: the shared loop, WGP-UCB (discounted) and IGP-UCB.

One loop (:class:`GPUCBPolicy`); the four algorithms (with the sliding-window and restarting
ones of :mod:`~torch_advbandit.policies.windowed_gp_ucb`) differ only in which past observations,
with which noise, they hand the model (docs/algorithms.rst §8). Each round the model is a BoTorch
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
from gpytorch.kernels import Kernel

from .._validation import check_int, check_positive, check_unit_interval, check_width
from ..confidence import ConfidenceSettings, igp_beta, weighted_information_gain, wgp_beta
from ..kernels import kernel_matrix
from ..models import MAX_LOG_AGE_WEIGHT, age_log_weights, discounted_noise, fixed_noise_gp, frozen_kernel
from .base import Policy


class GPUCBPolicy(Policy):
    """The GP-UCB loop shared by the non-stationary algorithms (docs/public_api.rst protocol).

    Round ``t``: hand the model the observations :meth:`training_set` picks, with the ages
    that set their noise ``λ·η^{-age}``; ``x_t = argmax_x μ̃(x) + β_t σ̃(x)`` (BoTorch's
    ``UpperConfidenceBound`` takes ``β_t²``). With no usable observation (the first round, right
    after a restart) ``x_t`` is drawn uniformly with the policy's generator. Rewards are the
    noisy observations; the policy never sees anything else.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1`` (hyperparameters are frozen).
        horizon: ``T``.
        lam: ``λ > 0``, regulariser / noise variance of the newest observation; ``None`` for
            IGP-UCB's ``1 + 2/T``.
        discount: ``η ∈ (0, 1]``: observation ``s`` rounds old has noise ``λ·η^{-s}``; ``1``
            weighs every observation alike.
        beta: fixed ``β`` (overrides the theory value); ``None`` for the theory value.
        beta_scale: multiplies ``β_t`` (practical implementations shrink it).
        rkhs_bound: ``B``; noise_bound: ``R`` (sub-Gaussian constant); delta: ``δ``
            (:class:`~torch_advbandit.confidence.ConfidenceSettings`).
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

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int,
        *,
        lam: float | None = None,
        discount: float = 1.0,
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
        self.lam = 1.0 + 2.0 / self.horizon if lam is None else check_positive(lam, "lam")
        self.discount = check_unit_interval(discount, "discount")
        self.beta = None if beta is None else check_width(beta, "beta", allow_zero=False)
        self.beta_scale = check_width(beta_scale, "beta_scale", allow_zero=False)
        self.confidence = ConfidenceSettings(rkhs_bound, noise_bound, delta)
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
    def first_position(self, m: int) -> int:
        """The oldest observation handed to the model when the history holds ``m`` (positions ``first … m − 1``).

        All of them for ``discount = 1``; with ``η < 1`` those whose weight ratio ``η^{age}`` is at
        least ``exp(−MAX_LOG_AGE_WEIGHT) = ε²`` (older ones change neither the posterior nor
        ``γ̄_t`` beyond float64 rounding), so a round costs ``O(memory³)`` however long the run.
        Sliding-window and restarting GP-UCB override this and nothing else. Never decreases in ``m``.
        """
        if self.discount == 1.0:
            return 0
        return max(0, m - 1 - math.floor(MAX_LOG_AGE_WEIGHT / math.log(1.0 / self.discount)))

    def training_set(self) -> torch.Tensor:
        """Positions (into the observation history) handed to the model this round, ``LongTensor[m']``."""
        m = self.indices.numel()
        return torch.arange(self.first_position(m), m, device=self.indices.device)

    def theory_beta(self, info_gain: float) -> float:
        """IGP-UCB's ``β = B + R·sqrt(2(γ + 1 + ln(1/δ)))`` ([Chowdhury2017])."""
        return igp_beta(info_gain, confidence=self.confidence)

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

    def _update(self, index: int, reward: float) -> None:
        """Append the observation and grow the kept kernel matrix by one row; assigns only at the end."""
        device = self.indices.device
        indices = torch.cat([self.indices, torch.tensor([index], device=device)])
        rewards = torch.cat([self.rewards, torch.tensor([reward], dtype=self.rewards.dtype, device=device)])
        first = self.first_position(indices.numel())  # no later round needs earlier points
        keep = self._gram[first - self._gram_start :, first - self._gram_start :]
        if first == indices.numel():  # a restart boundary: no point is needed yet
            gram = keep[:0, :0]
        else:
            past = self.candidates[indices[first:]]
            row = kernel_matrix(self.kernel, past[-1:], past).squeeze(0)  # k(x_new, kept points and itself)
            m = keep.shape[0]
            gram = torch.empty(m + 1, m + 1, dtype=self._gram.dtype, device=self._gram.device)
            gram[:m, :m] = keep
            gram[m, :] = row
            gram[:, m] = row
        self.indices, self.rewards, self._gram_start, self._gram = indices, rewards, first, gram

    def diagnostics(self) -> dict[str, float]:
        """``beta`` used by the latest selection and ``model_size`` (observations handed to the model)."""
        return {"beta": self.last_beta, "model_size": float(self.training_set().numel())}

    def _extra_state(self) -> dict[str, Any]:
        return {"indices": self.indices.clone(), "rewards": self.rewards.clone()}

    def _prepare_state(self, state: dict[str, Any]):
        indices, rewards = state.get("indices"), state.get("rewards")
        if not isinstance(indices, torch.Tensor) or not isinstance(rewards, torch.Tensor):
            raise ValueError("state must hold tensors 'indices' and 'rewards'")
        if indices.shape != rewards.shape or indices.ndim != 1 or indices.numel() != state["t"]:
            raise ValueError("state['indices'] and state['rewards'] must both have length state['t']")
        if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= self.n):
            raise ValueError(f"state['indices'] must lie in [0, {self.n})")
        if not bool(torch.isfinite(rewards).all()):
            raise ValueError("state['rewards'] must be finite")
        indices = indices.to(device=self.candidates.device, dtype=torch.long).clone()
        rewards = rewards.to(self.candidates).clone()
        start = self.first_position(indices.numel())
        X = self.candidates[indices[start:]]
        gram = kernel_matrix(self.kernel, X, X) if X.shape[0] else self._gram[:0, :0]

        def install() -> None:
            self.indices, self.rewards = indices, rewards
            self._gram_start, self._gram = start, gram

        return install


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
        lam: ``λ > 0`` (required).
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
        time_uniform: bool = False,
        **kwargs,
    ) -> None:
        if not isinstance(time_uniform, bool):
            raise TypeError(f"time_uniform must be True or False, got {time_uniform!r}")
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

    def __init__(self, candidates: torch.Tensor, kernel: Kernel, horizon: int, **kwargs) -> None:
        if "discount" in kwargs:
            raise TypeError("IGPUCB weighs every observation alike; for a discount use WGPUCB")
        super().__init__(candidates, kernel, horizon, **kwargs)
