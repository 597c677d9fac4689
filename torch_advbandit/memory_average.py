"""The average over memories that ``discount="auto"`` selects with (docs/algorithms.rst §8).

Dynamic model averaging [Raftery2010] predicts with every model of its set, weighted by its
posterior probability, rather than with the best one. With fitted hyperparameters the automatic
memory does the same for its selections: each memory ``j`` (a discount ``η`` on every row, or every
row since a change point ``τ``) has the exponentially forgetting predictive score ``S_j`` of
:mod:`~torch_advbandit.discount_selection`; its weight is
``w_j ∝ exp(S_j + A·[j keeps every row at η = 1])``, ``A`` =
:data:`~torch_advbandit.discount_selection.AUTO_MARGIN` the prior log-odds for no forgetting that
the choice of one memory uses too. Weights below :data:`MIN_WEIGHT` are dropped and the rest
renormalised. :class:`AveragedGP` is the mixture's moment-matched Gaussian: where the memories
agree it is their common posterior; where they disagree (rows the short memories no longer
trust) its variance grows by the spread of their means, so UCB looks there again.

Where the average keeps selecting one candidate (its UCB maximiser is the row of at least :data:`REPEATS` of the
last :data:`REPEAT_WINDOW` lone observations, :func:`held_row`), the selection is the chosen memory's own UCB
instead: once the recent rows all sit at one candidate, the shorter memories standardise by nearly constant
outcomes, predict their prior everywhere and add about the same variance at every candidate, so the average ranks
by its mean and can hold a local optimum for the rest of the run.
"""

from __future__ import annotations

import math

import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal

from .factored_gp import SingleOutputModel

#: Memories whose weight is below this (before renormalising) are left out of the average.
MIN_WEIGHT = 1e-3
#: The average yields to the chosen memory where its pick is the row of this many of the last
#: :data:`REPEAT_WINDOW` lone observations (more than half of them: at most one row qualifies).
REPEATS = 16
#: The lone observations :data:`REPEATS` counts over.
REPEAT_WINDOW = 20


def held_row(lone_rows: torch.Tensor) -> torch.Tensor | None:
    """The row (``Tensor[d]``) of at least :data:`REPEATS` of the last :data:`REPEAT_WINDOW` of ``lone_rows``
    (``Tensor[m, d]``, the lone observations in order), or ``None``.

    Example:
        >>> rows = torch.tensor([[0.5]] * 16 + [[0.1]] * 4, dtype=torch.float64)
        >>> held_row(rows).tolist(), held_row(rows[1:])
        ([0.5], None)
    """
    recent = lone_rows[max(lone_rows.shape[0] - REPEAT_WINDOW, 0) :]
    if recent.shape[0] < REPEATS:
        return None
    rows, counts = torch.unique(recent, dim=0, return_counts=True)
    top = int(counts.argmax())
    return rows[top] if int(counts[top]) >= REPEATS else None


def memory_weights(scores: torch.Tensor, lengths: list[float], prior: float) -> list[tuple[int, float]]:
    """``(index, weight)`` of the memories in the average: ``w_j ∝ exp(S_j + prior·[lengths[j] = ∞])`` over
    ``scores`` (``Tensor[k]``, the memories' competing scores) and the memories' lengths (``inf``: every row at
    ``η = 1``), those with ``w_j ≥`` :data:`MIN_WEIGHT`, renormalised (they sum to 1).

    Example:
        >>> scores = torch.tensor([0.0, 0.0, -20.0], dtype=torch.float64)
        >>> [(i, round(w, 4)) for i, w in memory_weights(scores, [math.inf, 10.0, 2.0], prior=math.log(3))]
        [(0, 0.75), (1, 0.25)]
    """
    if scores.shape != (len(lengths),):
        raise ValueError(f"scores must have shape ({len(lengths)},), got {tuple(scores.shape)}")
    bonus = torch.tensor([prior if math.isinf(n) else 0.0 for n in lengths], dtype=scores.dtype, device=scores.device)
    w = torch.softmax(scores + bonus, 0).tolist()
    kept = [i for i, v in enumerate(w) if v >= MIN_WEIGHT]
    total = sum(w[i] for i in kept)
    return [(i, w[i] / total) for i in kept]


class AveragedGP(SingleOutputModel):
    """The moment-matched mixture of GP posteriors ``Σ_j w_j N(μ_j, Σ_j)``, a BoTorch ``Model``.

    Posterior at ``X`` (``Tensor[..., q, d]``): mean ``μ = Σ w_j μ_j`` (``[..., q, 1]``) and covariance
    ``Σ = Σ_j w_j (Σ_j + μ_j μ_jᵀ) − μ μᵀ`` over the ``q`` points (positive semi-definite: the mixture's own),
    ``observation_noise`` passed to every member. With one member it is that member's posterior. Each member's
    posterior is taken on its own scale (the GP-UCB policies hand over each memory's standardised posterior).

    Args:
        models: the members, BoTorch single-output models (e.g. :class:`~torch_advbandit.factored_gp.FactoredGP`).
        weights: ``w_j ≥ 0`` summing to 1, one a member.

    Example:
        >>> from torch_advbandit.factored_gp import FactoredGP
        >>> from torch_advbandit.kernels import make_kernel
        >>> X, k = torch.rand(4, 1, dtype=torch.float64), make_kernel("se", 1)
        >>> L = torch.linalg.cholesky(k(X).to_dense() + 0.01 * torch.eye(4, dtype=torch.float64))
        >>> a, b = FactoredGP(X, X[:, 0], k, L), FactoredGP(X, -X[:, 0], k, L)
        >>> post = AveragedGP([a, b], [0.5, 0.5]).posterior(X.unsqueeze(1))
        >>> bool(post.mean.abs().max() < 1e-12), bool((post.variance >= a.posterior(X.unsqueeze(1)).variance).all())
        (True, True)
    """

    def __init__(self, models: list[Model], weights: list[float]) -> None:
        super().__init__()
        if not models or len(models) != len(weights):
            raise ValueError(f"models and weights must be non-empty, one weight a model: {len(models)}, {len(weights)}")
        if any(not (w >= 0) for w in weights) or abs(sum(weights) - 1.0) > 1e-9:
            raise ValueError(f"weights must be non-negative and sum to 1, got {weights}")
        self.members, self.weights = list(models), [float(w) for w in weights]

    def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs):
        """``GPyTorchPosterior`` at ``X`` (``Tensor[..., q, d]``): the mixture's mean and joint covariance."""
        self.check_output_indices(output_indices)
        mean = second = None
        for w, model in zip(self.weights, self.members, strict=True):
            mvn = model.posterior(X, observation_noise=observation_noise).distribution
            mu, cov = mvn.mean, mvn.covariance_matrix  # [..., q], [..., q, q]
            term = w * (cov + mu.unsqueeze(-1) * mu.unsqueeze(-2))
            mean = w * mu if mean is None else mean + w * mu
            second = term if second is None else second + term
        covar = second - mean.unsqueeze(-1) * mean.unsqueeze(-2)
        covar = 0.5 * (covar + covar.mT)
        diagonal = covar.diagonal(dim1=-2, dim2=-1)
        covar = covar + torch.diag_embed((-diagonal).clamp_min(0.0))  # rounding below zero where members agree
        posterior = GPyTorchPosterior(MultivariateNormal(mean, covar))
        return posterior if posterior_transform is None else posterior_transform(posterior)
