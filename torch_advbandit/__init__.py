"""torch_advbandit: adversarial and non-stationary kernelized bandits for PyTorch / BoTorch.

Policies (``KernelizedExp3``, ``UniformRandom``, …) share one protocol: ``select()`` →
``update(index, reward)``; see ``docs/API.md``.
"""

from . import acquisition, confidence, designs, domains, estimators, exploration, kernels, models, nystrom, parameters
from .policies import (
    IGPUCB,
    WGPUCB,
    APGExp3,
    KernelizedExp3,
    RestartingGPUCB,
    RLSKernelizedExp3,
    SlidingWindowGPUCB,
    UniformRandom,
)

__version__ = "0.1.0"

__all__ = [
    "APGExp3",
    "IGPUCB",
    "RestartingGPUCB",
    "SlidingWindowGPUCB",
    "WGPUCB",
    "acquisition",
    "confidence",
    "domains",
    "models",
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
