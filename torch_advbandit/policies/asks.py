"""Asks and observations of model-based policies (the GP-UCB family): any rows, several asks at once.

A model-based policy's state is its data, so an observation of any row — an initial design,
evaluations made elsewhere, several rows at once, before the first ask — is as good as one of its
own selections; the Exp3 family's importance weights need ``x_t ~ P_t``, so it keeps refusing them.
:class:`AnyRowsMixin` supplies what :class:`~torch_advbandit.policies.base.Policy` dispatches to when
``_takes_any_rows`` is set: validation first, then one atomic ``_update_rows`` of the policy.
"""

from __future__ import annotations

import torch
from botorch.acquisition import UpperConfidenceBound, qUpperConfidenceBound
from botorch.optim import optimize_acqf_discrete
from botorch.sampling import SobolQMCNormalSampler

from .._validation import check_index, check_int, check_reward


class AnyRowsMixin:
    """``select(q)`` adds ``q`` new distinct asks given the pending ones; ``update`` answers any pending
    asks; ``observe(X, Y)`` takes any rows (those equal to pending candidates answer them).

    Example:
        >>> from torch_advbandit import IGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = IGPUCB(X, make_kernel("se", 1), 10, lam=0.01, generator=torch.Generator().manual_seed(0))
        >>> policy.observe(torch.tensor([[0.13], [0.77]], dtype=torch.float64), torch.tensor([[0.2], [0.9]],
        ...                dtype=torch.float64))  # an initial design, before any ask
        >>> asks = policy.select(3)  # three distinct points
        >>> len(set(asks.tolist())), policy.t
        (3, 2)
        >>> policy.update(asks[1], 0.5)  # answers in any order
        >>> len(policy.pending)
        2
    """

    _takes_any_rows = True
    _horizon_optional = True  # the horizon of a model-based policy sets defaults only: ``None`` when unknown
    _picked = None  # (model, (index, β)): a UCB argmax selection_model computed on the model it returns

    def _ask(self, q: int | None) -> int | torch.Tensor:
        """Asks of a model-based policy: ``select()`` is idempotent (the oldest pending point, or a new
        one); ``select(q)`` adds ``q`` new distinct points, chosen given every pending one."""
        pending = self._pending_list()
        if q is None:
            if not pending:
                self._pending = self._atomically(self._draw)
                return self._pending
            return pending[0]
        q = check_int(q, "q", minimum=1)
        new = [int(i) for i in self._atomically(self._draw_batch, q).tolist()]
        merged = pending + new
        self._pending = merged[0] if len(merged) == 1 else tuple(merged)
        return torch.tensor(new, dtype=torch.long, device=self.candidates.device)

    def _take_rows(self, X: torch.Tensor, Y: torch.Tensor, indices: list[int]) -> None:
        """Observe ``(X, Y)`` on a model-based policy: ``indices`` are the pending points they answer."""
        pending = self._pending_list()
        for i in indices:
            pending.remove(i)
        self._atomically(self._update_rows, X, Y)
        self._pending = None if not pending else pending[0] if len(pending) == 1 else tuple(pending)
        for _ in range(X.shape[0]):
            self._advance()

    def _update_any(self, index, reward) -> None:
        """``update`` of a model-based policy: ``index`` one pending ask or a list of them, with their rewards."""
        many = isinstance(index, (list, tuple)) or (isinstance(index, torch.Tensor) and index.ndim == 1)
        values = (index.tolist() if isinstance(index, torch.Tensor) else list(index)) if many else [index]
        indices = [check_index(i, self.n) for i in values]
        rewards = reward.reshape(-1).tolist() if isinstance(reward, torch.Tensor) else reward if many else [reward]
        if not isinstance(rewards, (list, tuple)) or len(rewards) != len(indices):
            raise ValueError(f"reward must hold {len(indices)} values, one per index")
        rewards = [check_reward(r, "reward") for r in rewards]
        pending = self._pending_list()
        if not pending:
            raise ValueError("update called without a pending select(); call select() first")
        for i in indices:
            if pending.count(i) < indices.count(i):
                raise ValueError(f"index must be among the pending selections {pending}, got {i}")
        like = self.candidates
        self._take_rows(like[indices], torch.tensor(rewards, dtype=like.dtype, device=like.device), indices)

    def _observe_any(self, X: torch.Tensor, Y: torch.Tensor) -> None:
        """A model-based policy's ``observe``: any rows, several at once, before or between asks; rows
        equal to pending candidates answer them (the oldest first)."""
        d = self.candidates.shape[1]
        if X.ndim != 2 or X.shape[1] != d or X.shape[0] < 1:
            raise ValueError(f"X must have shape (k, {d}) with k ≥ 1, got {tuple(X.shape)}")
        if Y.shape != (X.shape[0], 1):
            raise ValueError(f"Y must have shape ({X.shape[0]}, 1), got {tuple(Y.shape)}")
        if not X.is_floating_point() or not bool(torch.isfinite(X).all()):
            raise ValueError("X must be finite floating-point rows")
        X = X.to(self.candidates)
        rewards = [check_reward(float(y), "Y") for y in Y.reshape(-1).tolist()]
        pending, answered = self._pending_list(), []
        for row in X:
            hits = [i for i in pending if i not in answered and torch.equal(self.candidates[i], row)]
            answered += hits[:1]
        like = self.candidates
        self._take_rows(X, torch.tensor(rewards, dtype=like.dtype, device=like.device), answered)

    def _draw(self) -> int:
        """One new point: the argmax of BoTorch's ``UpperConfidenceBound`` (``β_t²``) on :meth:`selection_model`
        over the candidates by ``optimize_acqf_discrete``; uniform, with the policy's generator, without a model."""
        model = self.selection_model()
        picked, self._picked = self._picked, None
        if model is None:
            self.last_beta = float("nan")
            return int(torch.randint(self.n, (), generator=self.generator, device=self.candidates.device))
        index, self.last_beta = picked[1] if picked is not None and picked[0] is model else self._ucb_argmax(model)
        return index

    def _ucb_argmax(self, model) -> tuple[int, float]:
        """``(index, β)``: the candidate maximising BoTorch's ``UpperConfidenceBound`` (``β²``, ``β`` =
        :meth:`confidence_width` of ``model``) on ``model`` by ``optimize_acqf_discrete``, ``chunk_size`` candidates
        a batch."""
        beta = self.confidence_width(model)
        acqf = UpperConfidenceBound(model, beta=beta**2)
        with torch.no_grad():
            best, _ = optimize_acqf_discrete(acqf, q=1, choices=self.candidates, max_batch_size=self.chunk_size)
        hits = (self.candidates == best.to(self.candidates)).all(-1).nonzero()
        return int(hits[0, 0]), beta

    def _draw_batch(self, q: int) -> torch.Tensor:
        """``q`` distinct new points: BoTorch's ``qUpperConfidenceBound`` with the pending points as
        ``X_pending``, maximised greedily over the other candidates by ``optimize_acqf_discrete``
        (quasi-MC with a seed drawn from the policy's generator); uniform draws without a model."""
        pending = self._pending_list()
        free = torch.ones(self.n, dtype=torch.bool, device=self.candidates.device)
        free[pending] = False
        choices = free.nonzero().squeeze(-1)
        if choices.numel() < q:
            raise ValueError(f"q = {q} asks exceed the {choices.numel()} candidates not pending")
        model, self._picked = self.selection_model(), None
        if model is None:
            order = torch.randperm(choices.numel(), generator=self.generator, device=choices.device)
            return choices[order[:q]]
        beta = self.confidence_width(model)
        self.last_beta = beta
        seed = int(torch.randint(2**31 - 1, (), generator=self.generator, device=self.generator.device))
        X_pending = self.candidates[pending] if pending else None
        acqf = qUpperConfidenceBound(
            model, beta=beta**2, sampler=SobolQMCNormalSampler(torch.Size([256]), seed=seed), X_pending=X_pending
        )
        with torch.no_grad():
            best, _ = optimize_acqf_discrete(
                acqf, q=q, choices=self.candidates[choices], max_batch_size=self.chunk_size, unique=True
            )
        rows = best.to(self.candidates)
        hits = (self.candidates[choices].unsqueeze(0) == rows.unsqueeze(1)).all(-1).float().argmax(-1)
        return choices[hits]
