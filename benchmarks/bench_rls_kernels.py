"""RLS-kernelized Exp3 ([Iwazaki2026], Alg. 5) on setting 3 or 4 by kernel: SE, Matérn-5/2, Matérn-3/2 in one run.

Usage: python benchmarks/bench_rls_kernels.py [--n 10000 | --setting 4] [--rounds 3] [--profile matern32]
    [--configurations default]

``--setting 4`` runs on the 100 × 100 grid of ``[0, 1]²`` (setting 4) instead of the ``n``-point grid
of ``[0, 1]`` (setting 3 for ``n = 10⁴``).

For two configurations of the policy — ``paper``: Eq. 6's embedding at float64's numerical rank
(``embedding_tolerance=0``) and the leverage scores' ``"ridge_squared"`` pivoting, as the
experiments run it; ``default``: the library's defaults, the truncated embedding (``τ = 10⁻⁴``)
and ``"ridge"`` pivoting — and each kernel: the median seconds of ``--rounds`` rounds
(probabilities + select + update, the paper's parameters for T = 1000 on the n-point grid of
[0, 1]), the round against the SE round of the same configuration and run, the mean dictionary size
``s_t``, the rank ``r`` of the embedding of the last dictionary, and the round against a floor
unit measured in the same run: one ``(n × s_t)·(s_t × s_t)`` float64 product, the size of each
of the Nyström estimator's ``n·s·r`` / ``n·r²`` steps when ``r ≈ s_t``. ``--profile K`` prints the
cProfile top entries of one more round with kernel ``K`` in each configuration.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics

from bench_rls import CONFIGURATIONS, gemm_seconds, grid, make, timed_rounds

from torch_advbandit import RLSKernelizedExp3
from torch_advbandit.embedding import nystrom_features
from torch_advbandit.experiments.runner import machine_info
from torch_advbandit.experiments.settings import SETTINGS

LABELS = {"se": "SE", "matern52": "Matérn-5/2", "matern32": "Matérn-3/2"}


def basis_rank(policy, X) -> int:
    """Rank of the embedding of the policy's last dictionary (with its current ``P``), as its estimator builds it."""
    est = policy.estimator
    energy = est.embedding_tolerance * est.ridge
    return nystrom_features(est.kernel, X, policy.probabilities(), est.last_sample, energy=energy).shape[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=sorted(LABELS), default=None)
    parser.add_argument("--setting", type=int, choices=[4], default=None, help="the 2-D grid of setting 4")
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), choices=list(CONFIGURATIONS))
    args = parser.parse_args()
    print(f"machine: {machine_info()}\n")
    X = grid(args.n) if args.setting is None else SETTINGS[args.setting].candidates()
    print(
        "| configuration | kernel | s / round | round / SE round | mean s_t | basis rank r | floor unit (s) "
        "| round / floor unit |"
    )
    print("|---|---|---|---|---|---|---|---|")
    profiled = {}
    for config in args.configurations:
        options = CONFIGURATIONS[config]
        se_round = None
        for name in ("se", "matern52", "matern32"):
            policy = make(RLSKernelizedExp3, X, name, **options)
            seconds, sizes = timed_rounds(policy, X, args.rounds)
            se_round = seconds if se_round is None else se_round
            s_mean = round(statistics.mean(sizes))
            unit = gemm_seconds(X.shape[0], s_mean)
            print(
                f"| {config} | {LABELS[name]} | {seconds:.3f} | {seconds / se_round:.1f} | {s_mean} "
                f"| {basis_rank(policy, X)} | {unit:.3f} | {seconds / unit:.1f} |",
                flush=True,
            )
            if name == args.profile:
                profiled[config] = policy
    for config, policy in profiled.items():
        profile = cProfile.Profile()
        profile.runcall(timed_rounds, policy, X, 1)
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
        print(f"\ncProfile of one {LABELS[args.profile]} round, {config} (top entries by own time):\n")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])


if __name__ == "__main__":
    main()
