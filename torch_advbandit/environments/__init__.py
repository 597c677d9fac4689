"""Environments: who chooses ``f_t`` (adaptive adversary, oblivious sequence, …)."""

from .adversarial import (
    AdaptiveAdversary,
    ObliviousEnvironment,
    random_rkhs_functions,
    rkhs_functions_from_centres,
)
from .base import Environment
from .lower_bound import LowerBoundEnvironment

__all__ = [
    "Environment",
    "LowerBoundEnvironment",
    "AdaptiveAdversary",
    "ObliviousEnvironment",
    "random_rkhs_functions",
    "rkhs_functions_from_centres",
]
