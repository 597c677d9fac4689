"""Experiment machinery: settings as data, one runner, result records and reports."""

from .grids import GRIDS, Grid
from .records import TrialConfig, TrialRecord
from .report import markdown_table, plot_regret, summarize, write_csv
from .runner import play, run_trial, run_trials
from .settings import POLICIES, SETTINGS, Setting
from .sweep import run_sweep

__all__ = [
    "GRIDS",
    "Grid",
    "POLICIES",
    "SETTINGS",
    "Setting",
    "TrialConfig",
    "TrialRecord",
    "markdown_table",
    "play",
    "plot_regret",
    "run_trial",
    "run_sweep",
    "run_trials",
    "summarize",
    "write_csv",
]
