"""The second paper's experiment ([Deng2022], Fig. 1): GP-UCB variants on drifting objectives.

Trials are :class:`DriftTrialConfig` records run by the same resumable sweep as Table 3
(:func:`~torch_advbandit.experiments.sweep.run_sweep`) and the same round loop
(:func:`~torch_advbandit.experiments.runner.play`); each run draws fresh functions. The table and
figure are in :mod:`~torch_advbandit.experiments.tables`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..environments import abrupt_environment, slowly_varying_environment
from ..kernels import make_kernel
from ..parameters import nonstationary_discount
from ..policies import IGPUCB, WGPUCB, RestartingGPUCB, SlidingWindowGPUCB
from .records import TrialRecord
from .runner import play, trial_record
from .streams import stream_of
from .trials import WholeHorizon, check_device_name, register_trial_kind, seed_range

#: [Deng2022], Sec. 6: the abruptly changing and the slowly varying environment.
SCENARIOS: dict[str, Callable] = {"abrupt": abrupt_environment, "slow": slowly_varying_environment}

DRIFT_POLICY_LABELS = {
    "wgp_ucb": "WGP-UCB",
    "igp_ucb": "IGP-UCB",
    "sw_gp_ucb": "SW-GP-UCB",
    "r_gp_ucb": "R-GP-UCB",
    "wgp_ucb_auto": "WGP-UCB (η auto)",
}
#: The four algorithms of [Deng2022], Fig. 1 (``reproduce figure1`` without ``--policy``).
FIGURE1_POLICIES = ("wgp_ucb", "igp_ucb", "sw_gp_ucb", "r_gp_ucb")

LENGTHSCALE = 0.2


def make_drift_policy(name: str, candidates: torch.Tensor, horizon: int, noise_std: float, beta_scale: float, gen):
    """The four algorithms with the defaults of docs/algorithms.rst §8 on the 1-D SE (``ℓ = 0.2``) grid.

    ``λ = 1 + 2/T`` for all; ``R`` = the noise level; window, period and discount from the
    theory order (:func:`~torch_advbandit.parameters.nonstationary_memory`, ``B_T = 1``);
    ``wgp_ucb_auto`` is WGP-UCB with ``discount="auto"`` (chosen online) and the same ``λ`` and ``β_t``.

    Example:
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> type(make_drift_policy("wgp_ucb", X, 20, 0.05, 1.0, torch.Generator().manual_seed(0))).__name__
        'WGPUCB'
    """
    kernel = make_kernel("se", 1, lengthscale=LENGTHSCALE)
    common = dict(noise_bound=max(noise_std, 1e-6), beta_scale=beta_scale, generator=gen)
    lam = 1.0 + 2.0 / horizon
    if name == "wgp_ucb":
        discount = nonstationary_discount("se", horizon, 1)
        return WGPUCB(candidates, kernel, horizon, discount=discount, lam=lam, **common)
    if name == "wgp_ucb_auto":
        return WGPUCB(candidates, kernel, horizon, discount="auto", lam=lam, **common)
    if name == "igp_ucb":
        return IGPUCB(candidates, kernel, horizon, **common)
    if name == "sw_gp_ucb":
        return SlidingWindowGPUCB(candidates, kernel, horizon, **common)
    if name == "r_gp_ucb":
        return RestartingGPUCB(candidates, kernel, horizon, **common)
    raise ValueError(f"policy must be one of {sorted(DRIFT_POLICY_LABELS)}, got {name!r}")


@register_trial_kind("drift")
@dataclass(frozen=True)
class DriftTrialConfig(WholeHorizon):
    """One run of one GP-UCB variant on one drifting environment; ``key`` names its record.

    The environment (functions and observation noise) uses a generator seeded ``2·seed``, the
    policy ``2·seed + 1``, so all four algorithms of a seed face the same functions and noise.

    Example:
        >>> config = DriftTrialConfig("abrupt", "sw_gp_ucb", seed=0, horizon=5)
        >>> record = config.run()
        >>> len(record.expected_regret)
        5
    """

    scenario: str
    policy: str
    seed: int
    horizon: int = 500
    noise_std: float = 0.05
    beta_scale: float = 1.0
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {self.scenario!r}")
        if self.policy not in DRIFT_POLICY_LABELS:
            raise ValueError(f"policy must be one of {sorted(DRIFT_POLICY_LABELS)}, got {self.policy!r}")
        for name in ("seed", "horizon"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "seed" else 1):
                raise ValueError(f"{name} must be a {'non-negative' if name == 'seed' else 'positive'} integer")
        if not (math.isfinite(self.noise_std) and self.noise_std >= 0):
            raise ValueError(f"noise_std must be finite and ≥ 0, got {self.noise_std!r}")
        if not (math.isfinite(self.beta_scale) and self.beta_scale > 0):
            raise ValueError(f"beta_scale must be finite and > 0, got {self.beta_scale!r}")
        check_device_name(self.device)

    @property
    def stream(self) -> str:
        """The scenario's and the policy's stream versions, e.g. ``'abrupt@1+wgp_ucb@1'``."""
        return stream_of(self.scenario, self.policy)

    @property
    def key(self) -> str:
        return (
            f"drift-{self.scenario}-{self.policy}-T{self.horizon}-seed{self.seed}"
            f"-noise{self.noise_std:g}-bs{self.beta_scale:g}-{self.device.replace(':', '')}"
        )

    def run(self, on_round: Callable[[int], None] | None = None) -> TrialRecord:
        """Play the run (:func:`~torch_advbandit.experiments.runner.play`); the environment scores the
        cumulative *dynamic* regret ``Σ_{s≤t} max_x f_s(x) − f_s(x_s)`` (expected and realised
        coincide for a deterministic choice)."""
        X, env = SCENARIOS[self.scenario](torch.Generator().manual_seed(2 * self.seed), horizon=self.horizon)
        if torch.device(self.device).type != "cpu":
            X = X.to(self.device)
            env.functions = env.functions.to(self.device)
            env.generator = torch.Generator(device=self.device).manual_seed(2 * self.seed)
        env.noise_std = self.noise_std
        start = time.perf_counter()
        policy = make_drift_policy(
            self.policy,
            X,
            self.horizon,
            self.noise_std,
            self.beta_scale,
            torch.Generator(device=self.device).manual_seed(2 * self.seed + 1),
        )
        setup = time.perf_counter() - start
        traj = play(policy, env, self.horizon, on_round=on_round, diagnostics=("model_size", "discount", "since"))
        return trial_record(self, traj, setup)


def figure1_configs(
    runs: int,
    *,
    horizon: int = 500,
    noise_std: float = 0.05,
    beta_scale: float = 1.0,
    policies: tuple[str, ...] = FIGURE1_POLICIES,
    first_seed: int = 0,
):
    """Both scenarios × ``policies`` (default: the four of Fig. 1) × ``runs`` seeds from ``first_seed``
    (seeds outermost).

    Example:
        >>> len(figure1_configs(2))  # 2 environments × 4 algorithms × 2 runs
        16
    """
    return [
        DriftTrialConfig(scenario, policy, seed, horizon, noise_std, beta_scale)
        for seed in seed_range(first_seed, runs)
        for scenario in SCENARIOS
        for policy in policies
    ]
