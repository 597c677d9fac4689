"""Non-stationary environments of the second paper ([Deng2022], Sec. 6; docs/algorithms.rst §8)."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .._validation import check_generator, check_generator_type, check_int, check_real
from ..kernels import kernel_matrix, make_kernel, prepare_kernel
from .base import Environment

#: ``D``: 100 evenly spaced points of ``[0, 1]`` ([Deng2022], Sec. 6).
NUM_GRID_POINTS = 100


def grid_functions(
    kernel: Kernel, candidates: torch.Tensor, num_functions: int, *, generator: torch.Generator
) -> torch.Tensor:
    """``f(·) = Σ_i a_i k(·, x_i)`` with ``a_i ~ U[−1, 1]`` and ``x_i`` every candidate; ``Tensor[m, n]``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
        >>> grid_functions(make_kernel("se", 1, 0.2), X, 3, generator=torch.Generator().manual_seed(0)).shape
        torch.Size([3, 40])
    """
    K = kernel_matrix(prepare_kernel(kernel, candidates), candidates, candidates)
    a = 2.0 * torch.rand(num_functions, candidates.shape[0], generator=generator, dtype=K.dtype, device=K.device) - 1
    return a @ K


class FunctionSequenceEnvironment(Environment):
    """A known sequence ``f_1, …, f_T`` on the candidates, observed with Gaussian noise.

    ``rewards(t, probs)`` returns the noiseless ``f_t`` (for the dynamic regret
    ``Σ_t max_x f_t(x) − f_t(x_t)``); ``observe(t, index)`` returns what the learner sees,
    ``f_t(x) + ε_t`` with ``ε_t ~ N(0, noise_std²)`` drawn from the environment's own generator.

    Args:
        functions: ``Tensor[T, n]``, row ``t`` is ``f_t`` on the candidates.
        noise_std: standard deviation of the observation noise (``≥ 0``).
        generator: ``torch.Generator`` for the noise.

    Example:
        >>> env = FunctionSequenceEnvironment(torch.zeros(3, 4, dtype=torch.float64), 0.0)
        >>> env.observe(0, 2)
        0.0
    """

    def __init__(self, functions: torch.Tensor, noise_std: float = 0.05, *, generator: torch.Generator | None = None):
        if not isinstance(functions, torch.Tensor) or functions.ndim != 2 or functions.shape[0] < 1:
            raise ValueError("functions must be a Tensor[T, n]")
        if not bool(torch.isfinite(functions).all()):
            raise ValueError("functions must be finite")
        noise_std = check_real(noise_std, "noise_std")
        if noise_std < 0:
            raise ValueError(f"noise_std must be ≥ 0, got {noise_std}")
        self.functions = functions
        self.noise_std = noise_std
        self.generator = check_generator(generator, functions.device)

    @property
    def num_candidates(self) -> int:
        return self.functions.shape[1]

    @property
    def horizon(self) -> int:
        return self.functions.shape[0]

    def rewards(self, t: int, probs: torch.Tensor | None = None) -> torch.Tensor:
        """The noiseless ``f_t``, ``Tensor[n]``."""
        t = check_int(t, "t", minimum=0)
        if t >= self.horizon:
            raise ValueError(f"t must be < {self.horizon}, got {t}")
        return self.functions[t]

    regret = "dynamic"

    def feedback(self, t: int, index: int, f: torch.Tensor) -> float:
        """The noisy observation of round ``t`` (:meth:`observe`)."""
        return self.observe(t, index)

    def observe(self, t: int, index: int) -> float:
        """``f_t(x_index) + ε_t``: the only value the learner sees."""
        f = self.rewards(t)
        if not (0 <= index < f.shape[0]):
            raise ValueError(f"index must lie in [0, {f.shape[0]}), got {index}")
        if self.noise_std == 0:
            return float(f[index])
        eps = torch.randn((), generator=self.generator, dtype=f.dtype, device=f.device)
        return float(f[index] + self.noise_std * eps)


def _generator_device(generator: object) -> torch.device:
    """The scenarios live on their generator's device (a CUDA generator gives a CUDA grid)."""
    return torch.device(check_generator_type(generator).device)


def abrupt_environment(
    generator: torch.Generator,
    *,
    horizon: int = 500,
    switches: tuple[int, ...] | None = None,
    noise_std: float = 0.05,
    lengthscale: float = 0.2,
) -> tuple[torch.Tensor, FunctionSequenceEnvironment]:
    """[Deng2022], Fig. 1(a): ``f_1`` before round 100, ``f_2`` on ``[100, 200)``, ``f_3`` after.

    ``switches`` default to ``(T/5, 2T/5)``, i.e. ``(100, 200)`` for the paper's ``T = 500``.
    Returns the 100-point grid ``Tensor[100, 1]`` and the environment (SE kernel ``ℓ = 0.2``), both on
    the generator's device.

    Example:
        >>> X, env = abrupt_environment(torch.Generator().manual_seed(0))
        >>> bool((env.functions[99] != env.functions[100]).any()), env.horizon
        (True, 500)
    """
    device = _generator_device(generator)
    horizon = check_int(horizon, "horizon", minimum=1)
    if switches is None:
        switches = (horizon // 5, 2 * horizon // 5)
    bounds = [0, *switches, horizon]
    if any(b <= a for a, b in zip(bounds, bounds[1:], strict=False)):
        raise ValueError(f"switches must increase strictly inside (0, {horizon}), got {switches}")
    X = torch.linspace(0, 1, NUM_GRID_POINTS, dtype=torch.float64, device=device).unsqueeze(-1)
    F = grid_functions(make_kernel("se", 1, lengthscale=lengthscale), X, len(bounds) - 1, generator=generator)
    segment = torch.bucketize(torch.arange(horizon, device=device), torch.tensor(switches, device=device), right=True)
    return X, FunctionSequenceEnvironment(F[segment], noise_std, generator=generator)


def slowly_varying_environment(
    generator: torch.Generator,
    *,
    horizon: int = 500,
    noise_std: float = 0.05,
    lengthscale: float = 0.2,
) -> tuple[torch.Tensor, FunctionSequenceEnvironment]:
    """[Deng2022], Fig. 1(b): ``f_4 → f_5`` linearly over the first half, then ``f_5 → f_6``.

    ``f_t = f_4 + (f_5 − f_4)·2t/T`` for ``t ≤ T/2``, else ``f_5 + (f_6 − f_5)(2t − T)/T``
    (rounds ``t = 1, …, T``).

    Example:
        >>> X, env = slowly_varying_environment(torch.Generator().manual_seed(0), horizon=10)
        >>> env.functions.shape
        torch.Size([10, 100])
    """
    device = _generator_device(generator)
    horizon = check_int(horizon, "horizon", minimum=2)
    X = torch.linspace(0, 1, NUM_GRID_POINTS, dtype=torch.float64, device=device).unsqueeze(-1)
    f4, f5, f6 = grid_functions(make_kernel("se", 1, lengthscale=lengthscale), X, 3, generator=generator)
    t = torch.arange(1, horizon + 1, dtype=X.dtype, device=device).unsqueeze(-1)
    first = f4 + (f5 - f4) * (2 * t / horizon)
    second = f5 + (f6 - f5) * ((2 * t - horizon) / horizon)
    F = torch.where(t <= horizon / 2, first, second)
    return X, FunctionSequenceEnvironment(F, noise_std, generator=generator)
