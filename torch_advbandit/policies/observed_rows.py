"""The state of a model-based policy whose state is its data: the observed rows, their rewards and rounds."""

from __future__ import annotations

from typing import Any

import torch


class ObservedRowsMixin:
    """The state of a policy whose state is its data: ``train_X`` (``Tensor[m, d]``), ``rewards`` (``Tensor[m]``)
    and ``row_rounds`` (``LongTensor[m]``, the round at which each row was observed; rows observed together share
    it). Saved by ``state_dict`` and checked whole by ``load_state_dict``.

    Example:
        >>> from torch_advbandit import TimeVaryingGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 10, dtype=torch.float64).unsqueeze(-1)
        >>> policy = TimeVaryingGPUCB(X, make_kernel("se", 1), 5, fit_hyperparameters=False, epsilon=0.1)
        >>> policy.observe(X[:2], torch.zeros(2, 1, dtype=torch.float64))
        >>> policy.row_rounds.tolist()
        [0, 0]
    """

    def _init_rows(self) -> None:
        like = self.candidates
        self.train_X = like[:0].clone()
        self.rewards = torch.empty(0, dtype=like.dtype, device=like.device)
        self.row_rounds = torch.empty(0, dtype=torch.long, device=like.device)

    def _update(self, index: int, reward: float) -> None:
        self._update_rows(self.candidates[index : index + 1], self.rewards.new_tensor([reward]))

    def _update_rows(self, X: torch.Tensor, Y: torch.Tensor) -> None:
        rounds = torch.full((X.shape[0],), self.t, dtype=torch.long, device=self.row_rounds.device)
        train_X, rewards = torch.cat([self.train_X, X]), torch.cat([self.rewards, Y])
        self.train_X, self.rewards, self.row_rounds = train_X, rewards, torch.cat([self.row_rounds, rounds])

    def _extra_state(self) -> dict[str, Any]:
        return {"train_X": self.train_X.clone(), "rewards": self.rewards.clone(), "row_rounds": self.row_rounds.clone()}

    def _prepare_state(self, state: dict[str, Any]):
        train_X, rewards, rounds = state["train_X"], state["rewards"], state["row_rounds"]
        if not all(isinstance(v, torch.Tensor) for v in (train_X, rewards, rounds)):
            raise ValueError("state['train_X'], state['rewards'] and state['row_rounds'] must be tensors")
        m, d = rewards.numel(), self.candidates.shape[1]
        if rewards.shape != (m,) or train_X.shape != (m, d) or rounds.shape != (m,) or m != state["t"]:
            raise ValueError(f"state['train_X'] (t × {d}), state['rewards'] and state['row_rounds'] must have length t")
        if not bool(torch.isfinite(rewards).all() & torch.isfinite(train_X).all()):
            raise ValueError("state['train_X'] and state['rewards'] must be finite")
        if rounds.dtype != torch.long or (m and not (bool((rounds.diff() >= 0).all()) and 0 <= int(rounds[0]))):
            raise ValueError("state['row_rounds'] must be non-decreasing non-negative integers")
        if m and int(rounds[-1]) >= m:
            raise ValueError(f"state['row_rounds'] must be below t = {m}")
        like = self.candidates
        new = (train_X.to(like).clone(), rewards.to(like).clone(), rounds.to(like.device).clone())

        def install() -> None:
            self.train_X, self.rewards, self.row_rounds = new

        return install
