"""Doubling epochs that keep the scores: the Exp3 family's unknown horizon (docs/algorithms.rst §3)."""

from __future__ import annotations

from typing import Any

import torch

from .._validation import check_int

#: ``horizon=None``: the first epoch's length; epoch ``k`` lasts ``FIRST_EPOCH·2^k`` rounds and ends at
#: round ``T_k = FIRST_EPOCH·(2^{k+1} − 1)``.
FIRST_EPOCH = 64

#: ``horizon=None``: epoch ``k``'s parameters, estimator and ``π`` are those of a known horizon
#: ``ANYTIME_HORIZON_FACTOR·T_k`` (docs/algorithms.rst §3).
ANYTIME_HORIZON_FACTOR = 2


def epoch_end(epoch: int) -> int:
    """``T_k``, the round anytime epoch ``k`` ends at.

    Example:
        >>> [epoch_end(k) for k in range(4)]
        [64, 192, 448, 960]
    """
    return FIRST_EPOCH * (2 ** (epoch + 1) - 1)


def epoch_horizon(epoch: int) -> int:
    """``H_k = ANYTIME_HORIZON_FACTOR·T_k``, the horizon epoch ``k``'s parameters are derived for.

    Example:
        >>> epoch_horizon(0), epoch_horizon(2)
        (128, 896)
    """
    return ANYTIME_HORIZON_FACTOR * epoch_end(epoch)


def first_epoch(horizon: int | None, given: dict[str, object]) -> tuple[bool, int, int]:
    """``(anytime, T, H)`` for a constructor's ``horizon``: with ``None``, the first epoch's ``T_0`` and
    ``H_0``, and every parameter in ``given`` (name → value) must be ``None`` (each epoch derives
    them); otherwise the checked horizon, twice.

    Example:
        >>> first_epoch(None, {"eta": None}), first_epoch(500, {"eta": 0.1})
        ((True, 64, 128), (False, 500, 500))
    """
    if horizon is None:
        if any(value is not None for value in given.values()):
            names = ", ".join(given)
            raise ValueError(f"horizon=None derives {names} for each epoch: omit them")
        return True, FIRST_EPOCH, epoch_horizon(0)
    horizon = check_int(horizon, "horizon", minimum=1)
    return False, horizon, horizon


class AnytimeEpochs:
    """Mixin for an :class:`~torch_advbandit.policies.exp3.Exp3Policy` built with ``horizon=None``.

    Epoch ``k`` plays rounds ``T_{k−1} + 1, …, T_k`` with what :meth:`_epoch_parts` returns for it
    (``η``, ``α``, ``β``, the estimator, ``π`` under ``"pi"``, and any other attributes the policy
    keeps per epoch); the scores ``S`` carry on. The next epoch is built before the round that closes
    an epoch is committed (building may raise: nothing is assigned yet) and installed after it
    (assignments only), so a failed round leaves the policy as it was. A policy with a known horizon
    (``anytime`` false) is one epoch. Subclasses set ``anytime`` and ``epoch = 0`` in their
    constructor.

    Example:
        >>> from torch_advbandit import APGExp3
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> policy = APGExp3(X, make_kernel("se", 1), None, generator=torch.Generator().manual_seed(0))
        >>> for t in range(64):
        ...     policy.update(policy.select(), 0.5)
        >>> policy.epoch, policy.horizon
        (1, 192)
    """

    anytime: bool
    epoch: int

    def _epoch_parts(self, epoch: int) -> dict[str, Any]:
        """Everything epoch ``epoch`` uses; built without touching the policy."""
        raise NotImplementedError

    def _install_epoch(self, epoch: int, parts: dict[str, Any]) -> None:
        parts = dict(parts)
        pi = parts.pop("pi")
        for name, value in parts.items():  # η, α, β, the estimator and the policy's own per-epoch values
            setattr(self, name, value)
        self.epoch = epoch
        self.horizon = epoch_end(epoch)  # the rounds the epochs so far cover
        self.exploration_probs = pi
        self._log_exploration = torch.log(pi)
        self._log_probs = None  # the scores S are kept

    def _closing_epoch(self, update, *args) -> None:
        nxt = self._epoch_parts(self.epoch + 1) if self.anytime and self.t + 1 == self.horizon else None
        update(*args)
        if nxt is not None:
            self._install_epoch(self.epoch + 1, nxt)

    def _update(self, index: int, reward: float) -> None:
        self._closing_epoch(super()._update, index, reward)

    def _update_batch(self, indices: torch.Tensor, rewards: torch.Tensor) -> None:
        self._closing_epoch(super()._update_batch, indices, rewards)

    def _extra_state(self) -> dict[str, Any]:
        return {**super()._extra_state(), "epoch": self.epoch}

    def _prepare_state(self, state: dict[str, Any]):
        install = super()._prepare_state(state)
        epoch = check_int(state["epoch"], "state['epoch']", minimum=0)
        if epoch and not self.anytime:
            raise ValueError("state['epoch'] must be 0 for a policy with a known horizon")
        parts = self._epoch_parts(epoch) if epoch != self.epoch else None

        def install_all() -> None:
            if parts is not None:
                self._install_epoch(epoch, parts)
            install()  # then the saved scores and π of that epoch

        return install_all
