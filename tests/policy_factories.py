"""The one table of policy factories that the contract tests run against (tests/test_policy_contract.py,
tests/test_devices.py). A new policy gets every contract check by adding one line here.

Each factory is ``(candidates, kernel, generator, horizon) -> Policy`` with small, fast settings.
"""

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
    TimeVaryingGPUCB,
    UniformRandom,
)
from torch_advbandit.kernels import make_kernel

EXP3 = dict(eta=0.3, alpha=0.1, lam=1.0, beta=0.05)


def _auto_fitted(X, k, g, T, **tests):
    """``WGPUCB(discount="auto")`` with hyperparameters and ``λ`` refitted every third observation, and ``tests``."""
    return WGPUCB(X, k, T, discount="auto", lam=0.05, fit_hyperparameters=True, fit_every=3, beta=2.0, generator=g,
                  **tests)  # fmt: skip


FACTORIES = {
    "kernelized_exp3": lambda X, k, g, T: KernelizedExp3(X, k, T, **EXP3, generator=g),
    "kernelized_exp3_lowrank": lambda X, k, g, T: KernelizedExp3(X, k, T, **EXP3, estimator="lowrank", generator=g),
    # no horizon (epochs of 64, 128, … rounds); λ carries the factory's T so that configurations differ
    "kernelized_exp3_anytime": lambda X, k, g, T: KernelizedExp3(X, k, None, lam=T / 40, generator=g),
    # the rewards' unit learnt from the rewards seen (the range is part of the state)
    "kernelized_exp3_auto_units": lambda X, k, g, T: KernelizedExp3(X, k, T, **EXP3, reward_scale="auto", generator=g),
    "rls_kernelized_exp3": lambda X, k, g, T: RLSKernelizedExp3(X, k, T, **EXP3, generator=g),
    "apg_exp3": lambda X, k, g, T: APGExp3(X, k, T, generator=g),
    "uniform": lambda X, k, g, T: UniformRandom(X, None, T, generator=g),
    "wgp_ucb": lambda X, k, g, T: WGPUCB(X, k, T, discount=0.8, lam=0.05, generator=g),
    # no horizon (it sets defaults only); λ carries the factory's T so that configurations differ
    "wgp_ucb_anytime": lambda X, k, g, T: WGPUCB(X, k, None, discount=0.8, lam=T / 800, generator=g),
    # discount chosen online, hyperparameters and λ refitted every third observation
    "wgp_ucb_adaptive": lambda X, k, g, T: _auto_fitted(X, k, g, T),
    # the same with a change at an unknown round tested at level 0.01 on every observation
    "wgp_ucb_tested": lambda X, k, g, T: _auto_fitted(X, k, g, T, significance=0.01),
    # the same with selections on the space-time model where its fitted forgetting rate passes a test at level 0.01
    "wgp_ucb_time_varying": lambda X, k, g, T: _auto_fitted(X, k, g, T, time_varying_significance=0.01),
    "igp_ucb": lambda X, k, g, T: IGPUCB(X, k, T, lam=0.05, generator=g),
    "sw_gp_ucb": lambda X, k, g, T: SlidingWindowGPUCB(X, k, T, lam=0.05, window=5, generator=g),
    "r_gp_ucb": lambda X, k, g, T: RestartingGPUCB(X, k, T, lam=0.05, period=5, generator=g),
    # a fixed forgetting rate (the fitted modes are tested in tests/test_time_varying_gp_ucb.py: a fit a round)
    "tv_gp_ucb": lambda X, k, g, T: TimeVaryingGPUCB(X, k, T, epsilon=0.1, fit_hyperparameters=False, generator=g),
}


def make(name, seed=0, device="cpu", *, n=30, horizon=40, kernel=None):
    """Policy ``name`` on an ``n``-point grid of ``[0, 1]`` (Matérn-5/2 unless ``kernel`` is given)."""
    X = grid(n, device=device)
    kernel = make_kernel("matern52", 1) if kernel is None else kernel
    return FACTORIES[name](X, kernel, torch.Generator(device=device).manual_seed(seed), horizon)
