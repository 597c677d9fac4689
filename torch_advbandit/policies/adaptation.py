"""What the GP-UCB policies learn from the data besides the observations: the discount
(``discount="auto"``) and the kernel's hyperparameters and ``λ`` (``fit_hyperparameters=True``).

Both are pure functions of the history and the current settings; :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy`
computes them in its update and assigns them together with the new observation, so a failed update
changes nothing.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from botorch.exceptions import ModelFittingError
from gpytorch.kernels import Kernel

from .._validation import check_positive, check_unit_interval
from ..discount_selection import AUTO_DISCOUNTS, AUTO_MARGIN, NewRow
from ..fitting import seeded_fit
from ..models import discounted_noise, fitted_lambda, fitted_triple, frozen_kernel, trainable_kernel, weighted_gp
from .change_points import ChangePoints


def discount_scores(
    scores: torch.Tensor, calibration: torch.Tensor, row: NewRow, *, calibrate: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """``S_η ← ρ·S_η + log p_η(y)`` for every ``η`` of :data:`~torch_advbandit.discount_selection.AUTO_DISCOUNTS`
    (:meth:`~torch_advbandit.discount_selection.NewRow.log_density`, every row weighted by age, its variance
    scaled by ``c_η``), and ``c_η ← ρ_c·c_η + (1 − ρ_c)·z²_η``.

    ``scores`` and ``calibration`` (``c_η``, the running mean of each discount's ``z² = (y − μ̃)²/v``
    before this observation, ones at first) are ``Tensor[len(AUTO_DISCOUNTS)]``, returned anew; with
    ``calibrate=False`` every ``c_η`` is taken as 1 and ``calibration`` is returned unchanged. With no
    past row, both are unchanged.

    Example:
        >>> from torch_advbandit.discount_selection import NewRow
        >>> from torch_advbandit.kernels import kernel_matrix, make_kernel
        >>> k, X = make_kernel("se", 1), torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)
        >>> row = NewRow(kernel_matrix(k, X, X), kernel_matrix(k, X, X[:1]).squeeze(-1), 1.0, X.squeeze(-1), 0.0, 0.01)
        >>> zeros, ones = torch.zeros(7, dtype=torch.float64), torch.ones(7, dtype=torch.float64)
        >>> s, c = discount_scores(zeros, ones, row, calibrate=True)
        >>> s.shape, bool((c < 1).all())
        (torch.Size([7]), True)
    """
    if row.Y.numel() == 0:
        return scores.clone(), calibration.clone()
    return row.scored(scores, calibration, [(eta, 0) for eta in AUTO_DISCOUNTS], calibrate=calibrate)


def competed(
    scores: torch.Tensor, calibration: torch.Tensor, points: ChangePoints, row: NewRow, *, fitted: bool, opens=True
) -> tuple[torch.Tensor, torch.Tensor, ChangePoints, float, int]:
    """One round of ``discount="auto"``'s competition on a new observation ``row`` (``opens``: the first of its
    batch, where a change point may enter): the discounts'
    ``(scores, calibration)`` (:func:`discount_scores`), the change points
    (:meth:`~torch_advbandit.policies.change_points.ChangePoints.observed`), and the memory chosen for
    the history with the new row, ``(η, since)``: the longest within :data:`AUTO_MARGIN` of the best with
    ``fitted`` hyperparameters (whose variances are then calibrated), the best otherwise.

    Example:
        >>> from torch_advbandit.discount_selection import NewRow
        >>> K, Y = torch.eye(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
        >>> row = NewRow(K, torch.zeros(3, dtype=torch.float64), 1.0, Y, 0.0, 0.01)
        >>> zeros, ones = torch.zeros(7, dtype=torch.float64), torch.ones(7, dtype=torch.float64)
        >>> competed(zeros, ones, ChangePoints.none(), row, fitted=True)[3:]
        (1.0, 0)
    """
    points = points.observed(scores, calibration, row, calibrate=fitted, opens=opens)
    scores, calibration = discount_scores(scores, calibration, row, calibrate=fitted)
    discount, since = points.chosen(scores, row.Y.numel() + 1, AUTO_MARGIN if fitted else 0.0)
    return scores, calibration, points, discount, since


def fit_hyperparameters(
    X: torch.Tensor,
    Y: torch.Tensor,
    ages: torch.Tensor,
    kernel: Kernel,
    lam: float | None,
    discount: float,
    *,
    standardize: bool,
    like: torch.Tensor,
    seed: int = 0,
) -> tuple[Kernel, float, float] | None:
    """``(kernel, λ, c)`` maximising the weighted marginal likelihood of ``(X, Y)`` (age weights fixed):
    the kernel frozen on ``like``'s device and dtype, ``λ`` in ``Y``'s units, ``c`` the constant mean
    in the model's units (standardised when ``standardize``).

    Starts from ``kernel`` and ``lam`` (``None``: BoTorch's initial noise,
    :data:`~torch_advbandit.weighted_likelihood.INITIAL_LAMBDA`, in the model's units, as a new
    ``SingleTaskGP`` starts); BoTorch's restarts draw under ``seed``
    (:func:`~torch_advbandit.fitting.seeded_fit`). If BoTorch's fit fails
    (``ModelFittingError``) or gives a non-finite ``λ``: ``None``, with a ``RuntimeWarning``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(12, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        >>> ages = torch.arange(11, -1, -1, dtype=torch.float64)
        >>> kernel, lam, c = fit_hyperparameters(X, torch.sin(6 * X[:, 0]), ages, make_kernel("se", 1), 0.1, 0.95,
        ...                                      standardize=True, like=X)
        >>> lam > 0, kernel.raw_lengthscale.requires_grad
        (True, False)
    """
    keep, multipliers = discounted_noise(ages, discount, 1.0)
    model = weighted_gp(
        X[keep],
        Y[keep].unsqueeze(-1),
        multipliers.squeeze(-1),
        trainable_kernel(kernel, like),
        lam,
        standardize=standardize,
    )
    try:
        seeded_fit(model, seed)  # the fit is checked below
    except ModelFittingError as exc:
        warnings.warn(f"hyperparameter fit failed ({exc}); keeping the previous ones", RuntimeWarning, stacklevel=4)
        return None
    return fitted_triple(model, fitted_lambda(model), like)


def adapted_state(
    state: dict[str, Any], kernel: Kernel, candidates: torch.Tensor, auto_discount: bool, m: int, tested: bool = False
) -> tuple[Kernel, float, float, tuple[torch.Tensor, torch.Tensor, ChangePoints, int], float]:
    """Check and rebuild the adapted ``(kernel, λ, discount, (scores, calibration, change points, since), mean
    constant)`` of a saved GP-UCB state of ``m`` rows (a state without ``discount_calibration`` gets ones,
    one without ``change_points`` none, one without ``since`` 0). A change point (``since > 0``) needs
    ``discount="auto"`` at ``η = 1`` or a ``tested`` change (``significance``).

    ``kernel`` is the policy's (its structure receives the saved hyperparameters); raises
    ``ValueError`` naming the key that does not fit.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> k, X = make_kernel("se", 1), torch.rand(5, 1, dtype=torch.float64)
        >>> state = {"lam": 0.1, "discount": 1.0, "discount_scores": torch.zeros(7, dtype=torch.float64),
        ...          "kernel_state": k.state_dict(), "mean_constant": 0.0}
        >>> adapted_state(state, k, X, True, 5)[1:3]
        (0.1, 1.0)
    """
    lam = check_positive(state["lam"], "state['lam']")
    discount = check_unit_interval(state["discount"], "state['discount']")
    if auto_discount and discount not in AUTO_DISCOUNTS:
        raise ValueError(f"state['discount'] must be one of {AUTO_DISCOUNTS}, got {discount}")
    scores = state["discount_scores"]
    if not isinstance(scores, torch.Tensor) or scores.shape != (len(AUTO_DISCOUNTS),):
        raise ValueError(f"state['discount_scores'] must be a tensor of shape ({len(AUTO_DISCOUNTS)},)")
    if not bool(torch.isfinite(scores).all()):
        raise ValueError("state['discount_scores'] must be finite")
    calibration = state.get("discount_calibration", torch.ones_like(scores))
    if not isinstance(calibration, torch.Tensor) or calibration.shape != scores.shape:
        raise ValueError(f"state['discount_calibration'] must be a tensor of shape ({len(AUTO_DISCOUNTS)},)")
    if not bool((torch.isfinite(calibration) & (calibration > 0)).all()):
        raise ValueError("state['discount_calibration'] must be finite and positive")
    points = ChangePoints.from_state(state, m)
    since = state.get("since", 0)
    if isinstance(since, bool) or not isinstance(since, int) or not 0 <= since < max(m, 1):
        raise ValueError(f"state['since'] must be an integer in [0, {max(m - 1, 0)}], got {since!r}")
    if since and not (tested or (auto_discount and discount == 1.0)):
        message = "state['since'] > 0 (a change point) needs significance, or discount='auto' and state['discount'] = 1"
        raise ValueError(message)
    restored = frozen_kernel(kernel, candidates)
    try:
        restored.load_state_dict(state["kernel_state"])
    except (RuntimeError, TypeError, AttributeError, KeyError) as exc:
        raise ValueError(f"state['kernel_state'] does not fit this policy's kernel: {exc}") from exc
    restored = frozen_kernel(restored, candidates)  # checks the loaded hyperparameters (finite, PSD)
    constant = state["mean_constant"]
    if isinstance(constant, bool) or not isinstance(constant, (int, float)) or not math.isfinite(constant):
        raise ValueError(f"state['mean_constant'] must be a finite number, got {constant!r}")
    scores, calibration = (v.to(dtype=torch.float64, device="cpu").clone() for v in (scores, calibration))
    return restored, lam, discount, (scores, calibration, points, since), float(constant)
