"""Result records of trials as JSON, written atomically, and the check that a record is whole.

This module stores one record and validates it; :mod:`~torch_advbandit.experiments.store` keeps the
records of a results folder (loose files while a sweep runs, one compressed archive at rest). What
a trial is comes from :mod:`~torch_advbandit.experiments.trials` (the
:class:`~torch_advbandit.experiments.trials.Trial` protocol and the registry that rebuilds a
configuration from its record).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .trials import Trial, config_from_dict


@dataclass
class TrialRecord:
    """The result of one trial: per-round curves and summary numbers.

    Attributes:
        config: the trial's configuration as a dict (its dataclass fields).
        expected_regret: cumulative expected regret after each round,
            ``max_x Σ_{s≤t} f_s(x) − Σ_{s≤t} Σ_x P_s(x) f_s(x)`` (docs/algorithms.rst §7).
        realised_regret: ``max_x Σ_{s≤t} f_s(x) − Σ_{s≤t} f_s(x_s)``.
        chosen: the index drawn each round.
        round_seconds: the learner's wall time each round (``probabilities`` + ``select`` + ``update``).
        setup_seconds: the learner's construction time (kernel matrix, exploration distribution).
        environment: machine and library versions.
        diagnostics: per-round policy diagnostics, e.g. ``dictionary_size`` (``s_t``) for RLS.
        stream: the versions of the code that made it (:attr:`Trial.stream
            <torch_advbandit.experiments.trials.Trial.stream>`); a record whose stream differs from
            the current code's is stale and never served as a result.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
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
    stream: str = ""

    @property
    def trial(self):
        """The configuration, rebuilt by its registered trial kind (e.g. ``TrialConfig``, ``DriftTrialConfig``)."""
        return config_from_dict(self.config)

    @property
    def mean_round_seconds(self) -> float:
        return sum(self.round_seconds) / len(self.round_seconds)

    def to_dict(self) -> dict[str, Any]:
        """The record as stored: regrets to ``REGRET_DIGITS`` significant digits (relative error
        ``≤ 5·10⁻⁸``, far below any seed-to-seed spread), wall times to ``TIME_DIGITS`` (a timer's
        run-to-run noise is far larger); draws and diagnostics exactly."""
        data = asdict(self)
        for name in ("expected_regret", "realised_regret"):
            data[name] = [_significant(v, REGRET_DIGITS) for v in data[name]]
        data["round_seconds"] = [_significant(s, TIME_DIGITS) for s in self.round_seconds]
        data["setup_seconds"] = _significant(self.setup_seconds, TIME_DIGITS)
        return data

    def save(self, directory: str | Path) -> Path:
        """Write :meth:`to_dict` to ``<directory>/<key>.json`` atomically (temporary file, then rename)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.trial.key}.json"
        data = self.to_dict()
        with atomic_file(path) as fh:
            json.dump(data, fh)
        return path

    @classmethod
    def load(cls, path: str | Path) -> TrialRecord:
        """Read a record; ``ValueError`` if the file is not a record (see :meth:`validate`)."""
        with open(path) as fh:
            return cls.from_json(fh.read(), str(path))

    @classmethod
    def from_json(cls, text: str, origin: str = "record") -> TrialRecord:
        """Parse one record from JSON text; ``ValueError`` if it does not have a record's fields."""
        try:
            data = json.loads(text)
        except RecursionError as exc:  # JSON nested beyond Python's recursion limit
            raise ValueError(f"{origin} is nested too deeply to be a record") from exc
        if not isinstance(data, dict) or set(data) - RECORD_FIELDS or not REQUIRED_FIELDS <= set(data):
            raise ValueError(f"{origin} does not have a record's fields")
        return cls(**data)

    def validate(self, rounds: int) -> None:
        """Raise ``ValueError`` unless every field has its type, ``rounds`` entries and finite numbers.

        Example:
            >>> record = TrialRecord({"seed": 0}, [1.0], [1.0], [0], [0.1], 0.5)
            >>> record.validate(1)
            >>> TrialRecord({"seed": 0}, [float("nan")], [1.0], [0], [0.1], 0.5).validate(1)
            Traceback (most recent call last):
                ...
            ValueError: expected_regret must hold 1 finite numbers
        """
        for name in ("expected_regret", "realised_regret", "round_seconds"):
            _check_numbers(getattr(self, name), rounds, name)
        chosen = self.chosen
        if not isinstance(chosen, list) or len(chosen) != rounds or not all(_is_int(i) and i >= 0 for i in chosen):
            raise ValueError(f"chosen must hold {rounds} non-negative integers")
        if not (_is_number(self.setup_seconds) and self.setup_seconds >= 0):
            raise ValueError("setup_seconds must be a finite number ≥ 0")
        if not isinstance(self.config, dict) or not isinstance(self.environment, dict):
            raise ValueError("config and environment must be objects")
        if not isinstance(self.stream, str):
            raise ValueError("stream must be a string")
        if not isinstance(self.diagnostics, dict):
            raise ValueError("diagnostics must be an object")
        for name, values in self.diagnostics.items():
            _check_numbers(values, rounds, f"diagnostics[{name!r}]", allow_nan=True)


RECORD_FIELDS = frozenset(TrialRecord.__dataclass_fields__)
REQUIRED_FIELDS = frozenset(
    {"config", "expected_regret", "realised_regret", "chosen", "round_seconds", "setup_seconds"}
)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


def _check_numbers(values, rounds: int, name: str, *, allow_nan: bool = False) -> None:
    ok = isinstance(values, list) and len(values) == rounds
    ok = ok and all(_is_number(v) or (allow_nan and isinstance(v, float) and math.isnan(v)) for v in values)
    if not ok:
        raise ValueError(f"{name} must hold {rounds} finite numbers")


@contextmanager
def atomic_file(path: str | Path, mode: str = "w", **open_kwargs) -> Iterator:
    """Write ``path`` all or nothing: a temporary file in the same folder, ``fsync``, then ``rename``.

    The file gets ordinary permissions (``0644`` less the umask). A failure — a full disk, an
    exception while writing — leaves the previous file, if any, untouched and no temporary file.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "table.md"
        >>> with atomic_file(target) as fh:
        ...     _ = fh.write("| a |")
        >>> target.read_text()
        '| a |'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o644 & ~umask)
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Significant digits of the wall times in a saved record.
TIME_DIGITS = 4
#: Significant digits of the regret curves in a saved record.
REGRET_DIGITS = 8


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def record_path(directory: str | Path, config: Trial) -> Path:
    """Where the record of ``config`` lives under ``directory``.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> record_path("out/trials", TrialConfig(2, "se", "uniform", 50, 0)).name
        's2-se-uniform-T50-seed0-F1000x100-cpu.json'
    """
    return Path(directory) / f"{config.key}.json"
