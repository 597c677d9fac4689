"""TV-GP-UCB: the space-time kernel and posterior against dense computations, the fitted forgetting rate on
toy sequences, the theory β, and what a fit may not touch (the global generator)."""

import math

import pytest
import torch
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel

from torch_advbandit import TimeVaryingGPUCB
from torch_advbandit.kernels import make_kernel
from torch_advbandit.spacetime import AtTime, epsilon_to_lengthscale, lengthscale_to_epsilon, space_time_kernel

DT = torch.float64


def test_the_space_time_kernel_is_the_product_of_the_space_kernel_and_the_markov_time_correlation():
    g = torch.Generator().manual_seed(0)
    d, T, epsilon = 2, 40, 0.05
    space = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d)).to(DT)
    space.outputscale = 1.7
    space.base_kernel.lengthscale = torch.tensor([[0.3, 0.8]], dtype=DT)
    X = torch.rand(7, d, dtype=DT, generator=g)
    rounds = torch.tensor([0, 0, 3, 4, 9, 20, 39], dtype=DT)
    Z = torch.cat([X, (rounds / T).unsqueeze(-1)], -1)
    got = space_time_kernel(space, epsilon_to_lengthscale(epsilon, T)).to(DT)(Z).to_dense()
    # definitional: k_X(x, x') (1 − ε)^{|t − t'|/2} ([Bogunovic2016] eq. (2)), k_X by hand
    r = ((X.unsqueeze(1) - X.unsqueeze(0)) / torch.tensor([0.3, 0.8], dtype=DT)).norm(dim=-1)
    k_x = 1.7 * (1 + math.sqrt(5) * r + 5 * r**2 / 3) * torch.exp(-math.sqrt(5) * r)
    k_t = (1 - epsilon) ** ((rounds.unsqueeze(1) - rounds.unsqueeze(0)).abs() / 2)
    torch.testing.assert_close(got, k_x * k_t, rtol=1e-7, atol=1e-9)  # GPyTorch's distances: ‖a‖² + ‖b‖² − 2aᵀb
    assert space.outputscale.requires_grad  # the caller's kernel is copied, not frozen


def test_epsilon_and_lengthscale_are_inverse():
    for T in (1, 50, 1000):
        for epsilon in (1e-6, 0.01, 0.5, 0.99):
            assert lengthscale_to_epsilon(epsilon_to_lengthscale(epsilon, T), T) == pytest.approx(epsilon, rel=1e-9)


def test_the_model_is_the_dense_gp_posterior_at_the_next_round():
    """Fixed hyperparameters: ``μ = k*ᵀ(K + λI)⁻¹y``, ``σ² = k** − k*ᵀ(K + λI)⁻¹k*`` with the space-time kernel,
    the test points at ``τ = t/T``."""
    X = torch.linspace(0, 1, 25, dtype=DT).unsqueeze(-1)
    T, epsilon, lam, ell = 30, 0.1, 0.02, 0.25
    kernel = make_kernel("se", 1, ell)
    policy = TimeVaryingGPUCB(X, kernel, T, epsilon=epsilon, fit_hyperparameters=False, lam=lam)
    policy.observe(X[[2, 20]], torch.tensor([[0.3], [-0.4]], dtype=DT))  # both at round 0
    for i, y in ((5, 0.9), (11, 0.1), (5, 0.7)):
        policy.observe(X[[i]], torch.tensor([[y]], dtype=DT))
    rows = [2, 20, 5, 11, 5]
    rounds = torch.tensor([0, 0, 2, 3, 4], dtype=DT)
    y = torch.tensor([0.3, -0.4, 0.9, 0.1, 0.7], dtype=DT)
    x = X[rows, 0]

    def k(a, ta, b, tb):
        return torch.exp(-((a.unsqueeze(1) - b.unsqueeze(0)) ** 2) / (2 * ell**2)) * (1 - epsilon) ** (
            (ta.unsqueeze(1) - tb.unsqueeze(0)).abs() / 2
        )

    t_next = torch.full((25,), float(policy.t), dtype=DT)
    A = k(x, rounds, x, rounds) + lam * torch.eye(5, dtype=DT)
    cross = k(X[:, 0], t_next, x, rounds)
    mean = cross @ torch.linalg.solve(A, y)
    var = 1 - (cross * torch.linalg.solve(A, cross.T).T).sum(-1)
    posterior = policy.model().posterior(X)
    torch.testing.assert_close(posterior.mean.squeeze(-1), mean, rtol=1e-7, atol=1e-8)
    torch.testing.assert_close(posterior.variance.squeeze(-1), var, rtol=1e-7, atol=1e-8)
    # the selection is the UCB's argmax at the fixed β
    policy_beta = TimeVaryingGPUCB(X, kernel, T, epsilon=epsilon, fit_hyperparameters=False, lam=lam, beta=1.5)
    policy_beta.load_state_dict({**policy.state_dict(), "hyperparameters": policy_beta.hyperparameters()})
    assert policy_beta.select() == int((mean + 1.5 * var.sqrt()).argmax())


def test_theory_beta_is_bogunovics_finite_set_width():
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    policy = TimeVaryingGPUCB(X, make_kernel("se", 1), 20, epsilon=0.1, fit_hyperparameters=False, delta=0.05)
    for _ in range(3):
        policy.update(policy.select(), 0.0)
    t = 4  # the next round, counted from 1
    assert policy.confidence_width() == pytest.approx(math.sqrt(2 * math.log(40 * t**2 * math.pi**2 / (6 * 0.05))))
    assert policy.diagnostics()["beta"] == pytest.approx(math.sqrt(2 * math.log(40 * 9 * math.pi**2 / 0.3)))


def _play(policy, f, rounds):
    for t in range(rounds):
        i = policy.select()
        policy.update(i, float(f(t, policy.candidates[i, 0])))
    return policy


def _toy_sequences(seed):
    """``(stationary, jump)``: ``f_t(x) = sin(6x)`` for 30 rounds, and the same negated from round 15, plus
    noise of standard deviation 0.05 drawn with ``seed``."""
    noise = torch.randn(30, generator=torch.Generator().manual_seed(seed), dtype=DT) * 0.05

    def stationary(t, x):
        return torch.sin(6 * x) + noise[t]

    def jump(t, x):
        return (torch.sin(6 * x) if t < 15 else -torch.sin(6 * x)) + noise[t]

    return stationary, jump


@pytest.mark.slow
def test_the_fitted_forgetting_rate_is_small_on_a_stationary_sequence_and_large_after_a_jump():
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    stationary, jump = _toy_sequences(3)

    def run(f):
        policy = TimeVaryingGPUCB(
            X, RBFKernel().to(DT), 30, warmup=5, beta=2.0, generator=torch.Generator().manual_seed(0)
        )
        return _play(policy, f, 30)

    still, moved = run(stationary), run(jump)
    assert still.diagnostics()["epsilon"] < 1e-3  # correlation above 0.999 a round: nothing forgotten
    assert moved.diagnostics()["epsilon"] > 0.02
    # after the jump the model predicts the new function at the next round, not the old one
    mean = moved.model().posterior(X).mean.squeeze(-1)
    assert float(torch.corrcoef(torch.stack([mean, -torch.sin(6 * X[:, 0])]))[0, 1]) > 0.8


def test_a_fit_leaves_the_global_generator_alone_and_is_a_function_of_the_data():
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)
    runs = []
    for _ in range(2):
        torch.manual_seed(123)
        before = torch.get_rng_state()
        policy = TimeVaryingGPUCB(X, make_kernel("se", 1), 10, beta=2.0, generator=torch.Generator().manual_seed(0))
        policy.observe(X[::6], torch.sin(5 * X[::6]))
        _play(policy, lambda t, x: torch.sin(5 * x) + 0.1 * t, 4)
        assert torch.equal(torch.get_rng_state(), before)
        runs.append((policy.train_X.clone(), policy.diagnostics()))
    assert torch.equal(runs[0][0], runs[1][0]) and repr(runs[0][1]) == repr(runs[1][1])  # NaN-safe


def test_a_restored_fitted_policy_continues_identically_and_bad_row_rounds_are_refused():
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)

    def make():
        return TimeVaryingGPUCB(X, make_kernel("matern52", 1), 12, beta=2.0, generator=torch.Generator().manual_seed(1))

    a = make()
    a.observe(X[::10], torch.cos(4 * X[::10]))
    _play(a, lambda t, x: torch.cos(4 * x), 3)
    b = make()
    b.load_state_dict(a.state_dict())
    assert [_play(p, lambda t, x: torch.cos(4 * x) - 0.2 * t, 3).train_X[-3:].tolist() for p in (a, b)] == [
        b.train_X[-3:].tolist()
    ] * 2
    state = a.state_dict()
    before = b.state_dict()
    for bad in (state["row_rounds"].flip(0), state["row_rounds"].to(DT), state["row_rounds"] + 100):
        with pytest.raises(ValueError, match="row_rounds"):
            b.load_state_dict({**state, "row_rounds": bad})
    assert all(torch.equal(v, before[k]) if isinstance(v, torch.Tensor) else True for k, v in b.state_dict().items())


def test_asks_with_pending_points_are_distinct_and_at_one_time():
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)
    policy = TimeVaryingGPUCB(X, make_kernel("se", 1, 0.2), 20, epsilon=0.05, fit_hyperparameters=False, beta=2.0,
                              generator=torch.Generator().manual_seed(0))  # fmt: skip
    policy.observe(X[::7], torch.sin(6 * X[::7]))
    first = policy.select(2)
    more = policy.select(3)
    assert len(set(first.tolist()) | set(more.tolist())) == 5 and len(policy.pending) == 5
    model = policy.model()
    assert isinstance(model, AtTime) and model.tau == policy.t / 20
    torch.testing.assert_close(model.with_time(X[:2])[:, -1], torch.full((2,), policy.t / 20, dtype=DT))


def test_during_the_warm_up_the_policy_is_vanilla_botorch_and_a_fixed_epsilon_stays_fixed():
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

    from torch_advbandit.experiments.botorch_drift import BoTorchUCB

    X = torch.rand(64, 2, dtype=DT, generator=torch.Generator().manual_seed(0))

    def f(t, x):
        return torch.sin(5 * x) + 0.3 * t

    def play2(policy):
        policy.observe(X[:4], torch.sin(5 * X[:4, :1]))
        out = []
        for t in range(4):
            i = policy.select()
            policy.update(i, float(f(t, X[i, 0])))
            out.append(i)
        return out

    botorch_kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=2).to(DT)  # SingleTaskGP's default
    tv = TimeVaryingGPUCB(X, botorch_kernel, 10, warmup=6, beta=2.0)
    assert play2(tv) == play2(BoTorchUCB(X, 10, beta=2.0))
    assert tv.diagnostics()["time_lengthscale"] == math.inf and tv.diagnostics()["epsilon"] == 0.0
    tv.update(tv.select(), 0.0)  # the sixth observed round: ε is fitted from the next model on
    tv.select()
    assert 0 < tv.diagnostics()["epsilon"] < 1
    fixed = TimeVaryingGPUCB(X, RBFKernel(ard_num_dims=2).to(DT), 10, epsilon=0.2, beta=2.0)
    play2(fixed)
    assert fixed.diagnostics()["epsilon"] == pytest.approx(0.2, rel=1e-6)  # the kernel and noise are fitted, ε not


def test_the_critical_value_is_the_boundary_mixture_quantile():
    from torch_advbandit.policies.time_varying_gp_ucb import critical_value

    for level in (0.001, 0.01, 0.05, 0.2):
        c = critical_value(level)
        # P(½χ²₀ + ½χ²₁ > c) = ½·P(|N(0, 1)| > √c) = ½·erfc(√(c/2))
        assert 0.5 * math.erfc(math.sqrt(c / 2)) == pytest.approx(level, rel=1e-9)


def _logpdf(y, K):
    return torch.distributions.MultivariateNormal(torch.zeros_like(y), K).log_prob(y)


def test_the_likelihood_ratio_statistic_is_the_dense_gaussian_log_density_ratio():
    """Fixed kernel and noise ``λ``, ``ℓ_τ`` fitted: ``2·(log N(y; 0, K_X∘K_τ + λI) − log N(y; 0, K_X + λI))``
    at the fitted ``ℓ_τ``; the model is the space-time one exactly when the statistic passes the test."""
    X = torch.linspace(0, 1, 30, dtype=DT).unsqueeze(-1)
    T, lam, ell = 20, 0.01, 0.2
    for flip_at, expect_forgetting in ((None, False), (4, True)):
        policy = TimeVaryingGPUCB(X, make_kernel("se", 1, ell), T, fit_hyperparameters=False, lam=lam, warmup=3,
                                  significance=0.05, generator=torch.Generator().manual_seed(0))  # fmt: skip
        rows = [3, 9, 15, 21, 27, 6, 12, 18, 24, 3, 9, 15, 21, 27]
        for t, i in enumerate(rows):
            sign = -1.0 if flip_at is not None and t >= flip_at else 1.0
            policy.observe(X[[i]], sign * torch.sin(6 * X[[i]]))
        policy.model()
        stats = policy.diagnostics()
        x, y = X[rows, 0], policy.rewards
        tau = policy.row_rounds.to(DT) / T
        k_x = torch.exp(-((x.unsqueeze(1) - x.unsqueeze(0)) ** 2) / (2 * ell**2))
        fitted = float(policy._gp(1.0).covar_module.time.lengthscale.detach())  # the alternative's ℓ_τ
        k_t = torch.exp(-(tau.unsqueeze(1) - tau.unsqueeze(0)).abs() / fitted)
        eye = lam * torch.eye(len(rows), dtype=DT)

        statistic = 2 * float(_logpdf(y, k_x * k_t + eye) - _logpdf(y, k_x + eye))
        assert stats["lr_statistic"] == pytest.approx(statistic, rel=1e-6, abs=1e-8)
        assert (statistic > 2.705543454095404) == expect_forgetting  # χ²₁'s 0.9 quantile
        assert (stats["epsilon"] > 0) == expect_forgetting
        assert (stats["time_lengthscale"] == math.inf) != expect_forgetting


def test_the_statistic_compares_the_optima_of_the_nested_models_so_it_is_not_negative(monkeypatch):
    """Where the space-time fit from its own start stops below the ``ε = 0`` fit, which it nests (here it is made
    to stop at its start: whether L-BFGS-B stops short on a given sequence depends on the SciPy release), the fit
    refitted from the ``ε = 0`` optimum is more likely, and that fit enters ``Λ``."""
    import torch_advbandit.policies.time_varying_gp_ucb as tv
    from torch_advbandit.policies.change_point_test import _log_likelihood

    g = torch.Generator().manual_seed(1)
    X = torch.rand(60, 2, dtype=DT, generator=g)
    policy = TimeVaryingGPUCB(X, RBFKernel(ard_num_dims=2).to(DT), 30, warmup=3, significance=0.01,
                              generator=torch.Generator().manual_seed(1))  # fmt: skip
    for _ in range(10):
        i = torch.randint(60, (1,), generator=g)
        y = torch.sin(5 * X[i, 0]) * torch.cos(4 * X[i, 1]) + 0.1 * torch.randn(1, generator=g, dtype=DT)
        policy.observe(X[i], y.unsqueeze(-1))

    real_fit, real_gp, stop_at_start = tv.fit_or_keep_start, policy._gp, []

    def fit(model, seed, **kwargs):  # the alternative's own fit stops where it started
        if stop_at_start:
            model.requires_grad_(False)
            return True
        return real_fit(model, seed, **kwargs)

    def gp(start, start_from=None, **kwargs):
        stop_at_start[:] = [True] if start_from is None and math.isfinite(start) and not kwargs else []
        try:
            return real_gp(start, start_from, **kwargs)
        finally:
            stop_at_start.clear()

    monkeypatch.setattr(tv, "fit_or_keep_start", fit)
    monkeypatch.setattr(policy, "_gp", gp)
    null = policy._gp(math.inf)
    own_start = 2 * (_log_likelihood(policy._gp(1.0)) - _log_likelihood(null))
    refit = 2 * (_log_likelihood(policy._gp(1.0, start_from=null)) - _log_likelihood(null))
    assert own_start < -10.0 and refit > 0.1
    policy.model()
    assert policy.diagnostics()["lr_statistic"] == pytest.approx(refit, rel=1e-9)


@pytest.mark.slow
def test_the_tested_forgetting_rate_is_vanilla_on_a_stationary_sequence_and_forgets_after_a_jump():
    X = torch.linspace(0, 1, 40, dtype=DT).unsqueeze(-1)
    stationary, jump = _toy_sequences(4)

    def run(f, **options):
        policy = TimeVaryingGPUCB(X, RBFKernel().to(DT), 30, beta=2.0, generator=torch.Generator().manual_seed(0),
                                  **options)  # fmt: skip
        epsilons = []
        for t in range(30):
            i = policy.select()
            epsilons.append(policy.diagnostics()["epsilon"])
            policy.update(i, float(f(t, X[i, 0])))
        return policy, epsilons

    tested, epsilons = run(stationary, warmup=5, significance=0.01)
    vanilla, _ = run(stationary, warmup=10**6)  # ε = 0 throughout: BoTorch's SingleTaskGP on x
    assert epsilons[5:] == [0.0] * 25 and torch.equal(tested.train_X, vanilla.train_X)
    assert tested.diagnostics()["lr_statistic"] <= 5.42
    moved, epsilons = run(jump, warmup=5, significance=0.01)
    assert max(epsilons[1:15]) == 0.0 and min(epsilons[20:]) > 0.02  # the jump is found within five rounds
    assert moved.diagnostics()["lr_statistic"] > 5.41
