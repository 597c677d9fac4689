"""BoTorch models for non-stationary GP bandits: the weighted GP of WGP-UCB as a ``SingleTaskGP``.

The second paper's weighted GP regression ([Deng2022], Eqs. 3–4; docs/algorithms.rst §8) with weights
``w_s = η^{-s}`` is an ordinary GP posterior whose observation ``s`` has noise variance
``λ·η^{-(t−s)}`` at round ``t``: the noise grows with the age of the point. So it is BoTorch's
``SingleTaskGP`` with per-observation noise ``λ·η^{-age}`` and a zero prior mean: trainable, with
the age multipliers fixed and ``λ`` and the kernel's hyperparameters free
(:func:`discounted_gp`), or with everything fixed for the policies' per-round model
(:func:`fixed_noise_gp`).
"""

from __future__ import annotations

import copy
import math

import botorch
import gpytorch
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel
from gpytorch.means import ConstantMean, ZeroMean

from ._validation import check_positive, check_unit_interval
from .kernels import prepare_kernel
from .weighted_likelihood import INITIAL_LAMBDA, AgeWeightedGaussianLikelihood, WeightedStandardize

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
    lam: float | None = None,
    ages: torch.Tensor | None = None,
    fit: bool = False,
    standardize: bool | None = None,
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

    The model is an ordinary trainable BoTorch model: the kernel's hyperparameters (any GPyTorch
    kernel, e.g. ``ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d))`` with any outputscale) and
    ``λ`` are free (:class:`~torch_advbandit.weighted_likelihood.AgeWeightedGaussianLikelihood`,
    the age multipliers ``η^{-age}`` held fixed), so
    ``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))`` maximises the weighted
    marginal likelihood (docs/algorithms.rst §8). A new observation's noise — in
    ``posterior(X, observation_noise=True)`` and in fantasies — is ``λ``, the newest weight's.

    Args:
        train_X: ``Tensor[t, d]``, observations in time order (the last row is the newest).
        train_Y: ``Tensor[t, 1]``.
        kernel: GPyTorch kernel (copied; the caller's is never changed).
        discount: ``η ∈ (0, 1]``.
        lam: ``λ > 0``, the noise variance of the newest observation, in ``train_Y``'s units; ``None``
            (default): BoTorch's initial inferred noise on the model's scale,
            :data:`~torch_advbandit.weighted_likelihood.INITIAL_LAMBDA`, where a new ``SingleTaskGP``
            starts (with ``fit``, the start the drifting benchmark's fits use).
        ages: optional ``Tensor[t]`` of ages ``t − s`` (default ``t−1, …, 1, 0``).
        fit: fit the kernel's hyperparameters and ``λ`` by maximum weighted marginal likelihood
            with BoTorch's ``fit_gpytorch_mll`` (``λ`` starts at ``lam``). With ``discount = 1``,
            ``lam=None`` and BoTorch's default kernel this is vanilla BoTorch's fitted ``SingleTaskGP``.
        standardize: standardise the outcomes with the age-weighted mean and standard deviation
            (:class:`~torch_advbandit.weighted_likelihood.WeightedStandardize`; posteriors are
            reported on ``train_Y``'s scale); default: ``fit``.

    Returns:
        A ``SingleTaskGP`` in eval mode: a constant mean, ``0`` until fitted (on the standardised
        scale when standardising), as BoTorch's default.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(10, 1, dtype=torch.float64)
        >>> model = discounted_gp(X, torch.sin(6 * X), make_kernel("se", 1), discount=0.9, lam=0.1)
        >>> model.posterior(torch.rand(5, 1, dtype=torch.float64)).mean.shape
        torch.Size([5, 1])
        >>> fitted = discounted_gp(X, 3 * torch.sin(6 * X), make_kernel("se", 1), discount=0.9, lam=0.1, fit=True)
        >>> bool(fitted_lambda(fitted) > 0)
        True
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
    lam = None if lam is None else check_positive(lam, "lam")
    for name, flag in (("fit", fit), ("standardize", standardize)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if ages is None:
        ages = torch.arange(t - 1, -1, -1, dtype=train_X.dtype, device=train_X.device)
    elif not isinstance(ages, torch.Tensor) or ages.shape != (t,) or not bool((ages >= 0).all()):  # NaN fails
        raise ValueError(f"ages must be a non-negative (not NaN) tensor of shape ({t},)")
    keep, multipliers = discounted_noise(ages.to(train_X), discount, 1.0)
    return weighted_gp(
        train_X[keep],
        train_Y[keep],
        multipliers.squeeze(-1),
        trainable_kernel(kernel, train_X),
        lam,
        fit=fit,
        standardize=fit if standardize is None else standardize,
    )


def weighted_gp(
    X: torch.Tensor,
    Y: torch.Tensor,
    multipliers: torch.Tensor,
    kernel: Kernel,
    lam: float | None,
    *,
    fit: bool = False,
    standardize: bool = False,
) -> SingleTaskGP:
    """``SingleTaskGP`` with noise ``λ·multipliers`` (``λ`` learnable), a constant mean (BoTorch's
    default; it starts at 0, so unfitted it is the zero-mean GP of [Deng2022]), optionally fitted.

    No validation and no copy of ``kernel`` (:func:`discounted_gp` is the checked entry point).
    ``lam`` is in ``Y``'s units; with ``standardize`` it is divided by the weighted variance. ``None``:
    BoTorch's initial inferred noise in the model's units,
    :data:`~torch_advbandit.weighted_likelihood.INITIAL_LAMBDA` (as a new ``SingleTaskGP`` starts).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> gp = weighted_gp(X, torch.sin(6 * X), torch.ones(4, dtype=torch.float64), make_kernel("se", 1), 0.01)
        >>> round(fitted_lambda(gp), 12)
        0.01
    """
    transform = WeightedStandardize(1.0 / multipliers) if standardize else None
    if transform is not None:
        transform(Y)  # the weighted statistics, so that λ starts in the model's units
        lam = None if lam is None else lam / float(transform.stdvs.square())
    lam = INITIAL_LAMBDA if lam is None else lam
    likelihood = AgeWeightedGaussianLikelihood(X, multipliers, lam)
    with botorch.settings.validate_input_scaling(False):
        model = SingleTaskGP(
            X, Y, likelihood=likelihood, covar_module=kernel, mean_module=ConstantMean(), outcome_transform=transform
        )
    if fit:
        from botorch.fit import fit_gpytorch_mll
        from gpytorch.mlls import ExactMarginalLogLikelihood

        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


def fitted_lambda(model: SingleTaskGP) -> float:
    """``λ`` of a :func:`weighted_gp` / :func:`discounted_gp` model in the outcomes' own units.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> gp = discounted_gp(X, 5 * X, make_kernel("se", 1), discount=1.0, lam=0.2, standardize=True)
        >>> round(fitted_lambda(gp), 12)
        0.2
    """
    lam = float(model.likelihood.lam.detach())
    transform = getattr(model, "outcome_transform", None)
    return lam * float(transform.stdvs.square()) if transform is not None else lam


def trainable_kernel(kernel: Kernel, like: torch.Tensor) -> Kernel:
    """A copy of any GPyTorch ``kernel`` on ``like``'s device and dtype, hyperparameters free to fit.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> trainable_kernel(make_kernel("se", 1), torch.zeros(1, dtype=torch.float32)).raw_lengthscale.requires_grad
        True
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a gpytorch.kernels.Kernel, got {type(kernel).__name__}")
    kernel = copy.deepcopy(kernel).to(dtype=like.dtype, device=like.device)
    kernel.requires_grad_(True)
    return kernel.train()


def frozen_kernel(kernel: Kernel, like: torch.Tensor) -> Kernel:
    """A checked copy of ``kernel`` (finite, positive, PSD on a sample; any ``k(x, x)`` scale) on ``like``'s
    device and dtype with every hyperparameter frozen.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> k = frozen_kernel(make_kernel("se", 1), torch.zeros(1, dtype=torch.float32))
        >>> k.lengthscale.dtype, k.raw_lengthscale.requires_grad
        (torch.float32, False)
    """
    kernel = prepare_kernel(kernel, like, bounded=False)
    for p in kernel.parameters():
        p.requires_grad_(False)
    return kernel


def fitted_triple(
    model: SingleTaskGP, lam: float, like: torch.Tensor, kernel: Kernel | None = None
) -> tuple[Kernel, float, float] | None:
    """``(kernel, λ, c)`` of a fitted ``SingleTaskGP`` ``model`` whose noise is ``lam`` in the outcomes' units: its
    kernel (or ``kernel``, a module of the fitted model, e.g. the base of a wrapping kernel) frozen on ``like``'s
    device and dtype and its constant mean; ``None`` unless ``λ`` is finite and positive and ``c`` finite.

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> kernel, lam, c = fitted_triple(SingleTaskGP(X, torch.sin(6 * X)), 0.1, X)
        >>> lam, c, kernel.raw_lengthscale.requires_grad
        (0.1, 0.0, False)
    """
    constant = float(model.mean_module.constant.detach())
    if not (math.isfinite(lam) and lam > 0 and math.isfinite(constant)):
        return None
    return frozen_kernel(model.covar_module if kernel is None else kernel, like), lam, constant


def _mean(constant: float | None, like: torch.Tensor):
    """``ZeroMean`` for ``None``, else a ``ConstantMean`` fixed at ``constant``."""
    if constant is None:
        return ZeroMean()
    mean = ConstantMean().to(like)
    mean.constant.data.fill_(constant)
    mean.requires_grad_(False)
    return mean


def fixed_noise_gp(
    X: torch.Tensor, Y: torch.Tensor, noise: torch.Tensor, kernel: Kernel, mean_constant: float | None = None
) -> SingleTaskGP:
    """``SingleTaskGP`` with zero (or a fixed constant) mean, no outcome transform, the given (unclamped) noise and
    kernel, in eval mode.

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
            X, Y, train_Yvar=noise, covar_module=kernel, mean_module=_mean(mean_constant, X), outcome_transform=None
        )
    return model.eval()
