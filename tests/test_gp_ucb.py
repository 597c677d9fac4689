"""The discounted GP on BoTorch, the four non-stationary GP-UCB policies, the drift environments."""

import math

import pytest
import torch
from botorch.models import SingleTaskGP
from conftest import DT, grid, oracle_kernel
from gpytorch.means import ZeroMean

from torch_advbandit import IGPUCB, WGPUCB, RestartingGPUCB, SlidingWindowGPUCB
from torch_advbandit.environments import FunctionSequenceEnvironment, abrupt_environment, slowly_varying_environment
from torch_advbandit.experiments import run_sweep
from torch_advbandit.experiments.drift import DriftTrialConfig, figure1_configs
from torch_advbandit.experiments.drift_report import figure1_markdown, plot_figure1
from torch_advbandit.kernels import make_kernel
from torch_advbandit.models import MAX_LOG_AGE_WEIGHT, discounted_gp
from torch_advbandit.parameters import nonstationary_discount, nonstationary_memory


def weighted_posterior(Xtr, Ytr, Xte, ages, discount, lam, ell=0.3):
    """[Deng2022], Eqs. 3–4 evaluated directly with W = diag(sqrt w), w_s = η^{age_s} (weights normalised by w_t)."""
    w = torch.tensor([discount**a for a in ages.tolist()], dtype=Xtr.dtype, device=Xtr.device)
    W = torch.diag(w.sqrt())
    K = oracle_kernel("se", Xtr, Xtr, ell)
    kx = W @ oracle_kernel("se", Xtr, Xte, ell)
    M = W @ K @ W + lam * torch.eye(len(w), dtype=Xtr.dtype, device=Xtr.device)
    mean = (kx.T @ torch.linalg.solve(M, W @ Ytr)).reshape(-1)
    var = 1.0 - (kx * torch.linalg.solve(M, kx)).sum(0)
    return mean, var


def data(t, seed=0, device="cpu"):
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(t, 1, generator=gen, dtype=DT).to(device)
    Y = torch.randn(t, 1, generator=gen, dtype=DT).to(device)
    return X, Y


@pytest.mark.parametrize("discount,lam", [(0.9, 0.5), (0.97, 1.0), (0.6, 0.05)])
def test_discounted_gp_is_seed_2_eqs_3_4(device, discount, lam):
    X, Y = data(30, device=device)
    Xte = grid(20, device)
    post = discounted_gp(X, Y, make_kernel("se", 1, device=device), discount=discount, lam=lam).posterior(Xte)
    mean, var = weighted_posterior(X, Y, Xte, torch.arange(29, -1, -1), discount, lam)
    torch.testing.assert_close(post.mean.reshape(-1), mean, atol=1e-10, rtol=1e-8)
    torch.testing.assert_close(post.variance.reshape(-1), var, atol=1e-10, rtol=1e-8)
    assert post.mean.device.type == device.type and post.mean.dtype == DT


def test_discount_one_is_a_plain_single_task_gp():
    X, Y = data(25, seed=1)
    k = make_kernel("matern52", 1)
    ours = discounted_gp(X, Y, k, discount=1.0, lam=0.3).posterior(grid(15))
    plain = SingleTaskGP(
        X, Y, train_Yvar=torch.full_like(Y, 0.3), covar_module=k, mean_module=ZeroMean(), outcome_transform=None
    ).eval()
    ref = plain.posterior(grid(15))
    torch.testing.assert_close(ours.mean, ref.mean.detach(), atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(ours.variance, ref.variance.detach(), atol=1e-12, rtol=1e-10)


def test_small_lambda_is_not_clamped_by_the_noise_floor():
    X, Y = data(12, seed=2)
    lam = 1e-8  # below GPyTorch's float64 floor (1e-6)
    model = discounted_gp(X, Y, make_kernel("se", 1), discount=0.9, lam=lam)
    assert float(model.likelihood.noise.min()) == pytest.approx(lam, rel=1e-12)
    mean, var = weighted_posterior(X, Y, grid(9), torch.arange(11, -1, -1), 0.9, lam)
    post = model.posterior(grid(9))
    torch.testing.assert_close(post.mean.reshape(-1), mean, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(post.variance.reshape(-1), var, atol=1e-8, rtol=1e-6)


def test_long_histories_never_overflow_and_forgotten_points_change_nothing():
    t, discount = 400, 0.5  # η^{-(t−1)} = 2^399 ≈ 1e120: fine in float64, but η^{-t} for t ~ 1100 is not
    X, Y = data(t, seed=3)
    ages = torch.arange(t - 1, -1, -1)
    model = discounted_gp(X, Y, make_kernel("se", 1), discount=discount, lam=0.2)
    kept = model.train_inputs[0].shape[-2]
    assert kept == math.floor(MAX_LOG_AGE_WEIGHT / math.log(2)) + 1 < t
    mean, var = weighted_posterior(X, Y, grid(10), ages, discount, 0.2)
    post = model.posterior(grid(10))
    torch.testing.assert_close(post.mean.reshape(-1), mean, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(post.variance.reshape(-1), var, atol=1e-12, rtol=1e-10)
    far = discounted_gp(X, Y, make_kernel("se", 1), discount=0.9, lam=0.2, ages=ages.to(DT) + 10_000.0 - 8_000.0)
    assert torch.isfinite(far.posterior(grid(5)).mean).all()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(discount=0.0, lam=1.0), "discount"),
        (dict(discount=1.5, lam=1.0), "discount"),
        (dict(discount=float("nan"), lam=1.0), "discount"),
        (dict(discount=0.9, lam=0.0), "lam"),
        (dict(discount=0.9, lam=-1.0), "lam"),
    ],
)
def test_discounted_gp_rejects_bad_parameters(kwargs, match):
    X, Y = data(5)
    with pytest.raises(ValueError, match=match):
        discounted_gp(X, Y, make_kernel("se", 1), **kwargs)


def test_discounted_gp_rejects_bad_data():
    X, Y = data(5)
    k = make_kernel("se", 1)
    with pytest.raises(ValueError, match="train_Y"):
        discounted_gp(X, Y[:4], k, discount=0.9, lam=1.0)
    with pytest.raises(ValueError, match="finite"):
        discounted_gp(X, Y.clone().fill_(float("nan")), k, discount=0.9, lam=1.0)
    with pytest.raises(ValueError, match="ages"):
        discounted_gp(X, Y, k, discount=0.9, lam=1.0, ages=-torch.ones(5, dtype=DT))


def play(policy, values, rounds):
    for _ in range(rounds):
        i = policy.select()
        policy.update(i, float(values[i]))


def make(cls, X, T=60, **kw):
    return cls(X, make_kernel("se", 1), T, generator=torch.Generator().manual_seed(0), **kw)


def test_each_algorithm_hands_the_model_exactly_its_observations():
    X = grid(40)
    f = torch.sin(5 * X[:, 0])
    sw, rs = make(SlidingWindowGPUCB, X, window=7), make(RestartingGPUCB, X, period=10)
    wgp, igp = make(WGPUCB, X, discount=0.8, lam=1.0), make(IGPUCB, X)
    for p in (sw, rs, wgp, igp):
        play(p, f, 23)
    assert sw.training_set().tolist() == list(range(16, 23))
    assert rs.training_set().tolist() == [20, 21, 22]
    assert wgp.training_set().tolist() == igp.training_set().tolist() == list(range(23))
    model = sw.model()
    torch.testing.assert_close(model.train_inputs[0], sw.train_X[16:])
    torch.testing.assert_close(model.train_targets, sw.rewards[16:])
    torch.testing.assert_close(model.likelihood.noise, torch.full((7,), sw.lam, dtype=DT))
    noise = wgp.model().likelihood.noise
    torch.testing.assert_close(noise, wgp.lam * 0.8 ** -torch.arange(22, -1, -1, dtype=DT))
    assert igp.lam == pytest.approx(1 + 2 / 60)
    play(rs, f, 7)  # round 30: restart, nothing handed over, a uniform draw
    assert rs.training_set().numel() == 0 and rs.model() is None
    rs.select()
    assert math.isnan(rs.diagnostics()["beta"]) and rs.diagnostics()["model_size"] == 0


def test_beta_is_the_hand_computed_theory_value():
    X = grid(30)
    f = torch.cos(4 * X[:, 0])
    wgp = make(WGPUCB, X, discount=0.9, lam=0.5, noise_bound=0.1, delta=0.05)
    igp = make(IGPUCB, X, noise_bound=0.1, delta=0.05)
    play(wgp, f, 12)
    play(igp, f, 12)
    Xs = wgp.train_X
    u = 0.9 ** torch.arange(11, -1, -1, dtype=DT)
    K = oracle_kernel("se", Xs, Xs, 0.3)
    gamma_bar = 0.5 * torch.logdet(torch.eye(12, dtype=DT) + (u[:, None] * K * u[None]) / 0.5)
    expected = 2.0 + 0.1 / math.sqrt(0.5) * math.sqrt(2 * math.log(1 / 0.05) + 2 * float(gamma_bar))
    assert wgp.confidence_width() == pytest.approx(expected, rel=1e-10)
    uniform = make(WGPUCB, X, discount=0.9, lam=0.5, noise_bound=0.1, delta=0.05, time_uniform=True)
    play(uniform, f, 12)
    assert uniform.confidence_width() > wgp.confidence_width()
    Xi = igp.train_X
    gamma = 0.5 * torch.logdet(torch.eye(12, dtype=DT) + oracle_kernel("se", Xi, Xi, 0.3) / igp.lam)
    expected = 2.0 + 0.1 * math.sqrt(2 * (float(gamma) + 1 + math.log(1 / 0.05)))
    assert igp.confidence_width() == pytest.approx(expected, rel=1e-10)
    fixed = make(IGPUCB, X, beta=0.7, beta_scale=0.5)
    play(fixed, f, 3)
    assert fixed.confidence_width() == pytest.approx(0.35)


def test_selection_is_the_ucb_argmax_of_the_posterior(device):
    X = grid(50, device)
    f = torch.sin(7 * X[:, 0])
    policy = WGPUCB(
        X, make_kernel("se", 1, device=device), 40, discount=0.9, lam=0.5, generator=torch.Generator(device=device)
    )
    for _ in range(15):
        model, beta = policy.model(), None
        i = policy.select()
        if model is not None:
            beta = policy.confidence_width()
            post = model.posterior(X)
            ucb = post.mean.reshape(-1) + beta * post.variance.reshape(-1).sqrt()
            assert float(ucb[i]) == pytest.approx(float(ucb.max()), rel=1e-12, abs=1e-12)
        policy.update(i, float(f[i]))
    assert policy.train_X.device.type == device.type


def test_bad_updates_leave_the_policy_unchanged_and_state_round_trips():
    X = grid(30)
    f = torch.sin(3 * X[:, 0])
    policy = make(SlidingWindowGPUCB, X, window=5)
    play(policy, f, 8)
    i = policy.select()
    before = policy.state_dict()
    for index, reward in [(i, float("nan")), (i, float("inf")), ((i + 1) % 30, 0.0)]:
        with pytest.raises(ValueError):
            policy.update(index, reward)
    after = policy.state_dict()
    assert torch.equal(after["train_X"], before["train_X"]) and torch.equal(after["rewards"], before["rewards"])
    assert after["t"] == before["t"] and after["pending"] == i
    clone = make(SlidingWindowGPUCB, X, window=5)
    clone.load_state_dict(before)
    policy.update(i, float(f[i]))
    clone.update(i, float(f[i]))
    play(policy, f, 5)
    play(clone, f, 5)
    assert torch.equal(policy.train_X, clone.train_X)
    with pytest.raises(ValueError, match="hyperparameters"):
        make(SlidingWindowGPUCB, X, window=6).load_state_dict(before)


@pytest.mark.parametrize(
    "cls,kwargs,match",
    [
        (WGPUCB, dict(discount=1.2, lam=1.0), "discount"),
        (WGPUCB, dict(discount=0.9, lam=0.0), "lam"),
        (SlidingWindowGPUCB, dict(window=0), "window"),
        (RestartingGPUCB, dict(period=0), "period"),
        (IGPUCB, dict(delta=1.0), "delta"),
        (IGPUCB, dict(beta_scale=0.0), "beta_scale"),
    ],
)
def test_bad_parameters_name_the_argument(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(cls, grid(10), **kwargs)


def test_theory_window_and_discount_defaults():
    gamma = (math.log(500) ** 2) / math.log(math.log(500))
    assert nonstationary_memory("se", 500, 1) == math.ceil(gamma**0.25 * math.sqrt(500))
    assert nonstationary_memory("se", 500, 1, variation_budget=4.0) == math.ceil(gamma**0.25 * math.sqrt(125))
    assert nonstationary_discount("se", 500, 1) == pytest.approx(1 - 1 / nonstationary_memory("se", 500, 1))
    assert SlidingWindowGPUCB(grid(10), make_kernel("matern32", 1), 500).window == nonstationary_memory(
        "matern32", 500, 1
    )
    from gpytorch.kernels import LinearKernel

    with pytest.raises(ValueError, match="window explicitly"):
        SlidingWindowGPUCB(grid(10), LinearKernel(), 500)


def test_abrupt_and_slowly_varying_environments_follow_the_seed():
    X, env = abrupt_environment(torch.Generator().manual_seed(0))
    F = env.functions
    assert X.shape == (100, 1) and F.shape == (500, 100)
    assert torch.equal(F[0], F[99]) and torch.equal(F[100], F[199]) and torch.equal(F[200], F[499])
    assert not torch.equal(F[99], F[100]) and not torch.equal(F[199], F[200])
    K = oracle_kernel("se", X, X, 0.2)
    coeffs = torch.linalg.solve(K + 1e-10 * torch.eye(100, dtype=DT), F[0])  # f = Σ a_i k(·, x_i)
    assert float(coeffs.abs().max()) < 1.0 + 1e-2
    X, env = slowly_varying_environment(torch.Generator().manual_seed(1), horizon=100)
    F = env.functions  # row t−1 holds f_t, t = 1..T
    step = F[1] - F[0]  # (f5 − f4)·2/T
    f4 = F[0] - step
    torch.testing.assert_close(F[48] - F[47], step)  # linear in the first half
    f5 = f4 + step * 50  # t = T/2 reaches f5
    torch.testing.assert_close(F[49], f5)
    torch.testing.assert_close(F[99] - F[98], F[98] - F[97])  # linear in the second half, f5 → f6
    torch.testing.assert_close(F[50], f5 + (F[99] - f5) * (2 * 51 - 100) / 100)


def test_observations_are_noisy_and_the_learner_never_gets_the_noiseless_value():
    env = FunctionSequenceEnvironment(torch.zeros(4, 3, dtype=DT), 0.05, generator=torch.Generator().manual_seed(0))
    ys = [env.observe(0, 1) for _ in range(200)]
    assert all(y != 0.0 for y in ys)
    assert 0.04 < torch.tensor(ys).std().item() < 0.06
    with pytest.raises(ValueError, match="noise_std"):
        FunctionSequenceEnvironment(torch.zeros(2, 2, dtype=DT), -1.0)


def test_drift_trials_run_resume_and_report(tmp_path):
    configs = [DriftTrialConfig("slow", p, s, horizon=20) for s in range(2) for p in ("wgp_ucb", "igp_ucb")]
    records = run_sweep(configs, tmp_path, backend="serial", progress=False)
    for r in records:
        regret = torch.tensor(r.expected_regret)
        assert len(regret) == 20 and bool((regret.diff() >= -1e-12).all())  # dynamic regret only grows
    again = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert [r.chosen for r in again] == [r.chosen for r in records]
    table = figure1_markdown(records)
    assert "| slow | WGP-UCB | 20 | 2 |" in table and "IGP-UCB" in table
    assert plot_figure1(records, tmp_path).stat().st_size > 0
    assert len(figure1_configs(100)) == 800
    with pytest.raises(ValueError, match="scenario"):
        DriftTrialConfig("sudden", "wgp_ucb", 0)
