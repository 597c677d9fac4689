import math

import pytest
import torch
from conftest import DT, grid, oracle_A, oracle_kernel, regret_ratios_to_uniform, same_state

from torch_advbandit import KernelizedExp3, UniformRandom
from torch_advbandit.exploration import exploration_distribution
from torch_advbandit.kernels import make_kernel
from torch_advbandit.parameters import paper_parameters

PARAMS = dict(eta=0.2, alpha=0.3, lam=1.0, beta=0.1)


def make_exp3(n=40, horizon=50, seed=0, device="cpu", **overrides):
    X = grid(n, device)
    kw = {**PARAMS, **overrides}
    gen = torch.Generator(device=device).manual_seed(seed)
    return KernelizedExp3(X, make_kernel("matern52", 1), horizon, **kw, generator=gen)


def test_exp3_follows_algorithm_1_step_by_step(device):
    """Replay Alg. 1 with the feature-space oracle: P_t, f̂_t, width and S_t at every round."""
    n, T = 30, 20
    pol = make_exp3(n, T, device=device)
    X = grid(n)
    K = oracle_kernel("matern52", X, X, 0.3)
    c = PARAMS["lam"] / T
    pi = exploration_distribution("mvr", make_kernel("matern52", 1), X, noise=1.0, length=math.ceil(T * 0.3))
    S = torch.zeros(n, dtype=DT)
    for t in range(8):
        w = torch.exp(PARAMS["eta"] * (S - S.max()))
        P = (1 - PARAMS["alpha"]) * w / w.sum() + PARAMS["alpha"] * pi
        torch.testing.assert_close(pol.probabilities().cpu(), P, rtol=1e-10, atol=1e-14)
        i = pol.select()
        y = math.sin(3.0 * t + i)
        pol.update(i, y)
        A = oracle_A(K, P, c)
        S = S + A[:, i] * y + PARAMS["beta"] * A.diagonal().sqrt()
        torch.testing.assert_close(pol.cumulative_reward.cpu(), S, rtol=1e-7, atol=1e-7)
    assert pol.t == 8


def test_probabilities_are_a_distribution_even_with_huge_cumulative_rewards(device):
    pol = make_exp3(device=device)
    pol.cumulative_reward = torch.linspace(-1e8, 1e8, 40, dtype=DT, device=device)
    pol._log_probs = None
    P = pol.probabilities()
    assert torch.isfinite(P).all() and (P >= 0).all()
    assert float(P.sum()) == pytest.approx(1.0, abs=1e-12)
    # the exploration mixture keeps every MVR point at probability ≥ α·π(x)
    assert (P >= PARAMS["alpha"] * pol.exploration_probs * (1 - 1e-12)).all()
    i = pol.select()
    pol.update(i, 1.0)
    assert torch.isfinite(pol.cumulative_reward).all()


def test_state_dict_round_trip_continues_identically(device):
    a = make_exp3(seed=3, device=device)
    for t in range(6):
        i = a.select()
        a.update(i, math.cos(t + i))
    a.select()  # a pending draw is part of the state too
    b = make_exp3(seed=99, device=device)
    b.load_state_dict(a.state_dict())
    for t in range(6):
        i, j = a.select(), b.select()
        assert i == j
        a.update(i, math.sin(t * i))
        b.update(j, math.sin(t * j))
    torch.testing.assert_close(a.probabilities(), b.probabilities(), rtol=0, atol=0)


def test_state_dict_from_a_different_configuration_is_rejected():
    a = make_exp3()
    b = make_exp3(eta=0.3)
    with pytest.raises(ValueError, match="hyperparameters"):
        b.load_state_dict(a.state_dict())
    with pytest.raises(ValueError, match="candidates"):
        make_exp3(n=41).load_state_dict(a.state_dict())


def snapshot(pol):
    s = pol.state_dict()
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in s.items()}


@pytest.mark.parametrize(
    "index, reward, error, match",
    [
        (None, float("nan"), ValueError, "reward"),
        (None, float("inf"), ValueError, "reward"),
        (None, "1.0", TypeError, "reward"),
        ("other", 1.0, ValueError, "pending"),
        (40, 1.0, ValueError, "index"),
        (-1, 1.0, ValueError, "index"),
        (1.5, 1.0, TypeError, "index"),
    ],
)
@pytest.mark.parametrize("cls", ["exp3", "uniform"])
def test_rejected_update_leaves_policy_unchanged(index, reward, error, match, cls):
    pol = (
        make_exp3() if cls == "exp3" else UniformRandom(grid(40), None, 10, generator=torch.Generator().manual_seed(0))
    )
    i = pol.select()
    pol.update(i, 0.5)
    i = pol.select()
    before = snapshot(pol)
    P = pol.probabilities()
    bad_index = i if index is None else ((i + 1) % 40 if index == "other" else index)
    with pytest.raises(error, match=match):
        pol.update(bad_index, reward)
    same_state(before, pol.state_dict())
    assert torch.equal(pol.probabilities(), P)
    pol.update(i, 0.2)  # the pending selection is still valid


def test_update_without_select_is_rejected():
    pol = make_exp3()
    with pytest.raises(ValueError, match="without a pending select"):
        pol.update(0, 1.0)
    i = pol.select()
    assert pol.select() == i  # select is idempotent within a round
    pol.update(i, 1.0)
    with pytest.raises(ValueError, match="without a pending select"):
        pol.update(i, 1.0)


def test_observe_is_the_botorch_form_of_update():
    a, b = make_exp3(seed=1), make_exp3(seed=1)
    i = a.select()
    assert b.select() == i
    a.update(i, 0.7)
    b.observe(b.candidates[i : i + 1], torch.tensor([[0.7]], dtype=DT))
    torch.testing.assert_close(a.cumulative_reward, b.cumulative_reward)
    b.select()
    with pytest.raises(ValueError, match="pending candidate"):
        b.observe(b.candidates[(b.pending + 1) % 40 :][:1], torch.tensor([[0.7]], dtype=DT))
    with pytest.raises(ValueError, match="shape"):
        b.observe(b.candidates[:2], torch.tensor([[0.7], [0.1]], dtype=DT))


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(horizon=0), "horizon"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=1.5), "alpha"),
        (dict(eta=0.0), "eta"),
        (dict(eta=-1.0), "eta"),
        (dict(lam=0.0), "lam"),
        (dict(beta=-0.1), "beta"),
        (dict(exploration="g-optimal"), "exploration"),
        (dict(estimator="approximate"), "estimator"),
        (dict(candidates=torch.rand(10, dtype=DT)), "candidates"),
        (dict(candidates=torch.tensor([[0.0], [float("nan")]], dtype=DT)), "candidates"),
        (dict(candidates=torch.empty(0, 1, dtype=DT)), "candidates"),
        (dict(kernel="se"), "kernel"),
    ],
)
def test_constructor_rejects_bad_input(overrides, match):
    kw = dict(candidates=grid(10), kernel=make_kernel("se", 1), horizon=20, **PARAMS)
    kw.update(overrides)
    with pytest.raises((ValueError, TypeError), match=match):
        KernelizedExp3(kw.pop("candidates"), kw.pop("kernel"), kw.pop("horizon"), **kw)


def test_generator_on_another_device_is_rejected():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA to build a generator on another device")
    with pytest.raises(ValueError, match="generator"):
        KernelizedExp3(grid(10), make_kernel("se", 1), 20, **PARAMS, generator=torch.Generator(device="cuda"))


def test_single_candidate_and_alpha_one():
    pol = KernelizedExp3(torch.zeros(1, 2, dtype=DT), make_kernel("se", 2), 5, **{**PARAMS, "alpha": 1.0})
    for _ in range(5):
        assert pol.select() == 0
        pol.update(0, 1.0)
    assert torch.equal(pol.probabilities(), torch.ones(1, dtype=DT))


def test_uniform_random_protocol(device):
    pol = UniformRandom(grid(25, device), None, 10, generator=torch.Generator(device=device).manual_seed(0))
    P = pol.probabilities()
    assert P.device.type == device.type
    torch.testing.assert_close(P, torch.full((25,), 1 / 25, dtype=DT, device=device))
    draws = []
    for _ in range(200):
        i = pol.select()
        pol.update(i, 0.0)
        draws.append(i)
    assert len(set(draws)) > 15


def test_cpu_and_cuda_agree_up_to_rounding():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cpu, gpu = make_exp3(device="cpu"), make_exp3(device="cuda")
    torch.testing.assert_close(cpu.exploration_probs, gpu.exploration_probs.cpu())
    for t in range(5):  # replay the CPU draws on CUDA (their RNG streams differ)
        i = cpu.select()
        gpu._pending = i
        cpu.update(i, math.sin(t + i))
        gpu.update(i, math.sin(t + i))
        torch.testing.assert_close(cpu.cumulative_reward, gpu.cumulative_reward.cpu(), rtol=1e-9, atol=1e-9)


def test_kernelized_exp3_beats_uniform_against_adaptive_adversary():
    """Statistical check with fixed seeds and a wide margin (regret ratio well below 0.5)."""
    params = paper_parameters("se", 300, 1)
    ratios = regret_ratios_to_uniform(lambda X, k, T, g: KernelizedExp3(X, k, T, **params, generator=g), "se")
    assert max(ratios) < 0.5, ratios


@pytest.mark.parametrize("estimator", ["exact", "lowrank"])
def test_float32_policy_is_an_explicit_choice_close_to_float64(estimator, device):
    """float32 candidates on ``device`` against a float64 CPU run replaying the same draws."""
    X64 = grid(60)
    params = paper_parameters("matern52", 100, 1)
    kw = {} if estimator == "exact" else dict(estimator="lowrank", lowrank_tolerance=1e-6)
    a = KernelizedExp3(X64, make_kernel("matern52", 1), 100, **params, **kw, generator=torch.Generator().manual_seed(0))
    b = KernelizedExp3(
        X64.to(device, torch.float32),
        make_kernel("matern52", 1),
        100,
        **params,
        **kw,
        generator=torch.Generator(device=device).manual_seed(0),
    )
    assert a.probabilities().dtype == DT and b.probabilities().dtype == torch.float32
    assert b.probabilities().device.type == device.type
    for t in range(10):
        i = a.select()
        b.select()
        b._pending = i  # replay the CPU's draws
        a.update(i, math.sin(t + i))
        b.update(i, math.sin(t + i))
    torch.testing.assert_close(b.probabilities().double().cpu(), a.probabilities(), rtol=1e-3, atol=1e-6)
