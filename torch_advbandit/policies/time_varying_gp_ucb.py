"""TV-GP-UCB ([Bogunovic2016]): GP-UCB on a space-time GP whose forgetting rate ``ε`` is fitted to the data.

Unlike the GP-UCB loop of :mod:`~torch_advbandit.policies.gp_ucb`, which forgets by inflating the noise of
old observations, this policy models time: every observation keeps the round it was made, the model is a
BoTorch ``SingleTaskGP`` over ``(x, t/T)`` with the kernel of :func:`~torch_advbandit.spacetime.space_time_kernel`,
and the next point maximises BoTorch's ``UpperConfidenceBound`` at the next round's time
(docs/algorithms.rst §10).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import torch
from gpytorch.kernels import Kernel

from .._validation import check_int, check_positive, check_significance, check_width
from ..confidence import ConfidenceSettings
from ..fitting import fit_or_keep_start, fit_seed
from ..models import frozen_kernel
from ..spacetime import AtTime, epsilon_to_lengthscale, lengthscale_to_epsilon, space_time_kernel
from .asks import AnyRowsMixin
from .base import Policy
from .change_point_test import _log_likelihood, detect_change, markov_p_value, scaled_gp
from .observed_rows import ObservedRowsMixin


class TimeVaryingGPUCB(ObservedRowsMixin, AnyRowsMixin, Policy):
    """TV-GP-UCB ([Bogunovic2016]) with the forgetting rate ``ε`` fitted by marginal likelihood.

    Round ``t``: a ``SingleTaskGP`` on every observation ``(x_s, s/T) → y_s`` with kernel
    ``k_X(x, x')·exp(−|s − s'|/(T·ℓ_τ))`` (``ε = 1 − exp(−2/(T·ℓ_τ))``, eq. [Bogunovic2016] (2)), outcomes
    standardised by BoTorch's ``Standardize``; ``x_t = argmax_x μ_t(x, t/T) + β_t σ_t(x, t/T)`` over the
    candidates by ``optimize_acqf_discrete`` (BoTorch's ``UpperConfidenceBound`` takes ``β_t²``). With
    ``epsilon="fit"`` the time lengthscale is fitted by ``fit_gpytorch_mll`` each round, starting at one
    horizon (``ε = 1 − e^{−2/T}``): a stationary objective fits a long one and keeps every observation, a
    moving one a short one. Every fit starts from ``kernel`` and BoTorch's initial noise, as a new
    ``SingleTaskGP`` does; ``ε = 0`` during a warm-up of ``warmup`` observed rounds. Observations of any rows
    are taken (an initial design, several at once); rows observed together share their round.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: any GPyTorch kernel on ``d`` dimensions (``k_X``), e.g. BoTorch's default
            ``get_covar_module_with_dim_scaled_prior(ard_num_dims=d)`` or
            ``ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d))``; copied.
        horizon: ``T`` (sets the time scale ``τ = t/T``; running past it is allowed and does not warn); ``None``
            when unknown: ``τ = t`` (time in observations) and each fit of ``ℓ_τ`` starts at twice the
            observations so far instead of one horizon.
        epsilon: ``"fit"`` (default) or a fixed forgetting rate ``ε ∈ (0, 1)``.
        warmup: with ``epsilon="fit"``, ``ε = 0`` (no forgetting: the model is a ``SingleTaskGP`` on ``x``
            alone) until observations were made in ``warmup`` distinct rounds (an initial design is one);
            ``ε`` is not identifiable from fewer, and early fits forgot the design (``ℓ_τ`` of ``10⁻⁴``
            horizons at the second round on Hartmann-6).
        significance: with ``epsilon="fit"``, the level ``α ∈ (0, 0.5)`` of a likelihood-ratio test of the fitted
            ``ε`` against ``ε = 0``, run every round: the space-time model is used only where the statistic
            exceeds ``Φ⁻¹(1 − α)²`` (:func:`critical_value`), vanilla BoTorch's model (``ε = 0``) otherwise, so
            a stationary objective is not explored through a spurious time effect (docs/algorithms.rst §10);
            two more fits a round (the ``ε = 0`` model, and one of the two refitted from the other's optimum, so
            that ``Λ`` compares their optima). ``None``: always the fitted ``ε``.
        change_points: with ``significance``, also test at that level, every round, whether the objective changed
            (:mod:`~torch_advbandit.policies.change_point_test`): the rows before and since the likeliest split
            fitted as two independent GPs, against one GP on every row, Bonferroni-corrected over the candidate
            splits. Where it passes and is more significant than the fitted ``ε``, the round's model is
            a ``SingleTaskGP`` on the rows since the newest change (its own ``Standardize``; its fit starts from the
            space kernel fitted on the segment before the change).
            Two to four more fits a round, one more after a change.
        fit_hyperparameters: fit ``kernel``'s hyperparameters, the noise and the constant mean each round
            (``fit_gpytorch_mll``, an L-BFGS run of ``O(t³)`` steps); ``False`` keeps them as given, with
            noise ``lam``, zero mean and raw outcomes (then ``epsilon="fit"`` fits ``ℓ_τ`` alone).
        lam: noise variance when the hyperparameters are not fitted (``> 0``).
        beta: fixed ``β``; ``None`` for [Bogunovic2016]'s ``β_t = sqrt(2 log(n t² π²/(6δ)))`` (finite
            candidate set, ``t`` the round counted from 1).
        delta: ``δ ∈ (0, 1)`` of the theory ``β_t``.
        chunk_size: candidates per batch of the acquisition evaluation.
        generator: ``torch.Generator`` (draws before the first observation and the seeds of ``select(q)``'s
            quasi-MC). A fit that BoTorch restarts samples its priors under the seed ``t``; the global
            generator is left as it was.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
        >>> policy = TimeVaryingGPUCB(X, make_kernel("se", 1, 0.2), 20, beta=2.0,
        ...                           generator=torch.Generator().manual_seed(0))
        >>> policy.observe(X[::8], torch.sin(6 * X[::8]))  # an initial design of 5 rows, round 0
        >>> for _ in range(3):
        ...     i = policy.select(); policy.update(i, float(torch.sin(6 * X[i, 0])))
        >>> sorted(policy.diagnostics())
        ['beta', 'change_statistic', 'epsilon', 'lam', 'lr_statistic', 'model_size', 'since', 'time_lengthscale']
    """

    _reported_attributes = ("last_beta", "_last_fit")  # what diagnostics() reports of the latest selection

    _tuned_for_horizon = False

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        epsilon: float | str = "fit",
        warmup: int = 10,
        significance: float | None = None,
        change_points: bool = False,
        fit_hyperparameters: bool = True,
        lam: float = 0.01,
        beta: float | None = None,
        delta: float = 0.1,
        chunk_size: int = 4096,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(candidates, horizon, generator=generator)
        self.kernel = frozen_kernel(kernel, self.candidates)
        if isinstance(epsilon, str):
            if epsilon != "fit":
                raise ValueError(f"epsilon must be a number in (0, 1) or 'fit', got {epsilon!r}")
        elif isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < 1:
            raise ValueError(f"epsilon must be a number in (0, 1) or 'fit', got {epsilon!r}")
        self.epsilon = epsilon
        self.warmup = check_int(warmup, "warmup", minimum=0)
        check_significance(significance)
        if significance is not None and epsilon != "fit":
            raise ValueError(f"significance tests a fitted ε: it needs epsilon='fit', got epsilon={epsilon!r}")
        self.significance = significance
        for name, value in (("change_points", change_points), ("fit_hyperparameters", fit_hyperparameters)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        if change_points and (significance is None or not fit_hyperparameters):
            message = "change_points is a test of fitted segments: it needs significance and fit_hyperparameters=True"
            raise ValueError(message)
        self.change_points, self.fit_hyperparameters = change_points, fit_hyperparameters
        self.lam = check_positive(lam, "lam")
        self.beta = None if beta is None else check_width(beta, "beta", allow_zero=False)
        self.delta = ConfidenceSettings(delta=delta).delta  # the GP-UCB family's check of δ
        self.chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
        self._init_rows()
        self.last_beta = nan = float("nan")
        self._last_fit = {"time_lengthscale": nan, "lam": nan, "lr_statistic": nan, "since": 0, "change_statistic": nan}

    def warming_up(self) -> bool:
        """Whether ``ε`` is held at 0: ``epsilon="fit"`` and observations in fewer than ``warmup`` distinct rounds."""
        return self.epsilon == "fit" and torch.unique_consecutive(self.row_rounds).numel() < self.warmup

    def initial_lengthscale(self) -> float:
        """``ℓ_τ`` before any fit (in units of :attr:`time_unit`): from ``epsilon``; for ``epsilon="fit"`` one
        horizon (``horizon=None``: twice the observations so far), or ``∞`` (``ε = 0``) while :meth:`warming_up`."""
        if self.epsilon != "fit":
            return epsilon_to_lengthscale(self.epsilon, self.time_unit)
        return math.inf if self.warming_up() else 1.0 if self.horizon is not None else 2.0 * max(self.t, 1)

    @property
    def time_unit(self) -> int:
        """The observations in one unit of ``τ``: the horizon ``T``, or 1 with ``horizon=None``."""
        return self.horizon or 1

    def model(self):
        """The round's model on the space: a fitted ``SingleTaskGP`` over ``(x, τ)`` seen at ``τ = t/T``
        (:class:`~torch_advbandit.spacetime.AtTime`), or ``None`` before any observation. A function of the
        observations and ``t`` alone (the fit's seed is ``t``); its fitted ``ℓ_τ`` and noise are what
        :meth:`diagnostics` reports.

        Example:
            >>> from torch_advbandit.kernels import make_kernel
            >>> X = torch.linspace(0, 1, 10, dtype=torch.float64).unsqueeze(-1)
            >>> policy = TimeVaryingGPUCB(X, make_kernel("se", 1), 5, epsilon=0.2, fit_hyperparameters=False)
            >>> policy.observe(X[:3], torch.ones(3, 1, dtype=torch.float64))
            >>> policy.model().posterior(X).mean.shape
            torch.Size([10, 1])
        """
        if self.train_X.shape[0] == 0:
            return None
        start = self.initial_lengthscale()  # ∞ while warming up
        gp, statistic, change = self._gp(start), float("nan"), None
        if self.significance is not None and math.isfinite(start):  # ε fitted: test it against ε = 0
            critical, fitted = critical_value(self.significance), _log_likelihood(gp)
            null = self._gp(math.inf)
            log_null = _log_likelihood(null)
            statistic = 2.0 * (fitted - log_null)
            if not statistic > critical:  # the alternative's fit may have stopped short: refit from the null's optimum
                again = self._gp(start, start_from=null)
                if (log_again := _log_likelihood(again)) > fitted:
                    gp, fitted, statistic = again, log_again, 2.0 * (log_again - log_null)
            if statistic > critical:  # the null's fit may have stopped short: refit it from the alternative's optimum
                statistic = min(statistic, 2.0 * (fitted - _log_likelihood(self._gp(math.inf, start_from=gp))))
            if self.change_points:
                change = detect_change(self, null, self.significance, log_null)
            if not statistic > critical:
                gp = null  # vanilla BoTorch's model, fitted from its usual start
            markov_wins = gp is not null and markov_p_value(statistic) <= (change.p_value if change else 1.0)
            if change is not None and change.since and not markov_wins:
                gp = change.model  # the rows since the newest change: more significant than the fitted ε
        ell = float(gp.covar_module.time.lengthscale.detach())
        since = change.since if change is not None and gp is change.model else 0
        self._last_fit = {"time_lengthscale": ell, "lam": _noise(gp), "lr_statistic": statistic, "since": since,
                          "change_statistic": change.statistic if change is not None else float("nan")}  # fmt: skip
        return AtTime(gp, self.t / self.time_unit)

    def _gp(self, start: float, start_from=None, rows: slice = slice(None), scale=None, kernel_from=None):
        """The ``SingleTaskGP`` over ``(x, τ)`` of the observations ``rows`` (default every one) with the time
        lengthscale starting at ``start`` (``∞``: ``ε = 0``, not fitted), its other hyperparameters starting at
        ``kernel``'s and BoTorch's initial noise (or at those of ``start_from``, a model of the same kind), fitted
        (see :meth:`model`; a model of one row keeps its start); in eval mode. ``scale``: a fitted outcome
        transform that standardises the outcomes instead of a ``Standardize`` of their own (the change-point test
        scores every segment on one scale). ``kernel_from``: a model whose space kernel's hyperparameters start the
        fit (the rest from BoTorch's start)."""
        from botorch.models import SingleTaskGP
        from botorch.models.transforms import Standardize

        like = self.candidates
        tau = (self.row_rounds[rows].to(like.dtype) / self.time_unit).unsqueeze(-1)
        Z = torch.cat([self.train_X[rows], tau], dim=-1)
        covar = space_time_kernel(self.kernel, start).to(like)
        Y = self.rewards[rows].unsqueeze(-1)
        if scale is not None:
            gp = scaled_gp(Z, Y, covar, scale)
        elif self.fit_hyperparameters:
            gp = SingleTaskGP(Z, Y, covar_module=covar, outcome_transform=Standardize(m=1))
        else:  # fixed noise λ, zero mean, raw outcomes
            gp = SingleTaskGP(Z, Y, torch.full_like(Y, self.lam), covar_module=covar, outcome_transform=None)
        if start_from is not None:
            gp.load_state_dict(start_from.state_dict())
            covar.time.lengthscale = start
        elif kernel_from is not None:  # the space kernel's alone (the outcomes have a scale of their own)
            covar.space.load_state_dict(kernel_from.covar_module.space.state_dict())
        gp.requires_grad_(self.fit_hyperparameters)
        covar.time.raw_lengthscale.requires_grad_(self.epsilon == "fit" and math.isfinite(start))
        if any(p.requires_grad for p in gp.parameters()) and Z.shape[0] >= 2:
            fit_or_keep_start(gp, fit_seed(self.generator, self.t), stacklevel=4)  # restarts under the policy's seed
        gp.eval()
        return gp

    def selection_model(self):
        """What :meth:`select` scores (:meth:`model`)."""
        return self.model()

    def confidence_width(self, model=None) -> float:
        """``β_t``: ``beta``, or ``sqrt(2 log(n t² π²/(6δ)))`` with ``t`` the next round counted from 1."""
        if self.beta is not None:
            return self.beta
        t = self.t + 1
        return math.sqrt(2.0 * math.log(self.n * t * t * math.pi**2 / (6.0 * self.delta)))

    def diagnostics(self) -> dict[str, float]:
        """``beta`` of the latest selection, ``model_size`` (observations), and the latest model's fitted
        ``time_lengthscale`` (``ℓ_τ``, in units of :attr:`time_unit`; ``∞`` during the warm-up), ``epsilon``
        (``1 − exp(−2/(T·ℓ_τ))``) and ``lam`` (noise variance on the outcomes' scale); NaN before the first
        model. With ``significance``: ``lr_statistic`` (``Λ`` of the fitted ``ε``); with ``change_points``:
        ``change_statistic`` (``Λ`` of the likeliest change) and ``since`` (the first row the model keeps; 0: every
        row)."""
        ell = self._last_fit["time_lengthscale"]
        epsilon = float("nan") if math.isnan(ell) else lengthscale_to_epsilon(ell, self.time_unit)  # ℓ_τ = ∞: 0
        size, fit = float(self.train_X.shape[0]), self._last_fit
        return {"beta": self.last_beta, "model_size": size, "time_lengthscale": ell, "epsilon": epsilon,
                "lam": fit["lam"], "lr_statistic": fit["lr_statistic"], "since": float(fit["since"]),
                "change_statistic": fit["change_statistic"]}  # fmt: skip


def critical_value(level: float) -> float:
    """The ``1 − level`` quantile of ``½χ²₀ + ½χ²₁``, ``Φ⁻¹(1 − level)²``: the likelihood-ratio test of a parameter
    on the boundary of its range (``ε = 0``) [SelfLiang1987].

    Example:
        >>> round(critical_value(0.05), 3)  # the 0.9 quantile of χ²₁
        2.706
    """
    return NormalDist().inv_cdf(1.0 - level) ** 2  # a host scalar: no tensor on the candidates' device


def _noise(gp) -> float:
    """The noise variance of ``gp`` on the outcomes' own scale (``Standardize`` undone)."""
    noise = float(gp.likelihood.noise.detach().mean())
    transform = getattr(gp, "outcome_transform", None)
    return noise * float(transform.stdvs.square()) if transform is not None else noise
