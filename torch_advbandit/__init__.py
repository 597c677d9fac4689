"""torch_advbandit: adversarial and non-stationary kernelized bandits for PyTorch / BoTorch.

Policies (``KernelizedExp3``, ``UniformRandom``, …) share one protocol: ``select()`` →
``update(index, reward)``; see ``docs/API.md``.
"""

from . import designs, estimators, exploration, kernels, nystrom, parameters
from .policies import APGExp3, KernelizedExp3, RLSKernelizedExp3, UniformRandom

__version__ = "0.1.0"

__all__ = [
    "APGExp3",
    "KernelizedExp3",
    "RLSKernelizedExp3",
    "UniformRandom",
    "designs",
    "estimators",
    "exploration",
    "kernels",
    "nystrom",
    "parameters",
]
