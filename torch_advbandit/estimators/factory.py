"""Which estimator a kernelized Exp3 policy builds: a short name or any factory ``(kernel, candidates, ridge)``."""

from __future__ import annotations

from collections.abc import Callable

import torch
from gpytorch.kernels import Kernel

from .base import IPSEstimator
from .exact import ExactIPSEstimator
from .lowrank import LowRankIPSEstimator
from .nystrom import NystromIPSEstimator

#: A factory ``(kernel, candidates, ridge) -> IPSEstimator``: an estimator class, or a
#: ``functools.partial`` of one with its options.
EstimatorFactory = Callable[[Kernel, torch.Tensor, float], IPSEstimator]

#: The short names a policy accepts for its estimator.
ESTIMATORS: dict[str, EstimatorFactory] = {
    "exact": ExactIPSEstimator,
    "lowrank": LowRankIPSEstimator,
    "nystrom": NystromIPSEstimator,
}


def estimator_factory(estimator: str | EstimatorFactory) -> EstimatorFactory:
    """The factory for ``estimator``: a name of :data:`ESTIMATORS`, or a factory returned as is.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> type(estimator_factory("lowrank")(make_kernel("se", 1), X, 1e-2)).__name__
        'LowRankIPSEstimator'
        >>> from functools import partial
        >>> build = estimator_factory(partial(LowRankIPSEstimator, tolerance=1e-8))
        >>> build(make_kernel("se", 1), X, 1e-2).tolerance
        1e-08
    """
    if isinstance(estimator, str):
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {tuple(ESTIMATORS)} or a factory, got {estimator!r}")
        return ESTIMATORS[estimator]
    if not callable(estimator):
        raise TypeError(
            "estimator must be a name or a factory (kernel, candidates, ridge) -> IPSEstimator, "
            f"got {type(estimator).__name__}"
        )
    return estimator


def build_estimator(
    estimator: str | EstimatorFactory, kernel: Kernel, candidates: torch.Tensor, ridge: float
) -> IPSEstimator:
    """Build ``estimator`` on ``candidates`` with ridge ``c``; ``TypeError`` if the factory returns something else.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> build_estimator("exact", make_kernel("se", 1), X, 1e-2).ridge
        0.01
    """
    est = estimator_factory(estimator)(kernel, candidates, ridge)
    if not isinstance(est, IPSEstimator):
        raise TypeError(f"estimator factory must return an IPSEstimator, got {type(est).__name__}")
    return est
