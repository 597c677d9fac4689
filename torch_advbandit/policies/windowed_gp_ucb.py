"""GP-UCB that forgets by a memory length: sliding-window and restarting GP-UCB ([Zhou2021]).

Both are :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy` with ``λ = 1 + 2/T`` and IGP-UCB's
``β_t`` by default; they differ from it, and from each other, only in which observations they hand
the model (:meth:`first_position`).
"""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .._validation import check_int
from ..kernels import kernel_name_of
from ..parameters import nonstationary_memory
from .gp_ucb import GPUCBPolicy


def memory_length(
    memory: int | None,
    name: str,
    kernel: Kernel,
    candidates: torch.Tensor,
    horizon: int | None,
    variation_budget: float,
) -> int:
    """``memory`` checked, or by default ``⌈γ̄_T^{1/4}(T/B_T)^{1/2}⌉``
    (:func:`~torch_advbandit.parameters.nonstationary_memory`; SE and Matérn kernels, ``T ≥ 3``; no default
    with ``horizon=None``).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> memory_length(None, "window", make_kernel("se", 1), torch.zeros(5, 1, dtype=torch.float64), 500, 1.0)
        48
    """
    if memory is None:
        if horizon is None:
            raise ValueError(f"give {name} explicitly: the theory default needs the horizon, got horizon=None")
        horizon = check_int(horizon, "horizon", minimum=1)
        kernel_name = kernel_name_of(kernel)
        if kernel_name is None or horizon < 3:
            raise ValueError(f"give {name} explicitly: the theory default needs an SE/Matérn kernel and horizon ≥ 3")
        memory = nonstationary_memory(kernel_name, horizon, candidates.shape[-1], variation_budget=variation_budget)
    return check_int(memory, name, minimum=1)


class _ForgettingGPUCB(GPUCBPolicy):
    """The memory-length defaults shared by the two policies below."""

    _not_settings = frozenset({"memory"})

    def __init__(self, candidates, kernel, horizon, *, memory: tuple[str, int | None], variation_budget=1.0, **kw):
        self.memory = memory_length(memory[1], memory[0], kernel, candidates, horizon, variation_budget)
        super().__init__(candidates, kernel, horizon, **kw)


class SlidingWindowGPUCB(_ForgettingGPUCB):
    """SW-GP-UCB ([Zhou2021]): GP-UCB on the last ``window`` observations.

    ``window`` defaults to ``⌈γ̄_T^{1/4}(T/B_T)^{1/2}⌉`` (:func:`memory_length`, with the
    ``variation_budget`` ``B_T``, default 1); ``λ = 1 + 2/T`` and IGP-UCB's ``β_t`` on the
    window's data by default; other arguments as :class:`~torch_advbandit.policies.gp_ucb.GPUCBPolicy`.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> SlidingWindowGPUCB(X, make_kernel("se", 1), 500).window
        48
    """

    def __init__(
        self, candidates: torch.Tensor, kernel: Kernel, horizon: int | None, *, window: int | None = None, **kw
    ):
        super().__init__(candidates, kernel, horizon, memory=("window", window), **kw)

    @property
    def window(self) -> int:
        return self.memory

    def first_position(self, m: int) -> int:
        return max(0, m - self.memory)


class RestartingGPUCB(_ForgettingGPUCB):
    """R-GP-UCB ([Zhou2021]): GP-UCB restarted every ``period`` rounds.

    Rounds ``kH, …, (k+1)H − 1`` see only the observations made since round ``kH``; ``period``
    defaults as :class:`SlidingWindowGPUCB`'s window.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 50, dtype=torch.float64).unsqueeze(-1)
        >>> RestartingGPUCB(X, make_kernel("se", 1), 500, period=100).period
        100
    """

    def __init__(
        self, candidates: torch.Tensor, kernel: Kernel, horizon: int | None, *, period: int | None = None, **kw
    ):
        super().__init__(candidates, kernel, horizon, memory=("period", period), **kw)

    @property
    def period(self) -> int:
        return self.memory

    def first_position(self, m: int) -> int:
        return (m // self.memory) * self.memory
