"""Change-point candidates of ``discount="auto"``: the memory "every row since ``τ``" (docs/algorithms.rst §8).

An exponential discount forgets the rows after a jump as fast as those before it; after a change
at ``τ`` the right memory keeps every row since ``τ`` and none before. So besides the discounts,
the competition of :mod:`~torch_advbandit.discount_selection` holds change points, as in Bayesian
online change-point detection [Adams2007]. Until :data:`WARMUP` lone rows are scored the memory is
every row (``η = 1``). From then on, before each lone observation joins a history of ``m`` rows, a
candidate ``τ = m`` ("the objective changed just before this row") enters with the best score so
far. Every candidate then predicts the row from the rows since its ``τ`` (``η = 1``; with none,
the prior) and keeps the score ``S_τ ← ρS_τ + log p_τ(y)`` of the discounts, with the same robust
density; it competes with ``S_τ`` less the prior log-odds against a change,
:data:`CHANGE_PENALTY`, which is not forgotten. The :data:`MAX_RECENT` newest candidates are kept,
and the best-scoring older one. Cost: a Cholesky of at most ``MAX_RECENT`` rows per recent
candidate per round, and one of the older candidate's rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..discount_selection import AUTO_DISCOUNTS, AUTO_MARGIN, NewRow
from ..memory_average import memory_weights

#: The newest change-point candidates kept (the best-scoring older one is kept too).
MAX_RECENT = 20
#: Lone observations scored before any memory but every row is chosen and change points compete: the calibration's
#: memory ``1/(1 − ρ_c)``. Earlier, a freshly fitted, not yet calibrated model loses to the humbler predictions of
#: the short discounts and of the prior, and forgetting (a change point right after the initial design) would throw
#: the design away.
WARMUP = 10
#: Prior log-odds against a change before any given row: ``log(100)``, a change every 100 rounds a priori.
CHANGE_PENALTY = math.log(100.0)


@dataclass(frozen=True)
class ChangePoints:
    """The change-point candidates: ``positions`` (``LongTensor[k]``, ascending; ``τ``, the first row each
    keeps), their ``scores`` and variance ``calibration`` (``Tensor[k]``, float64 on the CPU), and the number of
    lone observations ``scored`` so far.

    Example:
        >>> ChangePoints.none().positions.tolist()
        []
    """

    positions: torch.Tensor
    scores: torch.Tensor
    calibration: torch.Tensor
    scored: int = 0

    @classmethod
    def none(cls) -> ChangePoints:
        empty = torch.empty(0, dtype=torch.float64, device="cpu")
        return cls(torch.empty(0, dtype=torch.long, device="cpu"), empty, empty.clone())

    def observed(
        self,
        discount_scores: torch.Tensor,
        discount_calibration: torch.Tensor,
        row: NewRow,
        *,
        calibrate: bool = False,
        opens: bool = True,
    ) -> ChangePoints:
        """The candidates after the observation ``row`` joins its ``m`` rows.

        ``discount_scores`` and ``discount_calibration`` are the discounts' before this observation: where
        ``row`` ``opens`` a round (not a later row of a batch observed together), the new candidate ``τ = m``
        starts from the best of all scores as they compete (:meth:`competing`), with that candidate's
        calibration (from the :data:`WARMUP`-th scored observation on). Each candidate
        scores :meth:`~torch_advbandit.discount_selection.NewRow.log_density` from the rows since its
        ``τ``, its variance scaled by its calibration when ``calibrate``. With no past row, unchanged.

        Example:
            >>> from torch_advbandit.discount_selection import NewRow
            >>> row = NewRow(torch.eye(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64), 1.0,
            ...              torch.tensor([0.0, 0.1, 0.0], dtype=torch.float64), 5.0, 0.01)
            >>> zeros = torch.zeros(7, dtype=torch.float64)
            >>> cp = ChangePoints.none().observed(zeros, zeros + 1, row)
            >>> cp.positions.tolist(), cp.scored
            ([], 1)
        """
        m = row.Y.numel()
        if m == 0:
            return self
        positions, scores, calibration = self.positions, self.scores, self.calibration
        if self.scored >= WARMUP and opens:  # "a change just before this row" enters (never inside a batch)
            everything = self.competing(discount_scores)
            best = int(everything.argmax())
            entry_calibration = torch.cat([discount_calibration, calibration])[best : best + 1]
            positions = torch.cat([positions, torch.tensor([m], device="cpu")])
            scores = torch.cat([scores, everything[best : best + 1]])
            calibration = torch.cat([calibration, entry_calibration])
        memories = [(1.0, tau) for tau in positions.tolist()]
        scores, calibration = row.scored(scores, calibration, memories, calibrate=calibrate)
        keep = positions > m - MAX_RECENT
        if not bool(keep.all()):  # and the best-scoring older candidate
            older = (~keep).nonzero().squeeze(-1)
            keep[older[scores[older].argmax()]] = True
        return ChangePoints(positions[keep], scores[keep], calibration[keep], self.scored + 1)

    def competing(self, discount_scores: torch.Tensor) -> torch.Tensor:
        """The scores as the memories compete, ``Tensor[7 + k]``: the discounts', then each change point's less
        :data:`CHANGE_PENALTY`.

        Example:
            >>> cp = ChangePoints(torch.tensor([5]), torch.tensor([0.0], dtype=torch.float64),
            ...                   torch.ones(1, dtype=torch.float64))
            >>> round(float(cp.competing(torch.zeros(7, dtype=torch.float64))[-1]), 3)
            -4.605
        """
        return torch.cat([discount_scores, self.scores - CHANGE_PENALTY])

    def chosen(self, discount_scores: torch.Tensor, m: int, margin: float) -> tuple[float, int]:
        """``(η, since)`` for a history of ``m`` rows: the longest memory whose competing score (:meth:`competing`)
        is within ``margin`` of the best; ``(1.0, 0)``, every row, until more than :data:`WARMUP` lone rows have
        been scored (a freshly fitted, uncalibrated model would lose to the humbler short memories).

        A discount ``η`` remembers about ``1/(1 − η)`` rows (``η = 1``: all), a change point ``τ`` the
        ``m − τ`` rows since it; a change point chosen is ``(1.0, τ)``, a discount ``(η, 0)``. Ties go to
        the discounts.

        Example:
            >>> cp = ChangePoints(torch.tensor([5]), torch.tensor([0.0], dtype=torch.float64),
            ...                   torch.ones(1, dtype=torch.float64), scored=12)
            >>> scores = torch.full((7,), -10.0, dtype=torch.float64)
            >>> cp.chosen(scores, 9, margin=3.0)
            (1.0, 5)
        """
        if self.scored <= WARMUP:
            return 1.0, 0
        scores = self.competing(discount_scores)
        memories, lengths = self.memories(m)
        near = (scores >= scores.max() - margin).nonzero().squeeze(-1).tolist()
        return memories[max(near, key=lambda i: (lengths[i], -i))]

    def memories(self, m: int) -> tuple[list[tuple[float, int]], list[float]]:
        """The memories in the order of :meth:`competing`, as ``(η, since)``, and their lengths for a history of ``m``
        rows: a discount ``η`` remembers about ``1/(1 − η)`` rows (``η = 1``: all, ``inf``), a change point ``τ`` the
        ``m − τ`` rows since it.

        Example:
            >>> one = torch.ones(1, dtype=torch.float64)
            >>> memories, lengths = ChangePoints(torch.tensor([5]), one - 1, one).memories(9)
            >>> memories[0], memories[-1], lengths[-1]
            ((1.0, 0), (1.0, 5), 4.0)
        """
        memories = [(eta, 0) for eta in AUTO_DISCOUNTS] + [(1.0, int(tau)) for tau in self.positions.tolist()]
        lengths = [math.inf if eta == 1.0 else 1.0 / (1.0 - eta) for eta in AUTO_DISCOUNTS]
        return memories, lengths + [float(m - tau) for tau in self.positions.tolist()]

    def averaged(self, discount_scores: torch.Tensor, m: int) -> list[tuple[tuple[float, int], float]]:
        """``((η, since), weight)`` of the memories a selection averages for a history of ``m`` rows
        (:func:`~torch_advbandit.memory_average.memory_weights` of the competing scores, prior log-odds
        :data:`~torch_advbandit.discount_selection.AUTO_MARGIN` for every row at ``η = 1``); none until more than
        :data:`WARMUP` lone rows have been scored.

        Example:
            >>> one = torch.ones(1, dtype=torch.float64)
            >>> cp = ChangePoints(torch.tensor([5]), one - 1, one, scored=12)
            >>> [(mem, round(w, 3)) for mem, w in cp.averaged(torch.full((7,), -30.0, dtype=torch.float64), 9)]
            [((1.0, 5), 1.0)]
        """
        if self.scored <= WARMUP:
            return []
        memories, lengths = self.memories(m)
        weights = memory_weights(self.competing(discount_scores), lengths, AUTO_MARGIN)
        return [(memories[i], w) for i, w in weights]

    def state(self) -> dict[str, torch.Tensor]:
        """The candidates as a saved state's entries."""
        return {
            "change_points": self.positions.clone(),
            "change_scores": self.scores.clone(),
            "change_calibration": self.calibration.clone(),
            "change_scored": self.scored,
        }

    @classmethod
    def from_state(cls, state: dict, m: int) -> ChangePoints:
        """The candidates of a saved state of ``m`` rows (none when it has no ``change_points``); ``ValueError``
        naming the key that does not fit.

        Example:
            >>> ChangePoints.from_state({}, 4).positions.numel()
            0
        """
        if "change_points" not in state:
            return cls.none()
        positions, scores, calibration = (
            state.get(k) for k in ("change_points", "change_scores", "change_calibration")
        )
        if not isinstance(positions, torch.Tensor) or positions.ndim != 1 or positions.dtype != torch.long:
            raise ValueError("state['change_points'] must be a 1-D integer tensor")
        if positions.numel() and not (
            bool((positions[1:] > positions[:-1]).all()) and 1 <= positions[0] <= positions[-1] < m
        ):
            raise ValueError(f"state['change_points'] must be increasing positions in [1, {m - 1}]")
        for name, v in (("change_scores", scores), ("change_calibration", calibration)):
            if not isinstance(v, torch.Tensor) or v.shape != positions.shape or not bool(torch.isfinite(v).all()):
                raise ValueError(f"state['{name}'] must be a finite tensor shaped like state['change_points']")
        if not bool((calibration > 0).all()):
            raise ValueError("state['change_calibration'] must be positive")
        scored = state.get("change_scored")
        if isinstance(scored, bool) or not isinstance(scored, int) or not 0 <= scored <= m:
            raise ValueError(f"state['change_scored'] must be an integer in [0, {m}], got {scored!r}")
        scores, calibration = (v.to("cpu", torch.float64).clone() for v in (scores, calibration))
        return cls(positions.to("cpu").clone(), scores, calibration, scored)
