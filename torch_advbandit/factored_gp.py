"""An exact GP posterior from one Cholesky factor, kept from round to round (docs/algorithms.rst §8).

:class:`FactoredGP` is a BoTorch ``Model`` with the posterior of
:func:`~torch_advbandit.models.fixed_noise_gp` (a ``SingleTaskGP`` with fixed noise and a fixed
constant mean) computed from a given factor ``L Lᵀ = K + diag(noise)`` [Rasmussen2006, Alg. 2.1].
The GP-UCB policies hand it to BoTorch's ``UpperConfidenceBound`` and ``optimize_acqf_discrete``
in place of the ``SingleTaskGP``, which would factorise the training covariance twice per call
(once for the mean cache, once per chunk of candidates for the variance). :class:`CholeskyCache`
borders the previous round's factor by one row when the new matrix extends the old one unchanged
(every noise the same, as for IGP-UCB with fixed hyperparameters): ``O(t²)`` instead of ``O(t³)``.
"""

from __future__ import annotations

import math

import gpytorch
import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import Kernel
from linear_operator.utils.cholesky import psd_safe_cholesky

from .kernels import kernel_matrix

#: A bordered factor is recomputed from scratch when its new pivot ``d²`` falls below this fraction of
#: ``k(x, x) + noise`` (cancellation would leave too few correct digits).
MIN_RELATIVE_PIVOT = 1e-8


def bordered_cholesky(L: torch.Tensor, column: torch.Tensor, corner: float) -> torch.Tensor | None:
    """Factor of ``[[A, c], [cᵀ, a]]`` from ``L`` (``L Lᵀ = A``, ``m × m``), or ``None`` if the new pivot is unsafe.

    ``l = L⁻¹c``, ``d = sqrt(a − lᵀl)``: ``[[L, 0], [lᵀ, d]]`` — one triangular solve, ``O(m²)``.

    Example:
        >>> A = torch.tensor([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 1.5]], dtype=torch.float64)
        >>> L = bordered_cholesky(torch.linalg.cholesky(A[:2, :2]), A[2, :2], float(A[2, 2]))
        >>> torch.allclose(L, torch.linalg.cholesky(A))
        True
    """
    m = L.shape[0]
    row = torch.linalg.solve_triangular(L, column.unsqueeze(-1), upper=False).squeeze(-1)
    pivot = corner - float(row @ row)
    if not pivot > MIN_RELATIVE_PIVOT * abs(corner):
        return None
    out = L.new_zeros(m + 1, m + 1)
    out[:m, :m] = L
    out[m, :m] = row
    out[m, m] = math.sqrt(pivot)
    return out


class CholeskyCache:
    """Cholesky factors of ``K + diag(noise)``, bordering the previous one when the matrix extends it.

    The previous ``(K, noise, L)`` is kept; a new ``(K', noise')`` whose leading block equals ``K``
    exactly (and whose leading noises equal ``noise``) with one row more gets
    :func:`bordered_cholesky`, anything else a fresh ``psd_safe_cholesky`` (linear_operator's jittered
    Cholesky, as GPyTorch's). The cache holds nothing but a function of its input, so it is never
    part of a policy's state.

    Example:
        >>> cache = CholeskyCache()
        >>> K = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=torch.float64)
        >>> L1 = cache.factor(K[:1, :1], torch.ones(1, dtype=torch.float64))
        >>> L2 = cache.factor(K, torch.ones(2, dtype=torch.float64))  # bordered
        >>> torch.allclose(L2 @ L2.mT, K + torch.eye(2, dtype=torch.float64))
        True
    """

    def __init__(self) -> None:
        self._last: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def factor(self, K: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        """``L`` with ``L Lᵀ = K + diag(noise)`` (``K``: ``m × m``, ``noise``: ``Tensor[m]``)."""
        L = None
        if self._last is not None:
            K0, noise0, L0 = self._last
            m = K0.shape[0]
            if (
                K.shape[0] == m + 1
                and K.dtype == K0.dtype
                and K.device == K0.device
                and torch.equal(noise[:m], noise0)
                and torch.equal(K[:m, :m], K0)
            ):
                L = bordered_cholesky(L0, K[m, :m], float(K[m, m] + noise[m]))
        if L is None:
            A = K.clone()
            A.diagonal().add_(noise)
            L = psd_safe_cholesky(A)
        self._last = (K, noise, L)
        return L


class SingleOutputModel(Model):
    """A BoTorch ``Model`` of one output and no batch: the properties :class:`FactoredGP` and
    :class:`~torch_advbandit.memory_average.AveragedGP` share, and the check of ``posterior``'s ``output_indices``.

    Example:
        >>> SingleOutputModel.check_output_indices(None)  # nothing to say
    """

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size()

    @classmethod
    def check_output_indices(cls, output_indices) -> None:
        """``ValueError`` unless ``output_indices`` is ``None`` or ``[0]``."""
        if output_indices not in (None, [0]):
            raise ValueError(f"{cls.__name__} has one output, got output_indices={output_indices!r}")


class FactoredGP(SingleOutputModel):
    """Exact GP posterior on ``(train_X, train_Y)`` from the factor ``L Lᵀ = K + diag(noise)``.

    Posterior at ``X`` (``Tensor[..., q, d]``), [Rasmussen2006, Alg. 2.1]:
    ``μ = c + K_{X,train} L⁻ᵀL⁻¹(y − c)``, ``Σ = K_{X,X} − VᵀV`` with ``V = L⁻¹ K_{train,X}``; with
    ``observation_noise=True`` a new observation's noise ``new_noise`` is added to the diagonal.
    The same posterior as :func:`~torch_advbandit.models.fixed_noise_gp` (a ``SingleTaskGP``) on the
    same data, noise, kernel and constant mean ``c``, without refactorising per call; the candidates
    of a batch are solved against ``L`` in one triangular solve.

    Args:
        train_X: ``Tensor[m, d]``.
        train_Y: ``Tensor[m]``.
        kernel: GPyTorch kernel (not copied).
        factor: ``L``, ``Tensor[m, m]`` lower triangular (e.g. from :class:`CholeskyCache`).
        mean_constant: ``c`` (``None``: zero mean).
        new_noise: noise variance of a new observation (``observation_noise=True``).

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(5, 1, dtype=torch.float64)
        >>> k = make_kernel("se", 1)
        >>> L = torch.linalg.cholesky(k(X).to_dense() + 0.01 * torch.eye(5, dtype=torch.float64))
        >>> gp = FactoredGP(X, torch.sin(6 * X[:, 0]), k, L, new_noise=0.01)
        >>> gp.posterior(torch.rand(3, 1, 1, dtype=torch.float64)).mean.shape
        torch.Size([3, 1, 1])
    """

    def __init__(
        self,
        train_X: torch.Tensor,
        train_Y: torch.Tensor,
        kernel: Kernel,
        factor: torch.Tensor,
        *,
        mean_constant: float | None = None,
        new_noise: float = 0.0,
    ) -> None:
        super().__init__()
        self.train_X, self.kernel, self.factor = train_X, kernel, factor
        self.mean_constant = 0.0 if mean_constant is None else float(mean_constant)
        self.new_noise = float(new_noise)
        centred = (train_Y - self.mean_constant).unsqueeze(-1)
        self.alpha = torch.cholesky_solve(centred, factor).squeeze(-1)  # (K + diag(noise))⁻¹ (y − c)

    def half_log_det(self) -> float:
        """``½ log det(K + diag(noise)) = Σ log L_ii``."""
        return float(self.factor.diagonal().log().sum())

    def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs):
        """``GPyTorchPosterior`` at ``X`` (``Tensor[..., q, d]``): mean ``[..., q, 1]``, joint covariance over ``q``."""
        self.check_output_indices(output_indices)
        shape, d = X.shape[:-1], X.shape[-1]
        flat = X.reshape(-1, d)
        cross = kernel_matrix(self.kernel, self.train_X, flat)  # m × (batch·q)
        mean = self.mean_constant + self.alpha @ cross
        V = torch.linalg.solve_triangular(self.factor, cross, upper=False).reshape(-1, *shape)
        V = V.movedim(0, -2)  # [..., m, q]
        with gpytorch.settings.lazily_evaluate_kernels(False):
            prior = self.kernel(X, X).to_dense()  # [..., q, q]
        covar = prior - V.mT @ V
        if observation_noise is True:
            covar = covar + self.new_noise * torch.eye(shape[-1], dtype=X.dtype, device=X.device)
        posterior = GPyTorchPosterior(MultivariateNormal(mean.reshape(shape), covar))
        return posterior if posterior_transform is None else posterior_transform(posterior)
