"""Tables and figures from trial records: mean ± standard error over seeds, regret curves."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .records import TrialRecord, atomic_file
from .settings import POLICY_LABELS


@dataclass(frozen=True)
class SummaryRow:
    """One (setting, kernel, policy, horizon) cell: final regret and per-round time over seeds.

    Example:
        >>> row = SummaryRow(1, "se", "uniform", 100, 3, 150.0, 2.0, 151.0, 2.5, 1e-4)
        >>> row.regret_mean, row.timing_only
        (150.0, False)
    """

    setting: int
    kernel: str
    policy: str
    horizon: int
    seeds: int
    regret_mean: float
    regret_se: float
    realised_mean: float
    realised_se: float
    round_seconds: float
    dictionary_size: float | None = None
    timing_only: bool = False
    environment: str = "adaptive"


def mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for a single value).

    Example:
        >>> m, se = mean_se([1.0, 2.0, 3.0])
        >>> m, round(se, 4)
        (2.0, 0.5774)
    """
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return m, math.sqrt(var / len(values))


def mean_se_curve(curves: list[list[float]]):
    """Pointwise mean and standard error of equal-length curves: two ``Tensor[len]`` (s.e. 0 for one curve).

    Example:
        >>> mean, se = mean_se_curve([[1.0, 2.0], [3.0, 4.0]])
        >>> mean.tolist(), se.tolist()
        ([2.0, 3.0], [1.0, 1.0])
    """
    import torch

    stacked = torch.tensor(curves, dtype=torch.float64)
    mean = stacked.mean(0)
    se = stacked.std(0) / math.sqrt(len(curves)) if len(curves) > 1 else torch.zeros_like(mean)
    return mean, se


def save_figure(fig, path: str | Path, dpi: int = 110) -> Path:
    """``tight_layout``, write ``path`` as PNG (atomically), close the figure; returns the path.

    Example:
        >>> import matplotlib.pyplot as plt
        >>> fig, ax = plt.subplots()
        >>> _ = ax.plot([0, 1], [0, 1])
        >>> import tempfile
        >>> save_figure(fig, Path(tempfile.mkdtemp()) / "line.png").name
        'line.png'
    """
    import matplotlib.pyplot as plt

    fig.tight_layout()
    try:
        with atomic_file(path, "wb") as fh:  # a full disk leaves no truncated PNG
            fig.savefig(fh, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return Path(path)


def trial_hours(record: TrialRecord) -> float:
    """The learner's hours in one trial: construction plus every round (the environment's time excluded).

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> trial_hours(TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5).run()) < 0.01
        True
    """
    return (record.setup_seconds + sum(record.round_seconds)) / 3600.0


def makespan(durations: list[float], slots: int) -> float:
    """Wall time of independent jobs on ``slots`` identical workers, longest job first to the least loaded
    worker ([Graham1969]'s LPT rule: within ``4/3 − 1/(3·slots)`` of the best schedule, and never below
    ``max(max(durations), sum(durations)/slots)``).

    Args:
        durations: each job's time (any unit; non-negative).
        slots: workers, ``≥ 1`` (machines × workers per machine).

    Example:
        >>> makespan([5.0, 4.0, 3.0, 3.0, 3.0], 2)  # the best schedule: 9 (LPT is 4/3-optimal)
        10.0
        >>> makespan([6.0, 1.0, 1.0], 8)  # the longest job decides
        6.0
    """
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
        raise ValueError(f"slots must be a positive integer, got {slots!r}")
    if any(not (d >= 0 and math.isfinite(d)) for d in durations):
        raise ValueError("durations must be finite and non-negative")
    loads = [0.0] * min(slots, max(1, len(durations)))
    for duration in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += duration
    return max(loads)


def _groups(records: list[TrialRecord]) -> dict[tuple, list[TrialRecord]]:
    groups: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for r in records:
        c = r.trial
        groups[(c.setting, c.kernel, c.policy, c.horizon, c.timing_only, c.environment)].append(r)
    return groups


def summarize(records: list[TrialRecord]) -> list[SummaryRow]:
    """One :class:`SummaryRow` per (setting, kernel, policy, horizon, environment), in first-seen order.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig, run_trial
        >>> configs = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5) for s in (0, 1)]
        >>> records = [run_trial(c) for c in configs]
        >>> [(r.policy, r.seeds) for r in summarize(records)]
        [('uniform', 2)]
    """
    rows = []
    for (setting, kernel, policy, horizon, _, environment), group in _groups(records).items():
        regret = mean_se([r.expected_regret[-1] for r in group])
        realised = mean_se([r.realised_regret[-1] for r in group])
        seconds = sum(r.mean_round_seconds for r in group) / len(group)
        sizes = [v for r in group for v in r.diagnostics.get("dictionary_size", [])]
        rows.append(
            SummaryRow(
                setting,
                kernel,
                policy,
                horizon,
                len(group),
                *regret,
                *realised,
                seconds,
                dictionary_size=sum(sizes) / len(sizes) if sizes else None,
                timing_only=any(r.trial.timing_only for r in group),
                environment=environment,
            )
        )
    return rows


def markdown_table(rows: list[SummaryRow]) -> str:
    """A Markdown table shaped like the paper's Table 3 (regret mean ± s.e., seconds per round).

    Timing-only rows (one round of exact kernelized Exp3 on settings 3–4) show no regret; the
    last column, present when some policy has one, is the mean Nyström dictionary size ``s_t``.

    Example:
        >>> rows = [SummaryRow(1, "se", "uniform", 100, 3, 150.0, 2.0, 151.0, 2.5, 1e-4)]
        >>> markdown_table(rows).splitlines()[0].startswith("|")
        True
    """
    sizes = any(r.dictionary_size is not None for r in rows)
    header = "| setting | kernel | algorithm | T | seeds | regret (mean ± s.e.) | realised regret | s / round |"
    lines = [header + (" mean s_t |" if sizes else ""), "|---" * (9 if sizes else 8) + "|"]
    for r in rows:
        if r.timing_only:
            regret = realised = "— (one round timed)"
        else:
            regret = f"{r.regret_mean:.2f} ± {r.regret_se:.2f}"
            realised = f"{r.realised_mean:.2f} ± {r.realised_se:.2f}"
        line = (
            f"| {r.setting} | {r.kernel} | {POLICY_LABELS.get(r.policy, r.policy)} | {r.horizon} | {r.seeds} "
            f"| {regret} | {realised} | {r.round_seconds:.2e} |"
        )
        if sizes:
            line += f" {'' if r.dictionary_size is None else f'{r.dictionary_size:.0f}'} |"
        lines.append(line)
    return "\n".join(lines)


def write_csv(rows: list[SummaryRow], path: str | Path) -> Path:
    """Write the summary rows as CSV with a header.

    Example:
        >>> rows = [SummaryRow(1, "se", "uniform", 100, 3, 150.0, 2.0, 151.0, 2.5, 1e-4)]
        >>> import tempfile
        >>> write_csv(rows, Path(tempfile.mkdtemp()) / "summary.csv").read_text().splitlines()[0].split(",")[:3]
        ['setting', 'kernel', 'policy']
    """
    path = Path(path)
    fields = list(SummaryRow.__dataclass_fields__)
    with atomic_file(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(fields)
        for r in rows:
            writer.writerow([getattr(r, f) for f in fields])
    return path


def plot_regret(records: list[TrialRecord], out_dir: str | Path) -> list[Path]:
    """One PNG per (setting, kernel): mean cumulative expected regret vs round, ± 1 s.e. band.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> records = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5).run() for s in (0, 1)]
        >>> import tempfile
        >>> [p.suffix for p in plot_regret(records, tempfile.mkdtemp())]
        ['.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    by_panel: dict[tuple, dict[str, list[TrialRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        c = r.trial
        if not c.timing_only and c.environment == "adaptive":
            by_panel[(c.setting, c.kernel, c.horizon)][c.policy].append(r)
    paths = []
    for (setting, kernel, horizon), policies in by_panel.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for policy, group in policies.items():
            mean, se = mean_se_curve([r.expected_regret for r in group])
            rounds = torch.arange(1, mean.shape[0] + 1)
            label = f"{POLICY_LABELS.get(policy, policy)} ({len(group)} seeds)"
            (line,) = ax.plot(rounds, mean, label=label)
            ax.fill_between(rounds, mean - se, mean + se, color=line.get_color(), alpha=0.25)
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative expected regret")
        ax.set_title(f"Setting {setting}, {kernel} kernel, adaptive adversary")
        ax.grid(alpha=0.3)
        ax.legend()
        paths.append(save_figure(fig, Path(out_dir) / f"regret_setting{setting}_{kernel}_T{horizon}.png", dpi=120))
    return paths
