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

from ._validation import check_int, check_width
from .confidence import ConfidenceSettings, weighted_information_gain, wgp_beta
from .kernels import kernel_matrix
from .models import age_log_weights, discounted_gp
from .policies import RandomizedPolicy


class CandidateIndex:
    """Exact row lookup ``x ↦ i`` with ``candidates[i] == x``, for batches of rows (any device).

    Rows are hashed from their float bits (``-0.0`` and ``0.0`` are the same row), keys are sorted
    once, and each lookup is a ``searchsorted`` plus an exact equality check; a row whose key is
    shared by another row (a 64-bit collision) is resolved by comparing it with every candidate of
    that key, so the lookup is exact. ``O(b·(d + log n))`` per batch, ``O(n)`` memory.

    Duplicated candidates: copies of one row form a *group*; :meth:`__call__` returns the first
    copy's index and :attr:`group_of` maps every candidate to its group, so that a probability of
    "drawing this point" sums over the copies (:class:`Exp3LogProbability`).

    Example:
        >>> X = torch.rand(5, 2, dtype=torch.float64)
        >>> CandidateIndex(X)(X[[3, 0]])
        tensor([3, 0])
        >>> CandidateIndex(torch.tensor([[0.0], [-0.0], [1.0]], dtype=torch.float64)).num_groups
        2
    """

    def __init__(self, candidates: torch.Tensor) -> None:
        self.candidates = candidates + 0.0  # -0.0 + 0.0 = +0.0: one bit pattern for zero
        keys = self._keys(self.candidates)
        self.sorted_keys, self.order = torch.sort(keys, stable=True)
        _, self.group_of = torch.unique(self.candidates, dim=0, return_inverse=True)
        self.num_groups = int(self.group_of.max()) + 1

    @staticmethod
    def _keys(rows: torch.Tensor) -> torch.Tensor:
        bits = (rows.to(torch.float64) + 0.0).contiguous().view(torch.int64)
        key = torch.zeros(rows.shape[:-1], dtype=torch.int64, device=rows.device)
        for j in range(rows.shape[-1]):  # polynomial hash, wrapping int64 arithmetic
            key = key * 1_000_003 + (bits[..., j] ^ (bits[..., j] >> 29))
        return key

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        """``LongTensor[...]`` of candidate indices of the rows of ``X`` (``Tensor[..., d]``).

        Raises:
            ValueError: ``X`` has another ``d``, or a row of ``X`` is not one of the candidates.
        """
        d = self.candidates.shape[-1]
        if not isinstance(X, torch.Tensor) or X.ndim < 1 or X.shape[-1] != d:
            raise ValueError(f"X must have rows of d = {d} coordinates, got shape {tuple(getattr(X, 'shape', ()))}")
        rows = X.to(self.candidates) + 0.0
        keys = self._keys(rows).reshape(-1)
        flat = rows.reshape(-1, d)
        pos = torch.searchsorted(self.sorted_keys, keys).clamp_max(self.order.numel() - 1)
        index = self.order[pos]
        ok = (self.candidates[index] == flat).all(-1)
        if not bool(ok.all()):  # absent rows, or a key shared by distinct rows: compare exactly
            for r in (~ok).nonzero().reshape(-1).tolist():
                lo = int(torch.searchsorted(self.sorted_keys, keys[r : r + 1]))
                hi = int(torch.searchsorted(self.sorted_keys, keys[r : r + 1], right=True))
                same = self.order[lo:hi][(self.candidates[self.order[lo:hi]] == flat[r]).all(-1)]
                if same.numel() == 0:
                    raise ValueError("X must consist of rows of the policy's candidates")
                index[r] = same.min()
        return index.reshape(X.shape[:-1])

    def group_log_sum_exp(self, values: torch.Tensor) -> torch.Tensor:
        """``log Σ_{copies} exp(values)`` for each candidate, ``Tensor[n]`` (``values`` itself without duplicates).

        Example:
            >>> index = CandidateIndex(torch.tensor([[0.0], [0.0], [1.0]], dtype=torch.float64))
            >>> index.group_log_sum_exp(torch.log(torch.tensor([0.25, 0.25, 0.5], dtype=torch.float64))).exp()
            tensor([0.5000, 0.5000, 0.5000], dtype=torch.float64)
        """
        if self.num_groups == values.shape[0]:
            return values
        top = torch.full((self.num_groups,), -torch.inf, dtype=values.dtype, device=values.device)
        top = top.scatter_reduce(0, self.group_of, values, "amax")
        shift = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        total = torch.zeros_like(top).scatter_add(0, self.group_of, (values - shift[self.group_of]).exp())
        return (total.log() + shift)[self.group_of]


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
    :class:`Exp3SamplingStrategy`). Rows of ``X`` must be candidates (exact lookup). A candidate
    listed more than once is one point: its value is the log of the probability of drawing any of
    its copies, ``log Σ_copies P_t``.

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
        return self.lookup.group_log_sum_exp(self.policy.log_probabilities())[self.lookup(X[..., 0, :])]


def _discounted_model_and_beta(train_X, train_Y, kernel, discount, lam, beta, beta_scale, confidence, horizon):
    beta_scale = check_width(beta_scale, "beta_scale")
    beta = None if beta is None else check_width(beta, "beta")
    horizon = None if horizon is None else check_int(horizon, "horizon", minimum=1)
    model = discounted_gp(train_X, train_Y, kernel, discount=discount, lam=lam)
    if beta is None:
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
