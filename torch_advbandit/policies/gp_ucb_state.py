"""The saved state of the GP-UCB policies: the observations and, for policies that adapt, what the data taught
(the discount, the memory competition of ``discount="auto"``, ``λ``, the kernel's hyperparameters, the mean)."""

from __future__ import annotations

from typing import Any

import torch

from ..kernels import kernel_diag, kernel_matrix
from .adaptation import adapted_state


class GPUCBStateMixin:
    """``state_dict`` / ``load_state_dict`` parts of :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy`
    (the base class validates everything first and installs it last).

    Example:
        >>> from torch_advbandit import WGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 10, discount="auto", lam=0.01)
        >>> policy.update(policy.select(), 0.3)
        >>> sorted(k for k in policy.state_dict() if k.startswith("change"))
        ['change_calibration', 'change_points', 'change_scored', 'change_scores']
    """

    @property
    def _adapts(self) -> bool:
        return self.auto_discount or self.fit_hyperparameters

    def _extra_state(self) -> dict[str, Any]:
        state = {"train_X": self.train_X.clone(), "rewards": self.rewards.clone()}
        if self._adapts:  # what the data taught: discount, its scores, λ and the kernel's hyperparameters
            kernel_state = {k: v.detach().clone() for k, v in self.kernel.state_dict().items()}
            state.update(discount=self.discount, discount_scores=self.discount_scores.clone())
            state.update(discount_calibration=self.discount_calibration.clone(), since=self.since)
            state.update(self.change_points.state())
            state.update(lam=self.lam, kernel_state=kernel_state, mean_constant=self.mean_constant or 0.0)
        return state

    def _prepare_state(self, state: dict[str, Any]):
        train_X, rewards = state.get("train_X"), state.get("rewards")
        if not isinstance(train_X, torch.Tensor) or not isinstance(rewards, torch.Tensor):
            raise ValueError("state must hold tensors 'train_X' and 'rewards'")
        d = self.candidates.shape[1]
        if train_X.shape != (rewards.numel(), d) or rewards.ndim != 1 or rewards.numel() != state["t"]:
            raise ValueError(f"state['train_X'] (t × {d}) and state['rewards'] must both have length state['t']")
        if not bool(torch.isfinite(rewards).all() & torch.isfinite(train_X).all()):
            raise ValueError("state['train_X'] and state['rewards'] must be finite")
        train_X = train_X.to(self.candidates).clone()
        rewards = rewards.to(self.candidates).clone()
        kernel, lam, discount, constant = self.kernel, self.lam, self.discount, self.mean_constant
        scores = (self.discount_scores, self.discount_calibration, self.change_points, self.since)
        if self._adapts:
            m, tested = train_X.shape[0], self.significance is not None
            adapted = adapted_state(state, self.kernel, self.candidates, self.auto_discount, m, tested)
            kernel, lam, discount, scores, constant = adapted
            constant = constant if self.fit_hyperparameters else None
        start = self.first_position(train_X.shape[0])
        X = train_X[start:]
        gram = kernel_matrix(kernel, X, X) if X.shape[0] else self._gram[:0, :0]
        scale = float(kernel_diag(kernel, self.candidates).max())

        def install() -> None:
            self.train_X, self.rewards = train_X, rewards
            self._gram_start, self._gram = start, gram
            self.kernel, self.lam, self.kernel_scale = kernel, lam, scale
            self.discount, (self.discount_scores, self.discount_calibration, self.change_points, self.since) = (
                discount, scores)  # fmt: skip
            self.mean_constant = constant

        return install
