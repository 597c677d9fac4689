"""The ``torch-advbandit`` command line."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .kernels import KERNEL_NAMES


def _parser() -> argparse.ArgumentParser:
    from .experiments.botorch_drift import BOTORCH_METHODS, PROBLEM_NAMES
    from .experiments.catalog import EXPERIMENTS
    from .experiments.drift import DRIFT_POLICY_LABELS
    from .experiments.settings import POLICIES, SETTINGS

    parser = argparse.ArgumentParser(
        prog="torch-advbandit", description="Adversarial and non-stationary kernelized bandits."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="run policies against the adaptive adversary of [Iwazaki2026], App. 17",
        description="Run one setting of the paper's experiment: every (kernel, policy, seed), "
        "a results table (mean ± s.e. of the final regret, seconds per round) and regret plots.",
    )
    run.add_argument("--setting", type=int, required=True, choices=sorted(SETTINGS), help="candidate grid (1–4)")
    run.add_argument("--kernel", nargs="+", default=["se"], choices=KERNEL_NAMES, help="kernel(s)")
    run.add_argument("--policy", nargs="+", default=["kernelized_exp3", "uniform"], choices=sorted(POLICIES))
    run.add_argument("--horizon", type=int, default=1000, help="T, the number of rounds")
    run.add_argument("--seeds", type=int, default=10, help="number of seeds (K, K+1, …, K+S−1)")
    run.add_argument("--first-seed", type=int, default=0, metavar="K", help="the first seed (default 0)")
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

    rep = sub.add_parser(
        "reproduce",
        help="reproduce an experiment as one resumable sweep (table3, growth, figure1, drifting)",
        description="Run a named experiment grid (experiments.grids.GRIDS) in worker processes or on Ray. "
        "Finished trials are kept in OUT/trials.jsonl.xz; a re-run resumes.",
    )
    rep.add_argument(
        "experiment",
        choices=sorted(EXPERIMENTS),
        help="; ".join(f"{name}: {e.help}" for name, e in EXPERIMENTS.items()),
    )
    rep.add_argument("--quick", action="store_true", help="the reduced grid that finishes in minutes")
    rep.add_argument("--out", type=Path, required=True, help="results folder (created; finished trials are kept)")
    rep.add_argument("--backend", default="local", choices=["local", "ray", "serial"], help="where trials run")
    rep.add_argument("--workers", type=int, help="worker processes (local) or CPUs of a local Ray instance")
    rep.add_argument("--threads-per-worker", type=int, help="torch threads per worker (default CPUs / workers)")
    rep.add_argument("--address", help="address of an existing Ray cluster (default: start a local one)")
    rep.add_argument("--settings", type=int, nargs="+", choices=sorted(SETTINGS), help="override the settings")
    rep.add_argument("--kernel", nargs="+", choices=KERNEL_NAMES, help="override the kernels")
    rep.add_argument(
        "--policy",
        nargs="+",
        choices=sorted(set(POLICIES) | set(DRIFT_POLICY_LABELS) | set(BOTORCH_METHODS)),
        help="override the algorithms (figure1: the GP-UCB variants; drifting: the methods, always with botorch_ucb)",
    )
    rep.add_argument(
        "--problem",
        nargs="+",
        choices=sorted(PROBLEM_NAMES),
        help="drifting: the test functions (default branin hartmann6 levy4; held out: hartmann3 styblinskitang3)",
    )
    rep.add_argument("--horizon", type=int, nargs="+", help="override the horizon(s) T")
    rep.add_argument("--seeds", type=int, help="override the number of seeds (figure1: runs, default 100)")
    rep.add_argument(
        "--first-seed",
        type=int,
        default=0,
        metavar="K",
        help="run the seeds K, K+1, … (default 0), e.g. to share the seeds between machines; `report --merge` "
        "joins their results folders",
    )
    rep.add_argument("--noise", type=float, default=0.05, help="figure1: observation noise std (default 0.05)")
    rep.add_argument("--beta-scale", type=float, default=1.0, help="figure1: multiplies every β_t (default 1)")
    rep.add_argument("--functions", type=int, help="override the adversary's number of functions")
    rep.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
    rep.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    rep.add_argument(
        "--checkpoint-minutes",
        type=float,
        default=10.0,
        help="save each running adversarial trial every M minutes under OUT/checkpoints; a re-run continues a "
        "stopped trial from there (default 10; 0 turns it off)",
    )
    rep.add_argument(
        "--drop-stale",
        action="store_true",
        help="delete the records under OUT made by other versions of the code (default: kept, never served)",
    )
    rp = sub.add_parser(
        "report",
        help="rewrite an experiment's tables and figures from the records of a results folder",
        description="Merge the records of other results folders (--merge) into OUT, then write the experiment's "
        "tables and figures from every current record of its kind under OUT. Nothing is run.",
    )
    rp.add_argument("experiment", choices=sorted(EXPERIMENTS), help="the report to write")
    rp.add_argument("--out", type=Path, required=True, help="results folder (its records are kept)")
    rp.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        default=[],
        metavar="SRC",
        help="results folders whose records OUT does not have are copied in first (SRC is only read)",
    )
    return parser


def _print_outputs(table: str, out: Path, files: list[Path]) -> None:
    print(table)
    print(f"\nrecords: {out / 'trials.jsonl.xz'}")
    for path in files:
        print(f"{'plot' if path.suffix == '.png' else 'table'}: {path}")


def _sweep(args: argparse.Namespace, configs, name: str, **backend):
    from . import experiments

    args.out.mkdir(parents=True, exist_ok=True)
    return experiments.run_sweep(configs, args.out, progress=not args.no_progress, name=name, **backend)


def _run(args: argparse.Namespace) -> int:
    from .experiments.catalog import setting_configs, summary_report

    configs = setting_configs(
        args.setting,
        tuple(args.kernel),
        tuple(args.policy),
        args.horizon,
        args.seeds,
        functions=args.functions,
        centres=args.centres,
        device=args.device,
        full_exact=args.full_exact,
        first_seed=_first_seed(args),
    )
    records = _sweep(args, configs, f"setting {args.setting}", backend="serial")
    table, files = summary_report(records, args.out)
    _print_outputs(table, args.out, files)
    return 0


def _first_seed(args: argparse.Namespace) -> int:
    if args.first_seed < 0:
        raise ValueError(f"--first-seed must be ≥ 0, got {args.first_seed}")
    return args.first_seed


def _reproduce(args: argparse.Namespace) -> int:
    from .experiments.catalog import EXPERIMENTS, Options

    if args.seeds is not None and args.seeds < 1:
        raise ValueError(f"--seeds must be ≥ 1, got {args.seeds}")
    if not args.checkpoint_minutes >= 0:
        raise ValueError(f"--checkpoint-minutes must be ≥ 0, got {args.checkpoint_minutes}")
    experiment = EXPERIMENTS[args.experiment]
    options = Options(
        quick=args.quick,
        settings=tuple(args.settings) if args.settings else None,
        kernels=tuple(args.kernel) if args.kernel else None,
        policies=tuple(args.policy) if args.policy else None,
        horizons=tuple(args.horizon) if args.horizon else None,
        seeds=args.seeds,
        first_seed=_first_seed(args),
        functions=args.functions,
        device=args.device,
        noise=args.noise,
        beta_scale=args.beta_scale,
        problems=tuple(args.problem) if args.problem else None,
    )
    records = _sweep(
        args,
        experiment.configs(options),
        experiment.name,
        backend=args.backend,
        workers=args.workers,
        threads_per_worker=args.threads_per_worker,
        address=args.address,
        drop_stale=args.drop_stale,
        checkpoint_every=60.0 * args.checkpoint_minutes if args.checkpoint_minutes != 0 else None,
    )
    table, files = experiment.report(records, args.out)
    _print_outputs(table, args.out, files)
    return 0


def _report(args: argparse.Namespace) -> int:
    from .experiments.catalog import EXPERIMENTS
    from .experiments.store import RecordStore

    for folder in [args.out, *args.merge]:
        if not folder.is_dir():
            raise ValueError(f"{folder}: no such results folder")
    store = RecordStore(args.out)
    copied = sum(store.merge(source) for source in args.merge)
    store.compact()
    experiment = EXPERIMENTS[args.experiment]
    records = experiment.records_of(store.records())
    if store.stale:
        warnings.warn(
            f"{len(store.stale)} stale record(s) under {args.out} left out: made by other versions of the code "
            f"(e.g. {store.stale[0]}); `reproduce` runs those trials again",
            RuntimeWarning,
            stacklevel=2,
        )
    if not records:
        raise ValueError(f"no current {experiment.name} records under {args.out}")
    if args.merge:
        print(f"merged {copied} record(s) from {len(args.merge)} folder(s) into {args.out}")
    table, files = experiment.report(records, args.out)
    _print_outputs(table, args.out, files)
    return 0


def _check_device(device: str) -> None:
    """``--device`` must name a device type (and index) this machine has."""
    import torch

    from .experiments.trials import check_device_name

    name = check_device_name(device)
    kind = name.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: no CUDA device is available on this machine")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"--device {name}: MPS is not available on this machine")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``torch-advbandit`` console script; returns the exit status.

    Example:
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> main(["run", "--setting", "1", "--kernel", "se", "--policy", "uniform", "--horizon", "5",
        ...       "--seeds", "1", "--out", out, "--no-progress"])  # doctest: +ELLIPSIS
        | setting | kernel | algorithm | T | seeds | regret (mean ± s.e.) |...
        plot: .../regret_setting1_se_T5.png
        0
    """
    args = _parser().parse_args(argv)
    try:
        if args.command == "report":
            return _report(args)
        _check_device(args.device)
        if args.command == "run":
            return _run(args)
        if args.command == "reproduce":
            return _reproduce(args)
    except (ValueError, TypeError, RuntimeError, OSError) as exc:  # OSError: --out unwritable, a full disk
        print(f"torch-advbandit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("torch-advbandit: interrupted; finished trials are kept and a re-run resumes", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
