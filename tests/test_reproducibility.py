"""Reproducibility for every policy: same seed → bit-identical runs; ``state_dict`` round-trips mid-run."""

import io
import math

import pytest
import torch
from conftest import grid

from torch_advbandit import (
    IGPUCB,
    WGPUCB,
    APGExp3,
    KernelizedExp3,
    RestartingGPUCB,
    RLSKernelizedExp3,
    SlidingWindowGPUCB,
    UniformRandom,
)
from torch_advbandit.kernels import make_kernel

EXP3 = dict(eta=0.3, alpha=0.1, lam=1.0, beta=0.05)
FACTORIES = {
    "kernelized_exp3": lambda X, k, g: KernelizedExp3(X, k, 40, **EXP3, generator=g),
    "kernelized_exp3_lowrank": lambda X, k, g: KernelizedExp3(X, k, 40, **EXP3, estimator="lowrank", generator=g),
    "rls_kernelized_exp3": lambda X, k, g: RLSKernelizedExp3(X, k, 40, **EXP3, generator=g),
    "apg_exp3": lambda X, k, g: APGExp3(X, k, 40, generator=g),
    "uniform": lambda X, k, g: UniformRandom(X, None, 40, generator=g),
    "wgp_ucb": lambda X, k, g: WGPUCB(X, k, 40, discount=0.8, lam=0.05, generator=g),
    "igp_ucb": lambda X, k, g: IGPUCB(X, k, 40, lam=0.05, generator=g),
    "sw_gp_ucb": lambda X, k, g: SlidingWindowGPUCB(X, k, 40, lam=0.05, window=5, generator=g),
    "r_gp_ucb": lambda X, k, g: RestartingGPUCB(X, k, 40, lam=0.05, period=5, generator=g),
}


def make(name, seed, device):
    X = grid(30, device=device)
    return FACTORIES[name](X, make_kernel("matern52", 1), torch.Generator(device=device).manual_seed(seed))


def play(policy, rounds, offset=0):
    """Chosen indices and a per-round fingerprint (``P_t``, or ``β_t`` for GP-UCB), rewards from the index."""
    out = []
    for t in range(offset, offset + rounds):
        if hasattr(policy, "probabilities"):
            fingerprint = policy.probabilities().clone()
        else:
            fingerprint = policy.confidence_width() if policy.indices.numel() else float("nan")
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


@pytest.mark.parametrize("name", list(FACTORIES))
def test_same_seed_gives_a_bit_identical_run(name, device):
    same(play(make(name, 5, device), 12), play(make(name, 5, device), 12))


@pytest.mark.parametrize("name", list(FACTORIES))
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
