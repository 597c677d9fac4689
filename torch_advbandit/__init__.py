"""torch_advbandit: adversarial and non-stationary kernelized bandits for PyTorch / BoTorch.

Policies (``KernelizedExp3``, ``UniformRandom``, …) share one protocol: ``select()`` →
``update(index, reward)``; see ``docs/public_api.rst``.
"""

import sys as _sys

from . import (
    acquisition,
    center_selection,
    confidence,
    designs,
    domains,
    estimators,
    exploration,
    kernels,
    models,
    parameters,
    spacetime,
)
from .policies import (
    IGPUCB,
    WGPUCB,
    APGExp3,
    KernelizedExp3,
    RestartingGPUCB,
    RLSKernelizedExp3,
    SlidingWindowGPUCB,
    TimeVaryingGPUCB,
    UniformRandom,
)

__version__ = "0.1.0"

#: Deprecated alias: landmark (Nyström centre) selection lives in :mod:`torch_advbandit.center_selection`;
#: ``torch_advbandit.nystrom`` and ``from torch_advbandit.nystrom import ...`` keep working.
nystrom = center_selection
_sys.modules[f"{__name__}.nystrom"] = center_selection

__all__ = [
    "APGExp3",
    "IGPUCB",
    "RestartingGPUCB",
    "SlidingWindowGPUCB",
    "TimeVaryingGPUCB",
    "WGPUCB",
    "acquisition",
    "center_selection",
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
    "spacetime",
]
