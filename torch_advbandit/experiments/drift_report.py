"""Reports of the drifting experiments: the second paper's Figure 1 ([Deng2022]) — the dynamic-regret
table and figure, and the discount that ``discount="auto"`` chose each round — and the benchmark
against vanilla BoTorch (:mod:`~torch_advbandit.experiments.botorch_drift`)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import torch

from .drift import DRIFT_POLICY_LABELS
from .records import TrialRecord
from .report import mean_se, mean_se_curve, save_figure


def figure1_markdown(records: list[TrialRecord]) -> str:
    """Final dynamic regret (mean ± s.e. over runs) and the per-round time at the last round.

    Example:
        >>> from torch_advbandit.experiments.drift import figure1_configs
        >>> records = [c.run() for c in figure1_configs(1, horizon=10)]
        >>> figure1_markdown(records).splitlines()[0].startswith("|")
        True
    """
    cells: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for r in records:
        c = r.trial
        cells[(c.scenario, c.policy, c.horizon)].append(r)
    lines = [
        "| environment | algorithm | T | runs | dynamic regret (mean ± s.e.) | s / round (all) | s / round at t = T |",
        "|---|---|---|---|---|---|---|",
    ]
    order = list(DRIFT_POLICY_LABELS)
    for (scenario, policy, horizon), group in sorted(cells.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))):
        m, se = mean_se([g.expected_regret[-1] for g in group])
        mean_round = sum(g.mean_round_seconds for g in group) / len(group)
        last = sum(g.round_seconds[-1] for g in group) / len(group)
        lines.append(
            f"| {scenario} | {DRIFT_POLICY_LABELS[policy]} | {horizon} | {len(group)} | {m:.2f} ± {se:.2f} "
            f"| {mean_round:.2e} | {last:.2e} |"
        )
    return "\n".join(lines)


def plot_figure1(records: list[TrialRecord], out_dir: str | Path) -> Path:
    """[Deng2022], Fig. 1: cumulative dynamic regret with ± 1 s.e. error bars, a panel per environment.

    Example:
        >>> from torch_advbandit.experiments.drift import figure1_configs
        >>> records = [c.run() for c in figure1_configs(1, horizon=10)]
        >>> import tempfile
        >>> plot_figure1(records, tempfile.mkdtemp()).suffix
        '.png'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: dict[str, dict[str, list[TrialRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        panels[r.trial.scenario][r.trial.policy].append(r)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (scenario, by_policy) in zip(axes[0], panels.items(), strict=True):
        for policy in [p for p in DRIFT_POLICY_LABELS if p in by_policy]:
            group = by_policy[policy]
            mean, se = mean_se_curve([g.expected_regret for g in group])
            t = torch.arange(1, mean.shape[0] + 1)
            every = max(1, mean.shape[0] // 20)
            (line,) = ax.plot(t, mean, label=f"{DRIFT_POLICY_LABELS[policy]} ({len(group)} runs)")
            ax.errorbar(t[::every], mean[::every], yerr=se[::every], fmt="none", ecolor=line.get_color(), capsize=2)
        ax.set_title({"abrupt": "Abruptly changing", "slow": "Slowly varying"}.get(scenario, scenario))
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative dynamic regret")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, Path(out_dir) / "figure1.png")


def plot_discounts(records: list[TrialRecord], out_dir: str | Path) -> Path | None:
    """The memory ``discount="auto"`` chose each round in Figure 1's environments (``discount.png``,
    :func:`plot_memory`, a column per environment, the switches dashed); ``None`` when no record holds a chosen
    discount.

    Example:
        >>> from torch_advbandit.experiments.drift import figure1_configs
        >>> records = [c.run() for c in figure1_configs(1, horizon=10, policies=("wgp_ucb_auto",))]
        >>> import tempfile
        >>> plot_discounts(records, tempfile.mkdtemp()).name
        'discount.png'
    """
    panels: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:
        if r.trial.policy == "wgp_ucb_auto" and "discount" in r.diagnostics:
            panels[r.trial.scenario].append(r)
    titles = {"abrupt": "Abruptly changing (switches dashed)", "slow": "Slowly varying"}
    T = max((len(r.expected_regret) for r in records), default=0)
    marks = {"abrupt": [T // 5, 2 * T // 5]}
    return plot_memory({titles.get(k, k): v for k, v in panels.items()},
                       {titles.get(k, k): m for k, m in marks.items()}, Path(out_dir) / "discount.png")  # fmt: skip


def plot_drifting_memory(records: list[TrialRecord], out_dir: str | Path) -> Path | None:
    """The memory of ``wgp_auto_fitted`` on each problem's jump (``memory.png``, :func:`plot_memory`, the jump at
    ``T/2`` dashed; ``since`` counts the initial design's rows); ``None`` without such records.

    Example:
        >>> from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig as C
        >>> records = [C("branin", "abrupt", "wgp_auto_fitted", 0, horizon=3, num_candidates=32).run()]
        >>> import tempfile
        >>> plot_drifting_memory(records, tempfile.mkdtemp()).name
        'memory.png'
    """
    panels: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in records:
        if r.trial.method == "wgp_auto_fitted" and r.trial.scenario == "abrupt" and "discount" in r.diagnostics:
            panels[f"{r.trial.problem}, jump at T/2 (dashed)"].append(r)
    marks = {k: [math.ceil(len(v[0].expected_regret) / 2)] for k, v in panels.items()}
    return plot_memory(panels, marks, Path(out_dir) / "memory.png")


def plot_memory(panels: dict[str, list[TrialRecord]], marks: dict[str, list[int]], path: Path) -> Path | None:
    """A column per panel: the discount ``η`` chosen each round (mean ± 1 s.e. over runs) and, below, the first row
    kept, ``since`` (``0``: every row; a change point otherwise) when every record holds it; dashed lines at the
    panel's ``marks``. ``None`` for no panel.

    Example:
        >>> plot_memory({}, {}, Path("unused.png")) is None
        True
    """
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [("discount", 'η chosen by discount="auto"')]
    if all("since" in r.diagnostics for group in panels.values() for r in group):
        rows.append(("since", "first row kept (0: all)"))
    fig, axes = plt.subplots(len(rows), len(panels), figsize=(5.5 * len(panels), 3.2 * len(rows)), squeeze=False)
    for j, (title, group) in enumerate(sorted(panels.items())):
        for i, (key, label) in enumerate(rows):
            ax = axes[i, j]
            mean, se = mean_se_curve([g.diagnostics[key] for g in group])
            t = torch.arange(1, mean.shape[0] + 1)
            ax.plot(t, mean, label=f"mean of {len(group)} runs")
            ax.fill_between(t, mean - se, mean + se, alpha=0.3)
            for mark in marks.get(title, []):
                ax.axvline(mark, color="grey", linestyle="--", linewidth=1)
            ax.set_title(title if i == 0 else "")
            ax.set_xlabel("round t")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    return save_figure(fig, path)


def drifting_markdown(records: list[TrialRecord]) -> str:
    """Final dynamic regret per problem, scenario and method (mean ± s.e. over seeds), and its ratio to
    vanilla BoTorch's mean over the same seeds (``—`` where BoTorch was not run on any of them).

    Example:
        >>> from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig as C
        >>> methods = ("botorch_ucb", "sw_fitted")
        >>> records = [C("branin", "abrupt", m, 0, horizon=3, num_candidates=32).run() for m in methods]
        >>> drifting_markdown(records).count("| branin | abrupt |")
        2
    """
    from .botorch_drift import BOTORCH_METHODS

    groups: dict[tuple, list[TrialRecord]] = defaultdict(list)
    for r in records:
        c = r.trial
        groups[(c.problem, c.scenario, c.method, c.horizon)].append(r)
    lines = [
        "| problem | scenario | method | T | seeds | dynamic regret (mean ± s.e.) | / BoTorch, same seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for problem, scenario, method, horizon in sorted(
        groups, key=lambda k: (k[0], k[1], list(BOTORCH_METHODS).index(k[2]))
    ):
        group = groups[(problem, scenario, method, horizon)]
        m, se = mean_se([g.expected_regret[-1] for g in group])
        botorch = groups.get((problem, scenario, "botorch_ucb", horizon), [])
        base = {g.trial.seed: g.expected_regret[-1] for g in botorch}
        paired = [(g.expected_regret[-1], base[g.trial.seed]) for g in group if g.trial.seed in base]
        ratio = f"{sum(a for a, _ in paired) / sum(b for _, b in paired):.2f}" if paired else "—"
        label = BOTORCH_METHODS[method]
        lines.append(f"| {problem} | {scenario} | {label} | {horizon} | {len(group)} | {m:.2f} ± {se:.2f} | {ratio} |")
    return "\n".join(lines)


def plot_drifting(records: list[TrialRecord], out_dir: str | Path) -> Path:
    """Cumulative dynamic regret (mean over seeds) per method, a panel per problem and scenario.

    Example:
        >>> from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig as C
        >>> records = [C("branin", "abrupt", "sw_fitted", 0, horizon=3, num_candidates=32).run()]
        >>> import tempfile
        >>> plot_drifting(records, tempfile.mkdtemp()).name
        'drifting.png'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .botorch_drift import BOTORCH_METHODS

    panels: dict[tuple, dict[str, list[TrialRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        panels[(r.trial.problem, r.trial.scenario)][r.trial.method].append(r)
    keys = sorted(panels)
    problems = sorted({p for p, _ in keys})
    scenarios = sorted({s for _, s in keys})
    fig, axes = plt.subplots(
        len(problems), len(scenarios), figsize=(4.5 * len(scenarios), 3.3 * len(problems)), squeeze=False
    )
    for (problem, scenario), by_method in panels.items():
        ax = axes[problems.index(problem)][scenarios.index(scenario)]
        for method in [m for m in BOTORCH_METHODS if m in by_method]:
            mean, _ = mean_se_curve([g.expected_regret for g in by_method[method]])
            ax.plot(torch.arange(1, mean.shape[0] + 1), mean, label=BOTORCH_METHODS[method])
        ax.set_title(f"{problem}, {scenario}")
        ax.set_xlabel("round t")
        ax.set_ylabel("cumulative dynamic regret")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, Path(out_dir) / "drifting.png")
