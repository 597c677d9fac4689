"""Choosing the discount ``η`` online: ``discount="auto"`` of the GP-UCB policies (docs/algorithms.rst §8).

Before each observation ``y_t`` joins the history, every discount ``η`` of a grid that includes
``1`` (no forgetting) predicts it: ``p_η(y_t) = N(y_t; μ̃_η(x_t), σ̃²_η(x_t) + λ)`` from the weighted GP
with discount ``η`` on the observations so far. Each discount keeps an exponentially forgetting
score ``S_η ← ρ·S_η + log p_η(y_t)`` and the policy uses ``argmax_η S_η`` (ties to the larger
``η``); with fitted hyperparameters, the largest ``η`` whose score is within ``AUTO_MARGIN = 3``
nats of the best, each predictive variance scaled by ``c_η``, the running mean of that discount's
past ``z² = (y − μ̃_η)²/(σ̃²_η + λ)`` (a freshly fitted model is over-confident; calibrated, the
discounts compete on how well they predict). Rows observed together (an initial design) are not scored: they say nothing
about change over time. This is forgetting-factor selection by one-step-ahead predictive
likelihood, the rule of dynamic model averaging [Raftery2010] applied to the discount of the
weighted GP: on a stationary objective ``η = 1`` predicts best and keeps all the data; after a
jump the short memories predict the new values first, so within a few rounds the policy forgets.
Cost: ``len(grid)`` Choleskys of the kept kernel matrix per round (about 5 ms each at
``t = 500``); every observation is kept, since ``η = 1`` is in the grid.
"""

from __future__ import annotations

import math

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
) -> tuple[float, float]:
    """``(log N(y_new; μ̃, c·v), z²)`` under the weighted GP with ``discount`` on past data: ``μ̃ = μ̃(x_new)``,
    ``v = σ̃²(x_new) + λ`` the predictive variance, ``c`` = ``variance_scale``, ``z² = (y_new − μ̃)²/v``.

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
    keep, noise = discounted_noise(ages, discount, lam)
    noise = noise.squeeze(-1)
    Y, k_new, K = Y[keep], k_new[keep], K[keep][:, keep]
    mean, std = 0.0, 1.0
    if standardize:
        mean, std = weighted_stats(Y, (lam / noise).log())
    A = K + torch.diag(noise / std**2)
    L = psd_safe_cholesky(A)
    a = torch.cholesky_solve(((Y - mean) / std - prior_mean).unsqueeze(-1), L).squeeze(-1)
    v = torch.linalg.solve_triangular(L, k_new.unsqueeze(-1), upper=False).squeeze(-1)
    mu = mean + std * (prior_mean + float(k_new @ a))
    var = std**2 * max(prior_variance - float(v @ v), 0.0) + lam
    z2 = (y_new - mu) ** 2 / var
    return -0.5 * (math.log(2 * math.pi * variance_scale * var) + z2 / variance_scale), z2
