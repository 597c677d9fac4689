"""What the GP-UCB policies select on: one memory's posterior, or the average over memories of ``discount="auto"``
(:mod:`~torch_advbandit.memory_average`)."""

from __future__ import annotations

import torch

from ..factored_gp import CholeskyCache, FactoredGP
from ..memory_average import AveragedGP, held_row
from .time_varying_selection import segment_correlated_model, tested_time_varying_model


class GPUCBSelectionMixin:
    """``selection_model`` of :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy`: the model its selections use.

    Example:
        >>> import torch
        >>> from torch_advbandit import WGPUCB
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 20, dtype=torch.float64).unsqueeze(-1)
        >>> policy = WGPUCB(X, make_kernel("se", 1), 10, discount="auto", lam=0.01)
        >>> policy.update(policy.select(), 0.3)
        >>> type(policy.selection_model()).__name__, policy.averaged_memories()
        ('FactoredGP', [])
    """

    def selection_model(self):
        """What selections use: :meth:`model`'s posterior as a :class:`~torch_advbandit.factored_gp.FactoredGP` (one
        Cholesky factor of the kept kernel matrix plus noise, bordered by a row when only a row was added), or,
        where :meth:`averaged_memories` holds several, the :class:`~torch_advbandit.memory_average.AveragedGP` of
        their posteriors, each on its own model scale (with ``standardize``, the outcomes standardised by that
        memory's own weighted statistics: the average is of the memories' standardised posteriors, on which each
        one's UCB ranks the candidates as on the outcomes' scale). Where the average's UCB maximiser is the row of
        :data:`~torch_advbandit.memory_average.REPEATS` of the last
        :data:`~torch_advbandit.memory_average.REPEAT_WINDOW` lone observations
        (:func:`~torch_advbandit.memory_average.held_row`), the chosen memory's posterior alone. With
        ``time_varying_significance``, while the memory holds no change point, the space-time model of every row
        where its fitted forgetting rate passes the test
        (:func:`~torch_advbandit.policies.time_varying_selection.tested_time_varying_model`), and while it holds one
        followed by at least ``2(d + 1)`` rows, the GP of every row with the segments before and since it correlated
        by a fitted ``ρ`` (:func:`~torch_advbandit.policies.time_varying_selection.segment_correlated_model`)."""
        self.last_held = 0.0  # set by every selection (a raise in select restores it: _atomically)
        self._picked = None
        self.last_segment_correlation = float("nan")
        if self.time_varying_significance is not None and self.train_X.shape[0]:
            if self.since == 0:
                model, statistic = tested_time_varying_model(self)
            else:  # a change point in force: the segments before and since it, correlated
                (model, self.last_segment_correlation), statistic = segment_correlated_model(self), float("nan")
            self.last_time_varying = statistic  # set once the test has run (a raise in select restores it: _atomically)
            if model is not None:
                return model
        members = self.averaged_memories()  # every memory holds a row: a change point τ is at most the newest row
        if len(members) < 2:
            data = self._model_data()
            return None if data is None else self._factored(data, self._factors)
        chosen = (self.discount, self.since)  # its factor is the one kept from round to round
        models = [self._factored(self._model_data(*m), self._factors if m == chosen else None) for m, _ in members]
        average = AveragedGP(models, [w for _, w in members])
        held = held_row(self.train_X[self.lone_start() :])
        if held is None:
            return average
        pick = self._ucb_argmax(average)
        if not torch.equal(self.candidates[pick[0]], held):
            self._picked = (average, pick)  # select's _draw takes this pick instead of a second acquisition pass
            return average
        self.last_held = 1.0
        own = [model for (m, _), model in zip(members, models, strict=True) if m == chosen]
        return own[0] if own else self._factored(self._model_data(), self._factors)  # the chosen memory's own UCB

    def lone_start(self) -> int:
        """Index of the first lone observation in ``train_X``: the rows before it were observed together before any
        other (an initial design), every row from it on is scored by the memories (``change_points.scored``)."""
        return self.train_X.shape[0] - self.change_points.scored

    def _factored(self, data, cache: CholeskyCache | None) -> FactoredGP:
        positions, X, Y, noise = data  # the newest observation (age 0) has the noise a new one would get
        K = self._kept_block(positions)
        L = cache.factor(K, noise) if cache is not None else CholeskyCache().factor(K, noise)
        return FactoredGP(X, Y, self.kernel, L, mean_constant=self.mean_constant, new_noise=float(noise[-1]))

    def averaged_memories(self) -> list[tuple[tuple[float, int], float]]:
        """``((η, since), weight)`` of the memories selections average (:meth:`ChangePoints.averaged`) with
        ``discount="auto"`` and fitted hyperparameters; none otherwise, and none while a change found with
        ``significance`` is in force (the model keeps the rows since it alone)."""
        if not (self.auto_discount and self.fit_hyperparameters) or (self.significance and self.since > 0):
            return []
        return self.change_points.averaged(self.discount_scores, self.train_X.shape[0])
