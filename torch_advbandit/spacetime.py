"""Time as an input: the kernel and the model of time-varying GP-UCB (docs/algorithms.rst §10).

A time-varying objective ``f_t(x)`` is modelled as one GP over ``(x, τ)``, ``τ = t/T`` (the round over the
horizon), with the product kernel [Bogunovic2016]

``k((x, τ), (x', τ')) = k_X(x, x') · exp(−|τ − τ'|/ℓ_τ)``,

the covariance of the Markov model ``f_{t+1} = sqrt(1 − ε)·f_t + sqrt(ε)·g_{t+1}`` (``g`` independent
draws of ``k_X``): ``exp(−|t − t'|/(T·ℓ_τ)) = (1 − ε)^{|t − t'|/2}`` for ``ε = 1 − exp(−2/(T·ℓ_τ))``. The
time factor is GPyTorch's Matérn-1/2 kernel on the last input column, so ``ℓ_τ`` can be fitted with the
other hyperparameters by BoTorch's ``fit_gpytorch_mll``; a large fitted ``ℓ_τ`` is a stationary objective
(every observation kept at full weight), a small one forgets. :class:`AtTime` presents such a model to
BoTorch's acquisition functions on the space ``x`` alone, at a fixed ``τ``.
"""

from __future__ import annotations

import copy
import math

import torch
from botorch.models.model import Model
from gpytorch.kernels import Kernel, MaternKernel
from linear_operator import to_dense


def epsilon_to_lengthscale(epsilon: float, horizon: int) -> float:
    """``ℓ_τ = −2/(T·log(1 − ε))``: the time lengthscale (in horizons) of forgetting rate ``ε ∈ (0, 1)``.

    Example:
        >>> round(epsilon_to_lengthscale(1 - math.exp(-0.2), 100), 12)  # correlation e^{-0.1} per round
        0.1
    """
    return -2.0 / (horizon * math.log1p(-epsilon))


def lengthscale_to_epsilon(lengthscale: float, horizon: int) -> float:
    """``ε = 1 − exp(−2/(T·ℓ_τ))``, the inverse of :func:`epsilon_to_lengthscale` (``0`` for ``ℓ_τ = ∞``).

    Example:
        >>> round(lengthscale_to_epsilon(epsilon_to_lengthscale(0.01, 50), 50), 12)
        0.01
    """
    return -math.expm1(-2.0 / (horizon * lengthscale))


class SpaceTimeKernel(Kernel):
    """``k((x, τ), (x', τ')) = k_X(x, x')·k_T(τ, τ')`` on inputs ``Tensor[..., d + 1]`` (``x`` then ``τ``).

    Both factors are evaluated densely and multiplied entry by entry (GPyTorch's ``ProductKernel``
    multiplies them as linear operators: 1.3× slower per marginal-likelihood evaluation on 40 rows).
    ``space`` sees the first ``d`` columns (its own ``active_dims`` index those), ``time`` the last.

    Example:
        >>> from gpytorch.kernels import RBFKernel
        >>> k = SpaceTimeKernel(RBFKernel(), MaternKernel(nu=0.5)).double()
        >>> k(torch.zeros(3, 2, dtype=torch.float64)).to_dense().shape
        torch.Size([3, 3])
    """

    def __init__(self, space: Kernel, time: Kernel) -> None:
        super().__init__()
        self.space, self.time = space, time

    def forward(self, x1, x2, diag=False, last_dim_is_batch=False, **params):
        if last_dim_is_batch:
            raise ValueError("SpaceTimeKernel does not take last_dim_is_batch")
        space = to_dense(self.space(x1[..., :-1], x2[..., :-1], diag=diag, **params))
        return space * to_dense(self.time(x1[..., -1:], x2[..., -1:], diag=diag, **params))


def space_time_kernel(kernel: Kernel, lengthscale: float) -> SpaceTimeKernel:
    """``k_X(x, x')·exp(−|τ − τ'|/ℓ_τ)`` on inputs ``Tensor[..., d + 1]`` (``x`` then ``τ``), a new GPyTorch kernel.

    ``kernel`` (any GPyTorch kernel on ``d`` dimensions) is copied; the time factor is
    ``MaternKernel(nu=0.5)``, its lengthscale set to ``lengthscale``.

    Example:
        >>> from gpytorch.kernels import RBFKernel
        >>> k = space_time_kernel(RBFKernel(), 0.5).double()
        >>> Z = torch.tensor([[0.0, 0.0], [0.0, 0.5]], dtype=torch.float64)
        >>> round(float(k(Z).to_dense()[0, 1].detach()), 6) == round(math.exp(-1.0), 6)  # same x, half a horizon apart
        True
    """
    space = copy.deepcopy(kernel)
    time = MaternKernel(nu=0.5).to(_device_of(space))
    time.lengthscale = lengthscale
    return SpaceTimeKernel(space, time)


def _device_of(kernel: Kernel) -> torch.device:
    tensors = [*kernel.parameters(), *kernel.buffers()]
    return tensors[0].device if tensors else torch.device("cpu")


class AtTime(Model):
    """A BoTorch model over ``(x, τ)`` seen at a fixed ``τ``: ``posterior(X)`` is ``model.posterior([X, τ])``.

    Hands a space-time model (:func:`space_time_kernel`) to BoTorch's acquisition functions and
    ``optimize_acqf(_discrete)``, which pass points ``X`` (``Tensor[..., q, d]``) of the space only —
    pending points (``X_pending``) included, all at ``τ``.

    Args:
        model: a BoTorch model on inputs ``Tensor[..., d + 1]``.
        tau: the time at which it is seen.

    Example:
        >>> from botorch.models import SingleTaskGP
        >>> Z = torch.rand(6, 2, dtype=torch.float64)
        >>> gp = SingleTaskGP(Z, Z[:, :1].sin(), covar_module=space_time_kernel(MaternKernel(), 1.0))
        >>> AtTime(gp, 1.0).posterior(torch.rand(4, 1, 1, dtype=torch.float64)).mean.shape
        torch.Size([4, 1, 1])
    """

    def __init__(self, model: Model, tau: float) -> None:
        super().__init__()
        self.model, self.tau = model, float(tau)

    @property
    def num_outputs(self) -> int:
        return self.model.num_outputs

    @property
    def batch_shape(self) -> torch.Size:
        return self.model.batch_shape

    def with_time(self, X: torch.Tensor) -> torch.Tensor:
        """``[X, τ]``: ``Tensor[..., d + 1]`` from ``X``, ``Tensor[..., d]``."""
        return torch.cat([X, X.new_full((*X.shape[:-1], 1), self.tau)], dim=-1)

    def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs):
        """The wrapped model's posterior at ``[X, τ]`` (same arguments as BoTorch's ``Model.posterior``)."""
        return self.model.posterior(
            self.with_time(X), output_indices=output_indices, observation_noise=observation_noise,
            posterior_transform=posterior_transform, **kwargs,
        )  # fmt: skip
