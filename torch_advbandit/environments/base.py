"""The environment interface: the reward function of each round on the candidate set."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch


class Environment(ABC):
    """Chooses ``f_t`` on the ``n`` candidates each round, possibly after seeing ``P_t``.

    ``rewards(t, probs)`` returns ``f_t`` as ``Tensor[n]``; ``probs`` is the learner's sampling
    distribution of that round (an adaptive adversary uses it, an oblivious one ignores it).
    The learner is then shown only ``f_t(x_t)``.
    """

    @property
    @abstractmethod
    def num_candidates(self) -> int:
        """``n``."""

    @abstractmethod
    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t`` on every candidate, ``Tensor[n]`` (``t`` counts from 0)."""
