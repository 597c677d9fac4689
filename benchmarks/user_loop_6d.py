"""A user's loop in 6 dimensions: batches of two, any GPyTorch kernel, an initial design, no horizon.

Usage: python benchmarks/user_loop_6d.py [--seeds 5] [--rounds 40] [--jump 20] [--q 2] [--out FILE.md]

Hartmann-6 (BoTorch's, negated: larger is better) on 2048 scrambled Sobol points of ``[0, 1]⁶`` (the
package's ``discretize``, scrambling seed 0), raw values (no standardisation over the candidates) with Gaussian noise of
standard deviation 0.05, reflected ``x → 1 − x`` from round ``--jump`` on. Each method starts from the same
14 random candidates observed before the first ask and asks ``q`` points a round (``select(q)``) for
``--rounds`` rounds, with ``horizon=None`` and UCB at ``β = 2`` (BoTorch's ``beta = 4``):

- ``botorch``: vanilla BoTorch, a ``SingleTaskGP`` with its defaults fitted every round, ``qUpperConfidenceBound``
  (the drifting benchmark's ``botorch_ucb``);
- ``wgp_auto``: ``WGPUCB(discount="auto", fit_hyperparameters=True)`` on ``ScaleKernel(MaternKernel(2.5, ARD))``;
- ``wgp_auto_tested``: the same with ``significance=0.01`` (a change at an unknown round tested by likelihood ratio);
- ``wgp_auto_time_varying``: ``wgp_auto`` with ``time_varying_significance=0.01`` (selections on the space-time model
  of ``TimeVaryingGPUCB`` where its fitted forgetting rate passes the likelihood-ratio test and no change point is in
  force, and on the segments before and since the change point, correlated by a fitted factor, while one is);
- ``wgp_fixed_tested``: ``WGPUCB(discount=0.9, fit_hyperparameters=True, significance=0.01)`` on the same kernel
  (a fixed forgetting rate, and nothing from before a change the test accepts);
- ``tv_changes``: ``TimeVaryingGPUCB(significance=0.01, change_points=True)`` on the same kernel.

Reported per method: the dynamic regret over the rounds (mean ± s.e. over the seeds), the rounds after the
jump in which the model kept only rows observed since a change at the jump (``since`` within one round of it)
and the fitted noise ``λ`` in the last round (on the outcomes' scale), and the seconds per round.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from botorch.test_functions import Hartmann
from gpytorch.kernels import MaternKernel, ScaleKernel

from torch_advbandit import WGPUCB, TimeVaryingGPUCB
from torch_advbandit.domains import discretize
from torch_advbandit.experiments.botorch_drift import BoTorchUCB
from torch_advbandit.experiments.report import mean_se

D, N, DESIGN, NOISE, BETA = 6, 2048, 14, 0.05, 2.0
#: The ``WGPUCB`` methods: ``(discount, significance, time_varying_significance)``.
WGPUCB_METHODS = {
    "wgp_auto": ("auto", None, None),
    "wgp_auto_tested": ("auto", 0.01, None),
    "wgp_auto_time_varying": ("auto", None, 0.01),
    "wgp_fixed_tested": (0.9, 0.01, None),
}


def make(method: str, X: torch.Tensor, seed: int):
    generator = torch.Generator().manual_seed(seed)
    kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=D)).to(X.dtype)
    if method == "botorch":
        return BoTorchUCB(X, None, beta=BETA, generator=generator)
    if method in WGPUCB_METHODS:
        discount, level, time_varying = WGPUCB_METHODS[method]
        return WGPUCB(
            X, kernel, None, discount=discount, fit_hyperparameters=True, significance=level, beta=BETA,
            time_varying_significance=time_varying, generator=generator,
        )  # fmt: skip
    return TimeVaryingGPUCB(X, kernel, None, significance=0.01, change_points=True, beta=BETA, generator=generator)


def trial(method: str, X: torch.Tensor, seed: int, rounds: int, jump: int, q: int) -> dict:
    f = Hartmann(dim=D, negate=True).to(X.dtype)
    values = [f(X), f(1 - X)]  # before and after the jump
    noise = torch.Generator().manual_seed(1000 + seed)

    def observe(x, t):
        y = f(1 - x if t >= jump else x)
        return (y + NOISE * torch.randn(y.shape, generator=noise, dtype=y.dtype)).unsqueeze(-1)

    design = torch.randperm(N, generator=torch.Generator().manual_seed(seed))[:DESIGN]
    policy = make(method, X, seed)
    policy.observe(X[design], observe(X[design], 0))
    jump_row = DESIGN + q * jump  # the first row observed after the jump
    regret, kept, start = 0.0, 0, time.perf_counter()
    for t in range(rounds):
        asks = policy.select(q)
        policy.observe(X[asks], observe(X[asks], t))
        now = values[t >= jump]
        regret += float(q * now.max() - now[asks].sum())
        since = policy.diagnostics().get("since", 0.0)
        kept += t >= jump and abs(since - jump_row) <= q
    lam = policy.diagnostics().get("lam", float("nan"))
    return {"regret": regret, "kept": kept, "lam": lam, "seconds": (time.perf_counter() - start) / rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--jump", type=int, default=20)
    parser.add_argument("--q", type=int, default=2)
    parser.add_argument("--methods", nargs="+", default=["botorch", *WGPUCB_METHODS, "tv_changes"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    X = discretize(torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64), N, seed=0).unit
    lines = [
        f"| method | regret (mean ± s.e., {args.seeds} seeds) | per seed | rounds using the jump's change "
        f"(of {args.rounds - args.jump}) | fitted noise λ, last round | s / round |",
        "|---|---|---|---|---|---|",
    ]
    for method in args.methods:
        rows = [trial(method, X, seed, args.rounds, args.jump, args.q) for seed in range(args.seeds)]
        regrets = [r["regret"] for r in rows]
        mean, se = mean_se(regrets)
        lams = ", ".join(f"{r['lam']:.3g}" for r in rows)
        lines.append(
            f"| {method} | {mean:.2f} ± {se:.2f} | {', '.join(f'{v:.1f}' for v in regrets)} | "
            f"{', '.join(str(r['kept']) for r in rows)} | {lams} | {statistics.mean(r['seconds'] for r in rows):.2f} |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
