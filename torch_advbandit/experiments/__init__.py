"""Experiment machinery: settings as data, trial kinds, one round loop, one sweep driver, reports.

Dependencies run one way: ``trials`` (the protocol and the registry of trial kinds) and
``runner`` (the round loop) at the bottom; ``records`` (storage) on ``trials``; the trial kinds
``adversarial`` and ``drift`` on both; ``sweep`` (the driver) on ``records``; ``report`` and
``tables`` (the tables and figures); ``catalog`` (the named experiments of the command line) on top.
"""

from .adversarial import TrialConfig, build_environment, run_trial
from .botorch_drift import BoTorchDriftTrialConfig
from .catalog import EXPERIMENTS, Experiment, Options
from .drift import DriftTrialConfig
from .grids import GRIDS, Grid
from .records import TrialRecord
from .report import markdown_table, plot_regret, summarize, write_csv
from .runner import play
from .settings import POLICIES, SETTINGS, Setting
from .sweep import run_sweep, run_trials
from .trials import TRIAL_KINDS, Trial, config_from_dict, register_trial_kind

__all__ = [
    "EXPERIMENTS",
    "Experiment",
    "GRIDS",
    "Grid",
    "Options",
    "POLICIES",
    "SETTINGS",
    "Setting",
    "TRIAL_KINDS",
    "Trial",
    "TrialConfig",
    "DriftTrialConfig",
    "BoTorchDriftTrialConfig",
    "TrialRecord",
    "build_environment",
    "config_from_dict",
    "markdown_table",
    "play",
    "plot_regret",
    "register_trial_kind",
    "run_trial",
    "run_sweep",
    "run_trials",
    "summarize",
    "write_csv",
]
