"""The rewards' unit of the Exp3 family (``reward_scale``; docs/algorithms.rst §3, "Reward units").

Every parameter of the Exp3 family assumes rewards of RKHS norm at most ``B = 2``, so within about
``[−2, 2]``. A fixed ``reward_scale = s`` says the rewards are in a unit ``s`` times that one; with
``"auto"`` the unit is learnt from the rewards seen before each round: centre ``c_t`` the midpoint and
scale ``s_t`` a quarter of their range, so that ``(y − c_t)/s_t`` spans ``[−2, 2]``. ``s_t`` never
decreases, so ``η/s_t`` is a non-increasing learning rate, and ``c_t`` is known before ``y_t``, so each
estimate stays unbiased for ``f_t − c_t`` (a shift of every arm, which leaves the regret unchanged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_positive


@dataclass(frozen=True)
class RewardUnit:
    """``scale``: the fixed ``s``, or ``None`` for ``"auto"``; ``low``, ``high``: the range of the rewards seen
    (``"auto"`` only; ``(inf, −inf)`` before any).

    Example:
        >>> unit = RewardUnit.of("auto").seen([1.0, 5.0])
        >>> unit.ready, unit.center, unit.divisor
        (True, 3.0, 1.0)
        >>> RewardUnit.of(10.0).center, RewardUnit.of(10.0).divisor
        (0.0, 10.0)
    """

    scale: float | None
    low: float = math.inf
    high: float = -math.inf

    @classmethod
    def of(cls, reward_scale: float | str) -> RewardUnit:
        """The unit of the ``reward_scale`` setting: a number ``> 0`` or ``"auto"``."""
        if isinstance(reward_scale, str):
            if reward_scale != "auto":
                raise ValueError(f"reward_scale must be a number > 0 or 'auto', got {reward_scale!r}")
            return cls(None)
        return cls(check_positive(reward_scale, "reward_scale"))

    @property
    def ready(self) -> bool:
        """Whether rewards can be learnt from: always with a fixed scale; with ``"auto"`` once two different
        rewards have been seen (before that the policy plays its initial distribution and only records them)."""
        return self.scale is not None or self.high > self.low

    @property
    def center(self) -> float:
        """``c``, subtracted from each reward: ``0``, or the midpoint of the range seen."""
        return 0.0 if self.scale is not None else 0.5 * (self.low + self.high)

    @property
    def divisor(self) -> float:
        """``s``, the unit: the fixed scale, or a quarter of the range seen (``1`` before it has one)."""
        if self.scale is not None:
            return self.scale
        return 0.25 * (self.high - self.low) if self.ready else 1.0

    def seen(self, rewards: list[float]) -> RewardUnit:
        """The unit once ``rewards`` (the round's, as numbers) are seen too."""
        if self.scale is not None:
            return self
        return RewardUnit(None, min(self.low, *rewards), max(self.high, *rewards))

    def state(self) -> dict[str, list[float]]:
        """The saved state's entry, ``[low, high]`` (``"auto"`` only; a fixed scale is a setting)."""
        if self.scale is not None:
            return {}
        return {"reward_range": [self.low, self.high]}

    def from_state(self, state: dict) -> RewardUnit:
        """This unit with the range of a saved state; ``ValueError`` naming the key that does not fit."""
        if self.scale is not None:
            return self
        value = state["reward_range"]
        if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, float) for v in value)):
            raise ValueError("state['reward_range'] must be a list of two floats [low, high]")
        low, high = value
        empty = low == math.inf and high == -math.inf
        if not (empty or (math.isfinite(low) and math.isfinite(high) and low <= high)):
            raise ValueError("state['reward_range'] must be [low, high] with low ≤ high, or [inf, -inf]")
        return RewardUnit(None, low, high)
