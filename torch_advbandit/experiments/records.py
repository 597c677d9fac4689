"""Trial configurations and their result records, one JSON file each, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..kernels import KERNEL_NAMES

#: Environments a trial can face: the paper's adaptive adversary and the lower-bound instance.
ENVIRONMENTS = ("adaptive", "lower_bound")


@dataclass(frozen=True)
class TrialConfig:
    """Everything that determines one trial; its ``key`` names the record file.

    Attributes:
        setting: 1–4 (:data:`~torch_advbandit.experiments.settings.SETTINGS`).
        kernel: ``"se"``, ``"matern52"`` or ``"matern32"``.
        policy: a key of :data:`~torch_advbandit.experiments.settings.POLICIES`.
        horizon: ``T``.
        seed: seeds the adversary's function class and the learner's generator.
        num_functions, num_centres: the adversary's ``|F|`` and ``M``.
        device: where the trial runs.
        timed_rounds: run only this many rounds, to time them (the paper's protocol for exact
            kernelized Exp3 on settings 3–4: "running the algorithm for only 1 round"); ``None``
            runs the whole horizon. Parameters still use ``horizon``.
        environment: ``"adaptive"`` (the paper's adaptive adversary, App. 17) or
            ``"lower_bound"`` (the stochastic instance of seed 1, Sec. 5; ALGORITHMS.md §9).

    Example:
        >>> TrialConfig(1, "se", "kernelized_exp3", 1000, 3).key
        's1-se-kernelized_exp3-T1000-seed3-F1000x100-cpu'
    """

    setting: int
    kernel: str
    policy: str
    horizon: int
    seed: int
    num_functions: int = 1000
    num_centres: int = 100
    device: str = "cpu"
    timed_rounds: int | None = None
    environment: str = "adaptive"

    def __post_init__(self) -> None:
        from .settings import POLICIES, SETTINGS  # late import: settings imports policies

        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {sorted(SETTINGS)}, got {self.setting!r}")
        if self.kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {KERNEL_NAMES}, got {self.kernel!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {sorted(POLICIES)}, got {self.policy!r}")
        for name in ("horizon", "num_functions", "num_centres"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.timed_rounds is not None and (
            isinstance(self.timed_rounds, bool) or not isinstance(self.timed_rounds, int) or self.timed_rounds < 1
        ):
            raise ValueError(f"timed_rounds must be None or a positive integer, got {self.timed_rounds!r}")
        if self.environment not in ENVIRONMENTS:
            raise ValueError(f"environment must be one of {ENVIRONMENTS}, got {self.environment!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")

    @property
    def rounds_to_run(self) -> int:
        return self.horizon if self.timed_rounds is None else min(self.horizon, self.timed_rounds)

    @property
    def timing_only(self) -> bool:
        """True when the trial runs fewer rounds than its horizon (its regret is not comparable)."""
        return self.rounds_to_run < self.horizon

    def run(self, on_round=None) -> TrialRecord:
        """Run this trial (:func:`~torch_advbandit.experiments.runner.run_trial`)."""
        from . import runner

        return runner.run_trial(self, on_round=on_round)

    @property
    def key(self) -> str:
        timed = "" if self.timed_rounds is None else f"-timed{self.timed_rounds}"
        if self.environment != "adaptive":  # keys of adaptive-adversary trials predate the field
            timed += f"-{self.environment}"
        return (
            f"s{self.setting}-{self.kernel}-{self.policy}-T{self.horizon}-seed{self.seed}"
            f"-F{self.num_functions}x{self.num_centres}-{self.device.replace(':', '')}{timed}"
        )


@dataclass
class TrialRecord:
    """The result of one trial: per-round curves and summary numbers.

    Attributes:
        config: the trial's :class:`TrialConfig` as a dict.
        expected_regret: cumulative expected regret after each round,
            ``max_x Σ_{s≤t} f_s(x) − Σ_{s≤t} Σ_x P_s(x) f_s(x)`` (ALGORITHMS.md §7).
        realised_regret: ``max_x Σ_{s≤t} f_s(x) − Σ_{s≤t} f_s(x_s)``.
        chosen: the index drawn each round.
        round_seconds: the learner's wall time each round (``probabilities`` + ``select`` + ``update``).
        setup_seconds: the learner's construction time (kernel matrix, exploration distribution).
        environment: machine and library versions.
        diagnostics: per-round policy diagnostics, e.g. ``dictionary_size`` (``s_t``) for RLS.

    Example:
        >>> record = TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5).run()
        >>> len(record.expected_regret), record.config["policy"]
        (5, 'uniform')
        >>> import tempfile
        >>> TrialRecord.load(record.save(tempfile.mkdtemp())).chosen == record.chosen
        True
    """

    config: dict[str, Any]
    expected_regret: list[float]
    realised_regret: list[float]
    chosen: list[int]
    round_seconds: list[float]
    setup_seconds: float
    environment: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, list[float]] = field(default_factory=dict)

    @property
    def trial(self):
        """The configuration: a :class:`TrialConfig`, or a ``DriftTrialConfig`` for seed 2's runs."""
        return config_from_dict(self.config)

    @property
    def mean_round_seconds(self) -> float:
        return sum(self.round_seconds) / len(self.round_seconds)

    def save(self, directory: str | Path) -> Path:
        """Write ``<directory>/<key>.json`` atomically (temporary file, then rename).

        Wall times are written to ``TIME_DIGITS`` significant digits (a timer's run-to-run noise is
        far larger, and the full ``repr`` made them a third of a record); regrets, draws and
        diagnostics are written exactly.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.trial.key}.json"
        data = asdict(self)
        data["round_seconds"] = [_significant(s) for s in self.round_seconds]
        data["setup_seconds"] = _significant(self.setup_seconds)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | Path) -> TrialRecord:
        with open(path) as fh:
            return cls(**json.load(fh))


#: Significant digits of the wall times in a saved record.
TIME_DIGITS = 4


def _significant(seconds: float) -> float:
    return float(f"{seconds:.{TIME_DIGITS}g}")


def config_from_dict(config: dict[str, Any]):
    """Rebuild a trial configuration from its record: ``TrialConfig`` or ``DriftTrialConfig``.

    Example:
        >>> from dataclasses import asdict
        >>> config = TrialConfig(1, "se", "uniform", 50, 0)
        >>> config_from_dict(asdict(config)) == config
        True
    """
    if "scenario" in config:
        from .drift import DriftTrialConfig  # late import: drift imports the policies

        return DriftTrialConfig(**config)
    return TrialConfig(**config)


def record_path(directory: str | Path, config: TrialConfig) -> Path:
    """Where the record of ``config`` lives under ``directory``.

    Example:
        >>> record_path("out/trials", TrialConfig(2, "se", "uniform", 50, 0)).name
        's2-se-uniform-T50-seed0-F1000x100-cpu.json'
    """
    return Path(directory) / f"{config.key}.json"


def pending_configs(configs: Iterable, out_dir: str | Path) -> tuple[list, list]:
    """``(all, todo)``: the de-duplicated configurations and those without a record under ``out_dir/trials``.

    Example:
        >>> configs = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5) for s in (0, 1, 1)]
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> _ = configs[0].run().save(out / "trials")
        >>> every, todo = pending_configs(configs, out)
        >>> len(every), [c.seed for c in todo]
        (2, [1])
    """
    trial_dir = Path(out_dir) / "trials"
    configs = list(dict.fromkeys(configs))
    return configs, [c for c in configs if not _valid_record(record_path(trial_dir, c), c)]


def _valid_record(path: Path, config) -> bool:
    """Whether ``path`` holds a complete record of ``config``; a damaged file is moved aside.

    A record that does not parse, belongs to another configuration or has the wrong number of
    rounds (a crash while writing, a disk that filled up, an edit by hand) is renamed to
    ``<key>.json.corrupt[-k]`` with a ``RuntimeWarning`` — kept for inspection, never silently
    trusted or deleted — and the trial counts as pending.
    """
    if not path.exists():
        return False
    try:
        record = TrialRecord.load(path)
        ok = config_from_dict(record.config) == config and len(record.expected_regret) == config.rounds_to_run
    except (OSError, ValueError, TypeError, KeyError):  # JSONDecodeError is a ValueError
        ok = False
    if ok:
        return True
    target = path.with_name(path.name + ".corrupt")
    k = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{k}")
        k += 1
    os.replace(path, target)
    warnings.warn(
        f"damaged record {path.name} moved to {target.name}; the trial will run again", RuntimeWarning, stacklevel=3
    )
    return False
