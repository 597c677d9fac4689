"""The change-point test of :class:`~torch_advbandit.TimeVaryingGPUCB` (docs/algorithms.rst §10).

A jump ends one function and starts another; the model of the present is then a GP on the rows since the
jump alone, with hyperparameters of its own. Against the stationary model (one ``SingleTaskGP`` on every row,
``ε = 0``) the alternative "the objective changed before the row ``s``" fits two independent GPs, on the rows
before ``s`` and on the rows from ``s`` on, each with its own hyperparameters. Its split ``ŝ`` is first the one
whose two segments are likeliest under the stationary fit's hyperparameters (a Cholesky of each segment per
candidate, no fit); the two segments are then fitted, each from where a new ``SingleTaskGP`` starts (as the
stationary model is: from its optimum a segment's fit can stay at a flat optimum of every row), and the splits
are scanned again under the best split's fitted segments (each side under its own fit, and both sides under
either), up to :data:`REFINEMENTS` fitted splits: where the stationary fit explains every row as noise its scan
cannot see the change, and a segment that straddles the change fits as noise too, while the other one, clean,
sees it. The largest ``Λ = 2·(log p(y_A | θ̂_A) + log p(y_B | θ̂_B) − log p(y | θ̂₀))`` is compared with
``χ²_k`` (``k`` the hyperparameters the segment adds), Bonferroni-corrected over the ``m`` candidate splits:
p-value ``min(1, m·P(χ²_k > Λ))`` [Worsley1986]. Where it passes, the one-segment model is refitted once from
the longer segment's optimum and the better of its two fits enters ``Λ`` (as for the fitted ``ε``: two L-BFGS
runs from different starts can stop at different optima), and the same test runs on the rows since ``ŝ``
(binary segmentation [Vostrikova1981]), so the newest of several changes is found. Every model of the test
scores the outcomes standardised once over every row, so the likelihoods are of the same numbers; the model
returned after a change is a ``SingleTaskGP`` on the rows since it with a ``Standardize`` of its own (on
Hartmann-6's jump, seed 0, the segment scaled by every row's spread measured 195 of regret, the one scaled by its
own 133; BoTorch told the jump: 133), fitted from the space kernel fitted on the segment before the change (its
noise and mean from BoTorch's start): the function after a jump is a new draw of the same kind, and the few rows
since a change do not pin its lengthscales down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

#: The fewest rows a candidate change leaves after it.
MIN_AFTER = 2
#: The most splits fitted per level: the scan's, then those of the rescans under the best split's fitted segments.
REFINEMENTS = 4


@dataclass(frozen=True)
class ChangePointTest:
    """The outcome of :func:`detect_change`: ``model`` (the GP of the rows since the newest accepted change,
    or the stationary model), ``since`` (its first row; 0: every row), the first level's ``statistic`` and
    ``p_value`` (NaN and 1 without a candidate split).

    Example:
        >>> ChangePointTest(None, 0, float("nan"), 1.0).since
        0
    """

    model: Any
    since: int
    statistic: float
    p_value: float


def split_candidates(row_rounds: torch.Tensor, start: int, warmup: int) -> list[int]:
    """The rows ``s > start`` that begin a round (``row_rounds[s] ≠ row_rounds[s − 1]``) with at least ``warmup``
    distinct rounds in ``[start, s)`` and :data:`MIN_AFTER` rows from ``s`` on.

    Example:
        >>> split_candidates(torch.tensor([0, 0, 0, 1, 2, 3, 4, 5]), 0, 2)
        [4, 5, 6]
    """
    rounds = row_rounds.tolist()
    m, out, distinct = len(rounds), [], 1
    for s in range(start + 1, m - MIN_AFTER + 1):
        if rounds[s] != rounds[s - 1]:
            if distinct >= warmup:
                out.append(s)
            distinct += 1
    return out


def best_split(Z: torch.Tensor, z: torch.Tensor, before, after, candidates: list[int]) -> int:
    """The split ``s`` among ``candidates`` (indices into the rows ``Z``, ``Tensor[m, d + 1]``, with outcomes ``z``,
    ``Tensor[m]``) maximising ``log N(z[:s]; before) + log N(z[s:]; after)``: each segment's exact log-density
    under the fitted mean, kernel and noise of the GP ``before`` or ``after`` (no refit; the same GP for both
    scores the splits under one set of hyperparameters).

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.linspace(0, 1, 8, dtype=torch.float64).unsqueeze(-1)
        >>> y = torch.cat([torch.full((4,), -1.0), torch.ones(4)]).double()
        >>> gp = SingleTaskGP(X, y.unsqueeze(-1), outcome_transform=None).eval()
        >>> best_split(X, y, gp, gp, [2, 4, 6])
        4
    """
    return best_splits(Z, z, [(before, after)], candidates)[0]


def best_splits(Z: torch.Tensor, z: torch.Tensor, pairs, candidates: list[int]) -> list[int]:
    """:func:`best_split` for each ``(before, after)`` of ``pairs``, every GP's covariance of ``Z`` built once and
    every segment scored once under each GP that the pairs put on it.

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> X = torch.linspace(0, 1, 8, dtype=torch.float64).unsqueeze(-1)
        >>> y = torch.cat([torch.full((4,), -1.0), torch.ones(4)]).double()
        >>> gp = SingleTaskGP(X, y.unsqueeze(-1), outcome_transform=None).eval()
        >>> best_splits(X, y, [(gp, gp), (gp, gp)], [2, 4, 6])
        [4, 4]
    """
    grams, scores = {}, {}

    def segment_scores(gp, prefix: bool) -> list[float]:
        if (id(gp), prefix) not in scores:
            if id(gp) not in grams:
                grams[id(gp)] = _gram(Z, z, gp)
            scores[id(gp), prefix] = _segment_scores(*grams[id(gp)], candidates, prefix)
        return scores[id(gp), prefix]

    out = []
    for before, after in pairs:
        total = [a + b for a, b in zip(segment_scores(before, True), segment_scores(after, False), strict=True)]
        out.append(candidates[max(range(len(total)), key=total.__getitem__)])
    return out


def _gram(Z: torch.Tensor, z: torch.Tensor, gp) -> tuple[torch.Tensor, torch.Tensor]:
    """``(z − m(Z), K(Z, Z) + σ²I)`` under ``gp``'s fitted mean, kernel and noise."""
    with torch.no_grad():
        residual = z - gp.mean_module(Z)
        eye = torch.eye(len(z), dtype=z.dtype, device=z.device)
        K = gp.covar_module(Z).to_dense() + gp.likelihood.noise.reshape(-1)[:1] * eye
    return residual, K


def _segment_scores(residual: torch.Tensor, K: torch.Tensor, candidates: list[int], prefix: bool) -> list[float]:
    """``log N(residual[:s]; 0, K[:s, :s])`` (``prefix``) or of the rows from ``s`` on, for each ``s``, up to a
    constant."""

    def log_density(rows: slice) -> float:
        L = torch.linalg.cholesky(K[rows, rows])
        alpha = torch.cholesky_solve(residual[rows].unsqueeze(-1), L).squeeze(-1)
        return float(-0.5 * (residual[rows] @ alpha) - L.diagonal().log().sum())

    return [log_density(slice(0, s) if prefix else slice(s, None)) for s in candidates]


def detect_change(
    policy, null, level: float, log_null: float | None = None, *, model_after: bool = True
) -> ChangePointTest:
    """The change-point test of ``policy`` (a :class:`~torch_advbandit.TimeVaryingGPUCB`, or the rows of a GP-UCB
    policy: :mod:`~torch_advbandit.policies.tested_change`) against ``null``, its stationary model of every row, at
    level ``level`` (module docstring); ``log_null``: ``null``'s log-likelihood where the caller has it already.
    ``model_after=False``: only ``since`` is wanted (``model`` is then the test's own segment model).

    Example:
        >>> from torch_advbandit import TimeVaryingGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> policy = TimeVaryingGPUCB(X, make_kernel("se", 1, 0.3), 20, warmup=3, significance=0.01,
        ...                           change_points=True)
        >>> for t in range(8):
        ...     i = [3, 20, 11, 27, 6, 20, 11, 27][t]
        ...     policy.observe(X[i : i + 1], torch.sin(6 * X[i : i + 1]) * (1 if t < 5 else -1))
        >>> policy.model() is not None and policy.diagnostics()["since"]
        5.0
    """
    k = sum(p.numel() for name, p in null.named_parameters() if not name.endswith("time.raw_lengthscale"))
    Z, z = null.train_inputs[0], null.train_targets
    model, start, first, before_change = null, 0, None, None
    log_parent = _log_likelihood(null) if log_null is None else log_null
    while True:
        candidates = [s - start for s in split_candidates(policy.row_rounds, start, policy.warmup)]
        if not candidates:
            break
        best, queue, tried = None, [best_split(Z[start:], z[start:], model, model, candidates)], []
        while queue and len(tried) < REFINEMENTS:  # the splits the fitted segments' hyperparameters point to
            split = queue.pop(0)
            tried.append(split)
            before, after = _segment(policy, null, start, start + split), _segment(policy, null, start + split, None)
            log_after = _log_likelihood(after)
            statistic = max(0.0, 2.0 * (_log_likelihood(before) + log_after - log_parent))
            if best is None or statistic > best[0]:
                best = (statistic, split, before, after, log_after)
            if split == best[1]:  # rescan under the best fits: each side under its own, and both under either
                pairs = ((before, after), (after, after), (before, before))
                found = best_splits(Z[start:], z[start:], pairs, candidates)
                queue = [s for s in dict.fromkeys(found) if s not in tried]
        statistic, split, before, after, log_after = best
        p_value = min(1.0, len(candidates) * _chi2_sf(statistic, k))
        if p_value < level:  # the one-segment fit may have stopped short: refit it from the longer segment's optimum
            longer = before if split >= len(z) - start - split else after
            refit = _log_likelihood(_segment(policy, null, start, None, start_from=longer))
            statistic = max(0.0, min(statistic, statistic - 2.0 * (refit - log_parent)))
            p_value = min(1.0, len(candidates) * _chi2_sf(statistic, k))
        if first is None:
            first = (statistic, p_value)
        if not p_value < level:
            break
        model, start, log_parent, before_change = after, start + split, log_after, before
    statistic, p_value = first if first is not None else (float("nan"), 1.0)
    if start and model_after:  # the rows since: their own standardisation, the kernel fitted before as the start
        model = policy._gp(math.inf, rows=slice(start, None), kernel_from=before_change)
    return ChangePointTest(model, start, statistic, p_value)


def _segment(policy, null, start: int, stop: int | None, start_from=None):
    """``policy``'s ``SingleTaskGP`` with ``ε = 0`` on the rows ``[start, stop)``, fitted from where a new one starts
    (as ``null`` was) or from the hyperparameters of ``start_from``, its outcomes standardised by ``null``'s (fixed)
    transform, so its likelihood is of the numbers ``null``'s is; in eval mode."""
    return policy._gp(math.inf, start_from=start_from, rows=slice(start, stop), scale=null.outcome_transform)


def scaled_gp(X: torch.Tensor, Y: torch.Tensor, covar, scale):
    """A ``SingleTaskGP`` on ``(X, Y)`` (``Tensor[m, k]``, ``Tensor[m, 1]``) whose outcomes are standardised by a
    frozen copy of the fitted outcome transform ``scale`` (BoTorch would retrain a ``Standardize``): every model of
    the test scores the same numbers, and posteriors are on the outcomes' scale.

    Example:
        >>> from botorch.models.transforms import Standardize
        >>> from gpytorch.kernels import RBFKernel
        >>> X, Y = torch.rand(5, 1, dtype=torch.float64), torch.rand(5, 1, dtype=torch.float64)
        >>> scale = Standardize(m=1)
        >>> _ = scale(Y)
        >>> gp = scaled_gp(X[:3], Y[:3], RBFKernel().double(), scale)
        >>> bool(torch.allclose(gp.train_targets, ((Y[:3] - Y.mean()) / Y.std()).squeeze(-1)))
        True
    """
    import copy

    from botorch.models import SingleTaskGP

    scale = copy.deepcopy(scale).eval()
    gp = SingleTaskGP(X, scale(Y)[0], covar_module=covar, outcome_transform=None)
    gp.outcome_transform = scale
    return gp


def _chi2_sf(statistic: float, dof: int) -> float:
    """``P(χ²_dof > statistic)``."""
    from scipy.stats import chi2

    return float(chi2.sf(statistic, dof)) if dof > 0 else float(statistic <= 0.0)


def markov_p_value(statistic: float) -> float:
    """``P(½χ²₀ + ½χ²₁ > Λ) = 1 − Φ(√Λ)`` (``Λ > 0``): the p-value of the fitted ``ε`` against ``ε = 0``
    [SelfLiang1987]; 1 for ``Λ ≤ 0`` or NaN.

    Example:
        >>> round(markov_p_value(5.4119), 4)  # the critical value at level 0.01
        0.01
    """
    if not statistic > 0:
        return 1.0
    return 0.5 * math.erfc(math.sqrt(statistic / 2.0))


def _log_likelihood(gp) -> float:
    """``log p(y | θ̂)`` of a fitted ``SingleTaskGP`` on its (standardised) training targets, with its
    hyperparameters' log-priors (BoTorch's fitting objective, times the number of rows)."""
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gp.train()
    try:
        with torch.no_grad():
            mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
            value = mll(gp(*gp.train_inputs), gp.train_targets, *gp.train_inputs)
        return float(value) * gp.train_targets.shape[-1]
    finally:
        gp.eval()
