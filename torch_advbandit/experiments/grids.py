"""Experiment definitions as data: each named grid expands to the trial configurations it runs."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .adversarial import TrialConfig
from .settings import ONE_ROUND_TIMING
from .trials import seed_range

KERNELS = ("se", "matern52", "matern32")
TABLE3_POLICIES = ("uniform", "apg_exp3", "kernelized_exp3", "rls_kernelized_exp3")
GROWTH_HORIZONS = (250, 500, 1000, 2000, 4000)


@dataclass(frozen=True)
class Grid:
    """A full-factorial experiment: settings × kernels × policies × horizons × environments × seeds.

    Attributes:
        name: shown in tables and progress bars.
        settings: setting numbers (:data:`~torch_advbandit.experiments.settings.SETTINGS`).
        kernels: kernel names.
        policies: keys of :data:`~torch_advbandit.experiments.settings.POLICIES`.
        horizons: the ``T`` of each run (parameters are tuned per ``T``).
        seeds: how many seeds: ``first_seed, …, first_seed + seeds − 1``.
        environments: ``"adaptive"`` and/or ``"lower_bound"``.
        num_functions, num_centres: the adversary's ``|F|`` and ``M``.
        one_round_timing: time exact kernelized Exp3 for one round on settings 3–4 (the paper's
            protocol) instead of running it in full.
        first_seed: the first seed (default 0), so that machines can share a grid's seeds.

    Example:
        >>> g = Grid("demo", settings=(1,), kernels=("se",), policies=("uniform",), horizons=(50,), seeds=2)
        >>> [c.key for c in g.configs()]
        ['s1-se-uniform-T50-seed0-F1000x100-cpu', 's1-se-uniform-T50-seed1-F1000x100-cpu']
    """

    name: str
    settings: tuple[int, ...]
    kernels: tuple[str, ...]
    policies: tuple[str, ...]
    horizons: tuple[int, ...]
    seeds: int
    environments: tuple[str, ...] = ("adaptive",)
    num_functions: int = 1000
    num_centres: int = 100
    one_round_timing: bool = True
    first_seed: int = 0

    def configs(self, device: str = "cpu") -> list[TrialConfig]:
        """Every trial of the grid (validated), seeds outermost so the early seeds of every cell finish first."""
        out = []
        for seed in seed_range(self.first_seed, self.seeds):
            for environment in self.environments:
                for setting in self.settings:
                    for kernel in self.kernels:
                        for horizon in self.horizons:
                            for policy in self.policies:
                                timed = 1 if self.one_round_timing and (policy, setting) in ONE_ROUND_TIMING else None
                                out.append(
                                    TrialConfig(
                                        setting,
                                        kernel,
                                        policy,
                                        horizon,
                                        seed,
                                        self.num_functions,
                                        self.num_centres,
                                        device,
                                        timed,
                                        environment,
                                    )
                                )
        return out

    def with_overrides(self, **overrides) -> Grid:
        """A copy with the given fields replaced; ``None`` values are ignored (CLI defaults)."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


#: The named experiments of ``torch-advbandit reproduce``.
GRIDS: dict[str, Grid] = {
    # [Iwazaki2026], Table 3 (App. 17): settings 1–4, three kernels, four algorithms, 10 seeds, T = 1000.
    "table3": Grid("table3", (1, 2, 3, 4), KERNELS, TABLE3_POLICIES, (1000,), 10),
    # Minutes on a laptop: the 400-point settings, a shorter horizon, fewer seeds and functions.
    "table3-quick": Grid("table3-quick", (1, 2), KERNELS, TABLE3_POLICIES, (200,), 3, num_functions=200),
    # Regret growth in T ([Iwazaki2026], Sec. 5): kernelized Exp3 and Random on setting 1, both environments.
    "growth": Grid(
        "growth", (1,), KERNELS, ("kernelized_exp3", "uniform"), GROWTH_HORIZONS, 3, ("adaptive", "lower_bound")
    ),
    "growth-quick": Grid(
        "growth-quick",
        (1,),
        ("se", "matern32"),
        ("kernelized_exp3", "uniform"),
        (125, 250, 500),
        2,
        ("adaptive", "lower_bound"),
        num_functions=200,
    ),
}
