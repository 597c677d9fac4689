"""The environment interface: the reward function of each round on the candidate set."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch


class Environment(ABC):
    """Chooses ``f_t`` on the ``n`` candidates each round, possibly after seeing ``P_t``.

    ``rewards(t, probs)`` returns ``f_t`` as ``Tensor[n]``; ``probs`` is the learner's sampling
    distribution of that round (an adaptive adversary uses it, an oblivious one ignores it).
    The learner is then shown only ``f_t(x_t)``.

    Example:
        >>> class Constant(Environment):  # an oblivious adversary that always plays the same f
        ...     num_candidates = 3
        ...     def rewards(self, t, probs):
        ...         return torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
        >>> Constant().rewards(0, None).tolist()
        [0.0, 0.5, 1.0]
    """

    @property
    @abstractmethod
    def num_candidates(self) -> int:
        """``n``."""

    @abstractmethod
    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t`` on every candidate, ``Tensor[n]`` (``t`` counts from 0)."""
