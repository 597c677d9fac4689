"""RLS-kernelized Exp3 ([Iwazaki2026], Alg. 5): per-round time and dictionary size against exact kernelized Exp3.

Usage: python benchmarks/bench_rls.py [--rounds 3] [--sizes 1000 10000 100000] [--skip-exact]

Part 1 — setting 3 (10 000-point grid of [0, 1], SE, the paper's parameters for T = 1000):
RLS per-round time (median of ``--rounds`` rounds) and one round of exact kernelized Exp3 in the
same run, with their ratio (the paper's protocol for exact Exp3 on settings 3–4).

Part 2 — dictionary size ``s_t`` and per-round time against ``n`` on 1-D grids (SE and Matérn-3/2),
for the ``paper`` and ``default`` configurations (``CONFIGURATIONS``), each size in a fresh process so
its peak resident memory is its own.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time

import torch

from torch_advbandit import KernelizedExp3, RLSKernelizedExp3
from torch_advbandit.experiments.runner import machine_info
from torch_advbandit.experiments.settings import RLS_OPTIONS
from torch_advbandit.kernels import make_kernel
from torch_advbandit.parameters import paper_parameters

#: ``paper``: Eq. 6's embedding at float64's rank and ``"ridge_squared"`` pivoting, as the experiments
#: run the policy; ``default``: the library's defaults (truncated embedding, ``"ridge"`` pivoting).
CONFIGURATIONS = {"paper": RLS_OPTIONS, "default": {}}


def timed_rounds(policy, X: torch.Tensor, rounds: int) -> tuple[float, list[float]]:
    """Median seconds per round (probabilities + select + update) and the dictionary sizes."""
    times, sizes = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        policy.probabilities()
        i = policy.select()
        policy.update(i, math.sin(7.0 * float(X[i, 0])))
        times.append(time.perf_counter() - start)
        sizes.append(policy.diagnostics().get("dictionary_size", float(X.shape[0])))
    return statistics.median(times), sizes


def gemm_seconds(n: int, s: int) -> float:
    """Seconds of one ``(n × s)·(s × s)`` float64 product (after a warm-up): the floor unit of an RLS round."""
    A, B = torch.randn(n, s, dtype=torch.float64), torch.randn(s, s, dtype=torch.float64)
    A @ B  # warm-up
    start = time.perf_counter()
    A @ B
    return time.perf_counter() - start


def grid(n: int) -> torch.Tensor:
    return torch.linspace(0, 1, n, dtype=torch.float64).unsqueeze(-1)


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def make(cls, X, kernel_name, T=1000, **options):
    """``cls`` on the candidates ``X`` (any dimension) with the paper's parameters for ``T`` rounds."""
    algorithm = "rls_kernelized_exp3" if cls is RLSKernelizedExp3 else "kernelized_exp3"
    d = X.shape[-1]
    params = paper_parameters(kernel_name, T, d, algorithm=algorithm)
    return cls(X, make_kernel(kernel_name, d), T, **params, **options, generator=torch.Generator().manual_seed(0))


def one_size(kernel_name: str, n: int, rounds: int, config: str) -> dict[str, float]:
    """Measure one (kernel, n, configuration) in a fresh interpreter; returns seconds, mean s_t and peak RSS."""
    code = (
        "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_rls as b; "
        f"X = b.grid({n}); p = b.make(b.RLSKernelizedExp3, X, {kernel_name!r}, **b.CONFIGURATIONS[{config!r}]); "
        f"t, s = b.timed_rounds(p, X, {rounds}); "
        "print(json.dumps(dict(seconds=t, size=sum(s) / len(s), peak=b.peak_gib())))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--skip-exact", action="store_true")
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), choices=list(CONFIGURATIONS))
    parser.add_argument("--kernels", nargs="+", default=["se", "matern32"], choices=["se", "matern52", "matern32"])
    args = parser.parse_args()
    print(f"machine: {machine_info()}\n")

    print("### Scaling in n (1-D grid, T = 1000 parameters; each size in a fresh process)\n")
    print("| kernel | configuration | n | s / round | mean s_t | s_t / n | peak RSS (GiB) |")
    print("|---|---|---|---|---|---|---|")
    for kernel_name in args.kernels:
        for config in args.configurations:
            for n in args.sizes:
                r = one_size(kernel_name, n, args.rounds, config)
                print(
                    f"| {kernel_name} | {config} | {n} | {r['seconds']:.3f} | {r['size']:.0f} | {r['size'] / n:.3f} "
                    f"| {r['peak']:.2f} |",
                    flush=True,
                )

    X = grid(10_000)
    print("\n### Setting 3 (n = 10 000, SE, T = 1000)\n", flush=True)
    rls_round, sizes = timed_rounds(make(RLSKernelizedExp3, X, "se"), X, args.rounds)
    s_mean = round(statistics.mean(sizes))
    gemm = gemm_seconds(10_000, s_mean)
    print(f"floor unit: one (n × s_t)·(s_t × s_t) float64 product = {gemm:.3f} s (2·n·s_t² flops)\n")
    print("| algorithm | s / round | mean s_t | exact / RLS | round / floor unit |\n|---|---|---|---|---|")
    if not args.skip_exact:
        exact_policy = make(KernelizedExp3, X, "se")
        exact_round, _ = timed_rounds(exact_policy, X, 1)
        del exact_policy
        print(f"| Kernelized Exp3 (one round) | {exact_round:.2f} | — | — | — |")
    ratio = f"{exact_round / rls_round:.1f}" if not args.skip_exact else "—"
    print(f"| RLS-Kernelized Exp3 | {rls_round:.3f} | {s_mean} | {ratio} | {rls_round / gemm:.1f} |\n", flush=True)


if __name__ == "__main__":
    main()
