"""The experiments as data: candidate grids of [Iwazaki2026], App. 17 and the policies with their tuned constants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..kernels import make_kernel
from ..parameters import paper_parameters
from ..policies import APGExp3, KernelizedExp3, Policy, RLSKernelizedExp3, UniformRandom


@dataclass(frozen=True)
class Setting:
    """A uniformly spaced grid of ``points_per_dim ** d`` points in ``[0, 1]^d``.

    Example:
        >>> SETTINGS[2].candidates().shape
        torch.Size([400, 2])
    """

    number: int
    points_per_dim: int
    d: int

    @property
    def n(self) -> int:
        return self.points_per_dim**self.d

    def candidates(self, *, dtype: torch.dtype = torch.float64, device: str | torch.device = "cpu") -> torch.Tensor:
        """The grid, ``Tensor[n, d]`` (last coordinate fastest)."""
        axis = torch.linspace(0.0, 1.0, self.points_per_dim, dtype=dtype, device=device)
        if self.d == 1:
            return axis.unsqueeze(-1)
        return torch.cartesian_prod(*([axis] * self.d))


#: [Iwazaki2026], App. 17: settings 1–4.
SETTINGS: dict[int, Setting] = {
    1: Setting(1, 400, 1),
    2: Setting(2, 20, 2),
    3: Setting(3, 10_000, 1),
    4: Setting(4, 100, 2),
}


def _kernelized_exp3(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    params = paper_parameters(kernel_name, horizon, d, algorithm="kernelized_exp3")
    return KernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, **params, generator=generator)


def _rls_kernelized_exp3(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    params = paper_parameters(kernel_name, horizon, d, algorithm="rls_kernelized_exp3")
    return RLSKernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, **params, generator=generator)


def _apg_exp3(candidates, kernel_name, horizon, generator):
    return APGExp3(candidates, make_kernel(kernel_name, candidates.shape[-1]), horizon, generator=generator)


def _uniform(candidates, kernel_name, horizon, generator):
    return UniformRandom(candidates, None, horizon, generator=generator)


#: Policy name → factory ``(candidates, kernel_name, horizon, generator) -> Policy`` with the
#: paper's parameters ([Iwazaki2026], App. 17).
POLICIES: dict[str, Callable[[torch.Tensor, str, int, torch.Generator], Policy]] = {
    "kernelized_exp3": _kernelized_exp3,
    "rls_kernelized_exp3": _rls_kernelized_exp3,
    "apg_exp3": _apg_exp3,
    "uniform": _uniform,
}

#: Display names as in the paper's Table 3.
POLICY_LABELS = {
    "kernelized_exp3": "Kernelized Exp3",
    "rls_kernelized_exp3": "RLS-Kernelized Exp3",
    "apg_exp3": "APG-Exp3",
    "uniform": "Random",
}

#: (policy, setting) pairs the paper only times for one round ([Iwazaki2026], App. 17: exact kernelized
#: Exp3 is too slow on the 10 000-point settings).
ONE_ROUND_TIMING: frozenset[tuple[str, int]] = frozenset({("kernelized_exp3", 3), ("kernelized_exp3", 4)})
