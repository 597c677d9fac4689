"""The pieces that make the weighted GP a trainable BoTorch model: age-weighted noise with a learnable
``λ``, and outcome standardisation with the same age weights.

The weighted GP of [Deng2022] (docs/algorithms.rst §8) gives observation ``s`` the noise variance
``λ·η^{-age_s}``. :class:`AgeWeightedNoise` keeps the multipliers ``η^{-age_s}`` fixed and learns
``λ`` with BoTorch's defaults for an inferred noise (a ``LogNormal(−4, 1)`` prior, ``λ ≥ 1e-4`` or
half the initial ``λ`` if smaller), so BoTorch's ``fit_gpytorch_mll`` maximises the *weighted*
marginal likelihood — the age weights held fixed — over the kernel's hyperparameters and ``λ``. A new observation gets
``λ`` itself (the newest weight): that is the noise of ``posterior(X, observation_noise=True)`` and of
fantasies. :class:`WeightedStandardize` is BoTorch's ``Standardize`` with the weighted mean and
standard deviation, so data the model has nearly forgotten does not set the scale.
"""

from __future__ import annotations

import math

import torch
from botorch.models.transforms.outcome import Standardize
from gpytorch.constraints import GreaterThan
from gpytorch.likelihoods import _GaussianLikelihoodBase
from gpytorch.likelihoods.noise_models import Noise
from gpytorch.priors import LogNormalPrior
from linear_operator.operators import DiagLinearOperator

#: Smallest lower bound of the learnable ``λ`` (in the model's outcome units).
MIN_LAMBDA = 1e-8
#: BoTorch's initial inferred noise: the mode ``e⁻⁵`` of its ``LogNormal(−4, 1)`` prior, where every fit of a
#: GP-UCB policy starts ``λ`` (in the model's units), as a new ``SingleTaskGP`` does.
INITIAL_LAMBDA = math.exp(-5.0)
#: BoTorch's lower bound of an inferred noise (``MIN_INFERRED_NOISE_LEVEL``): ``λ`` is bounded by it,
#: or by half the initial ``λ`` when that is smaller.
MIN_INFERRED_LAMBDA = 1e-4


class AgeWeightedNoise(Noise):
    """Noise ``λ·m_s`` on the training rows (fixed multipliers ``m_s = η^{-age_s} ≥ 1``), ``λ`` on any new row.

    Args:
        train_X: ``Tensor[t, d]``, the training inputs (recognised by value, also as the prefix of
            the inputs a fantasy model is conditioned on; called without inputs, a noise of ``t``
            rows is the training rows', as GPyTorch's fixed noise does).
        multipliers: ``Tensor[t]``, ``m_s``.
        lam: initial ``λ > 1e-8``.

    Example:
        >>> X = torch.rand(3, 1, dtype=torch.float64)
        >>> noise = AgeWeightedNoise(X, torch.tensor([4.0, 2.0, 1.0], dtype=torch.float64), 0.5)
        >>> noise(X).diagonal().tolist(), noise(torch.rand(2, 1, dtype=torch.float64)).diagonal().tolist()
        ([2.0, 1.0, 0.5], [0.5, 0.5])
    """

    def __init__(self, train_X: torch.Tensor, multipliers: torch.Tensor, lam: float) -> None:
        super().__init__()
        self.register_buffer("train_X", train_X.detach().clone())
        self.register_buffer("multipliers", multipliers.detach().to(train_X).clone())
        self.register_parameter(
            "raw_lam", torch.nn.Parameter(torch.zeros((), dtype=train_X.dtype, device=train_X.device))
        )
        lower = max(MIN_LAMBDA, min(MIN_INFERRED_LAMBDA, 0.5 * float(lam)))
        self.register_constraint("raw_lam", GreaterThan(lower, transform=None, initial_value=None))
        # BoTorch's prior on an inferred noise (get_gaussian_likelihood_with_lognormal_prior): without it a
        # fit on a few points drives λ to its bound and interpolates the noise
        prior = LogNormalPrior(loc=torch.tensor(-4.0, dtype=train_X.dtype, device=train_X.device), scale=1.0)
        self.register_prior("lam_prior", prior, lambda module: module.lam, lambda module, value: module._set_lam(value))
        self.lam = lam

    def _set_lam(self, value) -> None:
        self.lam = value

    @property
    def lam(self) -> torch.Tensor:
        """``λ``, the noise variance of the newest (and of any new) observation."""
        return self.raw_lam_constraint.transform(self.raw_lam)

    @lam.setter
    def lam(self, value: float | torch.Tensor) -> None:
        lower = self.raw_lam_constraint.lower_bound.to(self.raw_lam)
        value = torch.as_tensor(value, dtype=self.raw_lam.dtype, device=self.raw_lam.device)
        value = torch.maximum(value, lower * (1 + 1e-6))
        self.initialize(raw_lam=self.raw_lam_constraint.inverse_transform(value))

    def forward(self, *params, shape: torch.Size | None = None, **kwargs) -> DiagLinearOperator:
        X = params[0] if params else None
        while isinstance(X, (list, tuple)) and len(X) > 0:  # GPyTorch passes train_inputs as a list
            X = X[0]
        X = X if isinstance(X, torch.Tensor) else None
        n = X.shape[-2] if X is not None else shape[-1]
        batch = X.shape[:-2] if X is not None else (shape[:-1] if shape is not None else torch.Size())
        multipliers = torch.ones(n, dtype=self.multipliers.dtype, device=self.multipliers.device)
        k = self.train_X.shape[0]
        if X is None and n == k:  # called without inputs (``mll(output, y)``): the training rows, as GPyTorch
            multipliers = self.multipliers
        elif X is not None and n >= k and torch.equal(X[..., :k, :], self.train_X.expand(*batch, k, -1)):
            multipliers[:k] = self.multipliers  # the training rows, then (fantasies) new rows at λ
        return DiagLinearOperator((self.lam * multipliers).expand(*batch, n))


class AgeWeightedGaussianLikelihood(_GaussianLikelihoodBase):
    """GPyTorch Gaussian likelihood with :class:`AgeWeightedNoise`; ``likelihood.lam`` is ``λ``.

    Example:
        >>> X = torch.rand(3, 1, dtype=torch.float64)
        >>> lik = AgeWeightedGaussianLikelihood(X, torch.ones(3, dtype=torch.float64), 0.1)
        >>> round(float(lik.lam), 12)
        0.1
    """

    def __init__(self, train_X: torch.Tensor, multipliers: torch.Tensor, lam: float) -> None:
        super().__init__(noise_covar=AgeWeightedNoise(train_X, multipliers, lam))

    @property
    def lam(self) -> torch.Tensor:
        return self.noise_covar.lam

    @property
    def noise(self) -> torch.Tensor:
        """``λ`` (BoTorch reads ``likelihood.noise`` as the noise of a new observation)."""
        return self.noise_covar.lam.reshape(1)


class WeightedStandardize(Standardize):
    """BoTorch's ``Standardize`` (one outcome) with weighted statistics.

    With normalised weights ``v_s = w_s / Σ w``: mean ``Σ v_s y_s`` and variance
    ``Σ v_s (y_s − mean)² / (1 − Σ v_s²)`` (the unbiased estimate with reliability weights; the
    ordinary sample variance for equal weights). One observation, or a spread below ``min_stdv``,
    only centres the data.

    Args:
        weights: ``Tensor[t]`` of positive weights, one per training row (the age weights ``η^{age}``).

    Example:
        >>> Y = torch.tensor([[0.0], [10.0], [2.0]], dtype=torch.float64)
        >>> tf = WeightedStandardize(torch.tensor([1e-9, 1.0, 1.0], dtype=torch.float64))
        >>> Y_tf, _ = tf(Y)
        >>> round(float(tf.means), 6)  # the nearly forgotten first row barely counts
        6.0
    """

    def __init__(self, weights: torch.Tensor, min_stdv: float = 1e-8) -> None:
        super().__init__(m=1, min_stdv=min_stdv)
        self.register_buffer("weights", weights.detach().clone())

    def forward(self, Y: torch.Tensor, Yvar: torch.Tensor | None = None, X: torch.Tensor | None = None):
        if self.training:
            if Y.shape[-2:] != (self.weights.shape[0], 1):
                raise ValueError(f"Y must have shape ({self.weights.shape[0]}, 1), got {tuple(Y.shape)}")
            v = (self.weights / self.weights.sum()).to(Y).unsqueeze(-1)
            means = (v * Y).sum(-2, keepdim=True)
            spread = 1.0 - float(v.square().sum())
            if Y.shape[-2] == 1 or spread <= 0:
                stdvs = torch.ones_like(means)
            else:
                stdvs = ((v * (Y - means).square()).sum(-2, keepdim=True) / spread).sqrt()
            stdvs = stdvs.where(stdvs >= self._min_stdv, torch.ones_like(stdvs))
            self.means, self.stdvs, self._stdvs_sq = means, stdvs, stdvs.square()
            self._is_trained = torch.tensor(True, device=Y.device)
            return (Y - means) / stdvs, (None if Yvar is None else Yvar / self._stdvs_sq)
        return super().forward(Y, Yvar, X)
