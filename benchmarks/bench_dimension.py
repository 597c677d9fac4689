"""Cost of a kernelized Exp3 round in 6 dimensions: exact, low-rank and RLS-Nyström, derived parameters; APG-Exp3.

Usage: python benchmarks/bench_dimension.py [--sizes 1024 4096] [--rounds 5] [--d 6] [--estimators exact apg]

Candidates: ``n`` scrambled Sobol points of ``[0, 1]^d`` (seed 0), SE and Matérn-5/2 kernels with
``ℓ = 0.3·√d``, parameters derived from the candidate set for ``T = 1000``
(``KernelizedExp3(candidates, kernel, 1000)``). Each policy plays ``--warmup`` rounds with
rewards of a random RKHS function, then ``--rounds`` timed rounds (``probabilities`` + ``select``
+ ``update``); the median is reported with the setup time (derivation of the parameters, kernel
matrix or pivoted Cholesky, ``π``), the rank or dictionary size, and the ratio to the same run's
floor: one Cholesky of a dense ``n × n`` matrix. ``apg`` is APG-Exp3 with its own parameters (its
setup: the Newton basis and the G-optimal design; its size: ``D_T``).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
from torch.quasirandom import SobolEngine

from torch_advbandit import APGExp3, KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.kernels import kernel_matrix, make_kernel


def cholesky_floor(n: int, repeats: int = 3) -> float:
    A = torch.randn(n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    A = A @ A.T / n + torch.eye(n, dtype=torch.float64)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.linalg.cholesky(A)
        times.append(time.perf_counter() - start)
    return min(times)


def run(policy_name: str, X: torch.Tensor, kernel_name: str, rounds: int, warmup: int) -> dict:
    d = X.shape[-1]
    kernel = make_kernel(kernel_name, d, 0.3 * math.sqrt(d))
    gen = torch.Generator().manual_seed(1)
    start = time.perf_counter()
    if policy_name == "rls":
        policy = RLSKernelizedExp3(X, kernel, 1000, generator=gen)
    elif policy_name == "apg":
        policy = APGExp3(X, kernel, 1000, generator=gen)
    else:
        estimator = "lowrank" if policy_name == "lowrank" else "exact"
        policy = KernelizedExp3(X, kernel, 1000, estimator=estimator, generator=gen)
    setup = time.perf_counter() - start
    centres = X[torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(2))[:50]]
    coef = torch.rand(50, dtype=X.dtype, generator=torch.Generator().manual_seed(3)) * 2 - 1
    f = kernel_matrix(kernel, X, centres) @ coef
    f = f / f.abs().max()
    times = []
    for t in range(warmup + rounds):
        begin = time.perf_counter()
        policy.probabilities()
        i = policy.select()
        policy.update(i, float(f[i]))
        if t >= warmup:
            times.append(time.perf_counter() - begin)
    diag = policy.diagnostics()
    size = policy.num_features if policy_name == "apg" else diag.get("rank", diag.get("dictionary_size", X.shape[0]))
    return {"setup": setup, "round": statistics.median(times), "size": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--d", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    names = ["exact", "lowrank", "rls", "apg"]
    parser.add_argument("--estimators", nargs="+", choices=names, default=names)
    args = parser.parse_args()
    print(f"threads: {torch.get_num_threads()}, d = {args.d}, T = 1000 derived parameters")
    print("| n | kernel | estimator | setup s | s / round | rank or dictionary | round / Cholesky floor |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        X = SobolEngine(args.d, scramble=True, seed=0).draw(n, dtype=torch.float64)
        floor = cholesky_floor(n)
        for kernel_name in ("se", "matern52"):
            for name in args.estimators:
                r = run(name, X, kernel_name, args.rounds, args.warmup)
                print(
                    f"| {n} | {kernel_name} | {name} | {r['setup']:.2f} | {r['round']:.3g} | {r['size']:.0f} | "
                    f"{r['round'] / floor:.1f} |",
                    flush=True,
                )
        print(f"| {n} | | Cholesky floor | | {floor:.3g} | | 1.0 |", flush=True)


if __name__ == "__main__":
    main()
