"""The named experiments of the command line: each turns options into trials and records into reports.

``torch-advbandit reproduce NAME`` looks ``NAME`` up in :data:`EXPERIMENTS`, runs
``experiment.configs(options)`` as one resumable sweep, and hands the records to
``experiment.report``; ``torch-advbandit run`` is :func:`setting_configs` with
:func:`summary_report`. A new experiment is one more entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..kernels import KERNEL_NAMES
from .adversarial import ENVIRONMENTS, TrialConfig
from .botorch_drift import BENCHMARK_PROBLEMS, BOTORCH_METHODS, DRIFT_SCENARIOS, BoTorchDriftTrialConfig
from .drift import DRIFT_POLICY_LABELS, FIGURE1_POLICIES, figure1_configs
from .drift_report import (
    drifting_markdown,
    figure1_markdown,
    plot_discounts,
    plot_drifting,
    plot_drifting_memory,
    plot_figure1,
)
from .grids import GRIDS
from .records import TrialRecord, atomic_file
from .report import markdown_table, plot_regret, summarize, write_csv
from .settings import ONE_ROUND_TIMING, POLICY_LABELS
from .tables import growth_markdown, growth_rows, plot_growth, plot_settings, table3_markdown
from .trials import TRIAL_KINDS, Trial, seed_range


@dataclass(frozen=True)
class Options:
    """What a user may override; ``None`` keeps the experiment's own value.

    Example:
        >>> Options(quick=True, seeds=2).seeds
        2
    """

    quick: bool = False
    settings: tuple[int, ...] | None = None
    kernels: tuple[str, ...] | None = None
    policies: tuple[str, ...] | None = None
    horizons: tuple[int, ...] | None = None
    seeds: int | None = None
    first_seed: int = 0
    functions: int | None = None
    device: str = "cpu"
    noise: float = 0.05
    beta_scale: float = 1.0
    problems: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Experiment:
    """A named experiment: ``configs(options) -> trials`` and ``report(records, out) -> (table, files)``.

    ``report`` writes its tables and figures under ``out`` and returns the Markdown table to print
    and the files it wrote.

    Example:
        >>> [t.key for t in EXPERIMENTS["table3"].configs(Options(quick=True, settings=(1,), kernels=("se",),
        ...                                                  policies=("uniform",), seeds=1))]
        ['s1-se-uniform-T200-seed0-F200x100-cpu']
    """

    name: str
    help: str
    configs: Callable[[Options], list[Trial]]
    report: Callable[[list[TrialRecord], Path], tuple[str, list[Path]]]
    kind: str = "adversarial"  # the trial kind (trials.TRIAL_KINDS) of its records
    order: Callable[[TrialRecord], tuple] | None = None  # a sweep's order for records read from a folder

    def records_of(self, records: list[TrialRecord]) -> list[TrialRecord]:
        """The records of this experiment's trial kind among ``records`` (a results folder may hold
        others), in the order a sweep of its grid would return them (:attr:`order`)."""
        kind = TRIAL_KINDS[self.kind]
        return sorted((r for r in records if isinstance(r.trial, kind)), key=self.order or (lambda r: ()))


def _grid_order(record: TrialRecord) -> tuple:
    """:meth:`~torch_advbandit.experiments.grids.Grid.configs`' nesting (seeds outermost), with the
    kernels and policies in their catalogue order."""
    c = record.trial
    kernel = KERNEL_NAMES.index(c.kernel) if c.kernel in KERNEL_NAMES else len(KERNEL_NAMES)
    policies = list(POLICY_LABELS)
    policy = policies.index(c.policy) if c.policy in policies else len(policies)
    return (c.seed, ENVIRONMENTS.index(c.environment), c.setting, kernel, c.kernel, c.horizon, policy, c.policy)


def _grid_configs(name: str) -> Callable[[Options], list[Trial]]:
    def configs(options: Options) -> list[Trial]:
        grid = GRIDS[name + ("-quick" if options.quick else "")].with_overrides(
            settings=options.settings,
            kernels=options.kernels,
            policies=options.policies,
            horizons=options.horizons,
            seeds=options.seeds,
            num_functions=options.functions,
            first_seed=options.first_seed,
        )
        return grid.configs(options.device)

    return configs


def _table3_report(records: list[TrialRecord], out: Path) -> tuple[str, list[Path]]:
    rows = summarize(records)
    table = table3_markdown(rows)
    _write_text(out / "table3.md", f"{table}\n\n{markdown_table(rows)}\n")
    return table, [write_csv(rows, out / "summary.csv"), out / "table3.md", *plot_settings(records, out)]


def _growth_report(records: list[TrialRecord], out: Path) -> tuple[str, list[Path]]:
    rows = summarize(records)
    growth = growth_rows(rows)
    table = growth_markdown(growth)
    _write_text(out / "growth.md", table + "\n")
    return table, [write_csv(rows, out / "summary.csv"), out / "growth.md", plot_growth(growth, out)]


def _figure1_configs(options: Options) -> list[Trial]:
    if options.horizons is not None and len(options.horizons) != 1:
        raise ValueError("figure1 takes one --horizon")
    runs = options.seeds or (3 if options.quick else 100)
    horizon = options.horizons[0] if options.horizons else 500
    policies = options.policies or FIGURE1_POLICIES
    unknown = sorted(set(policies) - set(DRIFT_POLICY_LABELS))
    if unknown:
        raise ValueError(f"figure1 policies must be among {sorted(DRIFT_POLICY_LABELS)}, got {unknown}")
    return figure1_configs(
        runs,
        horizon=horizon,
        noise_std=options.noise,
        beta_scale=options.beta_scale,
        policies=tuple(policies),
        first_seed=options.first_seed,
    )


def _figure1_report(records: list[TrialRecord], out: Path) -> tuple[str, list[Path]]:
    table = figure1_markdown(records)
    _write_text(out / "figure1.md", table + "\n")
    discounts = plot_discounts(records, out)
    return table, [out / "figure1.md", plot_figure1(records, out), *([discounts] if discounts else [])]


def _drifting_configs(options: Options) -> list[Trial]:
    methods = options.policies or tuple(BOTORCH_METHODS)
    unknown = sorted(set(methods) - set(BOTORCH_METHODS))
    if unknown:
        raise ValueError(f"drifting methods must be among {sorted(BOTORCH_METHODS)}, got {unknown}")
    if "botorch_ucb" not in methods:  # every ratio is to vanilla BoTorch on the same seeds (records reused if there)
        methods = ("botorch_ucb", *methods)
    problems = options.problems or (("branin",) if options.quick else BENCHMARK_PROBLEMS)
    horizon = options.horizons[0] if options.horizons else (12 if options.quick else 50)
    seeds = options.seeds or (2 if options.quick else 5)
    n = 256 if options.quick else 2048
    return [
        BoTorchDriftTrialConfig(problem, scenario, method, seed, horizon, num_candidates=n)
        for seed in seed_range(options.first_seed, seeds)
        for problem in problems
        for scenario in DRIFT_SCENARIOS
        for method in methods
        if method != "botorch_oracle" or scenario == "abrupt"  # without a jump the oracle is botorch_ucb
    ]


def _drifting_report(records: list[TrialRecord], out: Path) -> tuple[str, list[Path]]:
    table = drifting_markdown(records)
    _write_text(out / "drifting.md", table + "\n")
    memory = plot_drifting_memory(records, out)
    return table, [out / "drifting.md", plot_drifting(records, out)] + ([memory] if memory else [])


def _write_text(path: Path, text: str) -> None:
    """Write a table file atomically (:func:`~torch_advbandit.experiments.records.atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(text)


#: ``torch-advbandit reproduce`` experiments by name.
EXPERIMENTS: dict[str, Experiment] = {
    "table3": Experiment(
        "table3", "[Iwazaki2026], Table 3", _grid_configs("table3"), _table3_report, order=_grid_order
    ),
    "growth": Experiment("growth", "regret exponents in T", _grid_configs("growth"), _growth_report, order=_grid_order),
    "figure1": Experiment(
        "figure1", "[Deng2022], Fig. 1 (GP-UCB on drift)", _figure1_configs, _figure1_report, kind="drift"
    ),
    "drifting": Experiment(
        "drifting",
        "BoTorch test functions that jump, drift or stay: against vanilla BoTorch",
        _drifting_configs,
        _drifting_report,
        kind="botorch_drift",
    ),
}


def setting_configs(
    setting: int,
    kernels: tuple[str, ...],
    policies: tuple[str, ...],
    horizon: int,
    seeds: int,
    *,
    functions: int = 1000,
    centres: int = 100,
    device: str = "cpu",
    full_exact: bool = False,
    first_seed: int = 0,
) -> list[TrialConfig]:
    """The trials of ``torch-advbandit run``: every (kernel, policy, seed) on one setting, with the
    seeds ``first_seed, …, first_seed + seeds − 1``.

    Exact kernelized Exp3 on settings 3–4 is timed for one round (the paper's protocol) unless
    ``full_exact``.

    Example:
        >>> [c.timed_rounds for c in setting_configs(3, ("se",), ("kernelized_exp3", "uniform"), 100, 1)]
        [1, None]
    """
    seed_list = seed_range(first_seed, seeds)  # checked first

    def timed(policy: str) -> int | None:
        return 1 if (policy, setting) in ONE_ROUND_TIMING and not full_exact else None

    return [
        TrialConfig(setting, kernel, policy, horizon, seed, functions, centres, device, timed(policy))
        for kernel in kernels
        for policy in policies
        for seed in seed_list
    ]


def summary_report(records: list[TrialRecord], out: Path) -> tuple[str, list[Path]]:
    """The report of ``torch-advbandit run``: ``summary.md``, ``summary.csv`` and a regret plot per kernel.

    Example:
        >>> import tempfile
        >>> records = [c.run() for c in setting_configs(1, ("se",), ("uniform",), 5, 1, functions=10, centres=5)]
        >>> table, files = summary_report(records, Path(tempfile.mkdtemp()))
        >>> [f.name for f in files]
        ['summary.md', 'summary.csv', 'regret_setting1_se_T5.png']
    """
    rows = summarize(records)
    table = markdown_table(rows)
    _write_text(out / "summary.md", table + "\n")
    return table, [out / "summary.md", write_csv(rows, out / "summary.csv"), *plot_regret(records, out)]
