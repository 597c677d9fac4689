"""The experiments as data: candidate grids of [Iwazaki2026], App. 17 and the policies with their tuned constants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.quasirandom import SobolEngine

from ..kernels import make_kernel
from ..parameters import paper_parameters
from ..policies import APGExp3, KernelizedExp3, Policy, RLSKernelizedExp3, UniformRandom


@dataclass(frozen=True)
class Setting:
    """A uniformly spaced grid of ``points_per_dim ** d`` points in ``[0, 1]^d``, or, with
    ``sobol_points``, that many points of a scrambled Sobol sequence (seed 0) in ``[0, 1]^d``.

    Example:
        >>> SETTINGS[2].candidates().shape, SETTINGS[5].candidates().shape
        (torch.Size([400, 2]), torch.Size([1024, 6]))
    """

    number: int
    points_per_dim: int
    d: int
    sobol_points: int | None = None

    @property
    def n(self) -> int:
        return self.sobol_points if self.sobol_points is not None else self.points_per_dim**self.d

    def candidates(self, *, dtype: torch.dtype = torch.float64, device: str | torch.device = "cpu") -> torch.Tensor:
        """The candidates, ``Tensor[n, d]`` (grids: last coordinate fastest)."""
        if self.sobol_points is not None:
            engine = SobolEngine(self.d, scramble=True, seed=0)
            return engine.draw(self.sobol_points, dtype=dtype).to(device)
        axis = torch.linspace(0.0, 1.0, self.points_per_dim, dtype=dtype, device=device)
        if self.d == 1:
            return axis.unsqueeze(-1)
        return torch.cartesian_prod(*([axis] * self.d))


#: [Iwazaki2026], App. 17: settings 1–4; setting 5 is the same protocol on a 6-dimensional set
#: (1024 scrambled Sobol points of ``[0, 1]⁶``, ``ℓ = 0.3·√6``), where the paper's ``γ̄_T`` clips ``α``.
SETTINGS: dict[int, Setting] = {
    1: Setting(1, 400, 1),
    2: Setting(2, 20, 2),
    3: Setting(3, 10_000, 1),
    4: Setting(4, 100, 2),
    5: Setting(5, 0, 6, sobol_points=1024),
}


def _kernelized_exp3(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    params = paper_parameters(kernel_name, horizon, d, algorithm="kernelized_exp3")
    return KernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, **params, generator=generator)


#: The experiments' RLS policies keep Eq. 6's embedding at float64's numerical rank, as the paper
#: computes it, and the leverage scores' ``"ridge_squared"`` pivoting: the dictionaries of the
#: committed records (the library's defaults truncate the embedding and pivot less).
RLS_OPTIONS = {"embedding_tolerance": 0.0, "pivot_rule": "ridge_squared"}


def _rls_kernelized_exp3(candidates, kernel_name, horizon, generator, options=RLS_OPTIONS):
    d = candidates.shape[-1]
    params = paper_parameters(kernel_name, horizon, d, algorithm="rls_kernelized_exp3")
    kernel = make_kernel(kernel_name, d)
    return RLSKernelizedExp3(candidates, kernel, horizon, **params, **options, generator=generator)


def _rls_kernelized_exp3_truncated(candidates, kernel_name, horizon, generator):
    return _rls_kernelized_exp3(candidates, kernel_name, horizon, generator, options={})


def _kernelized_exp3_derived(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    return KernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, generator=generator)


def _rls_kernelized_exp3_derived(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    return RLSKernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, **RLS_OPTIONS, generator=generator)


def _kernelized_exp3_anytime(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    return KernelizedExp3(candidates, make_kernel(kernel_name, d), None, generator=generator)


def _kernelized_exp3_auto_units(candidates, kernel_name, horizon, generator):
    d = candidates.shape[-1]
    return KernelizedExp3(candidates, make_kernel(kernel_name, d), horizon, reward_scale="auto", generator=generator)


def _apg_exp3(candidates, kernel_name, horizon, generator):
    return APGExp3(candidates, make_kernel(kernel_name, candidates.shape[-1]), horizon, generator=generator)


def _apg_exp3_anytime(candidates, kernel_name, horizon, generator):
    return APGExp3(candidates, make_kernel(kernel_name, candidates.shape[-1]), None, generator=generator)


def _uniform(candidates, kernel_name, horizon, generator):
    return UniformRandom(candidates, None, horizon, generator=generator)


#: Policy name → factory ``(candidates, kernel_name, horizon, generator) -> Policy`` with the
#: paper's parameters ([Iwazaki2026], App. 17), or parameters derived from the candidate set.
POLICIES: dict[str, Callable[[torch.Tensor, str, int, torch.Generator], Policy]] = {
    "kernelized_exp3": _kernelized_exp3,
    "rls_kernelized_exp3": _rls_kernelized_exp3,
    # the paper's parameters with the library's defaults: truncated embedding, "ridge" pivoting
    "rls_kernelized_exp3_truncated": _rls_kernelized_exp3_truncated,
    "apg_exp3": _apg_exp3,
    "uniform": _uniform,
    # the same algorithms with parameters derived from the candidate set (parameters.derived_parameters)
    "kernelized_exp3_derived": _kernelized_exp3_derived,
    "rls_kernelized_exp3_derived": _rls_kernelized_exp3_derived,
    # derived parameters without the horizon: doubling epochs (the trial still plays T rounds)
    "kernelized_exp3_anytime": _kernelized_exp3_anytime,
    "apg_exp3_anytime": _apg_exp3_anytime,
    # derived parameters with the rewards' unit learnt from the rewards seen (reward_scale="auto")
    "kernelized_exp3_auto_units": _kernelized_exp3_auto_units,
}

#: Display names as in the paper's Table 3.
POLICY_LABELS = {
    "kernelized_exp3": "Kernelized Exp3",
    "rls_kernelized_exp3": "RLS-Kernelized Exp3",
    "rls_kernelized_exp3_truncated": "RLS-Kernelized Exp3 (truncated embedding)",
    "apg_exp3": "APG-Exp3",
    "uniform": "Random",
    "kernelized_exp3_derived": "Kernelized Exp3 (derived parameters)",
    "rls_kernelized_exp3_derived": "RLS-Kernelized Exp3 (derived parameters)",
    "kernelized_exp3_anytime": "Kernelized Exp3 (derived, horizon unknown)",
    "apg_exp3_anytime": "APG-Exp3 (horizon unknown)",
    "kernelized_exp3_auto_units": "Kernelized Exp3 (derived, reward unit learnt)",
}

#: (policy, setting) pairs the paper only times for one round ([Iwazaki2026], App. 17: exact kernelized
#: Exp3 is too slow on the 10 000-point settings).
ONE_ROUND_TIMING: frozenset[tuple[str, int]] = frozenset({("kernelized_exp3", 3), ("kernelized_exp3", 4)})
