"""Bandit policies: one protocol (``select`` / ``update`` / ``observe`` / ``state_dict``)."""

from .base import Policy, RandomizedPolicy
from .exp3 import Exp3Policy, KernelizedExp3
from .random import UniformRandom

__all__ = ["Policy", "RandomizedPolicy", "Exp3Policy", "KernelizedExp3", "UniformRandom"]
