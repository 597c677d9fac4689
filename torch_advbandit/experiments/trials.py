"""What a trial is, and the registry of trial kinds that rebuilds a configuration from its record.

A trial kind is a frozen dataclass that satisfies :class:`Trial`: it names its record (``key``),
says how many rounds it plays, and runs itself. Kinds register with :func:`register_trial_kind`;
:func:`config_from_dict` then rebuilds any recorded configuration by its field names, so the
storage layer (:mod:`~torch_advbandit.experiments.records`) never needs to know the kinds. A kind
whose trials can continue from a snapshot sets the class attribute ``resumable = True`` and takes
``run(on_round, checkpoint)`` (:mod:`~torch_advbandit.experiments.checkpoints`); the sweep then
saves its running trials.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Trial(Protocol):
    """One configured run: everything that determines it, and how to play it.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> isinstance(TrialConfig(1, "se", "uniform", 5, 0), Trial)
        True
    """

    @property
    def key(self) -> str:
        """A file-name-safe name that identifies the configuration."""

    @property
    def rounds_to_run(self) -> int:
        """Rounds the trial plays (its record holds one value per round)."""

    @property
    def timing_only(self) -> bool:
        """True when the trial is run to time rounds only (its regret is not comparable)."""

    @property
    def stream(self) -> str:
        """The versions of the code that decide its results (:mod:`~torch_advbandit.experiments.streams`)."""

    def run(self, on_round: Callable[[int], None] | None = None) -> Any:
        """Play the trial; returns its :class:`~torch_advbandit.experiments.records.TrialRecord`."""


class WholeHorizon:
    """Mixin for a trial kind that plays all of its ``horizon`` rounds and is scored on them.

    It supplies :class:`Trial`'s ``rounds_to_run`` (the dataclass's ``horizon`` field) and
    ``timing_only`` (always ``False``).

    Example:
        >>> from torch_advbandit.experiments.drift import DriftTrialConfig
        >>> config = DriftTrialConfig("abrupt", "sw_gp_ucb", seed=0, horizon=20)
        >>> config.rounds_to_run, config.timing_only
        (20, False)
    """

    horizon: int

    @property
    def rounds_to_run(self) -> int:
        return self.horizon

    @property
    def timing_only(self) -> bool:
        return False


#: Trial kinds by name: frozen dataclasses satisfying :class:`Trial`.
TRIAL_KINDS: dict[str, type] = {}


def register_trial_kind(name: str) -> Callable[[type], type]:
    """Class decorator: make a trial dataclass rebuildable from its record under ``name``.

    Example:
        >>> sorted(TRIAL_KINDS)
        ['adversarial', 'botorch_drift', 'drift']
    """

    def register(cls: type) -> type:
        if not is_dataclass(cls):
            raise TypeError(f"a trial kind must be a dataclass, got {cls.__name__}")
        TRIAL_KINDS[name] = cls
        return cls

    return register


def config_from_dict(config: dict[str, Any]) -> Trial:
    """Rebuild a trial configuration from its record: the registered kind whose fields fit the keys.

    A kind fits when every key is one of its fields and every field without a default is present.

    Raises:
        ValueError: no registered kind fits (a record made by other code, or a damaged one).

    Example:
        >>> from dataclasses import asdict
        >>> from torch_advbandit.experiments import TrialConfig
        >>> config = TrialConfig(1, "se", "uniform", 50, 0)
        >>> config_from_dict(asdict(config)) == config
        True
    """
    if not isinstance(config, dict):
        raise ValueError(f"a trial configuration must be a dict, got {type(config).__name__}")
    for cls in TRIAL_KINDS.values():
        names = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls) if f.default is f.default_factory}  # both MISSING
        if set(config) <= names and required <= set(config):
            return cls(**config)
    raise ValueError(f"no trial kind has the fields {sorted(config)}")


_DEVICE = re.compile(r"(cpu|cuda|mps)(:[0-9]+)?")


def check_device_name(device: object) -> str:
    """``device`` if it names a torch device type with an optional index (``cpu``, ``cuda:1``, …).

    Device names become part of record file names, so nothing else is accepted.

    Example:
        >>> check_device_name("cuda:0")
        'cuda:0'
        >>> check_device_name("/../x")
        Traceback (most recent call last):
            ...
        ValueError: device must be cpu, cuda, mps or one of them with an index (cuda:1), got '/../x'
    """
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ValueError(f"device must be cpu, cuda, mps or one of them with an index (cuda:1), got {device!r}")
    return device


def seed_range(first: int, count: int) -> range:
    """The seeds ``first, …, first + count − 1``, checked.

    Example:
        >>> list(seed_range(5, 3))
        [5, 6, 7]
    """
    for name, value, least in (("first_seed", first, 0), ("seeds", count, 1)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value < least:
            raise ValueError(f"{name} must be ≥ {least}, got {value}")
    return range(first, first + count)
