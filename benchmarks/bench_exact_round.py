"""Per-round time of exact kernelized Exp3 against the dense linear-algebra floor.

Usage: python benchmarks/bench_exact_round.py [--sizes 400 1000 2000 4000] [--reps 5] [--device cpu]

For each ``n`` (1-D grid, SE kernel, the paper's parameters for T = 1000) it times full policy
rounds (``probabilities`` + ``select`` + ``update``) and, in the same run on the same matrix size,
the floor: one Cholesky of an ``n × n`` SPD matrix plus one triangular solve with ``n``
right-hand sides. Reports medians and the ratio round / floor (target ≤ 1.5 at n = 2000).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from torch_advbandit import KernelizedExp3
from torch_advbandit.experiments.runner import machine_info
from torch_advbandit.kernels import kernel_matrix, make_kernel
from torch_advbandit.parameters import paper_parameters


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_seconds(fn, reps: int, device: torch.device) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def floor_seconds(K: torch.Tensor, reps: int) -> float:
    """Cholesky of K + 1e-3·I plus a triangular solve with n right-hand sides."""
    M = K + 1e-3 * torch.eye(K.shape[0], dtype=K.dtype, device=K.device)

    def step():
        L = torch.linalg.cholesky(M)
        torch.linalg.solve_triangular(L, K, upper=False)

    return median_seconds(step, reps, K.device)


def round_seconds(X: torch.Tensor, reps: int) -> float:
    T = 1000
    policy = KernelizedExp3(
        X, make_kernel("se", 1), T, **paper_parameters("se", T, 1), generator=torch.Generator(X.device).manual_seed(0)
    )
    gen = torch.Generator().manual_seed(1)

    def step():
        policy.probabilities()
        i = policy.select()
        policy.update(i, float(torch.rand((), generator=gen, dtype=torch.float64)) * 4 - 2)

    return median_seconds(step, reps, X.device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[400, 1000, 2000, 4000])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"machine: {machine_info()}\n")
    print("| n | round (s) | floor: chol + trsm (s) | round / floor |")
    print("|---|---|---|---|")
    for n in args.sizes:
        X = torch.linspace(0, 1, n, dtype=torch.float64, device=device).unsqueeze(-1)
        K = kernel_matrix(make_kernel("se", 1, device=device), X)
        floor = floor_seconds(K, args.reps)
        rnd = round_seconds(X, args.reps)
        print(f"| {n} | {rnd:.4f} | {floor:.4f} | {rnd / floor:.2f} |", flush=True)


if __name__ == "__main__":
    main()
