"""APG-Exp3 ([Takemori2021]), the baseline of [Iwazaki2026], App. 17 (docs/algorithms.rst §6)."""

from __future__ import annotations

import math

import torch
from gpytorch.kernels import Kernel

from .._validation import check_candidates, check_generator, check_positive, check_unit_interval
from ..designs import g_optimal_feature_design
from ..estimators import LinearIPSEstimator
from ..kernels import prepare_kernel
from ..linalg import greedy_posterior_columns
from .epochs import AnytimeEpochs, epoch_horizon, first_epoch
from .exp3 import Exp3Policy


def newton_basis(kernel: Kernel, candidates: torch.Tensor, admissible_error: float) -> torch.Tensor:
    """The P-greedy Newton basis on the candidates, ``Tensor[n, D_T]`` ([Takemori2021]).

    ``N_j(x) = (k(x, x_j) − Σ_{i<j} N_i(x_j)N_i(x)) / P_{j−1}(x_j)``, ``x_j = argmax P_{j−1}``,
    ``P_j² = P_{j−1}² − N_j²`` from ``P_0² = k(x,x)``: pivoted Cholesky of ``K``, stopped when the
    power function ``max_x P_j(x) ≤ e``. Then ``K − N Nᵀ`` has diagonal at most ``e²``. The basis
    always holds at least ``N_1``: when ``e ≥ max_x sqrt(k(x, x))`` (the default ``e = log(n)/T``
    does this for ``T < log n``) the stopping rule alone would leave APG-Exp3 no features at all.

    Example:
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 100, dtype=torch.float64).unsqueeze(-1)
        >>> newton_basis(make_kernel("se", 1), X, 1e-3).shape[1] < 100
        True
    """
    candidates = check_candidates(candidates)
    kernel = prepare_kernel(kernel, candidates)
    e = check_positive(admissible_error, "admissible_error")
    basis = greedy_posterior_columns(kernel, candidates, 0.0, candidates.shape[0], variance_tol=e * e)[1]
    if basis.shape[1] == 0:  # e ≥ max_x sqrt(k(x, x)): keep the first function rather than no features
        basis = greedy_posterior_columns(kernel, candidates, 0.0, 1)[1]
    return basis


def _apg_parts(kernel: Kernel, candidates: torch.Tensor, horizon: int, eta, alpha, admissible_error) -> dict:
    """APG-Exp3's basis, ``η``, ``α``, estimator and ``π`` for ``horizon`` rounds (given values kept)."""
    n = candidates.shape[0]
    if admissible_error is None:
        admissible_error = (math.log(n) if n > 1 else 1.0) / horizon
    features = newton_basis(kernel, candidates, admissible_error)
    D = features.shape[1]
    eta = 0.5 / math.sqrt(D * horizon) if eta is None else check_positive(eta, "eta")
    alpha = min(1.0, 0.1 * eta * D) if alpha is None else check_unit_interval(alpha, "alpha")
    return {
        "eta": eta,
        "alpha": alpha,
        "beta": 0.0,
        "estimator": LinearIPSEstimator(features, candidates),
        "pi": g_optimal_feature_design(features),
        "features": features,
        "admissible_error": float(admissible_error),
    }


class APGExp3(AnytimeEpochs, Exp3Policy):
    """APG-Exp3: linear Exp3 on a P-greedy Newton basis with G-optimal exploration.

    Features ``N(x) ∈ R^{D_T}`` from :func:`newton_basis` with admissible error
    ``e = log(n)/T``; each round ``θ̂_t = Q_t⁺ N(x_t) y_t``, ``Q_t = Σ_x P_t(x)N(x)N(x)ᵀ``,
    ``P̃_{t+1} ∝ exp(η Σ_{s≤t} N(x)ᵀθ̂_s)`` and ``P_t = (1 − α)P̃_t + α π_G`` with ``π_G`` the
    G-optimal design on ``N`` (Frank–Wolfe). Paper defaults ([Iwazaki2026], App. 17):
    ``η = 0.5/sqrt(D_T·T)``, ``α = min(1, 0.1·η·D_T)``.

    Args:
        candidates: ``Tensor[n, d]``.
        kernel: GPyTorch kernel with ``k(x, x) ≤ 1``.
        horizon: ``T ≥ 1``, or ``None`` for an anytime policy: :class:`KernelizedExp3`'s doubling
            epochs (``T_k = 64·(2^{k+1} − 1)``), each with the basis, ``η``, ``α`` and ``π_G`` of the
            horizon ``2·T_k``, keeping the scores (``eta``, ``alpha``, ``admissible_error`` must then
            be omitted; docs/algorithms.rst §3).
        eta: learning rate; ``None`` for the paper's value.
        alpha: exploration weight in ``(0, 1]``; ``None`` for the paper's value.
        admissible_error: ``e``; ``None`` for ``log(n)/T`` (``1/T`` when ``n = 1``).
        reward_scale: ``s > 0`` or ``"auto"``, the rewards' unit (as :class:`KernelizedExp3`).
        generator: ``torch.Generator`` on the candidates' device.

    Example:
        >>> from torch_advbandit import APGExp3
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.linspace(0, 1, 100, dtype=torch.float64).unsqueeze(-1)
        >>> policy = APGExp3(X, make_kernel("matern52", 1), 200, generator=torch.Generator().manual_seed(0))
        >>> policy.update(policy.select(), 0.5)
    """

    def __init__(
        self,
        candidates: torch.Tensor,
        kernel: Kernel,
        horizon: int | None,
        *,
        eta: float | None = None,
        alpha: float | None = None,
        admissible_error: float | None = None,
        reward_scale: float | str = 1.0,
        generator: torch.Generator | None = None,
    ) -> None:
        candidates = check_candidates(candidates)
        given = {"eta": eta, "alpha": alpha, "admissible_error": admissible_error}
        anytime, first, derive_for = first_epoch(horizon, given)
        generator = check_generator(generator, candidates.device)
        parts = _apg_parts(kernel, candidates, derive_for, eta, alpha, admissible_error)
        super().__init__(
            candidates,
            first,
            estimator=parts["estimator"],
            exploration_probs=parts["pi"],
            eta=parts["eta"],
            alpha=parts["alpha"],
            beta=0.0,
            reward_scale=reward_scale,
            generator=generator,
        )
        self.admissible_error = parts["admissible_error"]
        self.features = parts["features"]
        self.anytime = anytime
        self.epoch = 0
        self._kernel = kernel

    def _epoch_parts(self, epoch: int) -> dict:
        return _apg_parts(self._kernel, self.candidates, epoch_horizon(epoch), None, None, None)

    @property
    def num_features(self) -> int:
        """``D_T``, the number of Newton basis functions."""
        return self.features.shape[1]
