"""The policy protocol shared by every bandit algorithm in the package (docs/API.md)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch

from .._validation import check_candidates, check_generator, check_index, check_int, check_real
from ..sampling import sample_from_log_probs


class Policy(ABC):
    """A bandit policy over a finite candidate set ``X = candidates`` (``Tensor[n, d]``).

    Protocol: ``select()`` returns the index of the next candidate and makes it *pending*;
    ``update(index, reward)`` (or ``observe(X, Y)``, its BoTorch-style form) reports the reward
    of the pending candidate and advances the round. Calling ``select()`` twice without an
    update returns the same pending index (one draw per round). Bad input to ``update`` raises
    ``ValueError`` or ``TypeError`` and leaves the policy exactly as it was. ``state_dict()``
    captures everything, the random generator's state included, so a policy restored with
    ``load_state_dict`` continues identically.

    Subclasses implement ``_draw`` (the pending index), ``_update`` (compute the new state,
    assigning it only at the end) and ``_extra_state`` / ``_load_extra_state``.
    """

    def __init__(
        self,
        candidates: torch.Tensor,
        horizon: int,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        self.candidates = check_candidates(candidates)
        self.horizon = check_int(horizon, "horizon", minimum=1)
        self.generator = check_generator(generator, self.candidates.device)
        self.t = 0
        self._pending: int | None = None

    @property
    def n(self) -> int:
        """Number of candidates."""
        return self.candidates.shape[0]

    @property
    def pending(self) -> int | None:
        """The index returned by the last ``select()`` that has not been updated yet."""
        return self._pending

    def select(self) -> int:
        """Index of the next candidate to evaluate; it becomes the pending selection."""
        if self._pending is None:
            self._pending = self._draw()
        return self._pending

    def update(self, index: int, reward: float) -> None:
        """Report ``reward = f_t(x_index)`` for the pending selection and advance one round.

        Raises:
            ValueError: no pending ``select()``, ``index`` out of range or not the pending one,
                or ``reward`` NaN/inf. The policy is then unchanged.
            TypeError: ``index`` not an integer or ``reward`` not a real number.
        """
        index = check_index(index, self.n)
        reward = check_real(reward, "reward")
        if self._pending is None:
            raise ValueError("update called without a pending select(); call select() first")
        if index != self._pending:
            raise ValueError(f"index must be the pending selection {self._pending}, got {index}")
        self._update(index, reward)
        self._pending = None
        self.t += 1

    def observe(self, X: torch.Tensor, Y: torch.Tensor) -> None:
        """BoTorch-style ``update``.

        ``X`` (``Tensor[1, d]``) is the pending candidate's row, ``Y`` (``Tensor[1, 1]``) its reward.

        Raises:
            ValueError: shapes other than ``1 × d`` and ``1 × 1``, or ``X`` not the pending row.
        """
        if not isinstance(X, torch.Tensor) or not isinstance(Y, torch.Tensor):
            raise TypeError("X and Y must be torch.Tensor")
        d = self.candidates.shape[1]
        if X.shape != (1, d):
            raise ValueError(f"X must have shape (1, {d}) (one pending candidate), got {tuple(X.shape)}")
        if Y.shape != (1, 1):
            raise ValueError(f"Y must have shape (1, 1), got {tuple(Y.shape)}")
        if self._pending is None:
            raise ValueError("observe called without a pending select(); call select() first")
        row = self.candidates[self._pending]
        if not torch.equal(X[0].to(row), row):
            raise ValueError(f"X must be the pending candidate candidates[{self._pending}]")
        self.update(self._pending, Y.reshape(()))

    def diagnostics(self) -> dict[str, float]:
        """Per-round numbers worth recording (e.g. the Nyström dictionary size); empty by default."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue identically: round, pending draw, RNG state, algorithm state."""
        return {
            "t": self.t,
            "pending": self._pending,
            "generator_state": self.generator.get_state(),
            "n": self.n,
            **self._extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a ``state_dict``; raises ``ValueError`` if it belongs to a different configuration."""
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict, got {type(state).__name__}")
        missing = {"t", "pending", "generator_state", "n"} - set(state)
        if missing:
            raise ValueError(f"state is missing keys {sorted(missing)}")
        if state["n"] != self.n:
            raise ValueError(f"state is for {state['n']} candidates, this policy has {self.n}")
        pending = state["pending"]
        if pending is not None:
            check_index(pending, self.n, "state['pending']")
        self._load_extra_state(state)
        self.generator.set_state(state["generator_state"])
        self.t = check_int(state["t"], "state['t']", minimum=0)
        self._pending = pending

    @abstractmethod
    def _draw(self) -> int:
        """Draw the next index."""

    @abstractmethod
    def _update(self, index: int, reward: float) -> None:
        """Apply a validated update; must leave the state unchanged if it raises."""

    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        return None


class RandomizedPolicy(Policy):
    """A policy that draws ``x_t`` from an explicit distribution ``P_t`` over the candidates.

    Subclasses implement ``log_probabilities``; drawing is exact (Gumbel-max on ``log P_t``).
    The scalar configuration from ``hyperparameters()`` is saved with every ``state_dict`` and
    checked on load.
    """

    @abstractmethod
    def log_probabilities(self) -> torch.Tensor:
        """``log P_t``, ``Tensor[n]``."""

    def probabilities(self) -> torch.Tensor:
        """``P_t``, ``Tensor[n]`` summing to one."""
        return self.log_probabilities().exp()

    def hyperparameters(self) -> dict[str, Any]:
        """The scalar configuration saved with, and checked against, every ``state_dict``."""
        return {"horizon": self.horizon}

    def _draw(self) -> int:
        return int(sample_from_log_probs(self.log_probabilities(), self.generator).item())

    def _extra_state(self) -> dict[str, Any]:
        return {"hyperparameters": self.hyperparameters()}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        check_hyperparameters(state, self.hyperparameters())


def check_hyperparameters(state: dict[str, Any], expected: dict[str, Any]) -> None:
    """Raise ``ValueError`` if a saved state's hyperparameters differ from this policy's."""
    saved = state.get("hyperparameters")
    if saved != expected:
        raise ValueError(f"state was saved with hyperparameters {saved}, this policy has {expected}")


def state_tensor(state: dict[str, Any], key: str, like: torch.Tensor) -> torch.Tensor:
    """Fetch ``state[key]`` as a tensor shaped and placed like ``like``."""
    value = state.get(key)
    if not isinstance(value, torch.Tensor) or value.shape != like.shape:
        raise ValueError(f"state[{key!r}] must be a tensor of shape {tuple(like.shape)}")
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"state[{key!r}] must be finite")
    return value.to(dtype=like.dtype, device=like.device).clone()
