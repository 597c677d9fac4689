"""The adaptive adversary of [Iwazaki2026], App. 17, and an oblivious environment."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_generator, check_int, check_positive, check_probs
from ..kernels import kernel_matrix, prepare_kernel
from .base import Environment


def random_rkhs_functions(
    kernel: Kernel,
    candidates: torch.Tensor,
    *,
    num_functions: int = 1000,
    num_centres: int = 100,
    rkhs_bound: float = 2.0,
    generator: torch.Generator | None = None,
    block_entries: int = 2**24,
) -> torch.Tensor:
    """The function class ``F`` of [Iwazaki2026], App. 17, evaluated on the candidates.

    ``f^(i) = min(1, B / ‖f̃^(i)‖_k) · f̃^(i)``, ``f̃^(i) = Σ_{m=1}^{M} c_m k(x_m, ·)`` with
    ``x_m ~ Uniform(candidates)``, ``c_m ~ Uniform(−1, 1)`` and ``‖f̃‖_k = sqrt(cᵀ K_mm c)``.
    Functions are built in blocks so memory stays ``O(n·M·block)``.

    Args:
        kernel: GPyTorch kernel.
        candidates: ``Tensor[n, d]``.
        num_functions: ``|F|`` (1000 in the paper).
        num_centres: ``M`` (100 in the paper).
        rkhs_bound: ``B`` (2 in the paper).
        generator: ``torch.Generator`` on the candidates' device.

    Returns:
        ``Tensor[num_functions, n]``, each row of RKHS norm at most ``B``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
        >>> random_rkhs_functions(make_kernel("se", 1), X, num_functions=5).shape
        torch.Size([5, 40])
    """
    candidates = check_candidates(candidates)
    kernel = prepare_kernel(kernel, candidates)
    num_functions = check_int(num_functions, "num_functions", minimum=1)
    num_centres = check_int(num_centres, "num_centres", minimum=1)
    rkhs_bound = check_positive(rkhs_bound, "rkhs_bound")
    generator = check_generator(generator, candidates.device)
    n = candidates.shape[0]
    out = torch.empty(num_functions, n, dtype=candidates.dtype, device=candidates.device)
    block = max(1, block_entries // (n * num_centres))
    for start in range(0, num_functions, block):
        m = min(block, num_functions - start)
        idx = torch.randint(n, (m, num_centres), generator=generator, device=candidates.device)
        coef = torch.rand(m, num_centres, generator=generator, dtype=candidates.dtype, device=candidates.device)
        out[start : start + m] = rkhs_functions_from_centres(kernel, candidates, idx, 2 * coef - 1, rkhs_bound)
    return out


def rkhs_functions_from_centres(
    kernel: Kernel, candidates: torch.Tensor, centres: torch.Tensor, coefficients: torch.Tensor, rkhs_bound: float
) -> torch.Tensor:
    """``min(1, B/‖f̃‖_k)·f̃`` on the candidates for ``f̃ = Σ_m c_m k(x_{centres[m]}, ·)``.

    Args:
        kernel: GPyTorch kernel on the candidates' device and dtype.
        candidates: ``Tensor[n, d]``.
        centres: ``LongTensor[m, M]``, candidate indices of each function's centres.
        coefficients: ``Tensor[m, M]``, the ``c_m``.
        rkhs_bound: ``B``.

    Returns:
        ``Tensor[m, n]``; the RKHS norm ``sqrt(cᵀK_MM c)`` of each row is at most ``B``.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> centres = torch.tensor([[0, 10, 20], [5, 15, 25]])
        >>> coefficients = 5 * torch.ones(2, 3, dtype=torch.float64)
        >>> F = rkhs_functions_from_centres(make_kernel("se", 1), X, centres, coefficients, 2.0)
        >>> F.shape
        torch.Size([2, 30])
    """
    n = candidates.shape[0]
    m, num_centres = centres.shape
    K_xc = kernel_matrix(kernel, candidates, candidates[centres.reshape(-1)]).reshape(n, m, num_centres)
    values = torch.einsum("nmc,mc->mn", K_xc, coefficients)
    K_cc = K_xc.permute(1, 0, 2).gather(1, centres.unsqueeze(-1).expand(m, num_centres, num_centres))
    norms = torch.einsum("mi,mij,mj->m", coefficients, K_cc, coefficients).clamp_min(0).sqrt()
    return torch.clamp(rkhs_bound / norms, max=1.0).unsqueeze(-1) * values


class FunctionTableEnvironment(Environment):
    """An environment that plays rows of a fixed table of functions on the candidates.

    Args:
        functions: ``Tensor[m, n]``, finite; row ``j`` is one function on the ``n`` candidates.

    Example:
        >>> class Cycle(FunctionTableEnvironment):  # subclasses choose which row to play
        ...     def rewards(self, t, probs):
        ...         return self.functions[t % self.functions.shape[0]]
        >>> env = Cycle(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
        >>> env.num_candidates, env.rewards(1, None).tolist()
        (2, [1.0, 0.0])
    """

    def __init__(self, functions: torch.Tensor) -> None:
        if not isinstance(functions, torch.Tensor) or functions.ndim != 2 or functions.shape[0] < 1:
            raise ValueError("functions must be a Tensor[m, n] with m ≥ 1")
        if not bool(torch.isfinite(functions).all()):
            raise ValueError("functions must be finite")
        self.functions = functions

    @property
    def num_candidates(self) -> int:
        return self.functions.shape[-1]


class AdaptiveAdversary(FunctionTableEnvironment):
    """The fully adaptive adversary of [Iwazaki2026], App. 17.

    Given the learner's ``P_t`` it plays the function of ``F`` that maximises the learner's
    conditional expected instantaneous regret:
    ``f_t = argmax_{f ∈ F} ( max_x f(x) − Σ_x P_t(x) f(x) )`` (ties: the first).

    Args:
        functions: ``F`` on the candidates, ``Tensor[m, n]``; see :func:`random_rkhs_functions`
            or :meth:`from_kernel`.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 40, dtype=torch.float64).unsqueeze(-1)
        >>> env = AdaptiveAdversary.from_kernel(make_kernel("se", 1), X, num_functions=20,
        ...                                     generator=torch.Generator().manual_seed(0))
        >>> env.rewards(0, torch.full((40,), 1 / 40, dtype=torch.float64)).shape
        torch.Size([40])
    """

    def __init__(self, functions: torch.Tensor) -> None:
        super().__init__(functions)
        self._maxima = functions.max(dim=-1).values

    @classmethod
    def from_kernel(cls, kernel: Kernel, candidates: torch.Tensor, **options) -> AdaptiveAdversary:
        """The paper's adversary: ``F`` from :func:`random_rkhs_functions` with these ``options``
        (``num_functions``, ``num_centres``, ``rkhs_bound``, ``generator``, ``block_entries``)."""
        return cls(random_rkhs_functions(kernel, candidates, **options))

    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t``, ``Tensor[n]``; ``probs`` (``P_t``, ``Tensor[n]``) is required."""
        if probs is None:
            raise ValueError("probs is required: the adaptive adversary plays against P_t")
        probs = check_probs(probs, self.num_candidates, self.functions, "probs")
        gap = self._maxima - self.functions @ probs
        return self.functions[torch.argmax(gap)]


class ObliviousEnvironment(FunctionTableEnvironment):
    """Plays a fixed sequence of functions ``f_0, f_1, …`` whatever the learner does.

    Args:
        functions: ``Tensor[T, n]``; row ``t`` is ``f_t`` on the candidates.

    Example:
        >>> env = ObliviousEnvironment(torch.zeros(3, 5, dtype=torch.float64))
        >>> env.rewards(2, None).shape
        torch.Size([5])
    """

    def rewards(self, t: int, probs: torch.Tensor | None) -> torch.Tensor:
        """``f_t`` (row ``t`` of ``functions``), ``Tensor[n]``."""
        t = check_int(t, "t", minimum=0)
        if t >= self.functions.shape[0]:
            raise ValueError(f"t must be < {self.functions.shape[0]} (the length of the sequence), got {t}")
        return self.functions[t]
