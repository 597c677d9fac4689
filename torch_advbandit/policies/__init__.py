"""Bandit policies: one protocol (``select`` / ``update`` / ``observe`` / ``state_dict``)."""

from .base import Policy, RandomizedPolicy
from .exp3 import Exp3Policy, KernelExp3, KernelizedExp3
from .random import UniformRandom
from .rls_exp3 import RLSKernelizedExp3

__all__ = [
    "Policy",
    "RandomizedPolicy",
    "Exp3Policy",
    "KernelExp3",
    "KernelizedExp3",
    "RLSKernelizedExp3",
    "UniformRandom",
]
