"""The paper's parameter choices for the Exp3 family ([Iwazaki2026], Thm. 1, Thm. 3 and App. 17)."""

from __future__ import annotations

import math

from .kernels import KERNEL_NAMES

#: Tuned constants ``(c3, c4, λ)`` of [Iwazaki2026], App. 17, per kernel.
TUNED_CONSTANTS: dict[str, tuple[float, float, float]] = {
    "se": (5.0, 0.1, 1.0),
    "matern52": (10.0, 0.1, 10.0),
    "matern32": (5.0, 0.1, 5.0),
}

_NU = {"matern52": 2.5, "matern32": 1.5}


def information_gain_bound(kernel_name: str, horizon: int, d: int) -> float:
    """``γ̄_T``, the known growth-rate bound on the maximum information gain ([Iwazaki2026], App. 17).

    SE: ``(log T)^{d+1} (log log T)^{-d}`` (needs ``T ≥ 3`` so that ``log log T > 0``);
    Matérn-ν: ``T^{d/(2ν+d)} (log T)^{(4ν+d)/(2ν+d)}``.

    Example:
        >>> round(information_gain_bound("se", 1000, 1), 2)
        24.69
    """
    if kernel_name not in KERNEL_NAMES:
        raise ValueError(f"kernel_name must be one of {KERNEL_NAMES}, got {kernel_name!r}")
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 3:
        raise ValueError(f"horizon must be an integer ≥ 3 for the γ̄_T bound, got {horizon!r}")
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    log_t = math.log(horizon)
    if kernel_name == "se":
        return log_t ** (d + 1) / math.log(log_t) ** d
    nu = _NU[kernel_name]
    return horizon ** (d / (2 * nu + d)) * log_t ** ((4 * nu + d) / (2 * nu + d))


def paper_parameters(
    kernel_name: str,
    horizon: int,
    d: int,
    *,
    algorithm: str = "kernelized_exp3",
    rkhs_bound: float = 2.0,
) -> dict[str, float]:
    """The experiment's ``η, α, λ, β`` for kernelized Exp3 or RLS-kernelized Exp3.

    ``η = c3 / sqrt(T·γ̄_T)``, ``α = min(1, c4·η·γ̄_T)``, ``β = B·sqrt(λ/T)`` (kernelized Exp3,
    [Iwazaki2026] Thm. 1) or ``β = B(1 + √2)·sqrt(λ/T)`` (RLS-kernelized Exp3, Thm. 3), with the tuned
    ``(c3, c4, λ)`` of :data:`TUNED_CONSTANTS`.

    Returns:
        ``dict(eta=..., alpha=..., lam=..., beta=...)``, ready to unpack into a policy.

    Example:
        >>> p = paper_parameters("se", 1000, 1)
        >>> sorted(p)
        ['alpha', 'beta', 'eta', 'lam']
    """
    if algorithm not in ("kernelized_exp3", "rls_kernelized_exp3"):
        raise ValueError(f"algorithm must be 'kernelized_exp3' or 'rls_kernelized_exp3', got {algorithm!r}")
    if not (isinstance(rkhs_bound, (int, float)) and math.isfinite(rkhs_bound) and rkhs_bound > 0):
        raise ValueError(f"rkhs_bound must be a finite positive number, got {rkhs_bound!r}")
    gamma = information_gain_bound(kernel_name, horizon, d)
    c3, c4, lam = TUNED_CONSTANTS[kernel_name]
    eta = c3 / math.sqrt(horizon * gamma)
    scale = 1.0 + math.sqrt(2.0) if algorithm == "rls_kernelized_exp3" else 1.0
    return {
        "eta": eta,
        "alpha": min(1.0, c4 * eta * gamma),
        "lam": lam,
        "beta": scale * rkhs_bound * math.sqrt(lam / horizon),
    }


def nonstationary_memory(kernel_name: str, horizon: int, d: int, *, variation_budget: float = 1.0) -> int:
    """Theory-suggested window / restart period ``W = H = ⌈γ̄_T^{1/4}·(T/B_T)^{1/2}⌉`` (docs/algorithms.rst §8).

    The order of [Zhou2021] (Cor. 5 and Remark 1) with constant one, ``γ̄_T`` from
    :func:`information_gain_bound` and ``B_T`` the variation budget ``Σ_t ‖f_{t+1} − f_t‖_k``;
    clipped to ``[1, T]``. The seed sets ``W``, ``H`` and the discount "order-wise by theory"
    without constants, so this is a default, not the paper's value.

    Example:
        >>> nonstationary_memory("se", 500, 1)
        48
    """
    if not (isinstance(variation_budget, (int, float)) and math.isfinite(variation_budget) and variation_budget > 0):
        raise ValueError(f"variation_budget must be a finite positive number, got {variation_budget!r}")
    gamma = information_gain_bound(kernel_name, horizon, d)
    return max(1, min(horizon, math.ceil(gamma**0.25 * math.sqrt(horizon / variation_budget))))


def nonstationary_discount(kernel_name: str, horizon: int, d: int, *, variation_budget: float = 1.0) -> float:
    """A theory-order discount for WGP-UCB: ``η = 1 − 1/W`` with ``W`` from :func:`nonstationary_memory`.

    ``1/(1 − η)`` is the effective memory of exponential weights, so this gives WGP-UCB the same
    memory as the sliding window and restart rivals (a default; [Deng2022] states no constant).

    Example:
        >>> round(nonstationary_discount("se", 500, 1), 4)
        0.9792
    """
    return 1.0 - 1.0 / max(2, nonstationary_memory(kernel_name, horizon, d, variation_budget=variation_budget))
