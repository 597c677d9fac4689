"""BoTorch models for non-stationary GP bandits: the weighted GP of WGP-UCB as a ``SingleTaskGP``.

The second paper's weighted GP regression ([Deng2022], Eqs. 3–4; docs/algorithms.rst §8) with weights
``w_s = η^{-s}`` is an ordinary GP posterior whose observation ``s`` has noise variance
``λ·η^{-(t−s)}`` at round ``t``: the noise grows with the age of the point. So it is BoTorch's
``SingleTaskGP`` with a fixed per-observation noise, the kernel's hyperparameters fixed, a zero
prior mean and no outcome transform.
"""

from __future__ import annotations

import math

import botorch
import gpytorch
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel
from gpytorch.means import ZeroMean

from ._validation import check_positive, check_unit_interval
from .kernels import prepare_kernel

#: Observations whose weight ratio ``η^{age}`` is below ``exp(−MAX_LOG_AGE_WEIGHT)`` (``ε²`` of
#: float64) are left out of the model: their noise exceeds the newest point's by ``1/ε²``, so their
#: effect on the posterior is below float64 rounding, and leaving them out keeps the per-round
#: cost bounded by the discount's memory instead of ``t``.
MAX_LOG_AGE_WEIGHT = 2.0 * math.log(1.0 / torch.finfo(torch.float64).eps)


def age_log_weights(ages: torch.Tensor, discount: float) -> torch.Tensor:
    """``log(w_s / w_t) = −age·log(1/η)`` for each observation (``≤ 0``), never forming ``η^{-t}``.

    Example:
        >>> w = age_log_weights(torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), 0.5)
        >>> torch.allclose(w, torch.tensor([0.0, -1.0, -2.0], dtype=torch.float64) * math.log(2.0))
        True
    """
    return -ages * math.log(1.0 / discount) if discount < 1.0 else torch.zeros_like(ages)


def discounted_noise(ages: torch.Tensor, discount: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(keep, noise)``: which observations enter the model and their noise ``λ·η^{-age}`` (``Tensor[k, 1]``).

    Computed as ``exp(log λ + age·log(1/η))``; observations older than ``MAX_LOG_AGE_WEIGHT /
    log(1/η)`` are dropped, and if all are, the newest is kept with its noise capped there.

    Example:
        >>> keep, noise = discounted_noise(torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), 0.5, 0.1)
        >>> keep.tolist(), [round(v, 12) for v in noise.squeeze(-1).tolist()]
        ([True, True, True], [0.1, 0.2, 0.4])
    """
    log_w = age_log_weights(ages, discount)
    keep = log_w >= -MAX_LOG_AGE_WEIGHT
    if not bool(keep.any()):  # all forgotten: the prior, up to rounding; keep the newest with capped noise
        keep[log_w.argmax()] = True
        log_w = log_w.clamp_min(-MAX_LOG_AGE_WEIGHT)
    return keep, (math.log(lam) - log_w[keep]).exp().unsqueeze(-1)


def discounted_gp(
    train_X: torch.Tensor,
    train_Y: torch.Tensor,
    kernel: Kernel,
    *,
    discount: float,
    lam: float,
    ages: torch.Tensor | None = None,
) -> SingleTaskGP:
    """The weighted GP of WGP-UCB at the latest round as a BoTorch ``SingleTaskGP`` ([Deng2022], Eqs. 3–4).

    With ``w_s = η^{-s}``, ``W = diag(sqrt w)``, ``λ_t = λ w_t``, the model's posterior is::

        μ̃_t(x)  = k̃_t(x)ᵀ (K̃_t + λ_t I)⁻¹ W y,      k̃_t = W k_t,  K̃_t = W K_t W
        σ̃_t²(x) = k(x,x) − k̃_t(x)ᵀ (K̃_t + λ_t I)⁻¹ k̃_t(x)

    which is a GP posterior with noise variance ``λ·η^{-(t−s)}`` on observation ``s`` (only weight
    ratios matter; computed as ``exp(log λ + age·log(1/η))``). ``discount = 1`` gives the plain GP
    with noise ``λ`` (IGP-UCB, sliding window, restarts). Observations older than
    ``MAX_LOG_AGE_WEIGHT / log(1/η)`` rounds are left out (their effect is below rounding; if
    all are that old, the newest is kept with its noise capped there, which is the prior up to rounding).
    GPyTorch's minimum fixed-noise floor (``1e-6`` in float64) is lowered for this model so that a
    small ``λ`` is never clamped.

    Args:
        train_X: ``Tensor[t, d]``, observations in time order (the last row is the newest).
        train_Y: ``Tensor[t, 1]``.
        kernel: GPyTorch kernel (copied, hyperparameters frozen) with ``k(x, x) ≤ 1``.
        discount: ``η ∈ (0, 1]``.
        lam: ``λ > 0``, the regulariser (noise of the newest observation).
        ages: optional ``Tensor[t]`` of ages ``t − s`` (default ``t−1, …, 1, 0``).

    Returns:
        A ``SingleTaskGP`` in eval mode: zero mean, no outcome transform, fixed noise.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> model = discounted_gp(X, torch.sin(6 * X), make_kernel("se", 1), discount=0.9, lam=0.1)
        >>> model.posterior(torch.rand(5, 1, dtype=torch.float64)).mean.shape
        torch.Size([5, 1])
    """
    if not isinstance(train_X, torch.Tensor) or not isinstance(train_Y, torch.Tensor):
        raise TypeError("train_X and train_Y must be torch.Tensor")
    if train_X.ndim != 2 or train_X.shape[0] < 1:
        raise ValueError(f"train_X must have shape (t, d) with t ≥ 1, got {tuple(train_X.shape)}")
    if not train_X.is_floating_point():
        raise TypeError(f"train_X must be floating point, got {train_X.dtype}")
    t = train_X.shape[0]
    if train_Y.shape != (t, 1):
        raise ValueError(f"train_Y must have shape ({t}, 1), got {tuple(train_Y.shape)}")
    train_Y = train_Y.to(train_X)
    if not bool(torch.isfinite(train_X).all() & torch.isfinite(train_Y).all()):
        raise ValueError("train_X and train_Y must be finite")
    discount = check_unit_interval(discount, "discount")
    lam = check_positive(lam, "lam")
    if ages is None:
        ages = torch.arange(t - 1, -1, -1, dtype=train_X.dtype, device=train_X.device)
    elif not isinstance(ages, torch.Tensor) or ages.shape != (t,) or not bool((ages >= 0).all()):  # NaN fails
        raise ValueError(f"ages must be a non-negative (not NaN) tensor of shape ({t},)")
    keep, noise = discounted_noise(ages.to(train_X), discount, lam)
    return fixed_noise_gp(train_X[keep], train_Y[keep], noise, frozen_kernel(kernel, train_X))


def frozen_kernel(kernel: Kernel, like: torch.Tensor) -> Kernel:
    """A copy of ``kernel`` on ``like``'s device and dtype with every hyperparameter frozen.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> k = frozen_kernel(make_kernel("se", 1), torch.zeros(1, dtype=torch.float32))
        >>> k.lengthscale.dtype, k.raw_lengthscale.requires_grad
        (torch.float32, False)
    """
    kernel = prepare_kernel(kernel, like)
    for p in kernel.parameters():
        p.requires_grad_(False)
    return kernel


def fixed_noise_gp(X: torch.Tensor, Y: torch.Tensor, noise: torch.Tensor, kernel: Kernel) -> SingleTaskGP:
    """``SingleTaskGP`` with zero mean, no outcome transform, the given (unclamped) noise and kernel, in eval mode.

    No validation and no copy of ``kernel`` (pass a :func:`frozen_kernel`): the policies call this
    every round. GPyTorch's fixed-noise floor is lowered below the smallest noise so none is clamped.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> noise = torch.full((5, 1), 1e-2, dtype=torch.float64)
        >>> gp = fixed_noise_gp(X, torch.sin(6 * X), noise, make_kernel("se", 1))
        >>> gp.posterior(X).variance.shape
        torch.Size([5, 1])
    """
    floor = min(gpytorch.settings.min_fixed_noise.value(X.dtype), 0.5 * float(noise.min()))
    with (
        gpytorch.settings.min_fixed_noise(float_value=floor, double_value=floor, half_value=floor),
        botorch.settings.validate_input_scaling(False),
    ):
        model = SingleTaskGP(
            X, Y, train_Yvar=noise, covar_module=kernel, mean_module=ZeroMean(), outcome_transform=None
        )
    return model.eval()
