"""Non-stationary GP-UCB ([Deng2022]): per-round time at t = T against the dense floor.

Usage: python benchmarks/bench_gp_ucb.py [--t 500] [--n 100] [--repeats 5]

Each policy is restored (``load_state_dict``) to a history of ``t − 1`` observations on the
100-point grid of [Deng2022], Sec. 6 (SE, ℓ = 0.2), and one round (``select`` + ``update``) is timed
(median of ``--repeats``). The floor is one ``t × t`` float64 Cholesky plus one triangular solve
with ``n`` right-hand sides, timed in the same run: the linear algebra any exact GP posterior over
the candidates needs. A round rebuilds the BoTorch model (every noise changes for WGP-UCB), so it
costs a Cholesky for the mean cache, one for the covariance cache, one for the information gain
of ``β_t``, and the batched ``N × 1 × d`` acquisition evaluation.
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


def round_seconds(name: str, t: int, n: int, repeats: int) -> float:
    X = torch.linspace(0, 1, n, dtype=torch.float64).unsqueeze(-1)
    policy = make_drift_policy(name, X, max(t, 3), 0.05, 1.0, torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(n, (t - 1,), generator=g)
    state = policy.state_dict()
    state.update(t=t - 1, train_X=X[idx], rewards=torch.sin(6 * X[idx, 0]) + 0.05 * torch.randn(t - 1, generator=g))
    times = []
    for _ in range(repeats + 1):
        policy.load_state_dict(state)
        start = time.perf_counter()
        i = policy.select()
        policy.update(i, 0.0)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t", type=int, default=500)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine_info()}\n")
    floor = floor_seconds(args.t, args.n, args.repeats)
    print(f"floor: chol({args.t}) + trsm({args.t} × {args.n}) = {floor:.4f} s\n")
    print("| algorithm | t | observations in the model | s / round | round / floor |\n|---|---|---|---|---|")
    for name, label in DRIFT_POLICY_LABELS.items():
        seconds = round_seconds(name, args.t, args.n, args.repeats)
        X = torch.linspace(0, 1, args.n, dtype=torch.float64).unsqueeze(-1)
        policy = make_drift_policy(name, X, max(args.t, 3), 0.05, 1.0, torch.Generator())
        size = min(args.t - 1, getattr(policy, "window", None) or args.t - 1)
        if hasattr(policy, "period"):
            size = (args.t - 1) % policy.period
        print(f"| {label} | {args.t} | {size} | {seconds:.4f} | {seconds / floor:.1f} |")


if __name__ == "__main__":
    main()
