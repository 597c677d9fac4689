"""The Exp3 family's shared loop and kernelized Exp3 ([Iwazaki2026], Alg. 1)."""

from __future__ import annotations

import math
from functools import partial
from typing import Any, NamedTuple

import torch
from gpytorch.kernels import Kernel

from .._validation import (
    check_candidates,
    check_generator,
    check_positive,
    check_probs,
    check_unit_interval,
)
from ..estimators import EstimatorFactory, IPSEstimator, LowRankIPSEstimator, build_estimator, estimator_factory
from ..exploration import ExplorationStrategy, exploration_length, exploration_strategy
from ..parameters import derived_parameters
from .base import RandomizedPolicy
from .epochs import AnytimeEpochs, epoch_horizon, first_epoch
from .reward_units import RewardUnit
from .state import state_tensor


class Exp3Policy(RandomizedPolicy):
    """Exponential weights with optimistic kernel estimates and forced exploration ([Iwazaki2026], Alg. 1).

    Each round::

        P̃_t = softmax(η · S_{t−1})                # in log space: log_softmax, never exp(ηS)
        P_t = (1 − α) P̃_t + α π
        x_t ~ P_t;  observe y_t
        (f̂_t, w_t) = estimator(P_t, x_t, y_t)     # [Iwazaki2026] Eq. 3 (exact) or Eqs. 6–7 (Nyström)
        S_t = S_{t−1} + f̂_t + β · w_t

    The estimator object is the only difference between kernelized Exp3 and its Nyström variant.
    Probabilities are held as ``log P_t`` and sampled by the Gumbel-max trick, exact for skewed
    distributions and any ``n``.

    Args:
        candidates: ``Tensor[n, d]``.
        horizon: ``T``.
        estimator: an :class:`~torch_advbandit.estimators.IPSEstimator` on ``candidates``.
        exploration_probs: ``π``, ``Tensor[n]``, non-negative, summing to one.
        eta: learning rate ``η > 0``.
        alpha: exploration weight ``α ∈ (0, 1]``.
        beta: optimism weight ``β ≥ 0``.
        reward_scale: ``s > 0``, the rewards' unit (the policy learns from ``y_t / s``), or ``"auto"``
            (:class:`~torch_advbandit.policies.reward_units.RewardUnit`; docs/algorithms.rst §3, "Reward units").
        generator: ``torch.Generator`` on the candidates' device.

    Example:
        >>> from torch_advbandit.estimators import ExactIPSEstimator
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> est = ExactIPSEstimator(make_kernel("se", 1), X, ridge=1e-2)
        >>> pi = torch.full((20,), 0.05, dtype=torch.float64)  # any exploration distribution
        >>> policy = Exp3Policy(X, 50, estimator=est, exploration_probs=pi, eta=0.1, alpha=0.05, beta=0.01,
        ...                     generator=torch.Generator().manual_seed(0))
        >>> policy.update(policy.select(), 0.3)
        >>> round(float(policy.probabilities().sum()), 12)
        1.0
    """

    _not_settings = frozenset({"estimator", "exploration_probs"})

    def __init__(
        self,
        candidates: torch.Tensor,
        horizon: int,
        *,
        estimator: IPSEstimator,
        exploration_probs: torch.Tensor,
        eta: float,
        alpha: float,
        beta: float,
        reward_scale: float | str = 1.0,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(candidates, horizon, generator=generator)
        self.unit = RewardUnit.of(reward_scale)
        self.eta = check_positive(eta, "eta")
        self.alpha = check_unit_interval(alpha, "alpha")
        self.beta = check_positive(beta, "beta", allow_zero=True)
        self.estimator = estimator
        self.exploration_probs = exploration_probs.to(self.candidates)
        self._log_exploration = torch.log(self.exploration_probs)
        self.cumulative_reward = torch.zeros(self.n, dtype=self.candidates.dtype, device=self.candidates.device)
        self._log_probs: torch.Tensor | None = None

    def log_probabilities(self) -> torch.Tensor:
        """``log P_t``, ``Tensor[n]`` (``-inf`` where ``P_t`` is exactly zero)."""
        if self._log_probs is None:
            log_weights = torch.log_softmax(self.eta / self.unit.divisor * self.cumulative_reward, dim=-1)
            if self.alpha == 1.0:
                self._log_probs = self._log_exploration.clone()
            else:
                self._log_probs = torch.logaddexp(
                    math.log1p(-self.alpha) + log_weights, math.log(self.alpha) + self._log_exploration
                )
        return self._log_probs

    def _update(self, index: int, reward: float) -> None:
        self._learn(lambda probs, c: self.estimator._estimate(probs, index, reward - c, self.generator), [reward])

    def _update_batch(self, indices: torch.Tensor, rewards: torch.Tensor) -> None:
        """``q`` draws of one round: the average of their ``q`` importance-weighted estimates.

        ``f̂_t = (1/q) Σ_j f̂_t^{(j)}`` (each unbiased for ``f_t`` under ``P_t``, so the average is
        too, with variance down by ``q``); the optimism width depends only on ``P_t`` and is added
        once. An extension beyond the paper, which draws one point per round.
        """
        estimate = self.estimator._estimate_batch
        self._learn(lambda probs, c: estimate(probs, indices, rewards - c, self.generator), rewards.tolist())

    def _learn(self, estimate, rewards: list[float]) -> None:
        """Commit ``S_t = S_{t−1} + f̂_t + β·s·w_t``, ``f̂_t`` the estimate (``estimate(P_t, c)``) of the rewards less
        the centre ``c`` of the reward unit ``s`` (:class:`~torch_advbandit.policies.reward_units.RewardUnit`), and
        the unit once the rewards are seen, all once the *new* state is checked: ``η·S_t/s`` finite. With
        ``reward_scale="auto"`` nothing is estimated until the unit is known."""
        unit = self.unit
        cumulative = self.cumulative_reward
        if unit.ready:
            f_hat, width = estimate(self.probabilities(), unit.center)
            cumulative = cumulative + (f_hat + self.beta * unit.divisor * width)
        new_unit = unit.seen(rewards)
        if not bool(torch.isfinite(cumulative * (self.eta / new_unit.divisor)).all()):
            raise ValueError(
                "reward: the update would make η·S non-finite (rewards beyond what the arithmetic carries, or an "
                "estimator returning NaN/inf); the policy is unchanged"
            )
        self.cumulative_reward, self.unit = cumulative, new_unit
        self._log_probs = None

    def diagnostics(self) -> dict[str, float]:
        """The estimator's per-round numbers (``rank`` of a low-rank factor, Nyström ``dictionary_size``)."""
        return self.estimator.diagnostics()

    def _extra_state(self) -> dict[str, Any]:
        return {
            "cumulative_reward": self.cumulative_reward.clone(),
            "exploration_probs": self.exploration_probs.clone(),
            **self.unit.state(),
        }

    def _prepare_state(self, state: dict[str, Any]):
        cumulative = state_tensor(state, "cumulative_reward", self.cumulative_reward)
        exploration = state_tensor(state, "exploration_probs", self.exploration_probs)
        check_probs(exploration, self.n, self.candidates, "state['exploration_probs']")
        unit = self.unit.from_state(state)

        def install() -> None:
            self.unit = unit
            self.cumulative_reward = cumulative
            self.exploration_probs = exploration
            self._log_exploration = torch.log(exploration)
            self._log_probs = None

        return install


class _Recipe(NamedTuple):
    """What a kernelized Exp3 epoch is built from (the constructor's inputs, checked)."""

    kernel: Kernel
    candidates: torch.Tensor
    factory: EstimatorFactory
    explore: ExplorationStrategy
    lam: float | None  # the given λ, or None for the kernel's default


class KernelizedExp3(AnytimeEpochs, Exp3Policy):
    """Kernelized Exp3 ([Iwazaki2026], Alg. 1): the Exp3 loop with a kernel estimator built on the candidates.

    Regret ``Õ(sqrt(T·γ_T))`` against an adaptive adversary choosing ``f_t`` in the RKHS ball of
    radius ``B`` ([Iwazaki2026], Thm. 1). The policy builds two collaborators, each given by a short name
    or an object:

    - the estimator, on the candidates with ridge ``c = λ / T``: ``"exact"`` ([Iwazaki2026] Eq. 3, one
      Cholesky of an ``n × n`` matrix a round, ``O(n²)`` memory), ``"lowrank"`` (the same
      estimator from a pivoted-Cholesky factor of ``K`` of rank ``r``, ``O(n·r²)`` a round, exact
      to ``n·lowrank_tolerance/c`` in every entry; never chosen for you — use it where ``K`` has
      low numerical rank, e.g. the SE kernel at large ``n``), ``"nystrom"`` ([Iwazaki2026] Eqs. 6–7 with a
      fresh RLS dictionary a round; :class:`RLSKernelizedExp3` is this with Thm. 3's settings), or
      any factory ``(kernel, candidates, ridge) -> IPSEstimator`` such as
      ``functools.partial(NystromIPSEstimator, selector=UniformSelector(500))``;
    - the exploration distribution ``π``: ``"mvr"`` (default: MVR with ``N = ceil(T·α)`` points and
      noise ``λ``, Alg. 2), ``"approx_mvr"``, ``"g_optimal"``, ``"uniform"``, a fixed ``Tensor[n]``,
      or a strategy called like :func:`~torch_advbandit.exploration.exploration_distribution`.

    :func:`~torch_advbandit.parameters.paper_parameters` gives the paper's ``η, α, λ, β``. Omitted
    ones are derived from the candidate set and kernel
    (:func:`~torch_advbandit.parameters.derived_parameters`: the paper's formulas with the
    information-gain bound ``min(γ̂_T, γ̄_T)``, ``γ̂_T`` from the greedy MVR gain, and one pair
    ``(c3, c4) = (5, 0.1)`` for every kernel), so
    ``KernelizedExp3(candidates, kernel, horizon)`` learns in any dimension, where the paper's
    closed-form ``γ̄_T`` clips ``α`` at 1 (SE from ``d = 6``).

    Args:
        candidates: ``Tensor[n, d]``, the finite action set (float64 recommended).
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        horizon: ``T ≥ 1``, or ``None`` for an anytime policy: epochs of ``64·2^k`` rounds; epoch
            ``k`` ends at round ``T_k = 64·(2^{k+1} − 1)``, uses the parameters, estimator and ``π``
            derived for the horizon ``2·T_k``, and keeps the scores ``S`` (``η`` only decreases;
            ``eta``, ``alpha``, ``beta`` must then be omitted; docs/algorithms.rst §3).
        eta: learning rate ``η > 0`` (``None``: derived).
        alpha: exploration weight ``α ∈ (0, 1]`` (``None``: derived).
        lam: regulariser ``λ > 0`` (``None``: the paper's for the kernel, SE's for other kernels).
        beta: optimism weight ``β ≥ 0`` (theory: ``B·sqrt(λ/T)``; ``None``: derived).
        reward_scale: ``s > 0``: the policy learns from ``y_t / s``. Every parameter assumes rewards
            ``f_t`` of RKHS norm at most ``B = 2``, so ``|f_t(x)| ≤ 2``: take ``s`` the largest reward magnitude
            you expect, over 2 (a fixed unit is not centred). ``"auto"``: learnt from
            the rewards seen before each round (centre the midpoint of their range, ``s`` a quarter of it;
            nothing is learnt until two different rewards are seen), for rewards in any unit
            (docs/algorithms.rst §3, "Reward units").
        exploration: a name, a ``Tensor[n]`` or a strategy (above).
        estimator: a name or a factory (above).
        lowrank_tolerance: ``"lowrank"`` only: pivoting stops once ``max_x k(x,x) − ‖l(x)‖² ≤`` this.
        max_rank: ``"lowrank"`` only: cap on the rank (default ``min(n, 2048, 2²⁸/n)``; a ``RuntimeWarning``
            if the tolerance is not met).
        generator: ``torch.Generator`` on the candidates' device.

    Example:
        >>> from torch_advbandit import KernelizedExp3
        >>> from torch_advbandit.kernels import make_kernel
        >>> from torch_advbandit.parameters import paper_parameters
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> policy = KernelizedExp3(X, make_kernel("se", 1), 100, **paper_parameters("se", 100, 1),
        ...                         generator=torch.Generator().manual_seed(0))
        >>> i = policy.select()
        >>> policy.update(i, 0.3)
        >>> from functools import partial
        >>> from torch_advbandit.estimators import LowRankIPSEstimator
        >>> low = KernelizedExp3(X, make_kernel("se", 1), 100, **paper_parameters("se", 100, 1),
        ...                      estimator=partial(LowRankIPSEstimator, tolerance=1e-10), exploration="uniform")
        >>> low.diagnostics()["rank"] < 50
        True
    """

    #: Which theorem's ``β`` derived parameters follow (:func:`~torch_advbandit.parameters.derived_parameters`).
    _algorithm = "kernelized_exp3"

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        eta: float | None = None,
        alpha: float | None = None,
        lam: float | None = None,
        beta: float | None = None,
        exploration: str | torch.Tensor | ExplorationStrategy = "mvr",
        estimator: str | EstimatorFactory = "exact",
        lowrank_tolerance: float = 1e-12,
        max_rank: int | None = None,
        reward_scale: float | str = 1.0,
        generator: torch.Generator | None = None,
    ) -> None:
        candidates = check_candidates(candidates)
        anytime, first, derive_for = first_epoch(horizon, {"eta": eta, "alpha": alpha, "beta": beta})
        lam = None if lam is None else check_positive(lam, "lam")
        generator = check_generator(generator, candidates.device)
        if estimator == "lowrank":
            estimator = partial(LowRankIPSEstimator, tolerance=lowrank_tolerance, max_rank=max_rank)
        recipe = _Recipe(kernel, candidates, estimator_factory(estimator), exploration_strategy(exploration), lam)
        parts = self._build_epoch(recipe, derive_for, dict(eta=eta, alpha=alpha, lam=lam, beta=beta), generator)
        super().__init__(
            candidates,
            first,
            estimator=parts["estimator"],
            exploration_probs=parts["pi"],
            eta=parts["eta"],
            alpha=parts["alpha"],
            beta=parts["beta"],
            reward_scale=reward_scale,
            generator=generator,
        )
        self.lam = parts["lam"]
        self.anytime = anytime
        self.epoch = 0
        self._recipe = recipe

    def _build_epoch(self, recipe: _Recipe, horizon: int, given: dict, generator) -> dict:
        """Parameters, estimator and ``π`` for ``horizon`` rounds (given values kept, missing ones derived)."""
        kernel, candidates, factory, explore, _ = recipe
        if any(v is None for v in given.values()):
            derived = derived_parameters(kernel, candidates, horizon, algorithm=self._algorithm, lam=given["lam"])
            given = {k: derived[k] if v is None else v for k, v in given.items()}
        alpha = check_unit_interval(given["alpha"], "alpha")
        check_positive(given["eta"], "eta")
        check_positive(given["beta"], "beta", allow_zero=True)
        est = build_estimator(factory, kernel, candidates, given["lam"] / horizon)
        length = exploration_length(horizon, alpha)
        pi = explore(getattr(est, "kernel", kernel), candidates, noise=given["lam"], length=length, generator=generator)
        pi = check_probs(pi, candidates.shape[0], candidates, "exploration")
        return {**given, "estimator": est, "pi": pi}

    # -- horizon=None: doubling epochs that keep the scores (AnytimeEpochs) ----------------------
    def _epoch_parts(self, epoch: int) -> dict:
        return self._build_epoch(
            self._recipe,
            epoch_horizon(epoch),
            dict(eta=None, alpha=None, lam=self._recipe.lam, beta=None),
            self.generator,
        )
