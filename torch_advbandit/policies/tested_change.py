"""A tested change point for the GP-UCB policies (``significance``; docs/algorithms.rst §8).

The change points of the automatic memory compete by one-step-ahead prediction under the hyperparameters fitted
to the memory in use. Where the objective shifts only in part (Branin moved by a quarter of its box), keeping
every row and fitting a larger noise predicts the new rows about as well as forgetting, and the memory keeps every
row. The likelihood-ratio test of :class:`~torch_advbandit.TimeVaryingGPUCB`
(:func:`~torch_advbandit.policies.change_point_test.detect_change`) fits both explanations: two independent
``SingleTaskGP`` on the rows before and since a split, against one on every row, Bonferroni-corrected over the
splits. With ``significance=α`` the GP-UCB policy runs it on every observation (once per batch) and, where it
passes, keeps every row since the newest change it accepts (``η = 1`` on those rows) unless the competition chose
a later change. Under a fixed discount (or window) the test cuts the rows before the change and the memory's own
weights apply to the rows since: ``WGPUCB(discount=0.9, fit_hyperparameters=True, significance=0.01)`` forgets
at ``η = 0.9`` and, after a change the test accepts, keeps nothing from before it. Splits fall after the initial
design (the rows observed together before any other) and
:data:`~torch_advbandit.policies.change_points.WARMUP` further rows, and leave at least
:data:`~torch_advbandit.policies.change_point_test.MIN_AFTER` rows after them. Cost: the test's two to ten fits of
``SingleTaskGP`` on the rows (a stationary objective: two or three); where no change is accepted and the memory is
every row at ``η = 1``, the test's stationary fit is the policy's fit (:func:`null_hyperparameters`), so the policy
fits no further model.
"""

from __future__ import annotations

import math

import torch
from gpytorch.kernels import Kernel

from ..fitting import fit_or_keep_start
from ..models import fitted_triple, trainable_kernel
from .change_point_test import _log_likelihood, detect_change, scaled_gp
from .change_points import WARMUP


class _Rows:
    """The rows of a GP-UCB policy as :func:`~torch_advbandit.policies.change_point_test.detect_change` reads
    them: ``row_rounds`` (the first ``design`` rows share round 0, every later row has a round of its own),
    ``warmup`` and ``_gp``, a fitted ``SingleTaskGP`` with ``kernel`` on some of the rows (``fitted``: whether the
    latest fit succeeded)."""

    def __init__(self, X: torch.Tensor, Y: torch.Tensor, design: int, kernel: Kernel, seed: int) -> None:
        m = Y.numel()
        later = torch.arange(1, m - design + 1, device=X.device)
        self.row_rounds = torch.cat([torch.zeros(design, dtype=torch.long, device=X.device), later])
        self.warmup, self.X, self.Y, self.kernel, self.seed = WARMUP + 1, X, Y.unsqueeze(-1), kernel, seed

    def _gp(self, start: float = math.inf, start_from=None, rows: slice = slice(None), scale=None, kernel_from=None):
        """A ``SingleTaskGP`` on ``rows`` (``start`` and ``kernel_from`` are the time kernel's of
        :class:`~torch_advbandit.TimeVaryingGPUCB`; none here), outcomes standardised by its own ``Standardize``
        or by the fixed transform ``scale``, fitted from the policy's kernel and BoTorch's initial noise or from
        ``start_from``; in eval mode."""
        from botorch.models import SingleTaskGP
        from botorch.models.transforms import Standardize

        X, Y, covar = self.X[rows], self.Y[rows], trainable_kernel(self.kernel, self.X)
        if scale is not None:
            gp = scaled_gp(X, Y, covar, scale)
        else:
            gp = SingleTaskGP(X, Y, covar_module=covar, outcome_transform=Standardize(m=1))
        if start_from is not None:
            gp.load_state_dict(start_from.state_dict())
        self.fitted = X.shape[0] >= 2 and fit_or_keep_start(gp, self.seed, stacklevel=4)
        gp.requires_grad_(False)
        return gp.eval()


def accepted_change(X: torch.Tensor, Y: torch.Tensor, design: int, kernel: Kernel, level: float, seed: int):
    """``(since, null)``: the first row since the newest change that the likelihood-ratio test accepts at ``level``
    among the rows ``(X, Y)`` (``Tensor[m, d]``, ``Tensor[m]``, in time order, the first ``design`` observed
    together; 0 when none is accepted), and the test's stationary model, a ``SingleTaskGP`` fitted on every row
    (``None`` where BoTorch's fit of it failed). ``kernel`` starts every fit (with BoTorch's initial noise);
    BoTorch's restarts draw under ``seed``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(40, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        >>> Y = torch.sin(6 * X[:, 0]) * torch.where(torch.arange(40) < 25, 1.0, -1.0).double()
        >>> since, null = accepted_change(X, Y, 2, make_kernel("se", 1, 0.3), 0.01, 0)
        >>> since, null.train_inputs[0].shape
        (25, torch.Size([40, 1]))
    """
    rows = _Rows(X, Y, design, kernel, seed)
    null = rows._gp()
    fitted = rows.fitted
    return detect_change(rows, null, level, _log_likelihood(null), model_after=False).since, null if fitted else None


def null_hyperparameters(null, like: torch.Tensor) -> tuple[Kernel, float, float] | None:
    """``(kernel, λ, c)`` of the test's stationary model ``null`` as
    :func:`~torch_advbandit.policies.adaptation.fit_hyperparameters` returns them for ``η = 1`` on the same rows
    from the same start and seed (the same fit: a ``SingleTaskGP`` with ``Standardize``, whose unbiased standard
    deviation is the weighted one for equal weights): the kernel frozen on ``like``'s device and dtype, ``λ`` in the
    outcomes' units, ``c`` the constant mean on the standardised scale; ``None`` if not finite and positive.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(12, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        >>> _, null = accepted_change(X, 3 * torch.sin(6 * X[:, 0]), 2, make_kernel("se", 1), 0.01, 0)
        >>> kernel, lam, c = null_hyperparameters(null, X)
        >>> lam > 0, kernel.raw_lengthscale.requires_grad
        (True, False)
    """
    noise = float(null.likelihood.noise.detach()) * float(null.outcome_transform.stdvs.square())
    return fitted_triple(null, noise, like)
