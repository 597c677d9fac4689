"""Importance-weighted reward estimators for the Exp3 family (one interface, several algorithms)."""

from .base import IPSEstimator
from .exact import ExactIPSEstimator, exact_ips_estimate
from .factory import ESTIMATORS, EstimatorFactory, build_estimator, estimator_factory
from .linear import LinearIPSEstimator
from .lowrank import LowRankIPSEstimator
from .nystrom import NystromIPSEstimator, nystrom_ips_estimate

__all__ = [
    "ESTIMATORS",
    "EstimatorFactory",
    "build_estimator",
    "estimator_factory",
    "IPSEstimator",
    "ExactIPSEstimator",
    "LinearIPSEstimator",
    "LowRankIPSEstimator",
    "NystromIPSEstimator",
    "exact_ips_estimate",
    "nystrom_ips_estimate",
]
