"""The fits of the GP-UCB policies in an update: the change test of ``significance`` and the kernel's hyperparameters
with ``λ`` and the mean (``fit_hyperparameters=True``); :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy` calls
them on the rows it is about to hold and assigns what they return together with the new observation."""

from __future__ import annotations

from ..fitting import fit_seed
from ..segment_fit import fit_segments
from .adaptation import fit_hyperparameters
from .tested_change import accepted_change, null_hyperparameters


class GPUCBFitMixin:
    """The change test's and the hyperparameters' fits of :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy` (which
    holds the settings they read).

    Example:
        >>> from torch_advbandit import WGPUCB
        >>> issubclass(WGPUCB, GPUCBFitMixin)
        True
    """

    def _tested_since(self, train_X, rewards, scored: int):
        """``(since, null)``: the first row since the newest change accepted at ``significance`` (0: none; the rows
        not counted as lone observations, ``m − scored``, the initial design, are never split) and the test's fit on
        every row."""
        m = train_X.shape[0]
        seed = fit_seed(self.generator, m)
        return accepted_change(train_X, rewards, m - scored, self._initial_kernel, self.significance, seed)

    def _fit_due(self, train_X, rewards, discount, since, m0, null=None):
        """``(kernel, λ, c)`` fitted on the training set if the rows since the ``m0``-th reached a multiple of
        ``fit_every`` (one fit for several rows observed at once), else ``None``. ``null``, the change test's
        fit on every row (outcomes standardised), is that fit where the training set is every row at ``η = 1``
        and the policy standardises. Under ``discount="auto"`` the fit is at ``η = 1`` whatever the memory's
        discount, and while a change point is in force it is on every row, the rows before and since the change
        point two segments sharing the hyperparameters (:func:`~torch_advbandit.segment_fit.fit_segments`; see
        ``fit_hyperparameters``)."""
        m = train_X.shape[0]
        if not (self.fit_hyperparameters and m >= 2 and m // self.fit_every > m0 // self.fit_every):
            return None
        if self.auto_discount and since > 0:  # a change point: the rows before and since it share the hyperparameters
            first = self.first_position(m)
            return fit_segments(
                train_X[first:], rewards[first:], since - first, self._initial_kernel,
                standardize=self.standardize, like=self.candidates, seed=fit_seed(self.generator, m),
            )  # fmt: skip
        positions = self.training_set(m, since)
        if positions.numel() < 2:  # right after a restart or a change point: nothing to fit yet
            return None
        fit_discount = 1.0 if self.auto_discount else discount
        if null is not None and self.standardize and fit_discount == 1.0 and positions.numel() == m:  # the test's fit
            return null_hyperparameters(null, self.candidates)
        return fit_hyperparameters(
            train_X[positions], rewards[positions], self.ages(positions, m), self._initial_kernel, None, fit_discount,
            standardize=self.standardize, like=self.candidates, seed=fit_seed(self.generator, m),
        )  # fmt: skip
