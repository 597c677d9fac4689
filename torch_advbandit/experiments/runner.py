"""One round loop for every trial: a policy against an environment, measured each round."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

import torch

from ..environments import Environment
from ..policies import Policy, RandomizedPolicy
from .checkpoints import TrialCheckpoint
from .records import TrialRecord
from .trials import Trial


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
    policy: Policy,
    environment: Environment,
    horizon: int,
    *,
    on_round: Callable[[int], None] | None = None,
    diagnostics: Iterable[str] | None = None,
    checkpoint: TrialCheckpoint | None = None,
) -> Trajectory:
    """Run ``policy`` against ``environment`` for ``horizon`` rounds.

    Each round: ``P_t = policy.probabilities()`` (randomised policies; ``None`` otherwise); the
    environment picks ``f_t`` (seeing ``P_t``); ``x_t = policy.select()``;
    ``policy.update(x_t, environment.feedback(t, x_t, f_t))``. The environment's ``regret`` says
    what is recorded (docs/math.rst, "Regret"):

    - ``"static"``: expected regret ``max_x Σ_s f_s(x) − Σ_s ⟨P_s, f_s⟩`` and realised regret
      ``max_x Σ_s f_s(x) − Σ_s f_s(x_s)``;
    - ``"dynamic"``: ``Σ_s max_x f_s(x) − ⟨P_s, f_s⟩`` and ``Σ_s max_x f_s(x) − f_s(x_s)`` (equal
      for a deterministic policy).

    Also recorded: ``x_t``, the learner's wall time (``probabilities`` + ``select`` + ``update``;
    the environment's time is excluded) and the policy's per-round ``diagnostics()`` (all of them,
    or the names in ``diagnostics``).

    With ``checkpoint`` (:class:`~torch_advbandit.experiments.checkpoints.TrialCheckpoint`) the
    state between two rounds — the policy's ``state_dict``, the accumulators and the trajectory — is
    saved whenever the checkpoint is due, and a run that finds a usable snapshot continues from it:
    the trajectory is the one of an uninterrupted run. The environment must keep no state of its own
    between rounds (the adversarial environments do not).

    Example:
        >>> from torch_advbandit import UniformRandom
        >>> from torch_advbandit.environments import ObliviousEnvironment
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> env = ObliviousEnvironment(torch.rand(10, 5, dtype=torch.float64))
        >>> len(play(UniformRandom(X, None, 10), env, 10).expected_regret)
        10
    """
    if environment.regret not in ("static", "dynamic"):
        raise ValueError(f"environment.regret must be 'static' or 'dynamic', got {environment.regret!r}")
    dynamic = environment.regret == "dynamic"
    keep = None if diagnostics is None else set(diagnostics)
    like = policy.candidates
    cumulative = torch.zeros(environment.num_candidates, dtype=like.dtype, device=like.device)
    sums = [0.0, 0.0]  # static: expected and realised gain; dynamic: expected and realised regret
    out = Trajectory([], [], [], [])
    first = 0
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        first = _resume(saved, policy, cumulative, sums, out, horizon, checkpoint)
    for t in range(first, horizon):
        start = time.perf_counter()
        probs = policy.probabilities() if isinstance(policy, RandomizedPolicy) else None
        learner = time.perf_counter() - start
        f = environment.rewards(t, probs)
        start = time.perf_counter()
        index = policy.select()
        policy.update(index, environment.feedback(t, index, f))
        learner += time.perf_counter() - start
        value = float(f[index])
        expected = value if probs is None else float(f @ probs)
        if dynamic:
            best = float(f.max())
            sums[0] += best - expected
            sums[1] += best - value
            out.expected_regret.append(sums[0])
            out.realised_regret.append(sums[1])
        else:
            cumulative += f
            sums[0] += expected
            sums[1] += value
            best = float(cumulative.max())
            out.expected_regret.append(best - sums[0])
            out.realised_regret.append(best - sums[1])
        out.chosen.append(index)
        out.round_seconds.append(learner)
        for key, number in policy.diagnostics().items():
            if keep is None or key in keep:
                out.diagnostics.setdefault(key, []).append(number)
        if checkpoint is not None and t + 1 < horizon and checkpoint.due():
            state = policy.state_dict()  # its settings as text: a snapshot holds plain data only
            state["hyperparameters"] = repr(state["hyperparameters"])
            checkpoint.save({"policy": state, "cumulative": cumulative.clone(), "sums": list(sums), **asdict(out)})
        if on_round is not None:
            on_round(t)
    return out


def _resume(saved, policy, cumulative, sums, out, horizon, checkpoint) -> int:
    """Restore a snapshot of :func:`play` into its loop variables; the next round's index (0: not usable)."""
    rounds = len(saved.get("chosen", [])) if isinstance(saved.get("chosen"), list) else -1
    parts = ("expected_regret", "realised_regret", "round_seconds")
    whole = 0 < rounds < horizon and all(isinstance(saved.get(k), list) and len(saved[k]) == rounds for k in parts)
    whole = whole and isinstance(saved.get("diagnostics"), dict) and isinstance(saved.get("sums"), list)
    whole = (
        whole and isinstance(saved.get("cumulative"), torch.Tensor) and saved["cumulative"].shape == cumulative.shape
    )
    whole = whole and isinstance(saved.get("policy"), dict) and saved["policy"].get("t") == rounds
    if not whole:
        checkpoint.ignore("its trajectory is incomplete")
        return 0
    if saved["policy"].get("hyperparameters") != repr(settings := policy.hyperparameters()):
        checkpoint.ignore("the policy's settings differ")
        return 0
    try:
        policy.load_state_dict({**saved["policy"], "hyperparameters": settings})  # all or nothing
    except (KeyError, TypeError, ValueError) as exc:
        checkpoint.ignore(f"the policy refuses its state ({exc})")
        return 0
    cumulative.copy_(saved["cumulative"])
    sums[:] = [float(v) for v in saved["sums"]]
    out.expected_regret[:], out.realised_regret[:] = saved["expected_regret"], saved["realised_regret"]
    out.chosen[:], out.round_seconds[:] = saved["chosen"], saved["round_seconds"]
    out.diagnostics.update({k: list(v) for k, v in saved["diagnostics"].items()})
    return rounds


def trial_record(trial: Trial, trajectory: Trajectory, setup_seconds: float) -> TrialRecord:
    """The record of ``trial``: its configuration and stream, the trajectory, the setup time and :func:`machine_info`.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> TrialConfig(1, "se", "uniform", 3, 0, num_functions=10, num_centres=5).run().stream
        'adaptive@1+uniform@1'
    """
    return TrialRecord(
        config=asdict(trial),
        setup_seconds=setup_seconds,
        environment=machine_info(),
        stream=trial.stream,
        **asdict(trajectory),
    )


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
