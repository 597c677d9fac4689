"""The ``torch-advbandit`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .kernels import KERNEL_NAMES


def _parser() -> argparse.ArgumentParser:
    from .experiments.settings import POLICIES, SETTINGS

    parser = argparse.ArgumentParser(
        prog="torch-advbandit", description="Adversarial and non-stationary kernelized bandits."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="run policies against the adaptive adversary of seed 1, App. 17",
        description="Run one setting of the paper's experiment: every (kernel, policy, seed), "
        "a results table (mean ± s.e. of the final regret, seconds per round) and regret plots.",
    )
    run.add_argument("--setting", type=int, required=True, choices=sorted(SETTINGS), help="candidate grid (1–4)")
    run.add_argument("--kernel", nargs="+", default=["se"], choices=KERNEL_NAMES, help="kernel(s)")
    run.add_argument("--policy", nargs="+", default=["kernelized_exp3", "uniform"], choices=sorted(POLICIES))
    run.add_argument("--horizon", type=int, default=1000, help="T, the number of rounds")
    run.add_argument("--seeds", type=int, default=10, help="number of seeds (0, 1, …, S−1)")
    run.add_argument("--functions", type=int, default=1000, help="size of the adversary's function class")
    run.add_argument("--centres", type=int, default=100, help="kernel centres per adversary function")
    run.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    run.add_argument("--out", type=Path, required=True, help="results folder (created; finished trials are kept)")
    run.add_argument(
        "--full-exact",
        action="store_true",
        help="run exact kernelized Exp3 for the whole horizon on settings 3–4 too (by default it is "
        "timed for one round there, as in the paper)",
    )
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def _run(args: argparse.Namespace) -> int:
    from .experiments import TrialConfig, markdown_table, plot_regret, run_trials, summarize, write_csv
    from .experiments.settings import ONE_ROUND_TIMING

    if args.seeds < 1:
        raise ValueError(f"--seeds must be ≥ 1, got {args.seeds}")

    def timed(policy: str) -> int | None:
        return 1 if (policy, args.setting) in ONE_ROUND_TIMING and not args.full_exact else None

    configs = [
        TrialConfig(
            args.setting, kernel, policy, args.horizon, seed, args.functions, args.centres, args.device, timed(policy)
        )
        for kernel in args.kernel
        for policy in args.policy
        for seed in range(args.seeds)
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    records = run_trials(configs, args.out, progress=not args.no_progress)
    rows = summarize(records)
    table = markdown_table(rows)
    (args.out / "summary.md").write_text(table + "\n")
    write_csv(rows, args.out / "summary.csv")
    plots = plot_regret(records, args.out)
    print(table)
    print(f"\nrecords: {args.out / 'trials'}   table: {args.out / 'summary.csv'}")
    for p in plots:
        print(f"plot: {p}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``torch-advbandit`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
    except (ValueError, TypeError, RuntimeError) as exc:
        print(f"torch-advbandit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("torch-advbandit: interrupted; finished trials are kept and a re-run resumes", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
