"""The environment interface: the reward function of each round on the candidate set."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch


class Environment(ABC):
    """Chooses ``f_t`` on the ``n`` candidates each round, possibly after seeing ``P_t``.

    ``rewards(t, probs)`` returns ``f_t`` as ``Tensor[n]``; ``probs`` is the learner's sampling
    distribution of that round (an adaptive adversary uses it, an oblivious one ignores it;
    ``None`` for a deterministic learner). The learner is then shown only
    ``feedback(t, index, f_t)``: ``f_t(x_t)`` by default, a noisy value for a noisy environment.

    ``regret`` says which regret the environment is scored by: ``"static"`` against the best
    fixed candidate in hindsight, ``max_x Σ_s f_s(x) − Σ_s f_s(x_s)`` (the adversarial setting),
    or ``"dynamic"`` against each round's maximiser, ``Σ_s max_x f_s(x) − f_s(x_s)`` (drifting
    objectives). :func:`~torch_advbandit.experiments.runner.play` reads it.

    Example:
        >>> class Constant(Environment):  # an oblivious adversary that always plays the same f
        ...     num_candidates = 3
        ...     def rewards(self, t, probs):
        ...         return torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
        >>> Constant().rewards(0, None).tolist()
        [0.0, 0.5, 1.0]
    """

    #: ``"static"`` (best fixed candidate in hindsight) or ``"dynamic"`` (each round's maximiser).
    regret: str = "static"

    @property
    @abstractmethod
    def num_candidates(self) -> int:
        """``n``."""

    @abstractmethod
    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t`` on every candidate, ``Tensor[n]`` (``t`` counts from 0)."""

    def feedback(self, t: int, index: int, f: torch.Tensor) -> float:
        """What the learner sees after playing ``index`` in round ``t`` when ``f_t = f``: ``f[index]``."""
        return float(f[index])
