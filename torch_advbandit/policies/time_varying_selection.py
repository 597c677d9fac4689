"""Selections on the time-varying model where its forgetting rate is significant (``time_varying_significance``;
docs/algorithms.rst §8).

The memories of ``discount="auto"`` compete by one-step-ahead prediction under hyperparameters fitted to the rows
they keep. Where the objective changes only in part (Branin reflected: two of its three optima move by a tenth of the
box), the memory that keeps every row fits a larger noise, predicts the new rows about as well as a shorter memory,
and stays in force. The space-time model of :class:`~torch_advbandit.TimeVaryingGPUCB` ([Bogunovic2016]; its fitted
forgetting rate ``ε`` tested against ``ε = 0`` by a likelihood ratio, docs/algorithms.rst §10) explains such data
with a small noise and a covariance that decays with the time between rows, and its test finds them. With
``time_varying_significance=α`` each selection of ``WGPUCB(discount="auto", fit_hyperparameters=True)`` made while
the memory holds no change point fits that model on every row (the rows of the initial design at time 0, every later
row at the count of the observations before it, as :class:`~torch_advbandit.TimeVaryingGPUCB` times lone rows)
and, where its test passes at level ``α``, selects by UCB on it at the next step; elsewhere the selection is the
automatic memory's. Cost per selection: the test's fits (the space-time model, the ``ε = 0`` model and a refit of one
from the other's optimum: three L-BFGS runs on every row).

While the memory holds a change point ``τ`` (the automatic memory's competition chose "every row since ``τ``"),
the rows before it are not all stale: a jump may move only part of the objective (Branin reflected, ``f(1 − x)``,
correlates 0.22 with ``f``). There, once at least ``2(d + 1)`` rows follow ``τ``, the selection is on one GP of
every row in which the rows before and since ``τ`` are two segments, each standardised by its own mean and
standard deviation, whose covariance is ``k(x, x')`` within a segment and ``ρ·k(x, x')`` across, ``ρ`` fitted with
the kernel's hyperparameters and the noise (:func:`segment_correlated_model`; the coregionalisation of two tasks,
[Alvarez2012], with the change point's segments as the tasks). ``ρ = 0`` is the memory since ``τ`` with the
hyperparameters of every row; ``ρ = 1``, one function. Cost per selection under a change point: one L-BFGS run on
every row.
"""

from __future__ import annotations

import math

import torch

from ..spacetime import AtTime
from .time_varying_gp_ucb import TimeVaryingGPUCB, critical_value


def time_varying_view(policy) -> TimeVaryingGPUCB:
    """A :class:`~torch_advbandit.TimeVaryingGPUCB` (``ε`` fitted and tested at ``policy.time_varying_significance``)
    holding ``policy``'s rows, its initial kernel, horizon, width and generator (whose initial seed alone seeds the
    fits: nothing is drawn from it). The first ``m − scored`` rows (the initial design: rows observed together
    before any other) share time 0, every later row is at the count of the observations before it.

    Example:
        >>> from torch_advbandit import WGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 10, discount="auto", fit_hyperparameters=True,
        ...                 time_varying_significance=0.01)
        >>> policy.observe(X[:3], torch.zeros(3, 1, dtype=torch.float64))
        >>> policy.observe(X[5:6], torch.ones(1, 1, dtype=torch.float64))
        >>> time_varying_view(policy).row_rounds.tolist()
        [0, 0, 0, 3]
    """
    view = TimeVaryingGPUCB(
        policy.candidates, policy._initial_kernel, policy.horizon, significance=policy.time_varying_significance,
        beta=policy.beta, chunk_size=policy.chunk_size, generator=policy.generator,
    )  # fmt: skip
    m, design = policy.train_X.shape[0], policy.lone_start()
    rounds = torch.arange(m, device=policy.train_X.device)
    rounds[:design] = 0
    view.train_X, view.rewards, view.row_rounds, view.t = policy.train_X, policy.rewards, rounds, m
    return view


def tested_time_varying_model(policy):
    """``(model, statistic)``: the space-time model of :func:`time_varying_view` seen at the next step
    (:class:`~torch_advbandit.spacetime.AtTime`) where its fitted ``ε`` passes the likelihood-ratio test against
    ``ε = 0`` at ``policy.time_varying_significance``, else ``None``; and the test's statistic ``Λ`` (NaN while
    ``ε`` is held at 0, before :attr:`~torch_advbandit.TimeVaryingGPUCB.warmup` distinct times).

    Example:
        >>> from torch_advbandit import WGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 10, discount="auto", fit_hyperparameters=True,
        ...                 time_varying_significance=0.01)
        >>> policy.observe(X[:3], torch.zeros(3, 1, dtype=torch.float64))
        >>> tested_time_varying_model(policy)[0] is None  # ε = 0 until ten distinct times
        True
    """
    view = time_varying_view(policy)
    if view.warming_up():  # ε is held at 0: nothing to test, nothing to fit
        return None, float("nan")
    model = view.model()
    statistic = view.diagnostics()["lr_statistic"]
    passed = statistic > critical_value(policy.time_varying_significance)  # NaN (warming up) fails
    return (model if passed else None), statistic


def segment_correlated_model(policy) -> tuple[AtTime | None, float]:
    """``(model, ρ)`` while ``policy`` (``time_varying_significance`` set) holds a change point ``τ =
    policy.since`` followed by at least ``2(d + 1)`` rows, else ``(None, NaN)``: the model is a ``SingleTaskGP``
    over ``(x, s)``, ``s`` 0 for the rows before ``τ`` and 1 for the rows since, with the covariance

    ``k((x, s), (x', s')) = k_X(x, x')·ρ^{|s − s'|}``, ``ρ = exp(−1/ℓ_s)``  [Alvarez2012]

    (:func:`~torch_advbandit.spacetime.space_time_kernel` on the segment label), each segment's outcomes
    standardised by its own mean and standard deviation (a segment of one row: 0; of equal outcomes: centred), the
    space kernel's hyperparameters (starting at the policy's initial kernel), ``ℓ_s`` (starting at 1), the noise
    and the mean fitted by ``fit_gpytorch_mll`` under the policy's fit seed, seen at ``s = 1``
    (:class:`~torch_advbandit.spacetime.AtTime`); ``ρ`` is its fitted cross-segment correlation. Its posterior
    ranks the candidates as on the newest segment's outcomes (a positive affine map of them: UCB's argmax is the
    same).

    Example:
        >>> from torch_advbandit import WGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 10, discount="auto", fit_hyperparameters=True,
        ...                 time_varying_significance=0.01)
        >>> policy.observe(X[:8], torch.sin(6 * X[:8]))
        >>> segment_correlated_model(policy)  # no change point in force
        (None, nan)
    """
    m, d, since = policy.train_X.shape[0], policy.train_X.shape[1], int(policy.since)
    if since == 0 or m - since < 2 * (d + 1):
        return None, math.nan
    view = time_varying_view(policy)
    later = torch.arange(m, device=policy.train_X.device) >= since
    view.row_rounds = later.long() * view.time_unit  # s = row_rounds / time_unit: 0 before τ, 1 since
    Y = policy.rewards.clone()
    for rows in (~later, later):
        if int(rows.sum()) > 1:
            std = Y[rows].std()
            Y[rows] = (Y[rows] - Y[rows].mean()) / (std if std > 0 else 1.0)
        else:
            Y[rows] = 0.0
    view.rewards = Y
    gp = view._gp(1.0)
    rho = math.exp(-1.0 / float(gp.covar_module.time.lengthscale.detach()))
    return AtTime(gp, 1.0), rho
