"""One runner for every trial: a policy against an environment, measured each round."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..environments import AdaptiveAdversary, Environment, LowerBoundEnvironment
from ..kernels import make_kernel
from ..policies import RandomizedPolicy
from .records import TrialConfig, TrialRecord, pending_configs, record_path
from .settings import POLICIES, SETTINGS


@dataclass
class Trajectory:
    """Per-round measurements of one run; see :class:`~torch_advbandit.experiments.records.TrialRecord`.

    Example:
        >>> from torch_advbandit import UniformRandom
        >>> from torch_advbandit.environments import ObliviousEnvironment
        >>> X = torch.linspace(0, 1, 4, dtype=torch.float64).unsqueeze(-1)
        >>> env = ObliviousEnvironment(torch.tensor([[0.0, 0.2, 0.4, 1.0]], dtype=torch.float64).repeat(3, 1))
        >>> traj = play(UniformRandom(X, None, 3, generator=torch.Generator().manual_seed(0)), env, 3)
        >>> len(traj.expected_regret), round(traj.expected_regret[0], 9)  # 1 − mean(f) each round
        (3, 0.6)
    """

    expected_regret: list[float]
    realised_regret: list[float]
    chosen: list[int]
    round_seconds: list[float]
    diagnostics: dict[str, list[float]] = field(default_factory=dict)


def play(
    policy: RandomizedPolicy,
    environment: Environment,
    horizon: int,
    *,
    on_round: Callable[[int], None] | None = None,
) -> Trajectory:
    """Run ``policy`` against ``environment`` for ``horizon`` rounds.

    Each round: ``P_t = policy.probabilities()``; the environment picks ``f_t`` (seeing ``P_t``);
    ``x_t = policy.select()``; ``policy.update(x_t, f_t(x_t))``. Records the cumulative expected
    regret ``max_x Σ_s f_s(x) − Σ_s ⟨P_s, f_s⟩``, the realised regret
    ``max_x Σ_s f_s(x) − Σ_s f_s(x_s)`` (ALGORITHMS.md §7), ``x_t``, and the learner's wall time
    (``probabilities`` + ``select`` + ``update``; the environment's time is excluded), and the
    policy's per-round ``diagnostics()`` (e.g. the Nyström dictionary size).

    Example:
        >>> from torch_advbandit import UniformRandom
        >>> from torch_advbandit.environments import ObliviousEnvironment
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> env = ObliviousEnvironment(torch.rand(10, 5, dtype=torch.float64))
        >>> len(play(UniformRandom(X, None, 10), env, 10).expected_regret)
        10
    """
    n = environment.num_candidates
    like = policy.candidates
    cumulative = torch.zeros(n, dtype=like.dtype, device=like.device)
    expected_gain = realised_gain = 0.0
    out = Trajectory([], [], [], [])
    for t in range(horizon):
        start = time.perf_counter()
        probs = policy.probabilities()
        learner = time.perf_counter() - start
        f = environment.rewards(t, probs)
        start = time.perf_counter()
        index = policy.select()
        reward = float(f[index])
        policy.update(index, reward)
        learner += time.perf_counter() - start
        cumulative += f
        expected_gain += float(f @ probs)
        realised_gain += reward
        best = float(cumulative.max())
        out.expected_regret.append(best - expected_gain)
        out.realised_regret.append(best - realised_gain)
        out.chosen.append(index)
        out.round_seconds.append(learner)
        for key, value in policy.diagnostics().items():
            out.diagnostics.setdefault(key, []).append(value)
        if on_round is not None:
            on_round(t)
    return out


def machine_info() -> dict[str, str]:
    """Machine and library versions, stored with every record.

    Example:
        >>> sorted(machine_info())[:2]
        ['machine', 'processor']
    """
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "threads": str(torch.get_num_threads()),
    }
    if torch.cuda.is_available():
        info["cuda_device"] = torch.cuda.get_device_name(0)
    return info


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


def run_trial(config: TrialConfig, *, on_round: Callable[[int], None] | None = None) -> TrialRecord:
    """Run one configured trial: the setting's grid, the paper's adversary, the named policy.

    The learner's draws use a generator seeded with ``2·seed + 1``.

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
    traj = play(policy, env, config.rounds_to_run, on_round=on_round)
    return TrialRecord(config=asdict(config), setup_seconds=setup, environment=machine_info(), **asdict(traj))


def run_trials(
    configs: Iterable[TrialConfig],
    out_dir: str | Path,
    *,
    progress: bool = True,
) -> list[TrialRecord]:
    """Run every configuration not already recorded under ``out_dir/trials``; return all records.

    Finished trials are written one file each, atomically, as they complete, so an interrupted
    run loses only the trial in flight and a re-run skips what is done. One tqdm bar counts
    rounds over all pending trials.

    Example:
        >>> configs = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5) for s in (0, 1)]
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> len(run_trials(configs, out, progress=False))
        2
        >>> len(run_trials(configs, out, progress=False))  # both recorded already: nothing is re-run
        2
    """
    from tqdm.auto import tqdm

    trial_dir = Path(out_dir) / "trials"
    configs, todo = pending_configs(configs, out_dir)
    with tqdm(total=sum(c.rounds_to_run for c in todo), unit="round", disable=not progress, dynamic_ncols=True) as bar:
        for config in todo:
            bar.set_postfix_str(f"s{config.setting} {config.kernel} {config.policy} seed {config.seed}")
            run_trial(config, on_round=lambda _t: bar.update(1)).save(trial_dir)
    return [TrialRecord.load(record_path(trial_dir, c)) for c in configs]
