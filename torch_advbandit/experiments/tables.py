"""The first paper's tables and figures from records: Table 3, per-setting figures, growth exponents.

Figure 1 of the second paper is in :mod:`~torch_advbandit.experiments.drift_report`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import torch

from ..parameters import information_gain_bound
from .records import TrialRecord
from .report import SummaryRow, mean_se_curve, save_figure
from .settings import POLICY_LABELS, SETTINGS

KERNEL_LABELS = {"se": "SE", "matern52": "Matérn-5/2", "matern32": "Matérn-3/2"}


def table3_markdown(rows: list[SummaryRow]) -> str:
    """[Iwazaki2026], Table 3's shape: a row per (setting, T, algorithm), per kernel the final regret
    (mean ± s.e. over seeds, with the number of seeds) and the mean seconds per round.

    Timing-only cells (exact kernelized Exp3 timed for one round on settings 3–4) show ``—``
    for the regret; a kernel without a run at that ``T`` shows ``not run``.

    Example:
        >>> row = SummaryRow(1, "se", "uniform", 100, 3, 80.0, 2.0, 81.0, 2.5, 1e-4)
        >>> print(table3_markdown([row]).splitlines()[2])
        | 1 | Random | 100 | 80.00 ± 2.00 (3) | 1.0e-04 |
    """
    adaptive = [r for r in rows if r.environment == "adaptive"]
    kernels = list(dict.fromkeys(r.kernel for r in adaptive))
    cells = {(r.setting, r.horizon, r.policy, r.kernel): r for r in adaptive}
    order = list(POLICY_LABELS)
    keys = sorted(
        dict.fromkeys((r.setting, r.horizon, r.policy) for r in adaptive),
        key=lambda k: (k[0], k[1], order.index(k[2]) if k[2] in order else len(order)),
    )
    head = "| setting | algorithm | T |" + "".join(
        f" {KERNEL_LABELS.get(k, k)} regret (seeds) | {KERNEL_LABELS.get(k, k)} s / round |" for k in kernels
    )
    lines = [head, "|---|---|---|" + "---|---|" * len(kernels)]
    for setting, horizon, policy in keys:
        line = f"| {setting} | {POLICY_LABELS.get(policy, policy)} | {horizon} |"
        for k in kernels:
            r = cells.get((setting, horizon, policy, k))
            if r is None:
                line += " not run | |"
            elif r.timing_only:
                line += f" — (one round timed, {r.seeds}) | {r.round_seconds:.1e} |"
            else:
                line += f" {r.regret_mean:.2f} ± {r.regret_se:.2f} ({r.seeds}) | {r.round_seconds:.1e} |"
        lines.append(line)
    return "\n".join(lines)


def plot_settings(records: list[TrialRecord], out_dir: str | Path) -> list[Path]:
    """One PNG per (setting, horizon): a panel per kernel, mean regret curve ± 1 s.e. per algorithm.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> configs = [TrialConfig(1, k, "uniform", 5, 0, num_functions=10, num_centres=5) for k in ("se", "matern32")]
        >>> records = [c.run() for c in configs]
        >>> import tempfile
        >>> [p.suffix for p in plot_settings(records, tempfile.mkdtemp())]
        ['.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: dict[tuple, dict[str, dict[str, list[TrialRecord]]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        c = r.trial
        if not c.timing_only and c.environment == "adaptive":
            panels[(c.setting, c.horizon)][c.kernel].setdefault(c.policy, []).append(r)
    paths = []
    for (setting, horizon), by_kernel in sorted(panels.items()):
        fig, axes = plt.subplots(1, len(by_kernel), figsize=(4.5 * len(by_kernel), 3.6), squeeze=False)
        for ax, (kernel, policies) in zip(axes[0], by_kernel.items(), strict=True):
            for policy in [p for p in POLICY_LABELS if p in policies] + [p for p in policies if p not in POLICY_LABELS]:
                group = policies[policy]
                mean, se = mean_se_curve([g.expected_regret for g in group])
                t = torch.arange(1, mean.shape[0] + 1)
                (line,) = ax.plot(t, mean, label=f"{POLICY_LABELS.get(policy, policy)} ({len(group)})")
                ax.fill_between(t, mean - se, mean + se, color=line.get_color(), alpha=0.25)
            ax.set_title(f"Setting {setting}, {KERNEL_LABELS.get(kernel, kernel)}")
            ax.set_xlabel("round t")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("cumulative expected regret")
        axes[0][0].legend(fontsize=8)
        paths.append(save_figure(fig, Path(out_dir) / f"table3_setting{setting}_T{horizon}.png"))
    return paths


@dataclass(frozen=True)
class GrowthRow:
    """Least-squares fit ``log R_T ≈ a + exponent·log T`` over the horizons of one cell.

    Example:
        >>> from torch_advbandit.experiments.report import SummaryRow
        >>> rows = [SummaryRow(1, "se", "uniform", T, 3, 0.8 * T, 1.0, 0.8 * T, 1.0, 1e-4) for T in (100, 200, 400)]
        >>> row = growth_rows(rows)[0]
        >>> round(row.exponent, 6), row.horizons
        (1.0, (100, 200, 400))
    """

    environment: str
    setting: int
    kernel: str
    policy: str
    horizons: tuple[int, ...]
    regrets: tuple[float, ...]
    exponent: float
    exponent_se: float
    bound_exponent: float | None = None


def fit_exponent(horizons: list[int], regrets: list[float]) -> tuple[float, float]:
    """Slope of ``log regret`` on ``log T`` and its standard error (0 with two points).

    Example:
        >>> round(fit_exponent([100, 400, 1600], [10.0, 20.0, 40.0])[0], 6)
        0.5
    """
    if len(horizons) < 2:
        raise ValueError("fitting a growth exponent needs at least two horizons")
    if min(regrets) <= 0:
        raise ValueError("regrets must be positive to fit a power law")
    x = torch.tensor(horizons, dtype=torch.float64).log()
    y = torch.tensor(regrets, dtype=torch.float64).log()
    xc = x - x.mean()
    slope = float((xc * (y - y.mean())).sum() / xc.square().sum())
    if len(horizons) == 2:
        return slope, 0.0
    resid = y - y.mean() - slope * xc
    se = math.sqrt(float(resid.square().sum()) / (len(horizons) - 2) / float(xc.square().sum()))
    return slope, se


def bound_exponent(kernel: str, horizons: list[int], d: int) -> float | None:
    """Slope of ``log sqrt(T·γ̄_T)`` over the same horizons: what the regret bound's growth looks like
    at these ``T``, log factors included (``None`` when ``γ̄_T`` is unknown for the kernel or ``T < 3``).

    Example:
        >>> round(bound_exponent("se", [250, 500, 1000, 2000, 4000], 1), 2)
        0.61
    """
    if kernel not in KERNEL_LABELS or min(horizons) < 3:
        return None
    return fit_exponent(horizons, [math.sqrt(t * information_gain_bound(kernel, t, d)) for t in horizons])[0]


def growth_rows(rows: list[SummaryRow]) -> list[GrowthRow]:
    """Fit the regret growth exponent of every (environment, setting, kernel, policy) over its horizons.

    Example:
        >>> from torch_advbandit.experiments.report import SummaryRow
        >>> cell = ("se", "kernelized_exp3")
        >>> rows = [SummaryRow(1, *cell, T, 3, 5 * T**0.5, 1.0, 5 * T**0.5, 1.0, 1e-3) for T in (250, 1000)]
        >>> round(growth_rows(rows)[0].exponent, 6)
        0.5
    """
    cells: dict[tuple, list[SummaryRow]] = defaultdict(list)
    for r in rows:
        if not r.timing_only:
            cells[(r.environment, r.setting, r.kernel, r.policy)].append(r)
    out = []
    for (environment, setting, kernel, policy), group in cells.items():
        group.sort(key=lambda r: r.horizon)
        if len(group) < 2:
            continue
        horizons = [r.horizon for r in group]
        regrets = [max(r.regret_mean, 1e-12) for r in group]
        fit = fit_exponent(horizons, regrets)
        bound = bound_exponent(kernel, horizons, SETTINGS[setting].d) if policy != "uniform" else 1.0
        out.append(GrowthRow(environment, setting, kernel, policy, tuple(horizons), tuple(regrets), *fit, bound))
    return out


def growth_markdown(rows: list[GrowthRow]) -> str:
    """Markdown table of fitted exponents beside the theory (docs/algorithms.rst §9; [Iwazaki2026], Sec. 5).

    ``bound here`` is the slope of ``sqrt(T·γ̄_T)`` over the same horizons (log factors included);
    ``asymptotic`` drops the log factors: 1/2 for SE, ``(ν+d)/(2ν+d)`` for Matérn-ν, 1 for Random.

    Example:
        >>> from torch_advbandit.experiments.report import SummaryRow
        >>> cell = ("se", "kernelized_exp3")
        >>> rows = [SummaryRow(1, *cell, T, 3, 5 * T**0.5, 1.0, 5 * T**0.5, 1.0, 1e-3) for T in (250, 1000)]
        >>> growth_markdown(growth_rows(rows)).splitlines()[0].startswith("|")
        True
    """
    lines = [
        "| environment | setting | kernel | algorithm | T | mean regret | exponent ± s.e. | bound here | asymptotic |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for g in rows:
        d = SETTINGS[g.setting].d
        nu = {"matern52": 2.5, "matern32": 1.5}.get(g.kernel)
        asymptotic = (
            1.0 if g.policy == "uniform" else (0.5 if g.kernel == "se" else (nu + d) / (2 * nu + d) if nu else None)
        )
        fmt = lambda v: "" if v is None else f"{v:.2f}"  # noqa: E731
        lines.append(
            f"| {g.environment} | {g.setting} | {g.kernel} | {POLICY_LABELS.get(g.policy, g.policy)} "
            f"| {', '.join(map(str, g.horizons))} | {', '.join(f'{v:.1f}' for v in g.regrets)} "
            f"| {g.exponent:.3f} ± {g.exponent_se:.3f} | {fmt(g.bound_exponent)} | {fmt(asymptotic)} |"
        )
    return "\n".join(lines)


def plot_growth(rows: list[GrowthRow], out_dir: str | Path) -> Path:
    """Log–log regret against ``T``, a panel per environment, a line per (kernel, algorithm).

    Example:
        >>> from torch_advbandit.experiments.report import SummaryRow
        >>> cell = ("se", "kernelized_exp3")
        >>> rows = [SummaryRow(1, *cell, T, 3, 5 * T**0.5, 1.0, 5 * T**0.5, 1.0, 1e-3) for T in (250, 1000)]
        >>> import tempfile
        >>> plot_growth(growth_rows(rows), tempfile.mkdtemp()).suffix
        '.png'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = list(dict.fromkeys(g.environment for g in rows))
    fig, axes = plt.subplots(1, max(1, len(envs)), figsize=(5.5 * max(1, len(envs)), 4), squeeze=False)
    for ax, env in zip(axes[0], envs, strict=False):
        for g in rows:
            if g.environment == env:
                name = f"{POLICY_LABELS.get(g.policy, g.policy)}, {KERNEL_LABELS.get(g.kernel, g.kernel)}"
                label = f"{name} ({g.exponent:.2f})"
                ax.loglog(g.horizons, g.regrets, marker="o", label=label)
        horizons = sorted({t for g in rows if g.environment == env for t in g.horizons})
        ax.set_xticks(horizons, [str(t) for t in horizons], minor=False)
        ax.set_xticks([], minor=True)
        ax.set_title(f"{env} environment")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("final expected regret")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return save_figure(fig, Path(out_dir) / "growth.png")
