"""Regret table of settings 1 and 2 (seed 1, App. 17): kernelized Exp3, APG-Exp3 and Random, 3 kernels.

Usage: python benchmarks/regret_table.py [--horizon 1000] [--seeds 10] [--out benchmarks/results/regret]

Runs through the same resumable runner as ``torch-advbandit run`` (finished trials are kept
under OUT/trials and skipped on a re-run) and prints a Markdown table: mean ± standard error of
the final expected regret, the realised regret, mean seconds per round, and the regret ratios
Random / kernelized Exp3 and APG-Exp3 / kernelized Exp3 (machine-independent).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from torch_advbandit.experiments import TrialConfig, markdown_table, plot_regret, run_trials, summarize, write_csv
from torch_advbandit.experiments.runner import machine_info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--settings", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/regret"))
    args = parser.parse_args()
    configs = [
        TrialConfig(setting, kernel, policy, args.horizon, seed)
        for setting in args.settings
        for kernel in ("se", "matern52", "matern32")
        for policy in ("kernelized_exp3", "apg_exp3", "uniform")
        for seed in range(args.seeds)
    ]
    records = run_trials(configs, args.out)
    rows = summarize(records)
    write_csv(rows, args.out / "summary.csv")
    plot_regret(records, args.out)
    print(f"machine: {machine_info()}\n")
    print(markdown_table(rows))
    print("\n| setting | kernel | Random / Kernelized Exp3 | APG-Exp3 / Kernelized Exp3 |\n|---|---|---|---|")
    by_key = {(r.setting, r.kernel, r.policy): r for r in rows}
    for setting in args.settings:
        for kernel in ("se", "matern52", "matern32"):
            exp3 = by_key[(setting, kernel, "kernelized_exp3")].regret_mean
            ratio = by_key[(setting, kernel, "uniform")].regret_mean / exp3
            apg = by_key[(setting, kernel, "apg_exp3")].regret_mean / exp3
            print(f"| {setting} | {kernel} | {ratio:.1f} | {apg:.2f} |")


if __name__ == "__main__":
    main()
