"""The adversarial trial kind ([Iwazaki2026], App. 17): a policy on a setting's grid against the adaptive adversary."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import torch

from ..environments import AdaptiveAdversary, Environment, LowerBoundEnvironment
from ..kernels import KERNEL_NAMES, make_kernel
from .checkpoints import TrialCheckpoint
from .records import TrialRecord
from .runner import play, trial_record
from .settings import POLICIES, SETTINGS
from .streams import stream_of
from .trials import check_device_name, register_trial_kind

#: Environments a trial can face: the paper's adaptive adversary and the lower-bound instance.
ENVIRONMENTS = ("adaptive", "lower_bound")


@register_trial_kind("adversarial")
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
            ``"lower_bound"`` (the stochastic instance of [Iwazaki2026], Sec. 5; docs/algorithms.rst §9).

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
        check_device_name(self.device)

    @property
    def rounds_to_run(self) -> int:
        return self.horizon if self.timed_rounds is None else min(self.horizon, self.timed_rounds)

    @property
    def timing_only(self) -> bool:
        """True when the trial runs fewer rounds than its horizon (its regret is not comparable)."""
        return self.rounds_to_run < self.horizon

    @property
    def stream(self) -> str:
        """The environment's and the policy's stream versions, e.g. ``'adaptive@1+uniform@1'``."""
        return stream_of(self.environment, self.policy)

    #: The sweep saves this kind's trials between rounds (:mod:`~torch_advbandit.experiments.checkpoints`).
    resumable: ClassVar[bool] = True

    def run(
        self, on_round: Callable[[int], None] | None = None, checkpoint: TrialCheckpoint | None = None
    ) -> TrialRecord:
        """Run this trial (:func:`run_trial`)."""
        return run_trial(self, on_round=on_round, checkpoint=checkpoint)

    @property
    def key(self) -> str:
        timed = "" if self.timed_rounds is None else f"-timed{self.timed_rounds}"
        if self.environment != "adaptive":  # keys of adaptive-adversary trials predate the field
            timed += f"-{self.environment}"
        return (
            f"s{self.setting}-{self.kernel}-{self.policy}-T{self.horizon}-seed{self.seed}"
            f"-F{self.num_functions}x{self.num_centres}-{self.device.replace(':', '')}{timed}"
        )


def build_environment(config: TrialConfig) -> Environment:
    """The trial's environment; it depends on the setting, kernel, seed (generator seeded with
    ``2·seed``) and, for the lower-bound instance, the horizon, never on the policy: every policy
    with the same seed faces the same function class ``F`` (or the same ``f`` and shocks).

    Example:
        >>> env = build_environment(TrialConfig(1, "se", "uniform", 10, 0, num_functions=10, num_centres=5))
        >>> env.num_candidates
        400
    """
    setting = SETTINGS[config.setting]
    device = torch.device(config.device)
    if config.environment == "lower_bound":
        return LowerBoundEnvironment(
            make_kernel(config.kernel, setting.d, device=device),
            setting.candidates(device=device),
            config.horizon,
            num_centres=config.num_centres,
            generator=torch.Generator(device=device).manual_seed(2 * config.seed),
        )
    return AdaptiveAdversary.from_kernel(
        make_kernel(config.kernel, setting.d, device=device),
        setting.candidates(device=device),
        num_functions=config.num_functions,
        num_centres=config.num_centres,
        generator=torch.Generator(device=device).manual_seed(2 * config.seed),
    )


def run_trial(
    config: TrialConfig,
    *,
    on_round: Callable[[int], None] | None = None,
    checkpoint: TrialCheckpoint | None = None,
) -> TrialRecord:
    """Run one configured trial: the setting's grid, the paper's adversary, the named policy.

    The learner's draws use a generator seeded with ``2·seed + 1``. With ``checkpoint`` the trial
    is saved between rounds and continues from a usable snapshot
    (:mod:`~torch_advbandit.experiments.checkpoints`); the record is the same.

    Example:
        >>> record = run_trial(TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5))
        >>> len(record.expected_regret)
        5
    """
    device = torch.device(config.device)
    X = SETTINGS[config.setting].candidates(device=device)
    env = build_environment(config)
    start = time.perf_counter()
    policy = POLICIES[config.policy](
        X, config.kernel, config.horizon, torch.Generator(device=device).manual_seed(2 * config.seed + 1)
    )
    setup = time.perf_counter() - start
    traj = play(policy, env, config.rounds_to_run, on_round=on_round, checkpoint=checkpoint)
    return trial_record(config, traj, setup)
