"""GP-UCB on BoTorch: the loop shared by the non-stationary algorithms.

One loop (:class:`GPUCBPolicy`); the four algorithms (WGP-UCB and IGP-UCB in
:mod:`~torch_advbandit.policies.weighted_gp_ucb`, the sliding-window and restarting ones in
:mod:`~torch_advbandit.policies.windowed_gp_ucb`) differ only in which past observations,
with which noise, they hand the model (docs/algorithms.rst §8). Each round the model is a BoTorch
``SingleTaskGP`` built by :func:`~torch_advbandit.models.discounted_gp`, and the next point is
the maximiser of BoTorch's ``UpperConfidenceBound`` over the candidate set by
``optimize_acqf_discrete`` (evaluated in chunks of ``N × 1 × d``, without gradients).
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch
from gpytorch.kernels import Kernel

from .._validation import check_int, check_positive, check_significance, check_unit_interval, check_width
from ..confidence import ConfidenceSettings, igp_beta, weighted_information_gain
from ..discount_selection import AUTO_DISCOUNTS, NewRow, change_point_stats, weighted_stats
from ..factored_gp import CholeskyCache, FactoredGP
from ..kernels import bordered_gram, kernel_diag, kernel_matrix
from ..models import MAX_LOG_AGE_WEIGHT, age_log_weights, discounted_noise, fixed_noise_gp, frozen_kernel
from .adaptation import competed
from .asks import AnyRowsMixin
from .base import Policy
from .change_points import ChangePoints
from .gp_ucb_fit import GPUCBFitMixin
from .gp_ucb_selection import GPUCBSelectionMixin
from .gp_ucb_state import GPUCBStateMixin


class GPUCBPolicy(GPUCBFitMixin, GPUCBSelectionMixin, GPUCBStateMixin, AnyRowsMixin, Policy):
    """The GP-UCB loop shared by the non-stationary algorithms (docs/public_api.rst protocol).

    Round ``t``: hand the model the observations :meth:`training_set` picks, with the ages
    that set their noise ``λ·η^{-age}``; ``x_t = argmax_x μ̃(x) + β_t σ̃(x)`` (BoTorch's
    ``UpperConfidenceBound`` takes ``β_t²``). With no usable observation (the first round, right
    after a restart) ``x_t`` is drawn uniformly with the policy's generator. Rewards are the
    noisy observations; the policy never sees anything else.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: any GPyTorch kernel, e.g. ``ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d))``;
            copied, its hyperparameters fixed unless ``fit_hyperparameters``. With
            ``κ = max_x k(x, x) > 1`` the theory ``β_t`` is that of the kernel ``k/κ`` on the user's
            scale (IGP-UCB: ``R/√κ`` in place of ``R``; WGP-UCB's is unchanged).
        horizon: ``T``, the observations the run is planned for (an initial design's rows count); ``None``
            when unknown: only the defaults that need ``T`` change (``λ``, a window's or a period's length).
        lam: ``λ > 0``, regulariser / noise variance of the newest observation; ``None`` for
            IGP-UCB's ``1 + 2/T`` (``1``, its limit as ``T → ∞``, with ``horizon=None``).
        discount: ``η ∈ (0, 1]``: observation ``s`` rounds old has noise ``λ·η^{-s}``; ``1``
            weighs every observation alike; ``"auto"`` chooses the memory each round by one-step-ahead
            predictive likelihood: a discount of :data:`~torch_advbandit.discount_selection.AUTO_DISCOUNTS`
            or a change point, every row since a recent round (:mod:`~torch_advbandit.discount_selection`,
            :mod:`~torch_advbandit.policies.change_points`; every observation is kept). With
            ``fit_hyperparameters=True`` selections average the memories by their scores
            (:mod:`~torch_advbandit.memory_average`, :meth:`averaged_memories`).
        fit_hyperparameters: refit the kernel's hyperparameters and ``λ`` by maximum weighted
            marginal likelihood (BoTorch's ``fit_gpytorch_mll``, age weights fixed) after every
            ``fit_every``-th observation, from two observations on. Under ``discount="auto"`` the fit weighs
            every row alike (``η = 1``): the chosen discount weighs the posterior only, so a memory that shortens
            does not fit the kernel to a few recent rows; while a change point is in force the rows before and
            since it are two independent GPs sharing the hyperparameters, each standardised by its own statistics
            (:func:`~torch_advbandit.segment_fit.fit_segments`), so the jump is not fitted as noise.
            Each fit starts from ``kernel`` and BoTorch's initial noise, as a new ``SingleTaskGP`` does (``lam``
            is the noise until the first fit), and costs an L-BFGS run of ``O(t³)`` steps (about 0.05–0.3 s at
            ``t = 100``).
        fit_every: observations between fits (``≥ 1``).
        significance: with ``fit_hyperparameters=True``, the level ``α ∈ (0, 0.5)`` of a likelihood-ratio test, on
            every observation, of a change at an unknown round (:mod:`~torch_advbandit.policies.tested_change`):
            where it passes, the model keeps only the rows since the newest accepted change, at ``η = 1`` under
            ``discount="auto"``, under the fixed discount or window otherwise. ``None`` (default): no test.
        time_varying_significance: with ``discount="auto"`` and ``fit_hyperparameters=True``, the level
            ``α ∈ (0, 0.5)`` of the likelihood-ratio test of :class:`~torch_advbandit.TimeVaryingGPUCB`'s fitted
            forgetting rate ``ε`` against ``ε = 0``, run at each selection while the memory holds no change point:
            where it passes, the selection is the UCB of that space-time model on every row
            (:mod:`~torch_advbandit.policies.time_varying_selection`; three more fits a selection). ``None``
            (default): no test.
        standardize: model the outcomes standardised by their age-weighted mean and standard
            deviation (the UCB's argmax is on the user's scale); default: ``fit_hyperparameters``.
        beta: fixed ``β`` (overrides the theory value); ``None`` for the theory value. With
            ``fit_hyperparameters=True`` the theory value grows as the fitted noise shrinks (WGP-UCB's
            ``R/√λ``): 24–78 in a 6-D loop whose fitted noise was ``3·10⁻⁴``, pure exploration; give ``beta``
            there (the drifting benchmark uses 2, BoTorch's ``beta = 4``).
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

    # diagnostics() of the latest selection
    _reported_attributes = ("last_beta", "last_time_varying", "last_held", "last_segment_correlation")

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        lam: float | None = None,
        discount: float | str = 1.0,
        fit_hyperparameters: bool = False,
        fit_every: int = 1,
        significance: float | None = None,
        time_varying_significance: float | None = None,
        standardize: bool | None = None,
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
        self.mean_constant: float | None = None  # the fitted constant prior mean (model units); None: zero
        self.lam = 1.0 + 2.0 / (self.horizon or math.inf) if lam is None else check_positive(lam, "lam")
        self._initial_kernel = self.kernel  # every fit starts here and at BoTorch's initial noise, as a new model
        self.auto_discount = isinstance(discount, str)
        if self.auto_discount and discount != "auto":
            raise ValueError(f"discount must be a number in (0, 1] or 'auto', got {discount!r}")
        self.discount = 1.0 if self.auto_discount else check_unit_interval(discount, "discount")
        for name, flag in (("fit_hyperparameters", fit_hyperparameters), ("standardize", standardize)):
            if flag is not None and not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        self.fit_hyperparameters = fit_hyperparameters
        self.fit_every = check_int(fit_every, "fit_every", minimum=1)
        self.significance = check_significance(significance)
        if significance is not None and not fit_hyperparameters:
            raise ValueError("significance tests a change between fitted models: it needs fit_hyperparameters=True")
        self.time_varying_significance = check_significance(time_varying_significance, "time_varying_significance")
        if time_varying_significance is not None and not (self.auto_discount and fit_hyperparameters):
            raise ValueError(
                "time_varying_significance tests a fitted forgetting rate beside the automatic memory: it needs "
                "discount='auto' and fit_hyperparameters=True"
            )
        self.last_time_varying = float("nan")  # Λ of the latest selection's test (diagnostics only)
        self.last_held = 0.0  # 1 where the latest selection's average yielded to the chosen memory (diagnostics only)
        self.last_segment_correlation = float("nan")  # ρ of the latest selection's segments (diagnostics only)
        self.standardize = fit_hyperparameters if standardize is None else standardize
        self.discount_scores = torch.zeros(len(AUTO_DISCOUNTS), dtype=torch.float64, device="cpu")  # bookkeeping
        self.discount_calibration = torch.ones_like(self.discount_scores)  # c_η, with fitted hyperparameters
        self.change_points, self.since = ChangePoints.none(), 0  # auto: the model keeps rows since ``since``
        self.kernel_scale = float(kernel_diag(self.kernel, self.candidates).max())
        self.beta = None if beta is None else check_width(beta, "beta", allow_zero=False)
        self.beta_scale = check_width(beta_scale, "beta_scale", allow_zero=False)
        self.confidence = ConfidenceSettings(rkhs_bound, noise_bound, delta)
        self.chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
        like = self.candidates
        self.train_X = like[:0].clone()  # observed rows in time order, Tensor[m, d] (any rows, not only candidates)
        self.rewards = torch.empty(0, dtype=like.dtype, device=like.device)
        # K of the past points any future round can still use (history positions ≥ _gram_start):
        # grown by a row a round, trimmed as observations leave every future training set.
        self._gram = torch.empty(0, 0, dtype=like.dtype, device=like.device)
        self._gram_start = 0
        self.last_beta = float("nan")
        self._factors = CholeskyCache()  # derived from the state, never part of it

    # -- what distinguishes the algorithms ---------------------------------------------------------
    def first_position(self, m: int) -> int:
        """The oldest observation handed to the model when the history holds ``m`` (positions ``first … m − 1``).

        All of them for ``discount = 1``; with ``η < 1`` those whose weight ratio ``η^{age}`` is at
        least ``exp(−MAX_LOG_AGE_WEIGHT) = ε²`` (older ones change neither the posterior nor
        ``γ̄_t`` beyond float64 rounding), so a round costs ``O(memory³)`` however long the run.
        Sliding-window and restarting GP-UCB override this and nothing else. Never decreases in ``m``.
        """
        if self.discount == 1.0 or self.auto_discount:
            return 0
        return max(0, m - 1 - math.floor(MAX_LOG_AGE_WEIGHT / math.log(1.0 / self.discount)))

    def training_set(self, m: int | None = None, since: int | None = None) -> torch.Tensor:
        """Positions (into the observation history of ``m`` rows, default all) handed to the model, ``LongTensor[m']``:
        from :meth:`first_position` on, and none before ``since`` (a change point of ``discount="auto"``)."""
        m = self.train_X.shape[0] if m is None else m
        since = self.since if since is None else since
        return torch.arange(max(self.first_position(m), since), m, device=self.train_X.device)

    def theory_beta(self, info_gain: float) -> float:
        """IGP-UCB's ``β = B + (R/√κ)·sqrt(2(γ + 1 + ln(1/δ)))`` ([Chowdhury2017]; ``κ = max k(x, x)``)."""
        c = self.confidence
        scaled = ConfidenceSettings(c.rkhs_bound, c.noise_bound / math.sqrt(max(self.kernel_scale, 1.0)), c.delta)
        return igp_beta(info_gain, confidence=scaled)

    # -- the shared loop -----------------------------------------------------------------------
    def ages(self, positions: torch.Tensor, m: int | None = None) -> torch.Tensor:
        """Age ``m − 1 − s`` of each chosen observation relative to the newest of ``m`` (default: all)."""
        m = self.train_X.shape[0] if m is None else m
        return (m - 1 - positions).to(self.candidates.dtype)

    def information_gain(self, positions: torch.Tensor | None = None) -> float:
        """``½ log det(I + λ⁻¹ U K U)``, ``U = diag(η^{age})``, on the chosen observations (data-dependent γ).

        With ``η < 1`` this is WGP-UCB's double-weighted ``γ̄_t``; with ``η = 1`` the ordinary one
        (:func:`~torch_advbandit.confidence.weighted_information_gain`).
        """
        positions = self.training_set() if positions is None else positions
        if positions.numel() and int(positions.min()) < self._gram_start:
            raise ValueError(f"positions before {self._gram_start} left every future training set")
        K = self._kept_block(positions)
        return weighted_information_gain(K, age_log_weights(self.ages(positions), self.discount), self.lam)

    def _kept_block(self, positions: torch.Tensor) -> torch.Tensor:
        """Kernel matrix of the observations at ``positions`` (all ``≥ _gram_start``): a view for a contiguous run."""
        rows = positions - self._gram_start
        if rows.numel() and int(rows[-1] - rows[0]) + 1 == rows.numel():
            return self._gram[int(rows[0]) : int(rows[-1]) + 1, int(rows[0]) : int(rows[-1]) + 1]
        return self._gram[rows][:, rows]

    def confidence_width(self, model: FactoredGP | None = None) -> float:
        """``β_t`` for the next selection (``beta`` override or theory), times ``beta_scale``.

        With ``η = 1`` and raw outcomes, ``γ_t = ½ log det(I + λ⁻¹K)`` is read off ``model``'s factor
        of ``K + λI`` (:meth:`selection_model`) instead of a factorisation of its own.
        """
        if self.beta is not None:
            return self.beta_scale * self.beta
        m, plain = self.training_set().numel(), self.discount == 1.0 and not self.standardize
        if plain and isinstance(model, FactoredGP) and model.train_X.shape[0] == m:  # its factor is K + λI
            return self.beta_scale * self.theory_beta(model.half_log_det() - 0.5 * m * math.log(self.lam))
        return self.beta_scale * self.theory_beta(self.information_gain())

    def _model_data(self, discount: float | None = None, since: int | None = None):
        """``(positions, X, Y, noise)`` handed to the model (default: of the memory ``(η, since)`` in force), ``Y`` and
        ``noise`` (``Tensor[m]``) on the model's scale; ``None`` without observations."""
        discount, since = (self.discount, self.since) if discount is None else (discount, since)
        positions = self.training_set(since=since)
        if positions.numel() == 0:
            return None
        keep, noise = discounted_noise(self.ages(positions), discount, self.lam)
        positions = positions[keep]
        X, Y, noise = self.train_X[positions], self.rewards[positions], noise.squeeze(-1)
        if self.standardize:
            stats = change_point_stats(self.rewards, since)  # as the memories' predictions do
            mean, std = stats if stats is not None else weighted_stats(Y, (self.lam / noise).log())
            Y, noise = (Y - mean) / std, noise / std**2
        return positions, X, Y, noise

    def model(self):
        """The BoTorch ``SingleTaskGP`` of this round, or ``None`` when no observation is handed over."""
        if (data := self._model_data()) is None:
            return None
        return fixed_noise_gp(data[1], data[2].unsqueeze(-1), data[3].unsqueeze(-1), self.kernel, self.mean_constant)

    def _update(self, index: int, reward: float) -> None:
        self._update_rows(self.candidates[index : index + 1], self.rewards.new_tensor([reward]))

    def _update_rows(self, X: torch.Tensor, Y: torch.Tensor) -> None:
        """Append observations ``(X, Y)`` (``Tensor[k, d]``, ``Tensor[k]``) in order, adapting the discount
        and hyperparameters if asked and updating the kept kernel matrix; everything is computed
        first and assigned together at the end."""
        kernel, lam, discount = self.kernel, self.lam, self.discount
        scores, calibration = self.discount_scores, self.discount_calibration
        points, since = self.change_points, self.since
        train_X, rewards, gram, start = self.train_X, self.rewards, self._gram, self._gram_start
        constant = self.mean_constant
        m0, last = train_X.shape[0], X.shape[0] - 1
        lone = X.shape[0] == 1 or m0 > 0  # False: an initial design (rows observed together before any other)
        for r, (x, y) in enumerate(zip(X.split(1), Y.tolist(), strict=True)):
            # score every discount on each new lone observation before it joins (a batch's rows in order); an
            # initial design says nothing about change over time
            if self.auto_discount and lone:
                k_new, prior = kernel_matrix(kernel, train_X, x).squeeze(-1), float(kernel_diag(kernel, x))
                row = NewRow(gram, k_new, prior, rewards, y, lam, self.standardize, constant or 0.0)
                scores, calibration, points, discount, since = competed(
                    scores, calibration, points, row, fitted=self.fit_hyperparameters, opens=r == 0
                )
            elif self.significance is not None and lone:  # a fixed memory counts them too: the test splits them
                points = replace(points, scored=points.scored + 1)
            train_X, rewards = torch.cat([train_X, x]), torch.cat([rewards, rewards.new_tensor([y])])
            null = None
            if r == last and self.significance is not None:  # once a batch: a tested change overrides an earlier memory
                tested, null = self._tested_since(train_X, rewards, points.scored)
                if tested > since:  # the automatic memory keeps every row since the change; a fixed η discounts them
                    discount, since = (1.0 if self.auto_discount else discount), tested
            fitted = self._fit_due(train_X, rewards, discount, since, m0, null) if r == last else None  # once a batch
            if fitted is not None:
                kernel, lam, constant = fitted
            gram, start = self._grown(train_X, gram, start, kernel)
        scale = self.kernel_scale if kernel is self.kernel else float(kernel_diag(kernel, self.candidates).max())
        self.train_X, self.rewards, self._gram_start, self._gram = train_X, rewards, start, gram
        self.kernel, self.lam, self.kernel_scale, self.mean_constant = kernel, lam, scale, constant
        self.discount, self.discount_scores, self.discount_calibration = discount, scores, calibration
        self.change_points, self.since = points, since

    def _grown(self, train_X, gram, start, kernel):
        """``(gram, start)`` once the newest row of ``train_X`` has joined: the kept kernel matrix trimmed
        to the points a later round can use and grown by a row (recomputed under new hyperparameters)."""
        m = train_X.shape[0]
        first = self.first_position(m)  # no later round needs earlier points
        past = train_X[first:]
        if first == m:  # a restart boundary: no point is needed yet
            return gram[:0, :0], first
        if kernel is not self.kernel or gram.shape[0] != m - 1 - start:  # new hyperparameters: anew
            return kernel_matrix(kernel, past, past), first
        return bordered_gram(gram[first - start :, first - start :], kernel, past), first

    def diagnostics(self) -> dict[str, float]:
        """``beta`` used by the latest selection, ``model_size`` (the observations handed to the model:
        a sliding window's or a restart's cut shows here), ``discount`` (``η`` of the model), ``since``
        (the change point chosen by ``discount="auto"``: the model keeps no row observed before it; 0
        when there is none, and always 0 for a fixed discount, a window or restarts) and ``lam``. With
        ``time_varying_significance``: ``time_varying_statistic``, the latest selection's ``Λ`` of the fitted
        forgetting rate (NaN where it was not tested: warming up, or a change point in force), and
        ``segment_correlation``, the fitted ``ρ`` of the segments before and since the change point where the latest
        selection was on them (:func:`~torch_advbandit.policies.time_varying_selection.segment_correlated_model`;
        NaN elsewhere). With
        ``discount="auto"`` and fitted hyperparameters: ``held``, 1 where the latest selection's average over memories
        yielded to the chosen memory (:func:`~torch_advbandit.memory_average.held_row`), else 0."""
        size = float(self.training_set().numel())
        memory = {"discount": self.discount, "since": float(self.since)}
        out = {"beta": self.last_beta, "model_size": size, **memory, "lam": self.lam}
        if self.time_varying_significance is not None:
            out["time_varying_statistic"] = self.last_time_varying
            out["segment_correlation"] = self.last_segment_correlation
        if self.auto_discount and self.fit_hyperparameters:
            out["held"] = self.last_held
        return out
