"""``horizon=None`` for the model-based policies: the horizon sets defaults only, so a policy without one makes
the choices of a policy with one wherever those defaults are given, runs past any round without a warning,
and refuses the defaults that need ``T``."""

import math
import warnings

import pytest
import torch

from torch_advbandit import IGPUCB, WGPUCB, RestartingGPUCB, SlidingWindowGPUCB, TimeVaryingGPUCB, UniformRandom
from torch_advbandit.kernels import make_kernel

X = torch.rand(60, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
K = make_kernel("se", 2, lengthscale=0.3)


def f(x, t):
    """A function of two variables that jumps at round 15."""
    return torch.sin(5 * x[:, 0] + (0.0 if t < 15 else 2.0)) + x[:, 1]


def play(policy, rounds=30):
    """An initial design of 4 rows, then ``rounds`` asks; the chosen indices."""
    policy.observe(X[:4], f(X[:4], 0).unsqueeze(-1))
    chosen = []
    for t in range(rounds):
        i = policy.select()
        chosen.append(i)
        policy.update(i, float(f(X[i : i + 1], t)) + 0.01 * t)
    return chosen


def seeded():
    return torch.Generator().manual_seed(0)


MAKERS = {
    "wgp_fixed": lambda T: WGPUCB(X, K, T, discount=0.9, lam=0.01, generator=seeded()),
    "wgp_auto_fitted": lambda T: WGPUCB(
        X, K, T, discount="auto", fit_hyperparameters=True, beta=2.0, generator=seeded()
    ),
    "igp": lambda T: IGPUCB(X, K, T, lam=0.01, generator=seeded()),
    "sw": lambda T: SlidingWindowGPUCB(X, K, T, window=10, lam=0.01, generator=seeded()),
    "restart": lambda T: RestartingGPUCB(X, K, T, period=12, lam=0.01, generator=seeded()),
    "tv_fixed": lambda T: TimeVaryingGPUCB(X, K, T, epsilon=0.05, beta=2.0, generator=seeded()),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_without_a_horizon_the_choices_are_those_of_a_known_horizon(name):
    # a horizon of 20 is run past (34 observations): the known-horizon policy warns, the other must not
    with warnings.catch_warnings(record=True) as known_warnings:
        warnings.simplefilter("always")
        known = play(MAKERS[name](20))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of running past a horizon
        unknown = play(MAKERS[name](None))
    assert unknown == known
    tuned = name != "tv_fixed"  # TV-GP-UCB's horizon is a time unit: running past it never warns
    assert any("past its horizon" in str(w.message) for w in known_warnings) == tuned


def test_the_default_noise_is_the_limit_of_igp_ucbs_as_the_horizon_grows():
    assert IGPUCB(X, K, 100).lam == pytest.approx(1.02)
    assert IGPUCB(X, K, None).lam == 1.0 == WGPUCB(X, K, None, discount=0.9).lam
    assert WGPUCB(X, K, 100, discount=0.9).lam == pytest.approx(1.02)  # lam may be omitted with a horizon too


def test_a_fitted_forgetting_rate_without_a_horizon_counts_time_in_observations():
    policy = TimeVaryingGPUCB(X, K, None, warmup=2, beta=2.0, generator=seeded())
    assert policy.time_unit == 1 and TimeVaryingGPUCB(X, K, 50).time_unit == 50
    assert policy.initial_lengthscale() == math.inf  # ε = 0 while warming up
    play(policy, rounds=6)  # 10 observations in 7 rounds
    assert policy.initial_lengthscale() == 2.0 * 10  # each fit of ℓ_τ starts at twice the observations so far
    model = policy.model()
    assert model.tau == 10.0  # the next observation's time, in observations
    inputs = model.model.train_inputs[0]
    assert inputs[:, -1].tolist() == policy.row_rounds.to(inputs.dtype).tolist()
    ell = policy.diagnostics()["time_lengthscale"]
    assert policy.diagnostics()["epsilon"] == pytest.approx(-math.expm1(-2.0 / ell))  # ε per observation


def test_a_fixed_forgetting_rate_means_the_same_kernel_whatever_the_time_unit():
    for T in (None, 7, 50):
        policy = TimeVaryingGPUCB(X, K, T, epsilon=0.2, fit_hyperparameters=False, generator=seeded())
        play(policy, rounds=3)
        covar = policy.model().model.covar_module
        Z = policy.model().model.train_inputs[0]
        time_factor = covar.time(Z[:1, -1:], Z[-1:, -1:]).to_dense().item()
        gap = int(policy.row_rounds[-1] - policy.row_rounds[0])
        assert time_factor == pytest.approx(0.8 ** (gap / 2))  # (1 − ε)^{|t − t'|/2}


def test_a_state_without_a_horizon_restores_and_is_refused_by_a_policy_with_one():
    policy = WGPUCB(X, K, None, discount="auto", fit_hyperparameters=True, beta=2.0, generator=seeded())
    play(policy, rounds=5)
    state = policy.state_dict()
    again = WGPUCB(X, K, None, discount="auto", fit_hyperparameters=True, beta=2.0)
    again.load_state_dict(state)
    assert again.select() == policy.select()
    other = WGPUCB(X, K, 30, discount="auto", fit_hyperparameters=True, beta=2.0)
    before = other.state_dict()
    with pytest.raises(ValueError, match="hyperparameters"):
        other.load_state_dict(state)
    assert other.state_dict()["hyperparameters"] == before["hyperparameters"] and other.t == 0


def test_random_takes_no_horizon_and_a_bad_horizon_is_still_refused():
    policy = UniformRandom(X, None, None, generator=seeded())
    policy.update(policy.select(), 1.0)
    assert policy.t == 1 and policy.horizon is None
    for bad in (0, -1):
        with pytest.raises(ValueError, match="horizon must be ≥ 1"):
            WGPUCB(X, K, bad, discount=0.9)
    with pytest.raises(TypeError, match="horizon must be an integer"):
        TimeVaryingGPUCB(X, K, 1.5)
