"""Environments: who chooses ``f_t`` (adaptive adversary, oblivious sequence, …)."""

from .adversarial import (
    AdaptiveAdversary,
    ObliviousEnvironment,
    random_rkhs_functions,
    rkhs_functions_from_centres,
)
from .base import Environment
from .lower_bound import LowerBoundEnvironment
from .nonstationary import (
    FunctionSequenceEnvironment,
    abrupt_environment,
    grid_functions,
    slowly_varying_environment,
)

__all__ = [
    "Environment",
    "FunctionSequenceEnvironment",
    "abrupt_environment",
    "grid_functions",
    "slowly_varying_environment",
    "LowerBoundEnvironment",
    "AdaptiveAdversary",
    "ObliviousEnvironment",
    "random_rkhs_functions",
    "rkhs_functions_from_centres",
]
