"""The policy contract, written once and run for every factory in tests/policy_factories.py.

Protocol (select / update / observe), reproducibility (same seed → bit-identical runs; a
``state_dict`` round trip mid-run through a file), settings (a state from another configuration is
refused), and all-or-nothing behaviour: every rejected call leaves ``state_dict()``, ``P_t`` (or
``β_t``) and the next draws bit-equal to a twin that never saw the call.
"""

import io
import math

import pytest
import torch
from conftest import grid, same_state
from policy_factories import FACTORIES, make

from torch_advbandit import TimeVaryingGPUCB
from torch_advbandit.kernels import make_kernel
from torch_advbandit.policies import RandomizedPolicy
from torch_advbandit.policies.time_varying_gp_ucb import critical_value

NAMES = list(FACTORIES)


def play(policy, rounds, offset=0):
    """Chosen indices and a per-round fingerprint (``P_t``, or ``β_t`` for GP-UCB), rewards from the index."""
    out = []
    for t in range(offset, offset + rounds):
        if isinstance(policy, RandomizedPolicy):
            fingerprint = policy.probabilities().clone()
        else:
            fingerprint = policy.confidence_width() if policy.train_X.shape[0] else float("nan")
        i = policy.select()
        policy.update(i, math.sin(0.7 * t + 0.3 * i))
        out.append((i, fingerprint))
    return out


def same(a, b):
    assert [i for i, _ in a] == [i for i, _ in b]
    for (_, x), (_, y) in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor):
            assert torch.equal(x, y)  # bit-identical, not merely close
        else:
            assert x == y or (math.isnan(x) and math.isnan(y))


@pytest.mark.parametrize("name", NAMES)
def test_protocol(name, device):
    policy = make(name, 3, device)
    assert policy.t == 0 and policy.pending is None
    i = policy.select()
    assert isinstance(i, int) and 0 <= i < policy.n and policy.pending == i
    assert policy.select() == i  # one draw per round: a second select returns the pending index
    policy.update(i, 0.5)
    assert policy.t == 1 and policy.pending is None
    with pytest.raises(ValueError, match="pending"):
        policy.update(i, 0.5)  # no pending selection any more


@pytest.mark.parametrize("name", NAMES)
def test_observe_is_update_in_botorch_form(name, device):
    a, b = make(name, 4, device), make(name, 4, device)
    for t in range(5):
        i, j = a.select(), b.select()
        assert i == j
        a.update(i, math.cos(t + i))
        b.observe(b.candidates[j : j + 1], torch.tensor([[math.cos(t + j)]], dtype=b.candidates.dtype, device=device))
    same_state(a.state_dict(), b.state_dict())


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_a_bit_identical_run(name, device):
    same(play(make(name, 5, device), 12), play(make(name, 5, device), 12))


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trips_mid_run_through_a_file(name, device):
    a = make(name, 11, device)
    play(a, 7)
    a.select()  # a pending draw is part of the state
    buffer = io.BytesIO()
    torch.save(a.state_dict(), buffer)
    buffer.seek(0)
    b = make(name, 999, device)  # another seed: everything random must come from the state
    b.load_state_dict(torch.load(buffer, weights_only=False))
    i = a._pending
    assert b._pending == i
    for p in (a, b):
        p.update(i, 0.25)
    same(play(a, 8, offset=8), play(b, 8, offset=8))


@pytest.mark.parametrize("name", NAMES)
def test_a_state_from_another_configuration_is_refused(name):
    a = make(name, 1)
    play(a, 3)
    with pytest.raises(ValueError, match="hyperparameters"):
        make(name, 1, horizon=41).load_state_dict(a.state_dict())
    with pytest.raises(ValueError, match="candidates"):
        make(name, 1, n=31).load_state_dict(a.state_dict())


def _tampered(policy, **changes):
    state = policy.state_dict()
    state.update(changes)
    return state


BAD_CALLS = {
    "NaN reward": lambda p: p.update(p.select(), float("nan")),
    "reward beyond ±1e100": lambda p: p.update(p.select(), 1e306),
    "index not the pending one": lambda p: p.update((p.select() + 1) % p.n, 0.1),
    "index out of range": lambda p: p.update(p.n, 0.1),
    "reward of the wrong type": lambda p: p.update(p.select(), "0.1"),
    "observe with rows that are not the pending ones": lambda p: (
        p.observe(p.candidates[(p.select() + 1) % p.n :][:1], torch.zeros(1, 1, dtype=p.candidates.dtype))
        if not p._takes_any_rows
        else p.observe(p.candidates[:2], torch.tensor([[0.1], [float("nan")]], dtype=p.candidates.dtype))
    ),
    "observe with a NaN row": lambda p: p.observe(
        p.candidates[:1] * float("nan"), torch.zeros(1, 1, dtype=p.candidates.dtype)
    ),
    "state with a negative round": lambda p: p.load_state_dict(_tampered(p, t=-1)),
    "state with a garbage generator state": lambda p: p.load_state_dict(
        _tampered(p, generator_state=torch.zeros(3, dtype=torch.uint8))
    ),
    "state with a pending index out of range": lambda p: p.load_state_dict(_tampered(p, pending=p.n)),
    "state from another candidate set": lambda p: p.load_state_dict(
        _tampered(p, fingerprint={**p.fingerprint(), "candidates": (p.n, 1, "torch.float64", 0)})
    ),
    "state with an exploration distribution that is not one": lambda p: p.load_state_dict(
        _tampered(p, exploration_probs=torch.full((p.n,), 1.0, dtype=p.candidates.dtype))
    ),
    "state from another horizon": lambda p: p.load_state_dict(
        _tampered(p, hyperparameters={**p.hyperparameters(), "horizon": p.horizon + 1})
    ),
}


@pytest.mark.parametrize("bad", list(BAD_CALLS))
@pytest.mark.parametrize("name", NAMES)
def test_a_rejected_call_leaves_the_policy_as_its_twin(name, bad):
    """Bit-equal ``state_dict``, fingerprint and next draws to a twin that never saw the call."""
    policy, twin = make(name, 8), make(name, 8)
    play(policy, 4)
    play(twin, 4)
    with pytest.raises((ValueError, TypeError)):
        BAD_CALLS[bad](policy)
    if policy.pending is not None and twin.pending is None:  # the bad call's own select() is legitimate
        twin.select()
    same_state(policy.state_dict(), twin.state_dict())
    same(play(policy, 6, offset=4), play(twin, 6, offset=4))


def _kernel_of(policy):
    return getattr(policy, "kernel", None) or policy.estimator.kernel


def raising_forward(monkeypatch, cls, failure):
    """Count the evaluations of kernel class ``cls``; the ``calls["raise_at"]``-th raises ``failure("injected")``."""
    real, calls = cls.forward, {"made": 0, "raise_at": None}

    def counted(self, *args, **kwargs):
        calls["made"] += 1
        if calls["made"] == calls["raise_at"]:
            raise failure("injected")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, "forward", counted)
    return calls


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("name", ["rls_kernelized_exp3", "wgp_ucb", "igp_ucb", "sw_gp_ucb", "r_gp_ucb"])
def test_a_kernel_that_raises_once_inside_an_update_leaves_no_trace(name, failure):
    """The update's kernel evaluation raises (out of memory, Ctrl-C): generator and state as before, retry works."""
    n = 600 if name == "rls_kernelized_exp3" else 30  # 600 > 192·log(10): the dictionary is sampled
    policy, twin = make(name, 2, n=n), make(name, 2, n=n)
    play(policy, 3)
    play(twin, 3)
    i, j = policy.select(), twin.select()
    assert i == j
    kernel = _kernel_of(policy)

    def boom(*args, **kwargs):
        del kernel.forward  # raise once: the retry evaluates the kernel again
        raise failure("injected")

    kernel.forward = boom
    with pytest.raises(failure, match="injected"):
        policy.update(i, 0.3)
    same_state(policy.state_dict(), twin.state_dict())
    policy.update(i, 0.3)  # the retry succeeds and adds the observation once
    twin.update(j, 0.3)
    same_state(policy.state_dict(), twin.state_dict())
    same(play(policy, 4, offset=4), play(twin, 4, offset=4))


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("name", ["wgp_ucb_adaptive", "wgp_ucb_tested", "wgp_ucb_time_varying", "tv_gp_ucb_fitted"])
def test_a_kernel_that_raises_inside_a_fitting_select_leaves_no_trace(name, failure, monkeypatch):
    """A select that refits the hyperparameters (and, with ``time_varying_significance``, fits and tests the
    space-time model; TV-GP-UCB fits and tests its forgetting rate) is stopped at its first, middle and last kernel
    evaluation: state and diagnostics as before each time."""

    def fitting(seed):
        if name in FACTORIES:
            return make(name, seed)
        return TimeVaryingGPUCB(grid(30), make_kernel("matern52", 1), 40, significance=0.01, beta=2.0,
                                generator=torch.Generator().manual_seed(seed))  # fmt: skip

    policy, twin = fitting(2), fitting(2)
    play(policy, 12)
    play(twin, 12)
    calls = raising_forward(monkeypatch, type(_kernel_of(policy)), failure)
    twin_state, reported = twin.state_dict(), repr(policy.diagnostics())
    j = twin.select()  # counts the kernel evaluations of a whole select
    evaluations = calls["made"]
    if name == "wgp_ucb_time_varying":  # the space-time model was fitted, tested and selected on
        assert twin.diagnostics()["time_varying_statistic"] > critical_value(0.01)
    for at in sorted({1, evaluations // 2, evaluations}):
        calls.update(made=0, raise_at=at)
        with pytest.raises(failure, match="injected"):
            policy.select()
        same_state(policy.state_dict(), twin_state)
        assert repr(policy.diagnostics()) == reported  # the last test's statistic, not a half-run one
    calls.update(made=0, raise_at=None)
    assert policy.select() == j
    same_state(policy.state_dict(), twin.state_dict())
    monkeypatch.undo()
    policy.update(j, 0.4)
    twin.update(j, 0.4)
    same(play(policy, 3, offset=13), play(twin, 3, offset=13))


@pytest.mark.parametrize("name", ["kernelized_exp3", "kernelized_exp3_lowrank", "rls_kernelized_exp3", "apg_exp3"])
def test_an_update_that_would_make_the_state_non_finite_is_refused(name):
    policy, twin = make(name, 6), make(name, 6)
    play(policy, 2)
    play(twin, 2)
    i = policy.select()
    twin.select()
    real = policy.estimator._estimate
    policy.estimator._estimate = lambda *args: tuple(torch.full_like(v, math.inf) for v in real(*args))
    with pytest.raises(ValueError, match="non-finite"):
        policy.update(i, 0.5)
    del policy.estimator._estimate
    same_state(policy.state_dict(), twin.state_dict())
    assert bool(torch.isfinite(policy.probabilities()).all())


def test_bad_calls_in_the_middle_of_a_six_dimensional_loop_leave_no_trace(monkeypatch):
    """A user's loop in 6-D: ``ScaleKernel(Matern-5/2, ARD)``, the automatic memory with the tested space-time model,
    an initial design, then asks of two with pending points. Mid-run, an observation with a NaN row is refused and a
    kernel that raises inside a refitting ask (first, middle and last evaluation) leaves state, pending asks and
    diagnostics as a twin's that never saw the calls; both then go on alike."""
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from torch.quasirandom import SobolEngine

    from torch_advbandit import WGPUCB

    X = SobolEngine(6, scramble=True, seed=5).draw(128).to(torch.float64)

    def f(t, x):  # a bump whose centre moves across the cube
        centre = torch.full((6,), 0.2 + 0.05 * t, dtype=torch.float64)
        return torch.exp(-4.0 * ((x - centre) ** 2).sum(-1))

    def user():
        kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=6)).to(torch.float64)
        return WGPUCB(X, kernel, None, discount="auto", lam=0.01, beta=2.0, fit_hyperparameters=True,
                      time_varying_significance=0.01, generator=torch.Generator().manual_seed(4))  # fmt: skip

    policy, twin = user(), user()
    g = torch.Generator().manual_seed(6)
    design = torch.randperm(128, generator=g)[:14]
    noise = 0.02 * torch.randn(40, generator=g, dtype=torch.float64)
    rounds = 10  # the forgetting rate is tested from the tenth distinct time on
    Y0 = (f(0, X[design]) + 0.02 * torch.randn(14, generator=g, dtype=torch.float64)).unsqueeze(-1)
    for p in (policy, twin):
        p.observe(X[design], Y0)
    for t in range(1, rounds):  # batches of two
        asks = policy.select(2)
        assert torch.equal(asks, twin.select(2)) and len(set(asks.tolist())) == 2
        Y = (f(t, X[asks]) + noise[2 * t : 2 * t + 2]).unsqueeze(-1)
        policy.observe(X[asks], Y)
        twin.observe(X[asks], Y)
    asks = policy.select(2)
    assert torch.equal(asks, twin.select(2))
    bad = torch.tensor([[0.3], [math.nan]], dtype=torch.float64)
    with pytest.raises(ValueError, match="Y"):
        policy.observe(X[asks], bad)
    same_state(policy.state_dict(), twin.state_dict())
    assert policy.pending == twin.pending and len(policy.pending) == 2

    calls = raising_forward(monkeypatch, type(policy.kernel.base_kernel), RuntimeError)
    twin_state, reported = twin.state_dict(), repr(policy.diagnostics())
    more = twin.select(1)  # a third ask given the two pending ones
    assert twin.diagnostics()["time_varying_statistic"] > critical_value(0.01)  # asked on the space-time model
    evaluations = calls["made"]
    assert evaluations > 3
    for at in sorted({1, evaluations // 2, evaluations}):
        calls.update(made=0, raise_at=at)
        with pytest.raises(RuntimeError, match="injected"):
            policy.select(1)
        same_state(policy.state_dict(), twin_state)
        assert repr(policy.diagnostics()) == reported and len(policy.pending) == 2
    calls.update(made=0, raise_at=None)
    assert torch.equal(policy.select(1), more)
    monkeypatch.undo()
    asks = torch.cat([asks, more])
    Y = (f(rounds, X[asks]) + noise[30:33]).unsqueeze(-1)
    for p in (policy, twin):
        p.observe(X[asks], Y)
        assert p.pending is None
    same_state(policy.state_dict(), twin.state_dict())
    assert torch.equal(policy.select(2), twin.select(2))
    assert repr(policy.diagnostics()) == repr(twin.diagnostics())  # repr: NaN statistics compare equal
