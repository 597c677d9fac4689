"""The ``Random`` baseline of [Iwazaki2026], App. 17: a uniform draw every round."""

from __future__ import annotations

import math

import torch
from gpytorch.kernels import Kernel

from .base import RandomizedPolicy


class UniformRandom(RandomizedPolicy):
    """Draws ``x_t`` uniformly from the candidates every round; ignores rewards.

    ``P_t(x) = 1/n`` for every ``t`` ([Iwazaki2026], App. 17, "Random"). The kernel is accepted for a
    uniform constructor signature and not used.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: ignored (may be ``None``).
        horizon: ``T ≥ 1``, or ``None`` (unused: ``P_t`` does not depend on it).
        generator: ``torch.Generator`` on the candidates' device.

    Example:
        >>> policy = UniformRandom(torch.rand(10, 2, dtype=torch.float64), None, 5)
        >>> policy.update(policy.select(), 1.0)
    """

    _tuned_for_horizon = False  # P_t = 1/n whatever T
    _horizon_optional = True

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel | None,
        horizon: int | None,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(candidates, horizon, generator=generator)

    def log_probabilities(self) -> torch.Tensor:
        """``log P_t = −log n`` everywhere, ``Tensor[n]``."""
        return torch.full((self.n,), -math.log(self.n), dtype=self.candidates.dtype, device=self.candidates.device)

    def _update(self, index: int, reward: float) -> None:
        return None

    def _update_batch(self, indices: torch.Tensor, rewards: torch.Tensor) -> None:
        return None
