"""The BoTorch face: Exp3 as a ``SamplingStrategy`` and an acquisition, discounted UCB for BoTorch loops.

A BoTorch loop is model → acquisition → ``optimize_acqf`` / ``optimize_acqf_discrete`` (or a
``SamplingStrategy``) → evaluate → append data. These adapters put the policies of this package
into that shape.
"""

from __future__ import annotations

import torch
from botorch.acquisition import AcquisitionFunction, UpperConfidenceBound, qUpperConfidenceBound
from botorch.generation.sampling import SamplingStrategy
from botorch.sampling import MCSampler
from gpytorch.kernels import Kernel

from ._validation import check_positive
from .confidence import ConfidenceSettings, weighted_information_gain, wgp_beta
from .kernels import kernel_matrix
from .models import age_log_weights, discounted_gp
from .policies import RandomizedPolicy


class CandidateIndex:
    """Exact row lookup ``x ↦ i`` with ``candidates[i] == x``, for batches of rows (any device).

    Rows are hashed from their float bits (so the same row always gets the same key, whatever the
    batch), keys are sorted once, and each lookup is a ``searchsorted`` plus an exact equality
    check: ``O(b·(d + log n))`` per batch, ``O(n)`` memory.

    Example:
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> CandidateIndex(X)(X[[3, 0]])
        tensor([3, 0])
    """

    def __init__(self, candidates: torch.Tensor) -> None:
        self.candidates = candidates
        keys = self._keys(candidates)
        self.sorted_keys, self.order = torch.sort(keys)

    @staticmethod
    def _keys(rows: torch.Tensor) -> torch.Tensor:
        bits = rows.to(torch.float64).contiguous().view(torch.int64)
        key = torch.zeros(rows.shape[:-1], dtype=torch.int64, device=rows.device)
        for j in range(rows.shape[-1]):  # polynomial hash, wrapping int64 arithmetic
            key = key * 1_000_003 + (bits[..., j] ^ (bits[..., j] >> 29))
        return key

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        """``LongTensor[...]`` of candidate indices of the rows of ``X`` (``Tensor[..., d]``).

        Raises:
            ValueError: a row of ``X`` is not one of the candidates.
        """
        keys = self._keys(X)
        pos = torch.searchsorted(self.sorted_keys, keys.reshape(-1)).clamp_max(self.order.numel() - 1)
        index = self.order[pos].reshape(keys.shape)
        if not bool((self.candidates[index] == X.to(self.candidates)).all()):
            raise ValueError("X must consist of rows of the policy's candidates")
        return index


def _exp3_policy(policy) -> RandomizedPolicy:
    if not isinstance(policy, RandomizedPolicy):
        raise TypeError(f"policy must be an Exp3-family policy (RandomizedPolicy), got {type(policy).__name__}")
    return policy


class Exp3SamplingStrategy(SamplingStrategy):
    """Draw candidates from an Exp3-family policy's ``P_t``, as a BoTorch ``SamplingStrategy``.

    ``forward(X, num_samples)`` with ``X`` the policy's candidate set (``1 × n × d``) draws
    ``num_samples`` candidates from ``P_t`` exactly (the policy's Gumbel / exponential-race sampler;
    not ``BoltzmannSampling``, which rescales scores) and makes them the policy's pending selection,
    so the loop continues with ``policy.observe(x, y)`` (one draw) or
    ``policy.update(indices, rewards)`` (``num_samples = q > 1``, the batch extension). Calling it
    again before the update returns the same pending draws.

    Args:
        policy: ``KernelizedExp3``, ``RLSKernelizedExp3``, ``APGExp3`` or ``UniformRandom``.

    Example:
        >>> from torch_advbandit import KernelizedExp3
        >>> from torch_advbandit.kernels import make_kernel
        >>> from torch_advbandit.parameters import paper_parameters
        >>> X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)
        >>> policy = KernelizedExp3(X, make_kernel("se", 1), 50, **paper_parameters("se", 50, 1))
        >>> x = Exp3SamplingStrategy(policy)(X.unsqueeze(0), num_samples=1)[0]  # 1 × d
        >>> policy.observe(x, torch.sin(6 * x))
    """

    def __init__(self, policy: RandomizedPolicy) -> None:
        super().__init__()
        self.policy = _exp3_policy(policy)

    def forward(self, X: torch.Tensor, num_samples: int = 1, observation_noise: bool = False) -> torch.Tensor:
        """``X``: ``1 × n × d`` (or ``n × d``), the candidates; returns ``1 × num_samples × d``."""
        if not isinstance(X, torch.Tensor):
            raise TypeError("X must be a torch.Tensor")
        if X.ndim == 2:
            X = X.unsqueeze(0)
        cand = self.policy.candidates
        if X.ndim != 3 or X.shape[0] != 1 or X.shape[1:] != cand.shape or not torch.equal(X[0].to(cand), cand):
            raise ValueError(f"X must be the policy's candidates, shape (1, {cand.shape[0]}, {cand.shape[1]})")
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
        drawn = self.policy.select() if num_samples == 1 else self.policy.select(num_samples)
        index = torch.as_tensor(drawn, device=cand.device).reshape(-1)
        return X[:, index, :]


class Exp3LogProbability(AcquisitionFunction):
    """``log P_t(x)`` of an Exp3-family policy as a BoTorch acquisition: ``forward(b × 1 × d) -> b``.

    ``optimize_acqf_discrete(Exp3LogProbability(policy), q=1, choices=policy.candidates)`` returns
    the current mode of ``P_t`` (the exploit choice; sampling from ``P_t`` is
    :class:`Exp3SamplingStrategy`). Rows of ``X`` must be candidates (exact lookup).

    Example:
        >>> from botorch.optim import optimize_acqf_discrete
        >>> from torch_advbandit import UniformRandom
        >>> X = torch.rand(20, 2, dtype=torch.float64)
        >>> acqf = Exp3LogProbability(UniformRandom(X, None, 10))
        >>> acqf(X[:3].unsqueeze(-2)).shape
        torch.Size([3])
    """

    def __init__(self, policy: RandomizedPolicy) -> None:
        super(AcquisitionFunction, self).__init__()  # no model: the policy holds the state
        self.policy = _exp3_policy(policy)
        self.lookup = CandidateIndex(self.policy.candidates)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if X.ndim < 2 or X.shape[-2] != 1:
            raise ValueError(f"X must have shape b × 1 × d (q = 1), got {tuple(X.shape)}")
        return self.policy.log_probabilities()[self.lookup(X[..., 0, :])]


def _discounted_model_and_beta(train_X, train_Y, kernel, discount, lam, beta, beta_scale, confidence, horizon):
    model = discounted_gp(train_X, train_Y, kernel, discount=discount, lam=lam)
    beta_scale = check_positive(beta_scale, "beta_scale", allow_zero=True)
    if beta is not None:
        beta = check_positive(beta, "beta", allow_zero=True)
    else:
        t = train_X.shape[0]
        ages = torch.arange(t - 1, -1, -1, dtype=train_X.dtype, device=train_X.device)
        K = kernel_matrix(model.covar_module, train_X, train_X)
        gain = weighted_information_gain(K, age_log_weights(ages, discount), lam)
        beta = wgp_beta(gain, lam=lam, confidence=confidence, horizon=horizon)
    return model, beta_scale * beta


def discounted_ucb(
    train_X: torch.Tensor,
    train_Y: torch.Tensor,
    kernel: Kernel,
    *,
    discount: float,
    lam: float,
    beta: float | None = None,
    beta_scale: float = 1.0,
    rkhs_bound: float = 2.0,
    noise_bound: float = 0.05,
    delta: float = 0.1,
    horizon: int | None = None,
) -> UpperConfidenceBound:
    """WGP-UCB's acquisition for a BoTorch loop that owns its data ([Deng2022], Alg. 1).

    Builds :func:`~torch_advbandit.models.discounted_gp` on ``train_X``, ``train_Y`` (rows in
    observation order, newest last) and returns BoTorch's ``UpperConfidenceBound`` with
    ``β_t`` from :func:`~torch_advbandit.confidence.wgp_beta` (double-weighted information gain
    on ``train_X``; ``horizon`` switches to ``log(T/δ)``), times ``beta_scale``, unless ``beta``
    is given. BoTorch's UCB takes ``β²``: it scores ``μ̃(x) + β_t σ̃(x)``.

    Returns:
        ``UpperConfidenceBound`` (``forward(b × 1 × d) -> b``); its ``model`` is the discounted GP.

    Example:
        >>> from botorch.optim import optimize_acqf_discrete
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(15, 1, dtype=torch.float64)
        >>> acqf = discounted_ucb(X, torch.sin(6 * X), make_kernel("se", 1), discount=0.9, lam=0.5)
        >>> grid = torch.linspace(0, 1, 101, dtype=torch.float64).unsqueeze(-1)
        >>> x_next, _ = optimize_acqf_discrete(acqf, q=1, choices=grid)
    """
    confidence = ConfidenceSettings(rkhs_bound, noise_bound, delta)
    model, beta = _discounted_model_and_beta(
        train_X, train_Y, kernel, discount, lam, beta, beta_scale, confidence, horizon
    )
    # β² as a float64 tensor on the data's device: BoTorch's as_tensor would round a float to float32
    return UpperConfidenceBound(model, beta=torch.tensor(beta**2, dtype=train_X.dtype, device=train_X.device))


def discounted_qucb(
    train_X: torch.Tensor,
    train_Y: torch.Tensor,
    kernel: Kernel,
    *,
    X_pending: torch.Tensor | None = None,
    sampler: MCSampler | None = None,
    **options,
) -> qUpperConfidenceBound:
    """Batch (``q > 1``) form of :func:`discounted_ucb`: BoTorch's MC ``qUpperConfidenceBound``.

    Same discounted model and ``β_t``; ``**options`` are :func:`discounted_ucb`'s keywords
    (``discount``, ``lam`` required; ``beta``, ``beta_scale``, ``rkhs_bound``, ``noise_bound``,
    ``delta``, ``horizon``). ``X_pending`` (points chosen but not yet observed) and ``sampler``
    pass through to BoTorch. Use with ``optimize_acqf_discrete(acqf, q=q, choices=...)``.

    Example:
        >>> from botorch.optim import optimize_acqf_discrete
        >>> from torch_advbandit.kernels import make_kernel
        >>> X = torch.rand(15, 1, dtype=torch.float64)
        >>> acqf = discounted_qucb(X, torch.sin(6 * X), make_kernel("se", 1), discount=0.9, lam=0.5)
        >>> grid = torch.linspace(0, 1, 101, dtype=torch.float64).unsqueeze(-1)
        >>> batch, _ = optimize_acqf_discrete(acqf, q=3, choices=grid)
        >>> batch.shape
        torch.Size([3, 1])
    """
    ucb = discounted_ucb(train_X, train_Y, kernel, **options)
    return qUpperConfidenceBound(ucb.model, beta=float(ucb.beta), sampler=sampler, X_pending=X_pending)
