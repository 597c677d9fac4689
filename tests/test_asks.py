"""Warm starts and asynchronous asks of the GP-UCB family; the Exp3 family keeps refusing unasked rows."""

import pytest
import torch
from conftest import DT, grid

from torch_advbandit import IGPUCB, WGPUCB, KernelizedExp3, SlidingWindowGPUCB
from torch_advbandit.kernels import make_kernel


def wgp(seed=0, n=40, **kw):
    X = grid(n)
    kw.setdefault("discount", 0.95)
    return WGPUCB(
        X, make_kernel("se", 1, 0.2), 50, lam=0.01, beta=2.0, generator=torch.Generator().manual_seed(seed), **kw
    )


def test_an_initial_design_of_any_rows_is_observed_before_the_first_ask():
    policy = wgp()
    design = torch.tensor([[0.05], [0.333], [0.9]], dtype=DT)  # not rows of the candidate set
    policy.observe(design, torch.sin(6 * design))
    assert policy.t == 3 and policy.pending is None
    model = policy.model()
    torch.testing.assert_close(model.train_inputs[0], design)
    i = policy.select()
    assert isinstance(i, int)
    ucb = model.posterior(policy.candidates).mean.squeeze(-1) + 2.0 * model.posterior(
        policy.candidates
    ).variance.sqrt().squeeze(-1)
    assert i == int(ucb.argmax())  # the first ask already uses the design


def test_select_q_gives_distinct_points_and_more_asks_avoid_the_pending_ones():
    policy = wgp()
    policy.observe(policy.candidates[[3, 20, 33]], torch.tensor([[0.1], [0.8], [0.2]], dtype=DT))
    first = policy.select(3)
    assert first.shape == (3,) and first.dtype == torch.long and len(set(first.tolist())) == 3
    more = policy.select(2)  # while three are pending
    assert len(set(more.tolist()) | set(first.tolist())) == 5
    assert policy.pending == tuple(first.tolist() + more.tolist())
    assert policy.select() == int(first[0])  # select() is idempotent: the oldest pending ask
    policy.update(int(more[1]), 0.4)  # answered in any order
    policy.update(first[[2, 0]], torch.tensor([0.3, 0.5], dtype=DT))
    assert policy.pending == (int(first[1]), int(more[0])) and policy.t == 6
    # an observation of a pending row answers it; an unasked row joins as an observation
    policy.observe(
        torch.cat([policy.candidates[[int(more[0])]], torch.tensor([[0.5]], dtype=DT)]), torch.zeros(2, 1, dtype=DT)
    )
    assert policy.pending == int(first[1]) and policy.t == 8


def test_asks_without_a_model_are_uniform_and_distinct():
    policy = wgp(n=10)
    asks = policy.select(10)
    assert sorted(asks.tolist()) == list(range(10))
    with pytest.raises(ValueError, match="exceed"):
        policy.select(1)  # every candidate is pending
    assert policy.pending == tuple(asks.tolist())


def test_pending_asks_round_trip_through_the_state():
    a, b = wgp(seed=1), wgp(seed=2)
    a.observe(a.candidates[:4], torch.rand(4, 1, generator=torch.Generator().manual_seed(0), dtype=DT))
    asks = a.select(3)
    b.load_state_dict(a.state_dict())
    assert b.pending == tuple(asks.tolist())
    assert torch.equal(b.select(2), a.select(2))  # same generator state: the same quasi-MC seed


@pytest.mark.parametrize("cls", [IGPUCB, SlidingWindowGPUCB])
def test_every_gp_ucb_variant_takes_a_warm_start(cls):
    X = grid(30)
    policy = cls(X, make_kernel("se", 1, 0.2), 20, lam=0.01, generator=torch.Generator().manual_seed(0))
    policy.observe(X[:5], torch.rand(5, 1, generator=torch.Generator().manual_seed(1), dtype=DT))
    i = policy.select()
    policy.update(i, 0.1)
    assert policy.t == 6


def test_exp3_refuses_unasked_rows_and_says_why():
    X = grid(20)
    policy = KernelizedExp3(X, make_kernel("se", 1), 10, eta=0.3, alpha=0.1, lam=1.0, beta=0.05)
    with pytest.raises(ValueError, match="importance weights need x_t ~ P_t"):
        policy.observe(X[:3], torch.zeros(3, 1, dtype=DT))
    i = policy.select()
    with pytest.raises(ValueError, match="importance weights"):
        policy.observe(X[(i + 1) % 20 :][:1], torch.zeros(1, 1, dtype=DT))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda p: p.observe(torch.zeros(2, 2, dtype=DT), torch.zeros(2, 1, dtype=DT)), "shape"),
        (lambda p: p.observe(torch.zeros(2, 1, dtype=DT), torch.zeros(3, 1, dtype=DT)), "shape"),
        (lambda p: p.observe(torch.zeros(1, 1, dtype=DT), torch.full((1, 1), float("nan"), dtype=DT)), "Y"),
        (lambda p: p.update(p.select(2), [0.1]), "2 values"),
        (lambda p: p.update([int(p.select(2)[0])] * 2, [0.1, 0.2]), "pending"),
        (lambda p: p.select(0), "q"),
    ],
    ids=["wrong-d", "wrong-Y", "nan-Y", "short-rewards", "twice-one-ask", "q-zero"],
)
def test_bad_asks_and_observations_are_refused_and_change_nothing(call, match):
    policy = wgp(seed=3)
    policy.observe(policy.candidates[:3], torch.tensor([[0.1], [0.2], [0.3]], dtype=DT))
    twin = wgp(seed=3)
    twin.observe(twin.candidates[:3], torch.tensor([[0.1], [0.2], [0.3]], dtype=DT))
    with pytest.raises((ValueError, TypeError), match=match):
        call(policy)
    if policy.pending is not None and twin.pending is None:  # the call's own select(2) is legitimate
        twin.select(2)
    a, b = policy.state_dict(), twin.state_dict()
    assert a["pending"] == b["pending"] and torch.equal(a["train_X"], b["train_X"]) and a["t"] == b["t"]
    assert torch.equal(a["generator_state"], b["generator_state"])
