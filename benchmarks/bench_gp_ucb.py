"""Non-stationary GP-UCB ([Deng2022]): per-round time at t = T against the dense floor.

Usage: python benchmarks/bench_gp_ucb.py [--t 500] [--n 100] [--repeats 5]

Each policy is restored (``load_state_dict``) to a history of ``t − 3`` observations on the
100-point grid of [Deng2022], Sec. 6 (SE, ℓ = 0.2), plays two rounds, and then ``--repeats``
consecutive rounds (``select`` + ``update``) are timed; the median is reported. The floor is one
``t × t`` float64 Cholesky plus one triangular solve with ``n`` right-hand sides, timed in the same
run: the linear algebra any exact GP posterior over the candidates needs.

Two selection paths, same run:

- ``factored`` (the policies' own): BoTorch's ``UpperConfidenceBound`` over a
  :class:`~torch_advbandit.factored_gp.FactoredGP` — one Cholesky factor of the training
  covariance per round (bordered by a row when only a row was added, as for IGP-UCB), reused for
  the mean, the variance and IGP-UCB's ``γ_t``; WGP-UCB's double-weighted ``γ̄_t`` is a second
  factorisation of a different matrix.
- ``SingleTaskGP``: the same acquisition over the policy's ``model()``, a ``SingleTaskGP`` rebuilt
  each round (GPyTorch factorises the covariance for the mean cache and again for the variance),
  with ``γ_t`` factorised on its own.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from torch_advbandit.experiments.drift import DRIFT_POLICY_LABELS, make_drift_policy
from torch_advbandit.experiments.runner import machine_info


def floor_seconds(t: int, n: int, repeats: int) -> float:
    g = torch.Generator().manual_seed(0)
    A = torch.randn(t, t, generator=g, dtype=torch.float64)
    A = A @ A.mT + t * torch.eye(t, dtype=torch.float64)
    B = torch.randn(t, n, generator=g, dtype=torch.float64)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        L = torch.linalg.cholesky(A)
        torch.linalg.solve_triangular(L, B, upper=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def round_seconds(name: str, t: int, n: int, repeats: int, path: str = "factored") -> tuple[float, int]:
    """Median seconds of ``repeats`` consecutive rounds from ``t − 1`` observations, and the model size then."""
    X = torch.linspace(0, 1, n, dtype=torch.float64).unsqueeze(-1)
    policy = make_drift_policy(name, X, t + repeats, 0.05, 1.0, torch.Generator().manual_seed(0))
    if path == "SingleTaskGP":
        policy.selection_model = policy.model  # the BoTorch model, factorised by GPyTorch each call
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(n, (t - 3,), generator=g)
    state = policy.state_dict()
    state.update(t=t - 3, train_X=X[idx], rewards=torch.sin(6 * X[idx, 0]) + 0.05 * torch.randn(t - 3, generator=g))
    policy.load_state_dict(state)
    times = []
    for r in range(repeats + 2):
        start = time.perf_counter()
        i = policy.select()
        policy.update(i, float(torch.sin(6 * X[i, 0])))
        times.append(time.perf_counter() - start)
        if r == 1:
            size = int(policy.diagnostics()["model_size"])
    return statistics.median(times[2:]), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t", type=int, default=500)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine_info()}\n")
    floor = floor_seconds(args.t, args.n, args.repeats)
    print(f"floor: chol({args.t}) + trsm({args.t} × {args.n}) = {floor:.4f} s\n")
    print("| algorithm | t | observations in the model | path | s / round | round / floor |")
    print("|---|---|---|---|---|---|")
    for name, label in DRIFT_POLICY_LABELS.items():
        for path in ("SingleTaskGP", "factored"):
            seconds, size = round_seconds(name, args.t, args.n, args.repeats, path)
            print(f"| {label} | {args.t} | {size} | {path} | {seconds:.4f} | {seconds / floor:.1f} |")


if __name__ == "__main__":
    main()
