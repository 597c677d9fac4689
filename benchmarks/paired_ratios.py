"""How sure the drifting benchmark's ratios are: a paired bootstrap over seeds, and each target's verdict.

Usage: python benchmarks/paired_ratios.py DIR [DIR ...] [--methods wgp_auto_fitted ...] [--resamples 4000]

For every problem, scenario and method in the current, whole records of each ``DIR`` (a ``reproduce drifting``
folder; stale and damaged records are left out as ``reproduce`` leaves them out), the ratio of the method's mean
final dynamic regret to vanilla BoTorch's (``botorch_ucb``) over the seeds both ran, and its 95 % interval from
resampling those seeds with replacement (the same seeds for both methods: the pairing keeps the problem's
seed-to-seed spread out of the ratio). The drifting benchmark's targets are ``≤ 0.9`` on a jump, ``≤ 1.0`` on a
drift and ``≤ 1.1`` where nothing moves; a verdict says whether the whole interval, only the point, or none of it
meets the target.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict

from torch_advbandit.experiments.store import RecordStore

TARGETS = {"abrupt": 0.9, "drift": 1.0, "stationary": 1.1}


def paired_interval(ours: list[float], base: list[float], resamples: int, seed: int = 0) -> tuple[float, float, float]:
    """``sum(ours)/sum(base)`` and its 2.5 % and 97.5 % bootstrap quantiles over paired resamples."""
    rng, n = random.Random(seed), len(ours)
    ratios = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        ratios.append(sum(ours[i] for i in idx) / sum(base[i] for i in idx))
    ratios.sort()
    return sum(ours) / sum(base), ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def verdict(low: float, point: float, high: float, target: float) -> str:
    if high <= target:
        return "met (whole interval)"
    if point <= target:
        return "met (point only)"
    return "missed (whole interval)" if low > target else "missed (point only)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--methods", nargs="+", default=None, help="methods to report (default: all but BoTorch)")
    parser.add_argument("--resamples", type=int, default=4000)
    args = parser.parse_args()
    if args.resamples < 100:
        parser.error("--resamples: at least 100")
    final: dict[tuple, dict[int, float]] = defaultdict(dict)
    for folder in args.dirs:
        for r in RecordStore(folder).records():
            c = r.trial
            final[(c.problem, c.scenario, c.method)][c.seed] = r.expected_regret[-1]
    print("| problem | scenario | method | seeds | / BoTorch | 95 % interval | target | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for problem, scenario, method in sorted(final):
        if method == "botorch_ucb" or (args.methods and method not in args.methods):
            continue
        base = final.get((problem, scenario, "botorch_ucb"), {})
        seeds = sorted(set(base) & set(final[(problem, scenario, method)]))
        if len(seeds) < 2:
            continue
        ours = [final[(problem, scenario, method)][s] for s in seeds]
        point, low, high = paired_interval(ours, [base[s] for s in seeds], args.resamples)
        target = TARGETS[scenario]
        print(f"| {problem} | {scenario} | {method} | {len(seeds)} | {point:.2f} | {low:.2f}–{high:.2f} | "
              f"≤ {target} | {verdict(low, point, high, target)} |")  # fmt: skip


if __name__ == "__main__":
    main()
