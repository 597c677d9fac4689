"""The estimator interface shared by every Exp3-family policy."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

from .._validation import check_index, check_probs, check_reward


class IPSEstimator(ABC):
    """One round of a kernelized importance-weighted estimator on a fixed candidate set.

    An estimator is built once per policy (it may precompute kernel quantities) and then called
    every round with the round's sampling distribution ``P_t``, the drawn index and its reward.
    ``KernelizedExp3`` and its Nyström variant share one policy loop and differ only here.
    Subclasses set ``candidates`` (``Tensor[n, d]``) and implement ``_estimate``; the public
    ``estimate`` validates its arguments first (policies, which validated already, call
    ``_estimate`` directly and so avoid device synchronisations in the hot path).

    Example:
        >>> from torch_advbandit.estimators import ExactIPSEstimator
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> est = ExactIPSEstimator(make_kernel("se", 1), X, ridge=1e-2)  # a concrete IPSEstimator
        >>> f_hat, width = est.estimate(torch.full((20,), 0.05, dtype=torch.float64), 4, 0.7)
        >>> f_hat.shape, bool((width >= 0).all())
        (torch.Size([20]), True)
    """

    candidates: torch.Tensor

    @property
    def n(self) -> int:
        """Number of candidates."""
        return self.candidates.shape[0]

    def estimate(
        self, probs: torch.Tensor, index: int, reward: float, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(f_hat, width)``, both ``Tensor[n]``.

        Args:
            probs: ``P_t``, ``Tensor[n]``, non-negative, summing to one.
            index: the drawn candidate ``x_t``.
            reward: the observed ``y_t = f_t(x_t)``.
            generator: randomness for estimators that sample (Nyström); ignored by exact ones.
        """
        probs = check_probs(probs, self.n, self.candidates)
        index = check_index(index, self.n)
        reward = check_reward(reward, "reward")
        return self._estimate(probs, index, reward, generator)

    def diagnostics(self) -> dict[str, float]:
        """Per-round numbers worth recording (e.g. a Nyström dictionary's size); empty by default."""
        return {}

    @abstractmethod
    def _estimate(
        self, probs: torch.Tensor, index: int, reward: float, generator: torch.Generator | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``estimate`` without argument checks."""

    def _estimate_batch(
        self, probs: torch.Tensor, indices: torch.Tensor, rewards: torch.Tensor, generator: torch.Generator | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The average of the ``q`` estimates ``(1/q) Σ_j f̂(· ; x_j, y_j)`` and the (shared) width.

        Default: ``q`` calls of ``_estimate``; estimators override it to share the round's work.
        """
        total, width = None, None
        for i, y in zip(indices.tolist(), rewards.tolist(), strict=True):
            f_hat, width = self._estimate(probs, i, y, generator)
            total = f_hat if total is None else total + f_hat
        return total / indices.numel(), width
