"""The linear importance-weighted estimator of APG-Exp3 ([Takemori2021]; docs/algorithms.rst §6)."""

from __future__ import annotations

import torch

from .._validation import check_candidates
from .base import IPSEstimator


class LinearIPSEstimator(IPSEstimator):
    """Exp3 for linear bandits on explicit features ``N(x) ∈ R^D``: ``θ̂_t = Q_t⁺ N(x_t) y_t``.

    ``Q_t = Σ_x P_t(x) N(x)N(x)ᵀ`` (``D × D``) and ``f̂_t(x) = N(x)ᵀ θ̂_t``; there is no
    optimism term, so the width is zero. ``O(n·D² + D³)`` per round.

    Args:
        features: ``Tensor[n, D]`` (e.g. the Newton basis of :class:`~torch_advbandit.APGExp3`).
        candidates: ``Tensor[n, d]``, the candidates the features belong to.

    Example:
        >>> F = torch.eye(3, dtype=torch.float64)
        >>> est = LinearIPSEstimator(F, torch.rand(3, 1, dtype=torch.float64))
        >>> est.estimate(torch.full((3,), 1 / 3, dtype=torch.float64), 1, 2.0)[0].tolist()
        [0.0, 6.0, 0.0]
    """

    def __init__(self, features: torch.Tensor, candidates: torch.Tensor) -> None:
        self.candidates = check_candidates(candidates)
        if not isinstance(features, torch.Tensor) or features.ndim != 2 or features.shape[0] != self.n:
            raise ValueError(f"features must be a Tensor[{self.n}, D]")
        self.features = features.to(self.candidates)

    def _estimate(self, probs, index, reward, generator):
        F = self.features
        Q = F.mT @ (probs.unsqueeze(-1) * F)
        theta = torch.linalg.pinv(Q, hermitian=True) @ F[index] * reward
        return F @ theta, torch.zeros_like(probs)

    def _estimate_batch(self, probs, indices, rewards, generator):
        F = self.features
        Q = F.mT @ (probs.unsqueeze(-1) * F)
        theta = torch.linalg.pinv(Q, hermitian=True) @ (F[indices].mT @ rewards) / indices.numel()
        return F @ theta, torch.zeros_like(probs)
