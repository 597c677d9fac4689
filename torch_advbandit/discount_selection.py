"""Choosing the memory online: the discounts of ``discount="auto"`` and their scores (docs/algorithms.rst §8).

Before each observation ``y_t`` joins the history, every discount ``η`` of a grid that includes
``1`` (no forgetting) predicts it from the weighted GP with discount ``η`` on the observations so
far: ``p_η(y) = (1 − ε)·N(y; μ̃_η, c_η·v_η) + ε·N(y; μ̃_η, W·c_η·v_η)``, ``v_η = σ̃²_η(x_t) + λ``, a
Gaussian with a broad component (:data:`OUTLIER_PROBABILITY`, :data:`OUTLIER_SPREAD`) so that one
observation far off a prediction costs about 5 nats, not ``z²/2``. ``c_η`` is the running mean of
the discount's past ``z² = (y − μ̃_η)²/v_η`` with fitted hyperparameters (a freshly fitted model is
over-confident; calibrated, the memories compete on how well they predict), ``1`` otherwise. Each
memory keeps an exponentially forgetting score ``S ← ρ·S + log p(y_t)``; the change points of
:mod:`~torch_advbandit.policies.change_points` compete with the same scores, and the policy uses the
longest memory within :data:`AUTO_MARGIN` nats of the best with fitted hyperparameters (the best
otherwise). Rows observed together (an initial design) are not scored: they say nothing about
change over time. This is forgetting-factor selection by one-step-ahead predictive likelihood, the
rule of dynamic model averaging [Raftery2010] applied to the discount of the weighted GP: on a
stationary objective ``η = 1`` predicts best and keeps all the data. Cost: ``len(grid)`` Choleskys
of the kept kernel matrix per round (about 5 ms each at ``t = 500``); every observation is kept,
since ``η = 1`` is in the grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from linear_operator.utils.cholesky import psd_safe_cholesky

from .models import discounted_noise

#: The discounts ``discount="auto"`` chooses from.
AUTO_DISCOUNTS = (1.0, 0.99, 0.97, 0.93, 0.85, 0.7, 0.5)
#: ``ρ``, the forgetting of the predictive scores (an effective memory of ``1/(1 − ρ) = 10`` rounds).
SCORE_MEMORY = 0.9
#: With fitted hyperparameters (calibrated predictive densities), the policy keeps the longest memory
#: whose score is within this many nats of the best: prior odds of ``e³ ≈ 20`` for the longer memory,
#: so a model that is merely over-confident (few points, freshly fitted) does not make it forget.
AUTO_MARGIN = 3.0
#: ``ε``, the weight of the broad component of each predictive density: an observation far outside one memory's
#: prediction (an outlier, a refit that moved) costs it about ``log(1/ε) + ½ log W ≈ 5`` nats, not ``z²/2``.
OUTLIER_PROBABILITY = 0.05
#: ``W``, the broad component's variance relative to the prediction's (10 times its standard deviation).
OUTLIER_SPREAD = 100.0
#: ``ρ_c``, the forgetting of each discount's variance calibration ``c_η`` (running mean of ``z²``),
#: used with fitted hyperparameters.
CALIBRATION_MEMORY = 0.9


def weighted_stats(Y: torch.Tensor, log_weights: torch.Tensor) -> tuple[float, float]:
    """``(mean, std)`` of ``Y`` (``Tensor[m]``) with weights ``exp(log_weights)``: the reliability-weighted
    unbiased standard deviation; ``std = 1`` for one observation or no spread.

    Example:
        >>> Y = torch.tensor([0.0, 2.0, 4.0], dtype=torch.float64)
        >>> [round(v, 12) for v in weighted_stats(Y, torch.zeros(3, dtype=torch.float64))]
        [2.0, 2.0]
    """
    v = torch.softmax(log_weights, 0)
    mean = float(v @ Y)
    spread = 1.0 - float(v.square().sum())
    if Y.numel() < 2 or spread <= 0:
        return mean, 1.0
    std = math.sqrt(float(v @ (Y - mean).square()) / spread)
    return mean, std if std >= 1e-8 else 1.0


def predictive_log_likelihood(
    K: torch.Tensor,
    k_new: torch.Tensor,
    prior_variance: float,
    Y: torch.Tensor,
    ages: torch.Tensor,
    y_new: float,
    lam: float,
    discount: float,
    *,
    standardize: bool = False,
    prior_mean: float = 0.0,
    variance_scale: float = 1.0,
    stats: tuple[float, float] | None = None,
    outlier_probability: float = 0.0,
) -> tuple[float, float]:
    """``(log p(y_new), z²)`` under the weighted GP with ``discount`` on past data, ``z² = (y_new − μ̃)²/v``:
    ``p = (1 − ε)·N(μ̃, c·v) + ε·N(μ̃, W·c·v)`` with ``μ̃ = μ̃(x_new)``, ``v = σ̃²(x_new) + λ`` the predictive
    variance, ``c`` = ``variance_scale``, ``ε`` = ``outlier_probability`` (``0``: the Gaussian density) and
    ``W`` = :data:`OUTLIER_SPREAD`.

    The posterior is computed directly from the kernel values the policy keeps (one Cholesky of
    ``K + diag(λ·η^{-age})``), with no model object:
    ``μ̃ = k_newᵀ(K + D)⁻¹y``, ``σ̃² = k(x_new, x_new) − k_newᵀ(K + D)⁻¹k_new``.

    Args:
        K: ``Tensor[m, m]``, the kernel matrix of the past points; k_new: ``Tensor[m]``, their kernel
            values with ``x_new``; prior_variance: ``k(x_new, x_new)``.
        Y: ``Tensor[m]``, the past observations; ages: ``Tensor[m]``, their ages (the newest 0).
        y_new: the new observation; lam: ``λ`` in ``Y``'s units.
        standardize: model the outcomes standardised with the ``η^{age}``-weighted mean and std
            (the kernel is then in standardised units, as in the policy's model).
        prior_mean: the GP's constant prior mean, in the model's units.
        variance_scale: ``c > 0``, the calibration of the predictive variance (1: none).
        stats: ``(mean, std)`` to standardise with instead of the kept rows' own (for a memory of fewer
            than two rows). With no past row the prediction is the prior's.

    Example:
        >>> from torch_advbandit.kernels import kernel_matrix, make_kernel
        >>> k = make_kernel("se", 1)
        >>> X = torch.linspace(0, 1, 5, dtype=torch.float64).unsqueeze(-1)
        >>> ages = torch.arange(4, -1, -1, dtype=torch.float64)
        >>> K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, X[2:3]).squeeze(-1)
        >>> log_p, z2 = predictive_log_likelihood(K, k_new, 1.0, X.squeeze(-1), ages, 0.5, 0.01, 1.0)
        >>> log_p > 0, z2 < 1
        (True, True)
    """
    mean, std = (0.0, 1.0) if stats is None or not standardize else stats
    mu, var = mean + std * prior_mean, std**2 * prior_variance + lam  # the prior's prediction
    if Y.numel():
        keep, noise = discounted_noise(ages, discount, lam)
        noise = noise.squeeze(-1)
        Y, k_new, K = Y[keep], k_new[keep], K[keep][:, keep]
        if standardize and stats is None:
            mean, std = weighted_stats(Y, (lam / noise).log())
        L = psd_safe_cholesky(K + torch.diag(noise / std**2))
        a = torch.cholesky_solve(((Y - mean) / std - prior_mean).unsqueeze(-1), L).squeeze(-1)
        v = torch.linalg.solve_triangular(L, k_new.unsqueeze(-1), upper=False).squeeze(-1)
        mu = mean + std * (prior_mean + float(k_new @ a))
        var = std**2 * max(prior_variance - float(v @ v), 0.0) + lam
    z2 = (y_new - mu) ** 2 / var
    log_p = -0.5 * (math.log(2 * math.pi * variance_scale * var) + z2 / variance_scale)
    if outlier_probability > 0:
        broad = log_p - 0.5 * math.log(OUTLIER_SPREAD) + 0.5 * z2 / variance_scale * (1 - 1 / OUTLIER_SPREAD)
        a, b = math.log1p(-outlier_probability) + log_p, math.log(outlier_probability) + broad
        log_p = max(a, b) + math.log1p(math.exp(-abs(a - b)))
    return log_p, z2


def change_point_stats(Y: torch.Tensor, since: int) -> tuple[float, float] | None:
    """``(mean, std)`` of every row of ``Y`` (``Tensor[m]``, equal weights) when a memory starting at a change point
    ``since > 0`` holds fewer than two rows (too few for its own scale); ``None`` otherwise. The policy's model and
    the memories' predictions standardise alike through this.

    Example:
        >>> Y = torch.tensor([0.0, 2.0, 4.0], dtype=torch.float64)
        >>> [round(v, 12) for v in change_point_stats(Y, 2)], change_point_stats(Y, 1)
        ([2.0, 2.0], None)
    """
    if since > 0 and Y.numel() - since < 2:
        return weighted_stats(Y, torch.zeros_like(Y))
    return None


@dataclass(frozen=True)
class NewRow:
    """A lone new observation ``y`` at a point ``x`` and the ``m`` rows before it: what every memory of
    ``discount="auto"`` predicts ``y`` from.

    ``K``: ``Tensor[m, m]``, the rows' kernel matrix; ``k_new``: ``Tensor[m]``, their kernel values with ``x``;
    ``prior_variance``: ``k(x, x)``; ``Y``: ``Tensor[m]``, the rows' observations (the newest last); ``lam``: ``λ``
    in ``Y``'s units; ``standardize`` and ``prior_mean`` as in :func:`predictive_log_likelihood`.

    Example:
        >>> K, Y = torch.eye(2, dtype=torch.float64), torch.tensor([0.0, 1.0], dtype=torch.float64)
        >>> row = NewRow(K, torch.zeros(2, dtype=torch.float64), 1.0, Y, 0.5, 0.01)
        >>> round(row.log_density(since=2)[1], 6)  # no row since: the prior's N(0, 1 + λ)
        0.247525
    """

    K: torch.Tensor
    k_new: torch.Tensor
    prior_variance: float
    Y: torch.Tensor
    y: float
    lam: float
    standardize: bool = False
    prior_mean: float = 0.0

    def log_density(self, discount: float = 1.0, since: int = 0, variance_scale: float = 1.0) -> tuple[float, float]:
        """``(log p(y), z²)`` (:func:`predictive_log_likelihood` with :data:`OUTLIER_PROBABILITY`) from the rows
        ``since …  m − 1`` weighted by ``discount^{age}``; after a change point with fewer than two such rows,
        standardised with the statistics of every row (:func:`change_point_stats`)."""
        rows = slice(since, self.Y.numel())
        Y = self.Y[rows]
        ages = torch.arange(Y.numel() - 1, -1, -1, dtype=Y.dtype, device=Y.device)
        stats = change_point_stats(self.Y, since) if self.standardize else None
        return predictive_log_likelihood(
            self.K[rows, rows], self.k_new[rows], self.prior_variance, Y, ages, self.y, self.lam, discount,
            standardize=self.standardize, prior_mean=self.prior_mean, variance_scale=variance_scale, stats=stats,
            outlier_probability=OUTLIER_PROBABILITY,
        )  # fmt: skip

    def scored(
        self,
        scores: torch.Tensor,
        calibration: torch.Tensor,
        memories: list[tuple[float, int]],
        *,
        calibrate: bool,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``S_j ← ρ·S_j + log p_j(y)`` and, with ``calibrate``, ``c_j ← ρ_c·c_j + (1 − ρ_c)·z²_j`` for the memories
        ``(discount, since)`` (:meth:`log_density`, the variance scaled by ``c_j`` when ``calibrate``, else by 1);
        ``scores`` and ``calibration`` are ``Tensor[len(memories)]``, returned anew.

        Example:
            >>> row = NewRow(torch.eye(1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64), 1.0,
            ...              torch.zeros(1, dtype=torch.float64), 0.0, 0.01)
            >>> s, c = row.scored(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64),
            ...                   [(1.0, 0), (1.0, 1)], calibrate=False)
            >>> s.shape, c.tolist()
            (torch.Size([2]), [1.0, 1.0])
        """
        scale = calibration.tolist() if calibrate else [1.0] * len(memories)
        new = [self.log_density(eta, since, c) for (eta, since), c in zip(memories, scale, strict=True)]
        log_p, z2 = (torch.tensor([v[i] for v in new], dtype=scores.dtype, device=scores.device) for i in (0, 1))
        if calibrate:
            calibration = CALIBRATION_MEMORY * calibration + (1.0 - CALIBRATION_MEMORY) * z2
        return SCORE_MEMORY * scores + log_p, calibration.clone()
