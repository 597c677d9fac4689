"""Bandit policies: one protocol (``select`` / ``update`` / ``observe`` / ``state_dict``)."""

from .apg_exp3 import APGExp3, newton_basis
from .base import Policy, RandomizedPolicy
from .exp3 import Exp3Policy, KernelizedExp3
from .gp_ucb import GPUCBPolicy
from .random import UniformRandom
from .rls_exp3 import RLSKernelizedExp3
from .time_varying_gp_ucb import TimeVaryingGPUCB
from .weighted_gp_ucb import IGPUCB, WGPUCB
from .windowed_gp_ucb import RestartingGPUCB, SlidingWindowGPUCB

__all__ = [
    "APGExp3",
    "newton_basis",
    "Policy",
    "RandomizedPolicy",
    "Exp3Policy",
    "KernelizedExp3",
    "RLSKernelizedExp3",
    "UniformRandom",
    "GPUCBPolicy",
    "IGPUCB",
    "WGPUCB",
    "RestartingGPUCB",
    "SlidingWindowGPUCB",
    "TimeVaryingGPUCB",
]
