"""The policy protocol shared by every bandit algorithm in the package (docs/public_api.rst)."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import torch

from .._validation import check_candidates, check_generator, check_index, check_int, check_reward
from ..sampling import sample_from_log_probs
from .settings import capture_settings, same_settings, tensor_digest
from .state import checked_generator_state


class Policy(ABC):
    """A bandit policy over a finite candidate set ``X = candidates`` (``Tensor[n, d]``).

    Protocol: ``select()`` returns the index of the next candidate and makes it *pending*;
    ``update(index, reward)`` (or ``observe(X, Y)``, its BoTorch-style form) reports the reward
    of the pending candidate and advances the round. Calling ``select()`` twice without an
    update returns the same pending index (one draw per round). Bad input to ``update`` raises
    ``ValueError`` or ``TypeError`` and leaves the policy exactly as it was. ``state_dict()``
    captures everything, the random generator's state included, so a policy restored with
    ``load_state_dict`` continues identically; a state that does not fit is refused whole.

    Settings and learned state are kept apart: every constructor argument except the data
    (``candidates``, ``kernel``) and the ``generator`` is captured once, by this class, as the
    policy's :meth:`hyperparameters` (:mod:`~torch_advbandit.policies.settings`).

    Subclasses implement ``_draw`` (the pending index), ``_update`` (compute the new state,
    assigning it only at the end) and ``_extra_state`` / ``_prepare_state`` (validate a saved
    state and return the function that installs it).

    Example:
        >>> from torch_advbandit import UniformRandom  # every policy follows this protocol
        >>> X = torch.rand(8, 2, dtype=torch.float64)
        >>> policy = UniformRandom(X, None, horizon=3, generator=torch.Generator().manual_seed(0))
        >>> i = policy.select()
        >>> policy.update(i, 0.5)
        >>> policy.t
        1
    """

    #: Whether the policy's parameters depend on the horizon (it then warns once when run past it).
    _tuned_for_horizon = True
    #: Whether ``horizon=None`` is accepted as is (a policy whose horizon only sets defaults: the GP-UCB family).
    _horizon_optional = False
    #: Model-based policies (the GP-UCB family) take observations of any rows (an initial design,
    #: evaluations made elsewhere) and further asks while points are pending; the Exp3 family's
    #: importance weights need ``x_t ~ P_t``, so it takes only the pending selection.
    _takes_any_rows = False

    #: Constructor arguments of this class that are data handed down by a subclass, not settings.
    _not_settings: frozenset[str] = frozenset()
    #: Plain attributes outside ``state_dict`` that a step sets (what :meth:`diagnostics` reports): restored on a raise.
    _reported_attributes: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            exclude = frozenset(cls.__dict__.get("_not_settings", ()))
            cls.__init__ = capture_settings(cls.__dict__["__init__"], exclude)

    def __init__(
        self,
        candidates: torch.Tensor,
        horizon: int | None,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        self.candidates = check_candidates(candidates)
        self.horizon = None if horizon is None and self._horizon_optional else check_int(horizon, "horizon", minimum=1)
        self.generator = check_generator(generator, self.candidates.device)
        self._candidates_digest = tensor_digest(self.candidates)
        self.t = 0
        self._pending: int | None = None

    @property
    def n(self) -> int:
        """Number of candidates."""
        return self.candidates.shape[0]

    @property
    def pending(self) -> int | tuple[int, ...] | None:
        """The index returned by the last ``select()`` that has not been updated yet."""
        return self._pending

    def select(self, q: int | None = None) -> int | torch.Tensor:
        """Index of the next candidate to evaluate; it becomes the pending selection.

        With ``q`` (an extension beyond the papers, Exp3 family only): ``q`` i.i.d. draws from
        ``P_t`` this round, returned as ``LongTensor[q]``; report them with
        ``update(indices, rewards)``.
        """
        if self._takes_any_rows:
            return self._ask(q)
        if q is None:
            if isinstance(self._pending, tuple):
                raise ValueError(f"a batch of {len(self._pending)} draws is pending: call select({len(self._pending)})")
            if self._pending is None:
                self._pending = self._atomically(self._draw)
            return self._pending
        q = check_int(q, "q", minimum=1)
        if self._pending is None:
            self._pending = tuple(int(i) for i in self._atomically(self._draw_batch, q).tolist())
        elif not isinstance(self._pending, tuple) or len(self._pending) != q:
            raise ValueError(f"another selection is pending ({self._pending}); update it before select(q={q})")
        return torch.tensor(self._pending, dtype=torch.long, device=self.candidates.device)

    def _pending_list(self) -> list[int]:
        if self._pending is None:
            return []
        return list(self._pending) if isinstance(self._pending, tuple) else [self._pending]

    def update(self, index, reward) -> None:
        """Report ``reward = f_t(x_index)`` for the pending selection and advance one round.

        After ``select(q)``: ``index`` is the ``LongTensor[q]`` (or list) of pending indices, in
        order, and ``reward`` their ``q`` rewards.

        Raises:
            ValueError: no pending ``select()``, ``index`` out of range or not the pending one,
                or ``reward`` NaN/inf. The policy is then unchanged.
            TypeError: ``index`` not an integer or ``reward`` not a real number.
        """
        if self._takes_any_rows:
            return self._update_any(index, reward)
        if isinstance(self._pending, tuple):
            indices, rewards = self._check_batch(index, reward)
            self._atomically(self._update_batch, indices, rewards)
            self._pending = None
            self._advance()
            return
        index = check_index(index, self.n)
        reward = check_reward(reward, "reward")
        if self._pending is None:
            raise ValueError("update called without a pending select(); call select() first")
        if index != self._pending:
            raise ValueError(f"index must be the pending selection {self._pending}, got {index}")
        self._atomically(self._update, index, reward)
        self._pending = None
        self._advance()

    def _advance(self) -> None:
        """Count the round; the first round past the horizon ``T`` warns (the parameters were tuned for ``T``)."""
        self.t += 1
        if self.horizon is not None and self.t == self.horizon + 1 and self._tuned_for_horizon:
            warnings.warn(
                f"{type(self).__name__} is running past its horizon T = {self.horizon}: its parameters were set for "
                "T rounds (rebuild it for a longer horizon)",
                RuntimeWarning,
                stacklevel=3,
            )

    def _atomically(self, step, *args):
        """Run ``step(*args)`` (a draw or an update); if it raises — a rejected reward, a kernel that
        raises, an interrupt — the generator is put back, so the policy is exactly as before (the
        steps themselves assign their state only at the end), and so are the ``_reported_attributes``."""
        saved, reported = self.generator.get_state(), {a: getattr(self, a) for a in self._reported_attributes}
        try:
            return step(*args)
        except BaseException:
            self.generator.set_state(saved)
            self.__dict__.update(reported)
            raise

    def _check_batch(self, index, reward) -> tuple[torch.Tensor, torch.Tensor]:
        pending = self._pending
        values = index.tolist() if isinstance(index, torch.Tensor) else index
        if not isinstance(values, (list, tuple)) or [check_index(i, self.n) for i in values] != list(pending):
            raise ValueError(f"index must be the pending batch {list(pending)}, got {values!r}")
        rewards = reward.tolist() if isinstance(reward, torch.Tensor) else reward
        if not isinstance(rewards, (list, tuple)) or len(rewards) != len(pending):
            raise ValueError(f"reward must hold {len(pending)} values, one per pending draw")
        rewards = [check_reward(r[0] if isinstance(r, list) and len(r) == 1 else r, "reward") for r in rewards]
        device, dtype = self.candidates.device, self.candidates.dtype
        return torch.tensor(pending, dtype=torch.long, device=device), torch.tensor(rewards, dtype=dtype, device=device)

    def observe(self, X: torch.Tensor, Y: torch.Tensor) -> None:
        """BoTorch-style ``update``.

        ``X`` (``Tensor[q, d]``) holds the pending candidates' rows (``q = 1`` after ``select()``,
        ``q`` after ``select(q)``), ``Y`` (``Tensor[q, 1]``) their rewards.

        Raises:
            ValueError: other shapes, or ``X`` not the pending rows.
        """
        if not isinstance(X, torch.Tensor) or not isinstance(Y, torch.Tensor):
            raise TypeError("X and Y must be torch.Tensor")
        if self._takes_any_rows:
            return self._observe_any(X, Y)
        if self._pending is None:
            raise ValueError(
                "observe called without a pending select(); call select() first (this policy's importance "
                "weights need x_t ~ P_t, so it takes only its own selections; the GP-UCB family takes any rows)"
            )
        pending = list(self._pending) if isinstance(self._pending, tuple) else [self._pending]
        q, d = len(pending), self.candidates.shape[1]
        if X.shape != (q, d):
            raise ValueError(f"X must have shape ({q}, {d}) (the pending candidates), got {tuple(X.shape)}")
        if Y.shape != (q, 1):
            raise ValueError(f"Y must have shape ({q}, 1), got {tuple(Y.shape)}")
        rows = self.candidates[pending]
        if not torch.equal(X.to(rows), rows):
            raise ValueError(
                f"X must be the pending candidates candidates[{pending}]: this policy's importance weights need "
                "x_t ~ P_t, so it takes only its own selections"
            )
        if isinstance(self._pending, tuple):
            self.update(list(pending), Y.reshape(-1))
        else:
            self.update(self._pending, Y.reshape(()))

    def diagnostics(self) -> dict[str, float]:
        """Per-round numbers worth recording (e.g. the Nyström dictionary size); empty by default."""
        return {}

    def hyperparameters(self) -> dict[str, Any]:
        """The settings: constructor arguments with their defaults, minus candidates, kernel and generator.

        Saved with every ``state_dict`` and compared on load.
        """
        return dict(self.__dict__.get("_settings", {"horizon": self.horizon}))

    def fingerprint(self) -> dict[str, Any]:
        """What a state belongs to: the candidate set (shape, dtype, a digest of its values) and the kernel
        (its modules and a digest of its hyperparameters). Saved with every state and compared on load.

        Example:
            >>> from torch_advbandit import UniformRandom
            >>> X = torch.rand(5, 1, dtype=torch.float64)
            >>> UniformRandom(X, None, 3).fingerprint()["candidates"][:2]
            (5, 1)
        """
        c = self.candidates
        return {
            "candidates": (c.shape[0], c.shape[1], str(c.dtype), self._candidates_digest),
            "kernel": self.__dict__.get("_kernel_fingerprint"),
        }

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue identically: round, pending draw, RNG state, settings, learned state."""
        return {
            "t": self.t,
            "pending": list(self._pending) if isinstance(self._pending, tuple) else self._pending,
            "generator_state": self.generator.get_state(),
            "n": self.n,
            "fingerprint": self.fingerprint(),
            "hyperparameters": self.hyperparameters(),
            **self._extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a ``state_dict``, all or nothing.

        Every part is checked before anything is assigned, so a refused state leaves the policy
        exactly as it was.

        Raises:
            TypeError: ``state`` is not a dict.
            ValueError: a key is missing, or the state belongs to another configuration (other
                ``n``, other settings) or does not fit this policy (shapes, values, generator).
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict, got {type(state).__name__}")
        expected = {"t", "pending", "generator_state", "n", "fingerprint", "hyperparameters", *self._extra_state()}
        if set(state) != expected:
            missing, unknown = sorted(expected - set(state)), sorted(set(state) - expected)
            raise ValueError(f"state does not fit this policy: missing keys {missing}, unknown keys {unknown}")
        if state["n"] != self.n:
            raise ValueError(f"state is for {state['n']} candidates, this policy has {self.n}")
        mine = self.fingerprint()
        theirs = state["fingerprint"] if isinstance(state["fingerprint"], dict) else {}
        for part in ("candidates", "kernel"):
            if theirs.get(part) != mine[part]:
                raise ValueError(f"state belongs to another {'candidate set' if part == 'candidates' else part}")
        settings = self.hyperparameters()
        if not same_settings(state["hyperparameters"], settings):
            saved = state["hyperparameters"]
            raise ValueError(f"state was saved with hyperparameters {saved}, this policy has {settings}")
        t = check_int(state["t"], "state['t']", minimum=0)
        pending = state["pending"]
        if isinstance(pending, (list, tuple)):
            pending = tuple(check_index(i, self.n, "state['pending']") for i in pending)
        elif pending is not None:
            pending = check_index(pending, self.n, "state['pending']")
        generator_state = checked_generator_state(state["generator_state"], self.generator)
        install = self._atomically(self._prepare_state, state)  # rebuilding may draw (approximate MVR)
        install()
        self.generator.set_state(generator_state)
        self.t = t
        self._pending = pending

    @abstractmethod
    def _draw(self) -> int:
        """Draw the next index."""

    @abstractmethod
    def _update(self, index: int, reward: float) -> None:
        """Apply a validated update; must leave the state unchanged if it raises."""

    def _draw_batch(self, q: int) -> torch.Tensor:
        """``q`` indices for one round (``LongTensor[q]``); only the Exp3 family draws batches."""
        raise ValueError(f"{type(self).__name__} selects one point per round; q > 1 needs an Exp3-family policy")

    def _update_batch(self, indices: torch.Tensor, rewards: torch.Tensor) -> None:
        """Apply a validated batch update (``q`` draws of one round)."""
        raise ValueError(f"{type(self).__name__} does not take batch updates")

    def _extra_state(self) -> dict[str, Any]:
        """The learned state beyond round, pending draw and generator (tensors are cloned)."""
        return {}

    def _prepare_state(self, state: dict[str, Any]) -> Callable[[], None]:
        """Validate the learned state in ``state`` and return the function that installs it.

        Must not change the policy itself: :meth:`load_state_dict` installs only after every check passed.
        """
        return lambda: None


class RandomizedPolicy(Policy):
    """A policy that draws ``x_t`` from an explicit distribution ``P_t`` over the candidates.

    Subclasses implement ``log_probabilities``; drawing is exact (Gumbel-max on ``log P_t``).

    Example:
        >>> from torch_advbandit import UniformRandom
        >>> X = torch.rand(4, 1, dtype=torch.float64)
        >>> policy = UniformRandom(X, None, 10, generator=torch.Generator().manual_seed(0))
        >>> policy.probabilities().tolist()
        [0.25, 0.25, 0.25, 0.25]
    """

    @abstractmethod
    def log_probabilities(self) -> torch.Tensor:
        """``log P_t``, ``Tensor[n]``."""

    def probabilities(self) -> torch.Tensor:
        """``P_t``, ``Tensor[n]`` summing to one."""
        return self.log_probabilities().exp()

    def _draw(self) -> int:
        return int(sample_from_log_probs(self.log_probabilities(), self.generator).item())

    def _draw_batch(self, q: int) -> torch.Tensor:
        return sample_from_log_probs(self.log_probabilities(), self.generator, q)
