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
"""

from __future__ import annotations

import torch

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
    m, design = policy.train_X.shape[0], policy.train_X.shape[0] - policy.change_points.scored
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
