"""GP-UCB that adapts to the data: the weighted marginal likelihood, fitted hyperparameters and λ,
any kernel scale, honest noise for new points, and the discount chosen online."""

import math

import pytest
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.sampling import SobolQMCNormalSampler
from conftest import DT, same_state
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood

from torch_advbandit import IGPUCB, WGPUCB, RestartingGPUCB, SlidingWindowGPUCB
from torch_advbandit.discount_selection import AUTO_DISCOUNTS, predictive_log_likelihood, weighted_stats
from torch_advbandit.kernels import kernel_matrix, make_kernel
from torch_advbandit.models import discounted_gp, fitted_lambda
from torch_advbandit.weighted_likelihood import WeightedStandardize


def data(t=25, d=2, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(t, d, generator=g, dtype=DT)
    Y = scale * torch.sin(5 * X[:, :1]) + 0.1 * torch.randn(t, 1, generator=g, dtype=DT)
    return X, Y


def matern(d, outputscale=1.8, lengthscale=0.4):
    k = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d)).to(DT)
    k.outputscale = outputscale
    k.base_kernel.lengthscale = lengthscale
    return k


@pytest.mark.parametrize("standardize", [False, True])
def test_weighted_marginal_likelihood_matches_a_dense_computation(standardize):
    X, Y = data()
    eta, lam = 0.9, 0.05
    model = discounted_gp(X, Y, matern(2), discount=eta, lam=lam, standardize=standardize)
    model.train()
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with torch.no_grad():
        value = float(mll(model(X), model.train_targets, X))  # as BoTorch's fit calls it
        assert float(mll(model(X), model.train_targets)) == value  # and without the inputs
    # dense: y ~ N(0, K + λ·diag(η^{-age})) on the (weighted-)standardised outcomes, plus the prior on λ
    t = X.shape[0]
    ages = torch.arange(t - 1, -1, -1, dtype=DT)
    y = Y.squeeze(-1)
    lam_model = lam
    if standardize:
        w = eta**ages
        v = w / w.sum()
        mean = (v * y).sum()
        std = ((v * (y - mean) ** 2).sum() / (1 - (v**2).sum())).sqrt()
        y = (y - mean) / std
        lam_model = lam / float(std) ** 2
    r = torch.cdist(X / 0.4, X / 0.4)
    K = 1.8 * (1 + math.sqrt(5) * r + 5 / 3 * r**2) * torch.exp(-math.sqrt(5) * r)
    cov = K + torch.diag(lam_model * eta ** (-ages))
    log_prior = torch.distributions.LogNormal(-4.0, 1.0).log_prob(torch.tensor(lam_model, dtype=DT))  # BoTorch's on λ
    dense = (torch.distributions.MultivariateNormal(torch.zeros(t, dtype=DT), cov).log_prob(y) + log_prior) / t
    assert value == pytest.approx(float(dense), rel=1e-7)  # the hyperparameters round-trip through softplus


def test_fit_gpytorch_mll_works_on_an_unfitted_model_and_fits_every_hyperparameter():
    X, Y = data(t=40, d=2)
    model = discounted_gp(X, Y, matern(2), discount=0.95, lam=0.3, fit=False)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))  # nothing frozen
    after = model.state_dict()
    for name in (
        "covar_module.raw_outputscale",
        "covar_module.base_kernel.raw_lengthscale",
        "likelihood.noise_covar.raw_lam",
    ):
        assert not torch.equal(before[name], after[name]), name
    # ARD: the second input does not matter, its lengthscale grows past the first's
    ls = model.covar_module.base_kernel.lengthscale.squeeze()
    assert float(ls[1].detach()) > 2 * float(ls[0].detach())
    # the fitted λ is near the noise variance the data was made with (0.1²), far from the start 0.3
    assert 1e-4 < fitted_lambda(model) < 0.05


def test_weighted_standardize_uses_the_age_weights():
    Y = torch.tensor([[100.0], [1.0], [3.0]], dtype=DT)
    w = torch.tensor([1e-12, 1.0, 1.0], dtype=DT)
    tf = WeightedStandardize(w)
    Y_tf, _ = tf(Y)
    assert float(tf.means) == pytest.approx(2.0, rel=1e-9) and float(tf.stdvs) == pytest.approx(math.sqrt(2), rel=1e-6)
    assert weighted_stats(Y.squeeze(-1), w.log()) == pytest.approx((2.0, math.sqrt(2)), rel=1e-6)
    tf.eval()
    torch.testing.assert_close(tf.untransform(Y_tf)[0], Y)


def test_new_points_get_lambda_not_the_mean_inflated_noise():
    X, Y = data(t=12, d=1)
    lam = 0.02
    model = discounted_gp(X, Y, make_kernel("se", 1), discount=0.7, lam=lam)
    Xte = torch.rand(5, 1, dtype=DT)
    f = model.posterior(Xte)
    y = model.posterior(Xte, observation_noise=True)
    torch.testing.assert_close(y.variance - f.variance, torch.full_like(f.variance, lam))
    # a fantasy at x with noise λ: its posterior variance at x is σ²λ/(σ² + λ)
    x = Xte[:1]
    fantasy = model.fantasize(x, SobolQMCNormalSampler(torch.Size([2])))
    s2 = float(f.variance[0])
    assert float(fantasy.posterior(x).variance[0, 0]) == pytest.approx(s2 * lam / (s2 + lam), rel=1e-6)


@pytest.mark.parametrize("cls", [WGPUCB, IGPUCB, SlidingWindowGPUCB, RestartingGPUCB])
def test_every_gp_ucb_policy_runs_with_a_scaled_matern_kernel(cls):
    X = torch.rand(200, 3, generator=torch.Generator().manual_seed(1), dtype=DT)
    kwargs = dict(lam=0.01, generator=torch.Generator().manual_seed(0))
    if cls is WGPUCB:
        kwargs["discount"] = 0.95
    policy = cls(X, matern(3), 10, **kwargs)
    assert policy.kernel_scale == pytest.approx(1.8)
    for _ in range(5):
        i = policy.select()
        policy.update(i, float(X[i].sum()))
    assert policy.t == 5


def test_fitted_policy_learns_the_scale_and_the_lengthscales():
    X = torch.rand(300, 2, generator=torch.Generator().manual_seed(2), dtype=DT)
    f = 4.0 * torch.sin(6 * X[:, 0])  # the second input is irrelevant
    policy = WGPUCB(X, matern(2, 1.0, 0.3), 30, discount=1.0, lam=0.1, fit_hyperparameters=True, beta=2.0,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
    for _ in range(25):
        i = policy.select()
        policy.update(i, float(f[i]))
    ls = policy.kernel.base_kernel.lengthscale.squeeze()
    assert float(ls[1]) > float(ls[0]) and policy.lam < 0.1
    state = policy.state_dict()
    twin = WGPUCB(X, matern(2, 1.0, 0.3), 30, discount=1.0, lam=0.1, fit_hyperparameters=True, beta=2.0,
                  generator=torch.Generator().manual_seed(5))  # fmt: skip
    twin.load_state_dict(state)
    assert twin.select() == policy.select() and torch.equal(twin.kernel.base_kernel.lengthscale, ls.unsqueeze(0))


def _auto_run(values, seed=0, fitted=False, policy_out=None):
    """WGP-UCB with discount='auto' on a 1-D grid, the rewards ``values[t](x)`` (noise 0.05 when fitted); the memory
    ``(η, since)`` after each round."""
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, make_kernel("se", 1, 0.15), len(values), discount="auto", lam=1e-3, beta=1.0,
                    fit_hyperparameters=fitted, generator=torch.Generator().manual_seed(seed))  # fmt: skip
    noise = torch.Generator().manual_seed(seed + 1)
    chosen = []
    for f in values:
        i = policy.select()
        policy.update(i, float(f(X[i, 0])) + (0.05 * float(torch.randn((), generator=noise)) if fitted else 0.0))
        chosen.append((policy.discount, policy.since))
    if policy_out is not None:
        policy_out.append(policy)
    return chosen


def test_fitted_auto_discount_is_calibrated_keeps_everything_when_stationary_and_forgets_a_jump():
    out = []
    chosen = _auto_run([lambda x: math.sin(6 * x)] * 30 + [lambda x: -2 * math.sin(6 * x)] * 10, fitted=True,
                       policy_out=out)  # fmt: skip
    assert chosen[20:30] == [(1.0, 0)] * 10  # stationary: all the data
    assert any(since >= 30 for _, since in chosen[30:35])  # within a few rounds of the jump: no row before it
    assert all(since >= 30 for _, since in chosen[-3:])
    policy = out[0]
    assert not torch.equal(policy.discount_calibration, torch.ones(len(AUTO_DISCOUNTS), dtype=DT))
    state = policy.state_dict()
    assert torch.equal(state["discount_calibration"], policy.discount_calibration)
    X = policy.candidates
    twin = WGPUCB(X, make_kernel("se", 1, 0.15), 40, discount="auto", lam=1e-3, beta=1.0, fit_hyperparameters=True,
                  generator=torch.Generator().manual_seed(9))  # fmt: skip
    twin.load_state_dict(state)
    assert torch.equal(twin.discount_calibration, policy.discount_calibration)
    bad = dict(state, discount_calibration=-policy.discount_calibration)
    with pytest.raises(ValueError, match="discount_calibration"):
        twin.load_state_dict(bad)
    assert torch.equal(twin.discount_calibration, policy.discount_calibration)  # unchanged


def test_discount_scores_use_the_calibration_before_the_observation_and_then_update_it():
    from torch_advbandit.discount_selection import CALIBRATION_MEMORY, SCORE_MEMORY, NewRow
    from torch_advbandit.discount_selection import OUTLIER_PROBABILITY as EPS
    from torch_advbandit.policies.adaptation import discount_scores

    X = torch.linspace(0, 1, 6, dtype=DT).unsqueeze(-1)
    Y, ages, k = torch.sin(4 * X.squeeze(-1)), torch.arange(5, -1, -1, dtype=DT), make_kernel("se", 1, 0.3)
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, X[:1] + 0.05).squeeze(-1)
    scores = torch.linspace(-1, 1, len(AUTO_DISCOUNTS), dtype=DT)
    calibration = torch.linspace(0.5, 3, len(AUTO_DISCOUNTS), dtype=DT)
    row = NewRow(K, k_new, 1.0, Y, 0.3, 0.01, standardize=True)
    new, c = discount_scores(scores, calibration, row, calibrate=True)
    for j, eta in enumerate(AUTO_DISCOUNTS):
        lp, z2 = predictive_log_likelihood(K, k_new, 1.0, Y, ages, 0.3, 0.01, eta, standardize=True,
                                           variance_scale=float(calibration[j]), outlier_probability=EPS)  # fmt: skip
        assert float(new[j]) == pytest.approx(SCORE_MEMORY * float(scores[j]) + lp, rel=1e-12)
        assert float(c[j]) == pytest.approx(CALIBRATION_MEMORY * float(calibration[j]) + (1 - CALIBRATION_MEMORY) * z2)
    plain, same = discount_scores(scores, calibration, row)
    assert torch.equal(same, calibration)  # uncalibrated: c_η = 1, the calibration untouched
    for j, eta in enumerate(AUTO_DISCOUNTS):
        lp, _ = predictive_log_likelihood(
            K, k_new, 1.0, Y, ages, 0.3, 0.01, eta, standardize=True, outlier_probability=EPS
        )
        assert float(plain[j]) == pytest.approx(SCORE_MEMORY * float(scores[j]) + lp, rel=1e-12)


def test_auto_discount_keeps_everything_on_a_stationary_objective():
    chosen = _auto_run([lambda x: math.sin(6 * x)] * 40)
    assert chosen[-10:] == [(1.0, 0)] * 10


def test_auto_discount_forgets_within_a_few_rounds_after_a_jump():
    chosen = _auto_run([lambda x: math.sin(6 * x)] * 30 + [lambda x: -2 * math.sin(6 * x)] * 10)
    assert chosen[29] == (1.0, 0)  # before the jump
    assert chosen[35:] == [(1.0, 30)] * 5  # within a few rounds of it: every row since it


def test_rows_observed_together_are_not_scored_but_later_rows_are():
    X = torch.linspace(0, 1, 60, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, make_kernel("se", 1, 0.15), 30, discount="auto", lam=1e-3, beta=1.0,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
    design = X[::10]
    policy.observe(design, torch.sin(6 * design))  # an initial design: no information about change over time
    assert torch.equal(policy.discount_scores, torch.zeros(len(AUTO_DISCOUNTS), dtype=torch.float64))
    assert policy.discount == 1.0 and policy.train_X.shape[0] == 6
    i = policy.select()
    policy.update(i, math.sin(6 * float(X[i, 0])))
    assert bool((policy.discount_scores != 0).all())


def test_the_margin_keeps_the_longest_memory_close_to_the_best():
    from torch_advbandit.policies.change_points import WARMUP, ChangePoints

    def chosen_discount(scores, margin):  # no change point, warmed up: the choice among the discounts
        empty = ChangePoints.none()
        eta, since = ChangePoints(empty.positions, empty.scores, empty.calibration, WARMUP + 1).chosen(
            scores, 30, margin
        )
        assert since == 0
        return eta

    scores = torch.tensor([-3.0, -2.5, -1.0, 0.0, -0.5, -4.0, -9.0], dtype=torch.float64)
    assert chosen_discount(scores, margin=0.0) == AUTO_DISCOUNTS[3]
    assert chosen_discount(scores, margin=1.0) == AUTO_DISCOUNTS[2]
    assert chosen_discount(scores, margin=3.0) == 1.0
    assert chosen_discount(torch.zeros(len(AUTO_DISCOUNTS), dtype=torch.float64), margin=0.0) == 1.0


def test_predictive_log_likelihood_is_the_gaussian_density():
    X = torch.linspace(0, 1, 6, dtype=DT).unsqueeze(-1)
    Y = torch.sin(4 * X.squeeze(-1))
    ages = torch.arange(5, -1, -1, dtype=DT)
    k = make_kernel("se", 1, 0.3)
    x = X[:1] + 0.05
    K, k_new = kernel_matrix(k, X, X), kernel_matrix(k, X, x).squeeze(-1)
    for eta, standardize in [(1.0, False), (0.8, False), (0.8, True)]:
        lp, z2 = predictive_log_likelihood(K, k_new, 1.0, Y, ages, 0.3, 0.01, eta, standardize=standardize)
        scaled, z2_again = predictive_log_likelihood(
            K, k_new, 1.0, Y, ages, 0.3, 0.01, eta, standardize=standardize, variance_scale=2.5
        )
        y, mean, std = Y, 0.0, 1.0
        if standardize:
            w = eta**ages
            mean, std = weighted_stats(Y, w.log())
            y = (Y - mean) / std
        model = discounted_gp(X, y.unsqueeze(-1), k, discount=eta, lam=0.01 / std**2, ages=ages)
        post = model.posterior(x)  # the dense BoTorch posterior, independently
        mu, var = mean + std * float(post.mean), std**2 * float(post.variance) + 0.01
        assert lp == pytest.approx(-0.5 * (math.log(2 * math.pi * var) + (0.3 - mu) ** 2 / var), rel=1e-9)
        assert z2 == z2_again == pytest.approx((0.3 - mu) ** 2 / var, rel=1e-9)
        wide = 2.5 * var  # a calibrated predictive: the variance scaled
        assert scaled == pytest.approx(-0.5 * (math.log(2 * math.pi * wide) + (0.3 - mu) ** 2 / wide), rel=1e-9)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(discount="fast"), ValueError, "discount"),
        (dict(discount=0.9, fit_every=-1), ValueError, "fit_every"),
        (dict(discount=0.9, fit_every=0), ValueError, "fit_every"),
        (dict(discount=0.9, fit_hyperparameters="yes"), TypeError, "fit_hyperparameters"),
        (dict(discount=0.9, standardize=1), TypeError, "standardize"),
    ],
)
def test_bad_adaptation_settings_are_named(kwargs, error, match):
    X = torch.rand(10, 1, dtype=DT)
    with pytest.raises(error, match=match):
        WGPUCB(X, make_kernel("se", 1), 5, lam=0.1, **kwargs)


def test_observe_with_a_nan_row_is_refused_and_changes_nothing():
    X = torch.rand(10, 1, generator=torch.Generator().manual_seed(0), dtype=DT)
    policy = WGPUCB(X, make_kernel("se", 1), 5, discount="auto", lam=0.1, fit_hyperparameters=True,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
    i = policy.select()
    policy.update(i, 0.3)
    j = policy.select()
    before = policy.state_dict()
    with pytest.raises(ValueError):
        policy.observe(X[j : j + 1], torch.tensor([[float("nan")]], dtype=DT))
    same_state(before, policy.state_dict())  # the fitted kernel's state too
    assert AUTO_DISCOUNTS[0] == 1.0


def test_fits_start_from_botorch_initial_noise():
    from botorch.models import SingleTaskGP

    from torch_advbandit.models import weighted_gp

    X, Y = data()
    vanilla = SingleTaskGP(X, Y)  # BoTorch's defaults: Standardize and its noise prior's mode
    ours = weighted_gp(X, Y, torch.ones(X.shape[0], dtype=DT), matern(2), None, standardize=True)
    assert float(ours.likelihood.lam) == pytest.approx(float(vanilla.likelihood.noise), rel=1e-9)
    assert fitted_lambda(ours) == pytest.approx(float(vanilla.likelihood.noise) * float(Y.var()), rel=1e-9)


def test_discounted_gp_without_lam_starts_and_fits_as_vanilla_botorch():
    """``lam=None``: BoTorch's initial noise; with ``η = 1``, fitted, on BoTorch's kernel, vanilla BoTorch's
    fitted ``SingleTaskGP`` (same posterior); with ``η < 1`` the same start, on the weighted scale."""
    from botorch.models import SingleTaskGP
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

    from torch_advbandit.weighted_likelihood import INITIAL_LAMBDA

    X, Y = data()
    Y = 3.0 * Y + 1.0  # not already standardised
    vanilla = SingleTaskGP(X, Y)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(vanilla.likelihood, vanilla))
    kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=2).to(DT)
    ours = discounted_gp(X, Y, kernel, discount=1.0, fit=True)
    test = torch.rand(9, 2, dtype=DT, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        a, b = vanilla.eval().posterior(test), ours.posterior(test)
    assert torch.allclose(a.mean, b.mean, atol=1e-8) and torch.allclose(a.variance, b.variance, atol=1e-8)
    unfitted = discounted_gp(X, Y, kernel, discount=0.8, standardize=True)
    assert float(unfitted.likelihood.lam) == pytest.approx(INITIAL_LAMBDA, rel=1e-12)
    assert float(discounted_gp(X, Y, kernel, discount=0.8).likelihood.lam) == pytest.approx(INITIAL_LAMBDA)


def test_the_automatic_memory_on_a_stationary_benchmark_case_is_vanilla_botorch_until_it_averages():
    """The drifting benchmark's stationary Branin (its fourth seed, 2048 candidates): the memory stays at ``η = 1`` and
    every fit starts where BoTorch's does, so until selections average the memories (more than ``WARMUP`` lone rows
    scored: the first eleven rounds) the choices are vanilla BoTorch's; from then on the shorter memories' weight
    moves them. (With each fit started from the policy's ``lam``, they parted at the eleventh round.)"""
    from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig
    from torch_advbandit.policies.change_points import WARMUP

    ours = BoTorchDriftTrialConfig("branin", "stationary", "wgp_auto_fitted", 3, horizon=15).run()
    vanilla = BoTorchDriftTrialConfig("branin", "stationary", "botorch_ucb", 3, horizon=15).run()
    assert set(ours.diagnostics["discount"]) == {1.0} and set(ours.diagnostics["since"]) == {0.0}
    assert ours.chosen[: WARMUP + 1] == vanilla.chosen[: WARMUP + 1]


def test_fitted_gp_ucb_without_forgetting_is_vanilla_botorch():
    """η = 1, fitted, standardised: the same model as ``SingleTaskGP`` + ``fit_gpytorch_mll`` (BoTorch's kernel,
    priors, constant mean, noise prior), so the same UCB choices as a vanilla BoTorch loop."""
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

    from torch_advbandit.experiments.botorch_drift import BoTorchUCB, problem_values

    X, F = problem_values("branin", "stationary", 8, 256)
    kernel = get_covar_module_with_dim_scaled_prior(ard_num_dims=2).to(DT)
    ours = WGPUCB(X, kernel, 20, discount=1.0, lam=0.1, beta=2.0, fit_hyperparameters=True,
                  generator=torch.Generator().manual_seed(0))  # fmt: skip
    vanilla = BoTorchUCB(X, 20, beta=2.0, generator=torch.Generator().manual_seed(0))
    noise = 0.1 * torch.randn(20, generator=torch.Generator().manual_seed(1), dtype=DT)
    design = torch.arange(0, 256, 40)
    for policy in (ours, vanilla):
        policy.observe(X[design], (F[0, design] + noise[: design.numel()]).unsqueeze(-1))
    for t in range(8):
        i, j = ours.select(), vanilla.select()
        assert i == j, f"round {t}: {i} != {j}"
        for policy in (ours, vanilla):
            policy.update(i, float(F[t, i] + noise[10 + t]))


@pytest.mark.parametrize("cls, memory", [(RestartingGPUCB, dict(period=4)), (SlidingWindowGPUCB, dict(window=3))])
def test_fitted_windowed_policies_run_across_their_boundaries(cls, memory):
    X = torch.rand(50, 2, generator=torch.Generator().manual_seed(4), dtype=DT)
    policy = cls(X, matern(2), 20, lam=0.1, beta=2.0, fit_hyperparameters=True, fit_every=2,
                 generator=torch.Generator().manual_seed(0), **memory)  # fmt: skip
    for _ in range(9):  # the restarts at 4 and 8 leave nothing (then one point) to fit
        i = policy.select()
        policy.update(i, float(X[i, 0]))
    assert policy.t == 9


def test_the_oracle_fits_only_the_rows_since_the_jump_and_is_vanilla_without_one():
    """``botorch_oracle`` of the drifting benchmark: from the jump round ``t₀`` on, its choice is that of a
    vanilla BoTorch loop that saw only the rows observed since ``t₀``; before ``t₀`` (and in a scenario
    without a jump) it is vanilla BoTorch."""
    from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig, BoTorchUCB, problem_values

    X, F = problem_values("branin", "abrupt", 8, 256)
    design = torch.arange(0, 256, 40)  # 7 rows, observed at t = 0
    t0 = design.numel() + 4
    oracle = BoTorchUCB(X, 20, beta=2.0, forget_before=t0, generator=torch.Generator().manual_seed(0))
    vanilla = BoTorchUCB(X, 20, beta=2.0, generator=torch.Generator().manual_seed(0))
    for policy in (oracle, vanilla):
        policy.observe(X[design], F[0, design].unsqueeze(-1))
    since = []
    for t in range(8):
        i = oracle.select()
        if t < 4:
            assert i == vanilla.select()
        elif since:  # the oracle's model: only the rows of rounds ≥ t₀
            fresh = BoTorchUCB(X, 20, beta=2.0, generator=torch.Generator().manual_seed(0))
            fresh.observe(X[since], F[t, since].unsqueeze(-1))
            assert i == fresh.select(), f"round {t}"
        oracle.update(i, float(F[t, i]))
        if t < 4:
            vanilla.update(i, float(F[t, i]))
        else:
            since.append(i)
    assert oracle.row_rounds.tolist() == [0] * 7 + list(range(7, 15))
    same = [BoTorchDriftTrialConfig("branin", "stationary", m, 0, horizon=6, num_candidates=64).run() for m in
            ("botorch_ucb", "botorch_oracle")]  # fmt: skip
    assert same[0].chosen == same[1].chosen and same[0].expected_regret == same[1].expected_regret


@pytest.mark.parametrize("significance", [None, 0.01])
def test_the_automatic_memory_fits_the_kernel_on_every_row_it_keeps_whatever_its_discount(significance):
    """With ``discount="auto"`` the chosen ``η`` weighs the posterior only: in rounds where the memory is a discount
    below 1 (every row kept), the kernel and ``λ`` are vanilla BoTorch's fit of a ``SingleTaskGP`` on every row (with
    ``significance``, the change test's own fit on every row, reused)."""
    from botorch.models import SingleTaskGP
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

    X = torch.linspace(0, 1, 101, dtype=DT).unsqueeze(-1)
    policy = WGPUCB(X, get_covar_module_with_dim_scaled_prior(ard_num_dims=1).to(DT), 60, discount="auto", lam=0.1,
                    beta=2.0, fit_hyperparameters=True, significance=significance,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
    noise = torch.Generator().manual_seed(1)
    design = torch.arange(0, 101, 20)
    policy.observe(X[design], torch.sin(6 * X[design]))
    checked = 0
    for t in range(40):  # the objective drifts: sin(6x + 0.12 t)
        i = policy.select()
        policy.update(i, float(torch.sin(6 * X[i, 0] + 0.12 * t) + 0.05 * torch.randn((), generator=noise, dtype=DT)))
        if policy.discount < 1.0 and policy.since == 0:
            gp = SingleTaskGP(policy.train_X, policy.rewards.unsqueeze(-1),
                              covar_module=get_covar_module_with_dim_scaled_prior(ard_num_dims=1).to(DT))  # fmt: skip
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
            ours = float(policy.kernel.lengthscale)
            assert ours == pytest.approx(float(gp.covar_module.lengthscale.detach()), rel=1e-4), f"round {t}"
            lam = float(gp.likelihood.noise.detach()) * float(gp.outcome_transform.stdvs.square())
            assert policy.lam == pytest.approx(lam, rel=1e-3), f"round {t}"
            checked += 1
    assert checked >= 2  # the memory left η = 1 on the drift (with the test, until it accepts a change)
