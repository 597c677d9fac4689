"""The bad-input table of docs/robustness.rst as data: one row per (entry point, bad input).

Each case is ``(entry point, bad input, call, expected exception, message pattern)``; the pattern
checks that the message names the argument and the expected form. ``tests/test_bad_input.py``
runs every row and checks that the docs table lists exactly these rows.
"""

import math

import numpy as np
import torch
from gpytorch.kernels import RBFKernel, ScaleKernel

from torch_advbandit import (
    IGPUCB,
    WGPUCB,
    APGExp3,
    KernelizedExp3,
    RestartingGPUCB,
    RLSKernelizedExp3,
    SlidingWindowGPUCB,
    TimeVaryingGPUCB,
    UniformRandom,
)
from torch_advbandit.acquisition import discounted_ucb
from torch_advbandit.center_selection import recursive_rls_nystrom
from torch_advbandit.domains import discretize
from torch_advbandit.environments import abrupt_environment
from torch_advbandit.estimators import LowRankIPSEstimator, exact_ips_estimate
from torch_advbandit.experiments import Grid, TrialConfig, run_sweep
from torch_advbandit.kernels import make_kernel
from torch_advbandit.models import discounted_gp

DT = torch.float64
X = torch.linspace(0, 1, 12, dtype=DT).unsqueeze(-1)
K = make_kernel("se", 1)
P = torch.full((12,), 1 / 12, dtype=DT)
EXP3 = dict(eta=0.1, alpha=0.1, lam=1.0, beta=0.01)


def exp3(candidates=X, kernel=K, horizon=10, **overrides):
    return KernelizedExp3(candidates, kernel, horizon, **{**EXP3, **overrides})


def pending(policy_factory=exp3):
    policy = policy_factory()
    policy.select()
    return policy


def nan_rows():
    Z = X.clone()
    Z[3, 0] = math.nan
    return Z


def update_wrong_index():
    policy = pending()
    policy.update((policy._pending + 1) % 12, 0.5)


def tampered_state():
    a, b = exp3(), exp3()
    state = a.state_dict()
    state["cumulative_reward"] = torch.zeros(5, dtype=DT)
    b.load_state_dict(state)


class NanOffDiagonal(RBFKernel):
    """k(x, x) = 1 but NaN between distinct points."""

    def forward(self, x1, x2, diag=False, **params):
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype)
        same = torch.cdist(x1, x2) == 0
        return torch.where(same, torch.ones_like(same, dtype=x1.dtype), torch.full_like(same, math.nan, dtype=x1.dtype))


class NotPositiveDefinite(RBFKernel):
    """k(x, x) = 1, k(x, y) = −0.9 otherwise: the matrix 1.9·I − 0.9·11ᵀ has a negative eigenvalue."""

    def forward(self, x1, x2, diag=False, **params):
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype)
        same = (torch.cdist(x1, x2) == 0).to(x1.dtype)
        return 1.9 * same - 0.9


def _ducb(**overrides):
    return discounted_ucb(X[:5], torch.sin(X[:5]), K, **{"discount": 0.9, "lam": 0.5, **overrides})


def state_of_other_candidates():
    exp3().load_state_dict(exp3(candidates=X + 0.01).state_dict())


def state_of_other_kernel():
    exp3().load_state_dict(exp3(kernel=make_kernel("se", 1, lengthscale=0.2)).state_dict())


def state_with_garbage_generator():
    a = exp3()
    state = a.state_dict()
    state["generator_state"] = torch.zeros(3, dtype=torch.uint8)
    a.load_state_dict(state)


CASES = [
    # (entry point, bad input, call, exception, message pattern)
    (
        "KernelizedExp3 (every policy)",
        "candidates a list",
        lambda: exp3([[0.0], [1.0]]),
        TypeError,
        "candidates must be a torch.Tensor",
    ),
    (
        "KernelizedExp3 (every policy)",
        "candidates of shape (n,)",
        lambda: exp3(X.reshape(-1)),
        ValueError,
        r"candidates must have shape \(n, d\)",
    ),
    (
        "KernelizedExp3 (every policy)",
        "empty candidate set (0 × d)",
        lambda: exp3(X[:0]),
        ValueError,
        "candidates must have n ≥ 1 rows",
    ),
    (
        "KernelizedExp3 (every policy)",
        "integer candidates",
        lambda: exp3(torch.arange(4).reshape(4, 1)),
        TypeError,
        "candidates must be a floating-point tensor",
    ),
    (
        "KernelizedExp3 (every policy)",
        "NaN or inf in candidates",
        lambda: exp3(nan_rows()),
        ValueError,
        "candidates must be finite",
    ),
    (
        "KernelizedExp3 (every policy)",
        "kernel not a GPyTorch kernel",
        lambda: exp3(kernel=lambda a, b: a @ b.T),
        TypeError,
        "kernel must be a gpytorch.kernels.Kernel",
    ),
    (
        "KernelizedExp3 (every policy)",
        "kernel with k(x, x) > 1",
        lambda: exp3(kernel=_scaled_kernel()),
        ValueError,
        r"kernel must satisfy k\(x, x\) ≤ 1",
    ),
    (
        "KernelizedExp3 (every policy)",
        "horizon 0 or a float",
        lambda: exp3(horizon=2.5),
        TypeError,
        "horizon must be an integer",
    ),
    ("KernelizedExp3 (every policy)", "horizon < 1", lambda: exp3(horizon=0), ValueError, "horizon must be ≥ 1"),
    ("KernelizedExp3", "eta ≤ 0 or NaN", lambda: exp3(eta=float("nan")), ValueError, "eta must be finite"),
    ("KernelizedExp3", "alpha outside (0, 1]", lambda: exp3(alpha=1.5), ValueError, r"alpha must lie in \(0, 1\]"),
    ("KernelizedExp3", "lam ≤ 0", lambda: exp3(lam=0.0), ValueError, "lam must be > 0"),
    ("KernelizedExp3", "beta < 0", lambda: exp3(beta=-1.0), ValueError, "beta must be ≥ 0"),
    (
        "KernelizedExp3 (the Exp3 family)",
        "reward_scale ≤ 0",
        lambda: exp3(reward_scale=0.0),
        ValueError,
        "reward_scale must be > 0",
    ),
    (
        "KernelizedExp3 (the Exp3 family)",
        "reward_scale a string other than 'auto'",
        lambda: exp3(reward_scale="1"),
        ValueError,
        "reward_scale must be a number > 0 or 'auto'",
    ),
    (
        "KernelizedExp3 (the Exp3 family)",
        "reward_scale not a number",
        lambda: exp3(reward_scale=[1.0]),
        TypeError,
        "reward_scale must be a real number",
    ),
    (
        "KernelizedExp3",
        "horizon=None with eta, alpha or beta",
        lambda: exp3(horizon=None),
        ValueError,
        "horizon=None derives eta, alpha, beta for each epoch: omit them",
    ),
    (
        "KernelizedExp3",
        "unknown exploration",
        lambda: exp3(exploration="greedy"),
        ValueError,
        "exploration must be one of",
    ),
    (
        "KernelizedExp3",
        "unknown estimator",
        lambda: exp3(estimator="dense"),
        ValueError,
        "estimator must be one of",
    ),
    (
        "KernelizedExp3",
        "estimator factory that returns no estimator",
        lambda: exp3(estimator=lambda kernel, candidates, ridge: None),
        TypeError,
        "estimator factory must return an IPSEstimator",
    ),
    (
        "KernelizedExp3",
        "exploration distribution of the wrong length",
        lambda: exp3(exploration=torch.full((3,), 1 / 3, dtype=torch.float64)),
        ValueError,
        "exploration must have shape",
    ),
    (
        "KernelizedExp3 (every policy)",
        "generator not a torch.Generator",
        lambda: exp3(generator=0),
        TypeError,
        "generator must be a torch.Generator",
    ),
    (
        "KernelizedExp3 (every policy)",
        "kernel on another dtype than candidates",
        lambda: exp3(kernel=make_kernel("se", 1, dtype=torch.float32)).select(),
        None,
        "",
    ),
    ("KernelizedExp3 (every policy)", "n = 1 candidate", lambda: exp3(X[:1]).select(), None, ""),
    (
        "update (every policy)",
        "without a pending select()",
        lambda: exp3().update(0, 0.5),
        ValueError,
        "update called without a pending select",
    ),
    (
        "update (every policy)",
        "index other than the pending one",
        update_wrong_index,
        ValueError,
        "index must be the pending selection",
    ),
    (
        "update (every policy)",
        "reward NaN or inf",
        lambda: pending().update(pending()._pending, math.inf),
        ValueError,
        "reward must be finite",
    ),
    (
        "update (every policy)",
        "reward a string",
        lambda: _update_pending("0.5"),
        TypeError,
        "reward must be a real number",
    ),
    (
        "observe (every policy)",
        "Y of shape (q,) instead of (q, 1)",
        lambda: _observe(Y=torch.zeros(1, dtype=DT)),
        ValueError,
        r"Y must have shape \(1, 1\)",
    ),
    (
        "observe (every policy)",
        "X not the pending rows",
        lambda: _observe(X=X[:1] + 0.5),
        ValueError,
        "X must be the pending candidates",
    ),
    ("select (every policy)", "q < 1", lambda: exp3().select(0), ValueError, "q must be"),
    (
        "load_state_dict (every policy)",
        "state from another configuration",
        lambda: exp3().load_state_dict(exp3(eta=0.2).state_dict()),
        ValueError,
        "hyperparameters",
    ),
    (
        "load_state_dict (every policy)",
        "tensor of the wrong shape",
        tampered_state,
        ValueError,
        "must be a tensor of shape",
    ),
    (
        "RLSKernelizedExp3",
        "delta outside (0, 1)",
        lambda: RLSKernelizedExp3(X, K, 10, **EXP3, delta=1.0),
        ValueError,
        r"delta must lie in \(0, 1\)",
    ),
    (
        "RLSKernelizedExp3",
        "embedding_tolerance outside [0, 1)",
        lambda: RLSKernelizedExp3(X, K, 10, **EXP3, embedding_tolerance=1.0),
        ValueError,
        r"embedding_tolerance must lie in \[0, 1\)",
    ),
    (
        "RLSKernelizedExp3",
        "pivot_rule not a rule",
        lambda: RLSKernelizedExp3(X, K, 10, **EXP3, pivot_rule="fast"),
        ValueError,
        r"pivot_rule must be one of \('ridge', 'ridge_squared'\)",
    ),
    (
        "RLSKernelizedExp3",
        "embedding_tolerance not a number",
        lambda: RLSKernelizedExp3(X, K, 10, **EXP3, embedding_tolerance="1e-4"),
        TypeError,
        "embedding_tolerance must be a real number",
    ),
    (
        "APGExp3",
        "admissible_error ≤ 0",
        lambda: APGExp3(X, K, 10, admissible_error=0.0),
        ValueError,
        "admissible_error must be > 0",
    ),
    (
        "APGExp3",
        "horizon=None with eta, alpha or admissible_error",
        lambda: APGExp3(X, K, None, eta=0.1),
        ValueError,
        "horizon=None derives eta, alpha, admissible_error for each epoch: omit them",
    ),
    ("UniformRandom", "horizon < 1", lambda: UniformRandom(X, None, 0), ValueError, "horizon must be ≥ 1"),
    (
        "WGPUCB",
        "discount outside (0, 1]",
        lambda: WGPUCB(X, K, 10, discount=1.5, lam=0.01),
        ValueError,
        r"discount must lie in \(0, 1\]",
    ),
    (
        "WGPUCB",
        "discount a string other than 'auto'",
        lambda: WGPUCB(X, K, 10, discount="fast", lam=0.01),
        ValueError,
        "discount must be a number in \\(0, 1\\] or 'auto'",
    ),
    (
        "WGPUCB",
        "significance outside (0, 0.5)",
        lambda: WGPUCB(X, K, 10, discount="auto", fit_hyperparameters=True, significance=0),
        ValueError,
        "significance must be a number in \\(0, 0.5\\) or None",
    ),
    (
        "WGPUCB",
        "significance with a fixed discount, hyperparameters not fitted",
        lambda: WGPUCB(X, K, 10, discount=0.9, significance=0.01),
        ValueError,
        "significance tests a change between fitted models: it needs fit_hyperparameters=True",
    ),
    (
        "WGPUCB",
        "significance without fitted hyperparameters",
        lambda: WGPUCB(X, K, 10, discount="auto", significance=0.01),
        ValueError,
        "significance tests a change between fitted models: it needs fit_hyperparameters=True",
    ),
    (
        "WGPUCB",
        "time_varying_significance outside (0, 0.5)",
        lambda: WGPUCB(X, K, 10, discount="auto", fit_hyperparameters=True, time_varying_significance=0.5),
        ValueError,
        "time_varying_significance must be a number in \\(0, 0.5\\) or None",
    ),
    (
        "WGPUCB",
        "time_varying_significance with a fixed discount",
        lambda: WGPUCB(X, K, 10, discount=0.9, fit_hyperparameters=True, time_varying_significance=0.01),
        ValueError,
        "time_varying_significance tests a fitted forgetting rate beside the automatic memory: it needs "
        "discount='auto' and fit_hyperparameters=True",
    ),
    (
        "TimeVaryingGPUCB",
        "epsilon outside (0, 1)",
        lambda: TimeVaryingGPUCB(X, K, 10, epsilon=1.0),
        ValueError,
        "epsilon must be a number in \\(0, 1\\) or 'fit'",
    ),
    (
        "TimeVaryingGPUCB",
        "epsilon a string other than 'fit'",
        lambda: TimeVaryingGPUCB(X, K, 10, epsilon="auto"),
        ValueError,
        "epsilon must be a number in \\(0, 1\\) or 'fit'",
    ),
    (
        "TimeVaryingGPUCB",
        "warmup < 0",
        lambda: TimeVaryingGPUCB(X, K, 10, warmup=-1),
        ValueError,
        "warmup must be ≥ 0",
    ),
    (
        "TimeVaryingGPUCB",
        "fit_hyperparameters not a bool",
        lambda: TimeVaryingGPUCB(X, K, 10, fit_hyperparameters=1),
        TypeError,
        "fit_hyperparameters must be True or False",
    ),
    (
        "TimeVaryingGPUCB",
        "significance outside (0, 0.5)",
        lambda: TimeVaryingGPUCB(X, K, 10, significance=0.5),
        ValueError,
        "significance must be a number in \\(0, 0.5\\) or None",
    ),
    (
        "TimeVaryingGPUCB",
        "significance with a fixed epsilon",
        lambda: TimeVaryingGPUCB(X, K, 10, epsilon=0.1, significance=0.01),
        ValueError,
        "significance tests a fitted ε: it needs epsilon='fit'",
    ),
    (
        "TimeVaryingGPUCB",
        "change_points not a bool",
        lambda: TimeVaryingGPUCB(X, K, 10, significance=0.01, change_points="yes"),
        TypeError,
        "change_points must be True or False",
    ),
    (
        "TimeVaryingGPUCB",
        "change_points without significance",
        lambda: TimeVaryingGPUCB(X, K, 10, change_points=True),
        ValueError,
        "change_points is a test of fitted segments: it needs significance and fit_hyperparameters=True",
    ),
    (
        "TimeVaryingGPUCB",
        "delta outside (0, 1)",
        lambda: TimeVaryingGPUCB(X, K, 10, delta=1.0),
        ValueError,
        "delta must lie in \\(0, 1\\)",
    ),
    (
        "WGPUCB, IGPUCB, SlidingWindowGPUCB, RestartingGPUCB",
        "fit_every < 1",
        lambda: IGPUCB(X, K, 10, lam=0.01, fit_hyperparameters=True, fit_every=-1),
        ValueError,
        "fit_every must be ≥ 1",
    ),
    (
        "WGPUCB, IGPUCB, SlidingWindowGPUCB, RestartingGPUCB",
        "fit_hyperparameters not a bool",
        lambda: IGPUCB(X, K, 10, lam=0.01, fit_hyperparameters="yes"),
        TypeError,
        "fit_hyperparameters must be True or False",
    ),
    (
        "GP-UCB family, observe",
        "a NaN row in X",
        lambda: IGPUCB(X, K, 10, lam=0.01).observe(X[:2] * float("nan"), torch.zeros(2, 1, dtype=X.dtype)),
        ValueError,
        "X must be finite",
    ),
    ("WGPUCB, IGPUCB", "lam ≤ 0", lambda: IGPUCB(X, K, 10, lam=-1.0), ValueError, "lam must be > 0"),
    (
        "GP-UCB family, TimeVaryingGPUCB",
        "horizon a float (None is accepted: unknown)",
        lambda: TimeVaryingGPUCB(X, K, 1.5),
        TypeError,
        "horizon must be an integer",
    ),
    ("GP-UCB family", "horizon < 1", lambda: IGPUCB(X, K, -1), ValueError, "horizon must be ≥ 1"),
    (
        "WGPUCB",
        "time_uniform=True with horizon=None",
        lambda: WGPUCB(X, K, None, discount=0.9, time_uniform=True),
        ValueError,
        r"time_uniform=True uses log\(T/δ\): it needs a horizon",
    ),
    (
        "SlidingWindowGPUCB, RestartingGPUCB",
        "no window / period with horizon=None",
        lambda: SlidingWindowGPUCB(X, K, None),
        ValueError,
        "give window explicitly: the theory default needs the horizon",
    ),
    (
        "WGPUCB, IGPUCB",
        "delta outside (0, 1)",
        lambda: IGPUCB(X, K, 10, lam=0.01, delta=0.0),
        ValueError,
        r"delta must lie in \(0, 1\)",
    ),
    (
        "SlidingWindowGPUCB",
        "window < 1",
        lambda: SlidingWindowGPUCB(X, K, 10, lam=0.01, window=0),
        ValueError,
        "window must be ≥ 1",
    ),
    (
        "RestartingGPUCB",
        "period a float",
        lambda: RestartingGPUCB(X, K, 10, lam=0.01, period=2.5),
        TypeError,
        "period must be an integer",
    ),
    (
        "exact_ips_estimate, nystrom_ips_estimate",
        "probs not summing to 1",
        lambda: exact_ips_estimate(K, X, 2 * P, 0, 1.0, 0.1),
        ValueError,
        "probs must sum to 1",
    ),
    (
        "exact_ips_estimate, nystrom_ips_estimate",
        "negative or NaN probs",
        lambda: exact_ips_estimate(K, X, -P, 0, 1.0, 0.1),
        ValueError,
        "probs must be",
    ),
    (
        "exact_ips_estimate, nystrom_ips_estimate",
        "probs of the wrong length",
        lambda: exact_ips_estimate(K, X, P[:5], 0, 1.0, 0.1),
        ValueError,
        r"probs must have shape \(12,\)",
    ),
    (
        "exact_ips_estimate, nystrom_ips_estimate",
        "index out of range",
        lambda: exact_ips_estimate(K, X, P, 12, 1.0, 0.1),
        ValueError,
        r"index must lie in \[0, 12\)",
    ),
    (
        "exact_ips_estimate, nystrom_ips_estimate",
        "ridge ≤ 0",
        lambda: exact_ips_estimate(K, X, P, 0, 1.0, 0.0),
        ValueError,
        "ridge must be > 0",
    ),
    (
        "LowRankIPSEstimator",
        "tolerance ≤ 0",
        lambda: LowRankIPSEstimator(K, X, 0.1, tolerance=0.0),
        ValueError,
        "tolerance must be > 0",
    ),
    (
        "recursive_rls_nystrom (every random entry point)",
        "generator=None (accepted: one is seeded from torch's global RNG)",
        lambda: recursive_rls_nystrom(K, X, 0.1),
        None,
        "",
    ),
    (
        "recursive_rls_nystrom",
        "delta outside (0, 1)",
        lambda: recursive_rls_nystrom(K, X, 0.1, delta=2.0, generator=torch.Generator()),
        ValueError,
        r"delta must lie in \(0, 1\)",
    ),
    (
        "discounted_gp",
        "train_Y of shape (t,)",
        lambda: discounted_gp(X, X[:, 0], K, discount=0.9, lam=0.01),
        ValueError,
        "train_Y must have shape",
    ),
    (
        "discounted_gp",
        "discount outside (0, 1]",
        lambda: discounted_gp(X, X, K, discount=0.0, lam=0.01),
        ValueError,
        r"discount must lie in \(0, 1\]",
    ),
    (
        "discounted_ucb",
        "beta < 0",
        lambda: discounted_ucb(X, X, K, discount=0.9, lam=0.01, beta=-1.0),
        ValueError,
        "beta must be ≥ 0",
    ),
    (
        "abrupt_environment, slowly_varying_environment",
        "generator not a torch.Generator",
        lambda: abrupt_environment(None),
        TypeError,
        "generator must be a torch.Generator",
    ),
    (
        "discretize",
        "bounds with lower ≥ upper",
        lambda: discretize(torch.tensor([[1.0], [0.0]], dtype=DT), 10),
        ValueError,
        "bounds",
    ),
    (
        "discretize",
        "unknown method",
        lambda: discretize(torch.tensor([[0.0], [1.0]], dtype=DT), 10, "halton"),
        ValueError,
        "method must be",
    ),
    (
        "discretize",
        "seed and generator both given",
        lambda: discretize(torch.tensor([[0.0], [1.0]], dtype=DT), 10, "sobol", seed=0, generator=torch.Generator()),
        ValueError,
        "seed or generator",
    ),
    (
        "discretize",
        "generator not a torch.Generator",
        lambda: discretize(torch.tensor([[0.0], [1.0]], dtype=DT), 10, "sobol", generator=0),
        TypeError,
        "generator must be a torch.Generator",
    ),
    (
        "TrialConfig",
        "unknown setting, kernel or policy",
        lambda: TrialConfig(7, "se", "uniform", 10, 0),
        ValueError,
        "setting must be one of",
    ),
    (
        "run_sweep",
        "unknown backend",
        lambda: run_sweep([], "/tmp/x", backend="dask"),
        ValueError,
        "backend must be one of",
    ),
    (
        "run_sweep",
        "workers < 1",
        lambda: run_sweep([], "/tmp/x", workers=0),
        ValueError,
        "workers must be a positive integer",
    ),
    (
        "run_sweep",
        "checkpoint_every < 0",
        lambda: run_sweep([], "/tmp/x", checkpoint_every=-1.0),
        ValueError,
        "checkpoint_every must be None or a non-negative number",
    ),
    (
        "Grid",
        "first_seed < 0",
        lambda: Grid("g", (1,), ("se",), ("uniform",), (10,), 2, first_seed=-1).configs(),
        ValueError,
        "first_seed must be ≥ 0",
    ),
    (
        "KernelizedExp3 (every policy)",
        "float16 / bfloat16 candidates",
        lambda: exp3(candidates=X.half()),
        TypeError,
        "candidates must be float64",
    ),
    (
        "KernelizedExp3 (every policy)",
        "candidates beyond ±1e100",
        lambda: exp3(candidates=X * 1e300),
        ValueError,
        r"candidates must be finite with \|coordinates\| ≤ 1e\+100",
    ),
    (
        "KernelizedExp3 (every policy)",
        "kernel with NaN off the diagonal",
        lambda: exp3(kernel=NanOffDiagonal()),
        ValueError,
        "kernel must be finite on the candidates",
    ),
    (
        "KernelizedExp3 (every policy)",
        "kernel not positive semi-definite",
        lambda: exp3(kernel=NotPositiveDefinite()),
        ValueError,
        "kernel must be positive semi-definite",
    ),
    (
        "update (every policy)",
        "reward beyond ±1e100",
        lambda: _update_pending(1e306),
        ValueError,
        r"reward must have magnitude at most 1e\+100",
    ),
    (
        "load_state_dict (every policy)",
        "state from another candidate set of the same size",
        state_of_other_candidates,
        ValueError,
        "state belongs to another candidate set",
    ),
    (
        "load_state_dict (every policy)",
        "state from another kernel",
        state_of_other_kernel,
        ValueError,
        "state belongs to another kernel",
    ),
    (
        "load_state_dict (every policy)",
        "garbage generator state",
        state_with_garbage_generator,
        ValueError,
        r"state\['generator_state'\] is not a state",
    ),
    ("discounted_ucb, discounted_qucb", "horizon < 1", lambda: _ducb(horizon=0), ValueError, "horizon must be ≥ 1"),
    ("discounted_ucb, discounted_qucb", "delta = 0", lambda: _ducb(delta=0), ValueError, r"delta must lie in \(0, 1\)"),
    (
        "discounted_ucb, discounted_qucb",
        "noise_bound < 0",
        lambda: _ducb(noise_bound=-1),
        ValueError,
        "noise_bound must be > 0",
    ),
    (
        "discounted_ucb, discounted_qucb",
        "rkhs_bound NaN",
        lambda: _ducb(rkhs_bound=math.nan),
        ValueError,
        "rkhs_bound must be finite",
    ),
    (
        "discounted_ucb, discounted_qucb",
        "beta = 1e200",
        lambda: _ducb(beta=1e200),
        ValueError,
        "beta must be at most 1e",
    ),
    (
        "discounted_ucb, discounted_qucb",
        "numpy scalars (np.float32, np.int64)",
        lambda: _ducb(discount=np.float32(0.9), lam=np.float64(0.5), horizon=np.int64(50)),
        None,
        "",
    ),
    (
        "WGPUCB, IGPUCB, SlidingWindowGPUCB, RestartingGPUCB",
        "beta_scale = 1e300",
        lambda: WGPUCB(X, K, 10, discount=0.9, lam=0.5, beta_scale=1e300),
        ValueError,
        "beta_scale must be at most 1e",
    ),
    (
        "WGPUCB",
        "time_uniform not a bool",
        lambda: WGPUCB(X, K, 10, discount=0.9, lam=0.5, time_uniform="no"),
        TypeError,
        "time_uniform must be True or False",
    ),
    (
        "discounted_gp",
        "NaN ages",
        lambda: discounted_gp(
            X[:3], X[:3], K, discount=0.9, lam=0.5, ages=torch.tensor([2.0, math.nan, 0.0], dtype=DT)
        ),
        ValueError,
        "ages must be a non-negative",
    ),
    ("AveragedGP", "weights not summing to 1", lambda: _averaged([0.5, 0.4]), ValueError, "weights must be non-neg"),
    ("AveragedGP", "a weight a model missing", lambda: _averaged([1.0]), ValueError, "models and weights must be"),
]


def _averaged(weights):
    from torch_advbandit.memory_average import AveragedGP
    from torch_advbandit.models import fixed_noise_gp

    gp = fixed_noise_gp(X[:3], X[:3], torch.full((3, 1), 0.1, dtype=DT), K)
    return AveragedGP([gp, gp], weights)


def _scaled_kernel():
    k = ScaleKernel(RBFKernel()).to(DT)
    k.outputscale = 4.0
    return k


def _update_pending(reward):
    policy = pending()
    policy.update(policy._pending, reward)


def _observe(X=None, Y=None):
    policy = pending()
    rows = X if X is not None else policy.candidates[[policy._pending]]
    policy.observe(rows, Y if Y is not None else torch.zeros(1, 1, dtype=DT))


def render_table(cases=CASES) -> str:
    """The RST list-table of docs/robustness.rst (between its ``.. bad-input-table`` markers)."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 22 30 12 36",
        "",
        "   * - entry point",
        "     - bad input",
        "     - gets",
        "     - message (starts with / contains)",
    ]
    for entry, bad, _, exc, pattern in cases:
        gets = "accepted" if exc is None else f"``{exc.__name__}``"
        message = "—" if exc is None else "``" + pattern.replace("\\\\", "").replace("\\", "") + "``"
        lines += [f"   * - {entry}", f"     - {bad}", f"     - {gets}", f"     - {message}"]
    return "\n".join(lines)
