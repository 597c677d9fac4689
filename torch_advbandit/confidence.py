"""Confidence widths ``β_t`` of the GP-UCB family, with data-dependent information gains (docs/algorithms.rst §8)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._validation import check_positive, check_real


@dataclass(frozen=True)
class ConfidenceSettings:
    """The constants of a GP-UCB confidence bound: ``B``, ``R`` and ``δ``.

    Shared by the GP-UCB policies, :func:`~torch_advbandit.acquisition.discounted_ucb` /
    ``discounted_qucb`` and the ``β_t`` functions below; validated once, here.

    Attributes:
        rkhs_bound: ``B > 0``, the RKHS norm bound of the objective.
        noise_bound: ``R > 0``, the sub-Gaussian constant of the observation noise.
        delta: ``δ ∈ (0, 1)``, the failure probability.

    Example:
        >>> ConfidenceSettings(noise_bound=0.1).rkhs_bound
        2.0
        >>> ConfidenceSettings(delta=0)
        Traceback (most recent call last):
            ...
        ValueError: delta must lie in (0, 1), got 0.0
    """

    rkhs_bound: float = 2.0
    noise_bound: float = 0.05
    delta: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "rkhs_bound", check_positive(self.rkhs_bound, "rkhs_bound"))
        object.__setattr__(self, "noise_bound", check_positive(self.noise_bound, "noise_bound"))
        delta = check_real(self.delta, "delta")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        object.__setattr__(self, "delta", delta)


def weighted_information_gain(K: torch.Tensor, log_weights: torch.Tensor, lam: float) -> float:
    """``½ log det(I + λ⁻¹ U K U)`` with ``U = diag(exp(log_weights))`` (``K``: ``t × t``).

    With ``log_weights = −age·log(1/η)`` this is WGP-UCB's double-weighted information gain
    ``γ̄_t = ½ log det(I + (λ w_t²)⁻¹ W² K W²)`` ([Deng2022]; only weight ratios enter); with zero
    log-weights it is the ordinary ``½ log det(I + λ⁻¹ K)`` of IGP-UCB. Computed from a Cholesky
    factor (the matrix is ``⪰ I``).

    Example:
        >>> I = torch.eye(2, dtype=torch.float64)
        >>> round(weighted_information_gain(I, torch.zeros(2, dtype=torch.float64), 1.0), 4)
        0.6931
    """
    if K.shape[-1] == 0:
        return 0.0
    u = (log_weights - 0.5 * math.log(lam)).exp()  # U/√λ: one t × t product, scaled in place
    A = K * u.unsqueeze(-1)
    A.mul_(u.unsqueeze(-2)).diagonal().add_(1.0)
    return float(torch.linalg.cholesky(A).diagonal().log().sum())


def wgp_beta(info_gain: float, *, lam: float, confidence: ConfidenceSettings, horizon: int | None = None) -> float:
    """WGP-UCB's ``β_t = B + (R/√λ)·sqrt(2 log(1/δ) + 2 γ̄_t)`` ([Deng2022], Thm. 2).

    With ``horizon`` given, ``log(T/δ)`` replaces ``log(1/δ)`` (the published correction for a
    time-uniform bound).

    Example:
        >>> round(wgp_beta(0.0, lam=1.0, confidence=ConfidenceSettings(2.0, 1.0, math.exp(-2))), 4)
        4.0
    """
    c = confidence
    log_term = math.log((horizon or 1) / c.delta)
    return c.rkhs_bound + c.noise_bound / math.sqrt(lam) * math.sqrt(2.0 * log_term + 2.0 * info_gain)


def igp_beta(info_gain: float, *, confidence: ConfidenceSettings) -> float:
    """IGP-UCB's ``β_t = B + R·sqrt(2(γ_{t−1} + 1 + ln(1/δ)))`` ([Chowdhury2017], Thm. 2).

    Example:
        >>> round(igp_beta(0.5, confidence=ConfidenceSettings(1.0, 1.0, math.exp(-0.5))), 4)
        3.0
    """
    c = confidence
    return c.rkhs_bound + c.noise_bound * math.sqrt(2.0 * (info_gain + 1.0 + math.log(1.0 / c.delta)))
