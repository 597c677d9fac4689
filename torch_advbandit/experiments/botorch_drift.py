"""The drifting benchmark against vanilla BoTorch: ``botorch.test_functions`` problems that jump, drift
slowly or stay still, on one candidate set, one initial design and one acquisition optimiser.

Each trial maximises ``f_t`` over ``n`` scrambled Sobol points of ``[0, 1]^d`` (the problem's box
rescaled, values standardised over the candidates and negated so larger is better) for ``T`` rounds
after an initial design of ``2(d + 1)`` candidates observed at ``f_0``. Scenarios: ``abrupt``,
``f_t(x) = f(x)`` before ``T/2`` and ``f(1 − x)`` after (the optimum jumps to the mirror image);
``drift``, ``f_t = (1 − t/T)·f(x) + (t/T)·f(1 − x)`` (the same change, gradually); ``stationary``,
``f``. Observations carry Gaussian noise of standard deviation ``noise_std`` (on the standardised
scale). Every method runs ``optimize_acqf_discrete`` on the candidates with UCB at the same ``β``.
Methods: ``botorch_ucb`` (``SingleTaskGP`` with BoTorch's defaults, refitted with
``fit_gpytorch_mll`` every round, ``UpperConfidenceBound``), and the GP-UCB policies with fitted
hyperparameters on BoTorch's default kernel: ``wgp_auto_fitted`` (``discount="auto"``), ``wgp_auto_tested`` (the
same with changes tested at level 0.01, ``significance=0.01``), ``wgp_auto_time_varying`` (the same with selections
on the space-time model of ``tv_tested`` where its test passes and no change point is in force, and on the
segments before and since the change point, correlated, while one is, ``time_varying_significance=0.01``),
``wgp_fixed_fitted`` (``η = 0.9``), ``wgp_fixed_tested`` (``η = 0.9`` with changes tested at level 0.01: the
discounted rows since the newest accepted change), ``sw_fitted`` (window 20), ``restart_fitted`` (period 20);
``tv_fitted``, time-varying GP-UCB with its forgetting rate fitted (:class:`~torch_advbandit.TimeVaryingGPUCB`);
``tv_tested``, the same with the fitted rate used only where a likelihood-ratio test at level 0.01 rejects
``ε = 0`` (vanilla BoTorch's model otherwise); ``tv_changes``, the same with change points tested too (where
the likeliest change is more significant, the model is a GP on the rows since it); ``tv_changes_anytime``, the
same without a horizon (``horizon=None``: time in observations, each fit of ``ℓ_τ`` from twice the observations
so far); and
``botorch_oracle``, vanilla BoTorch told the jump of the abrupt scenario (from ``T/2`` on it fits only
the rows observed since; elsewhere it is ``botorch_ucb``): what forgetting exactly at the change gains.
Regret is dynamic, ``Σ_t max_x f_t(x) − f_t(x_t)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..environments.nonstationary import FunctionSequenceEnvironment
from ..fitting import fit_seed, seeded_fit
from ..policies import WGPUCB, RestartingGPUCB, SlidingWindowGPUCB, TimeVaryingGPUCB
from ..policies.asks import AnyRowsMixin
from ..policies.base import Policy
from ..policies.observed_rows import ObservedRowsMixin
from .records import TrialRecord
from .runner import play, trial_record
from .streams import stream_of
from .trials import WholeHorizon, register_trial_kind

#: ``name → (botorch test function factory, d)``.
PROBLEMS: dict[str, tuple[Callable, int]] = {}
#: The benchmark's problems (the default of ``reproduce drifting``).
BENCHMARK_PROBLEMS = ("branin", "hartmann6", "levy4")
#: Problems no rule of the benchmark was chosen on: a check that a rule's gains are not the benchmark's alone.
HELD_OUT_PROBLEMS = ("hartmann3", "styblinskitang3")
PROBLEM_NAMES = BENCHMARK_PROBLEMS + HELD_OUT_PROBLEMS
DRIFT_SCENARIOS = ("abrupt", "drift", "stationary")
BOTORCH_METHODS = {
    "botorch_ucb": "BoTorch SingleTaskGP + UCB (refit each round)",
    "wgp_auto_fitted": 'WGP-UCB, discount="auto", fitted',
    "wgp_auto_tested": 'WGP-UCB, discount="auto", fitted, changes tested',
    "wgp_auto_time_varying": 'WGP-UCB, discount="auto", fitted, time-varying model tested',
    "wgp_fixed_fitted": "WGP-UCB, η = 0.9, fitted",
    "wgp_fixed_tested": "WGP-UCB, η = 0.9, fitted, changes tested",
    "sw_fitted": "SW-GP-UCB, W = 20, fitted",
    "restart_fitted": "R-GP-UCB, H = 20, fitted",
    "tv_fitted": "TV-GP-UCB, ε fitted",
    "tv_tested": "TV-GP-UCB, ε fitted and tested",
    "tv_changes": "TV-GP-UCB, ε and change points tested",
    "tv_changes_anytime": "TV-GP-UCB, ε and change points tested, no horizon",
    "botorch_oracle": "BoTorch told the jump (oracle forgetting)",
}
BETA = 2.0
NUM_CANDIDATES = 2048


def _problems() -> dict[str, tuple[Callable, int]]:
    if not PROBLEMS:
        from botorch.test_functions import Branin, Hartmann, Levy, StyblinskiTang

        PROBLEMS.update(
            {
                "branin": (lambda: Branin(), 2),
                "hartmann6": (lambda: Hartmann(dim=6), 6),
                "levy4": (lambda: Levy(dim=4), 4),
                "hartmann3": (lambda: Hartmann(dim=3), 3),
                "styblinskitang3": (lambda: StyblinskiTang(dim=3), 3),
            }
        )
    return PROBLEMS


def problem_values(problem: str, scenario: str, horizon: int, num_candidates: int = NUM_CANDIDATES):
    """``(candidates Tensor[n, d], F Tensor[T, n])``: the candidate set and ``f_t`` on it (larger is better).

    Example:
        >>> X, F = problem_values("branin", "abrupt", 10, 64)
        >>> X.shape, F.shape, bool(torch.equal(F[4], F[0])), bool(torch.equal(F[5], F[0]))
        (torch.Size([64, 2]), torch.Size([10, 64]), True, False)
    """
    factory, d = _problems()[problem]
    function = factory()
    engine = torch.quasirandom.SobolEngine(d, scramble=True, seed=1234)
    X = engine.draw(num_candidates, dtype=torch.float64)
    lo, hi = function.bounds.to(X)

    def f(U: torch.Tensor) -> torch.Tensor:
        return -function.evaluate_true(lo + (hi - lo) * U)

    base, mirrored = f(X), f(1.0 - X)
    mean, std = base.mean(), base.std()
    base, mirrored = (base - mean) / std, (mirrored - mean) / std
    s = torch.arange(horizon, dtype=X.dtype) / horizon
    if scenario == "abrupt":
        weight = (s >= 0.5).to(X.dtype)
    elif scenario == "drift":
        weight = s
    elif scenario == "stationary":
        weight = torch.zeros_like(s)
    else:
        raise ValueError(f"scenario must be one of {DRIFT_SCENARIOS}, got {scenario!r}")
    return X, (1 - weight).unsqueeze(-1) * base + weight.unsqueeze(-1) * mirrored


class BoTorchUCB(ObservedRowsMixin, AnyRowsMixin, Policy):
    """Vanilla BoTorch: ``SingleTaskGP(train_X, train_Y)`` with its defaults (BoTorch's kernel and priors,
    ``Standardize``), ``fit_gpytorch_mll`` every round (restarts seeded: :func:`~torch_advbandit.fitting.seeded_fit`),
    ``UpperConfidenceBound(beta=β²)`` maximised by
    ``optimize_acqf_discrete`` over the candidates; uniform before any observation. With
    ``forget_before = t₀`` (the oracle of the abrupt scenario), from round ``t₀`` on it fits only the
    rows observed at rounds ``≥ t₀``.

    Example:
        >>> X = torch.rand(20, 2, dtype=torch.float64)
        >>> policy = BoTorchUCB(X, 5, beta=2.0, generator=torch.Generator().manual_seed(0))
        >>> policy.observe(X[:3], torch.rand(3, 1, dtype=torch.float64))
        >>> 0 <= policy.select() < 20
        True
    """

    _tuned_for_horizon = False

    def __init__(
        self, candidates: torch.Tensor, horizon: int, *, beta: float, forget_before: int | None = None, generator=None
    ) -> None:
        super().__init__(candidates, horizon, generator=generator)
        self.beta = float(beta)
        self.forget_before = forget_before
        self._init_rows()

    chunk_size = 2048  # candidates per batch of the acquisition: optimize_acqf_discrete's default

    def selection_model(self):
        """The round's ``SingleTaskGP`` on the rows (the oracle's since ``forget_before``), fitted by
        ``fit_gpytorch_mll``; ``None`` without rows. ``select`` maximises its UCB (``AnyRowsMixin``)."""
        from botorch.models import SingleTaskGP

        train_X, rewards = self.train_X, self.rewards
        if self.forget_before is not None and self.t >= self.forget_before:  # the oracle: only rows since the jump
            keep = self.row_rounds >= self.forget_before
            train_X, rewards = train_X[keep], rewards[keep]
        if train_X.shape[0] == 0:
            return None
        model = SingleTaskGP(train_X, rewards.unsqueeze(-1))
        seeded_fit(model, fit_seed(self.generator, self.t))  # BoTorch's fit; restarts under the policy's seed
        return model

    def confidence_width(self, model=None) -> float:
        """``β`` (fixed)."""
        return self.beta


def make_method(
    name: str, candidates: torch.Tensor, horizon: int, generator: torch.Generator, *, jump_round: int | None = None
) -> Policy:
    """The benchmark's methods (module docstring) on ``candidates``; GP-UCB kernels are BoTorch's default.

    ``jump_round`` is the policy round (``t``, the initial design included) at which the objective
    jumps; only ``botorch_oracle`` reads it (``None``: no jump, so it is ``botorch_ucb``).

    Example:
        >>> X = torch.rand(10, 2, dtype=torch.float64)
        >>> type(make_method("wgp_auto_fitted", X, 5, torch.Generator().manual_seed(0))).__name__
        'WGPUCB'
    """
    if name in ("botorch_ucb", "botorch_oracle"):
        forget = jump_round if name == "botorch_oracle" else None
        return BoTorchUCB(candidates, horizon, beta=BETA, forget_before=forget, generator=generator)
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

    kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=candidates.shape[1]).to(candidates.dtype)
    common = dict(lam=0.1, beta=BETA, fit_hyperparameters=True, generator=generator)
    if name == "wgp_auto_fitted":
        return WGPUCB(candidates, kernel, horizon, discount="auto", **common)
    if name == "wgp_auto_tested":
        return WGPUCB(candidates, kernel, horizon, discount="auto", significance=0.01, **common)
    if name == "wgp_auto_time_varying":
        return WGPUCB(candidates, kernel, horizon, discount="auto", time_varying_significance=0.01, **common)
    if name == "wgp_fixed_tested":
        return WGPUCB(candidates, kernel, horizon, discount=0.9, significance=0.01, **common)
    if name == "wgp_fixed_fitted":
        return WGPUCB(candidates, kernel, horizon, discount=0.9, **common)
    if name == "sw_fitted":
        return SlidingWindowGPUCB(candidates, kernel, horizon, window=20, **common)
    if name == "restart_fitted":
        return RestartingGPUCB(candidates, kernel, horizon, period=20, **common)
    if name == "tv_fitted":
        return TimeVaryingGPUCB(candidates, kernel, horizon, beta=BETA, significance=None, generator=generator)
    if name == "tv_tested":
        return TimeVaryingGPUCB(candidates, kernel, horizon, beta=BETA, significance=0.01, generator=generator)
    if name in ("tv_changes", "tv_changes_anytime"):
        known = horizon if name == "tv_changes" else None
        return TimeVaryingGPUCB(
            candidates, kernel, known, beta=BETA, significance=0.01, change_points=True, generator=generator
        )
    raise ValueError(f"method must be one of {sorted(BOTORCH_METHODS)}, got {name!r}")


@register_trial_kind("botorch_drift")
@dataclass(frozen=True)
class BoTorchDriftTrialConfig(WholeHorizon):
    """One method on one drifting problem; ``key`` names its record. The problem, its noise and the initial
    design depend on the seed only (generator ``2·seed``), the method's draws on ``2·seed + 1``.

    Example:
        >>> config = BoTorchDriftTrialConfig("branin", "abrupt", "sw_fitted", 0, horizon=4, num_candidates=64)
        >>> len(config.run().expected_regret)
        4
    """

    problem: str
    scenario: str
    method: str
    seed: int
    horizon: int = 50
    noise_std: float = 0.1
    num_candidates: int = NUM_CANDIDATES

    def __post_init__(self) -> None:
        if self.problem not in _problems():
            raise ValueError(f"problem must be one of {sorted(_problems())}, got {self.problem!r}")
        if self.scenario not in DRIFT_SCENARIOS:
            raise ValueError(f"scenario must be one of {DRIFT_SCENARIOS}, got {self.scenario!r}")
        if self.method not in BOTORCH_METHODS:
            raise ValueError(f"method must be one of {sorted(BOTORCH_METHODS)}, got {self.method!r}")
        for name, low in (("seed", 0), ("horizon", 2), ("num_candidates", 8)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")
        if not (math.isfinite(self.noise_std) and self.noise_std >= 0):
            raise ValueError(f"noise_std must be finite and ≥ 0, got {self.noise_std!r}")

    @property
    def stream(self) -> str:
        return stream_of(self.problem, self.method)

    @property
    def key(self) -> str:
        return (
            f"botorch-{self.problem}-{self.scenario}-{self.method}-T{self.horizon}-seed{self.seed}"
            f"-noise{self.noise_std:g}-n{self.num_candidates}"
        )

    def run(self, on_round: Callable[[int], None] | None = None) -> TrialRecord:
        """Observe the initial design at ``f_0``, then play ``T`` rounds (dynamic regret)."""
        X, F = problem_values(self.problem, self.scenario, self.horizon, self.num_candidates)
        gen = torch.Generator().manual_seed(2 * self.seed)
        design = torch.randperm(X.shape[0], generator=gen)[: 2 * (X.shape[1] + 1)]
        y0 = F[0, design] + self.noise_std * torch.randn(design.numel(), generator=gen, dtype=X.dtype)
        env = FunctionSequenceEnvironment(F, self.noise_std, generator=gen)
        start = time.perf_counter()
        rounds = self.horizon + design.numel()  # the design's observations count as rounds too
        jump = design.numel() + math.ceil(self.horizon / 2) if self.scenario == "abrupt" else None  # F[t], t ≥ T/2
        policy = make_method(self.method, X, rounds, torch.Generator().manual_seed(2 * self.seed + 1), jump_round=jump)
        policy.observe(X[design], y0.unsqueeze(-1))
        setup = time.perf_counter() - start
        recorded = ("discount", "since", "epsilon", "time_varying_statistic", "held")
        traj = play(policy, env, self.horizon, on_round=on_round, diagnostics=recorded)
        return trial_record(self, traj, setup)
