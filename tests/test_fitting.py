"""The policies' hyperparameter fits draw BoTorch's restarts under the policy's seed, not the global generator."""

import botorch.fit
import pytest
import torch

from torch_advbandit import WGPUCB, TimeVaryingGPUCB
from torch_advbandit.experiments.botorch_drift import BoTorchUCB
from torch_advbandit.fitting import fit_seed, seeded_fit
from torch_advbandit.kernels import make_kernel


def _policy(name, X, seed):
    g = torch.Generator().manual_seed(seed)
    if name == "wgp":
        return WGPUCB(X, make_kernel("se", 1), 12, discount="auto", beta=2.0, fit_hyperparameters=True, generator=g)
    if name == "tv":
        return TimeVaryingGPUCB(X, make_kernel("se", 1), 12, beta=2.0, warmup=2, generator=g)
    return BoTorchUCB(X, 12, beta=2.0, generator=g)


@pytest.mark.parametrize("name", ["wgp", "tv", "botorch"])
def test_a_fit_restart_draws_under_the_policys_seed_and_leaves_the_global_generator(name, monkeypatch):
    real = botorch.fit.fit_gpytorch_mll
    draws: list[float] = []

    def restarting(mll, **kwargs):  # what a failed attempt does: sample the priors from the global generator
        draws.append(float(torch.rand(())))
        return real(mll, **kwargs)

    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", restarting)
    X = torch.linspace(0, 1, 30, dtype=torch.float64).unsqueeze(-1)

    def run(global_seed, policy_seed):
        draws.clear()
        torch.manual_seed(global_seed)
        before = torch.get_rng_state()
        policy = _policy(name, X, policy_seed)
        policy.observe(X[:3], torch.sin(6 * X[:3]))
        chosen = []
        for _ in range(4):
            i = policy.select()
            policy.update(i, float(torch.sin(6 * X[i, 0])))
            chosen.append(i)
        assert torch.equal(before, torch.get_rng_state())  # the global generator is untouched
        return list(draws), chosen

    first, chosen = run(0, 5)
    assert len(first) >= 4
    assert run(1, 5) == (first, chosen)  # another global state: the same restarts, the same choices
    assert run(0, 6)[0] != first  # another policy seed: other restarts


def test_the_fit_seed_depends_on_the_generators_seed_and_the_round_only():
    g = torch.Generator().manual_seed(7)
    seed = fit_seed(g, 3)
    torch.rand(4, generator=g)  # the generator's stream moves; its initial seed does not
    assert fit_seed(g, 3) == seed and fit_seed(g, 4) != seed


def test_seeded_fit_fits_as_botorch_does():
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    X = torch.linspace(0, 1, 10, dtype=torch.float64).unsqueeze(-1)
    Y = torch.sin(6 * X)
    ours, theirs = SingleTaskGP(X, Y), SingleTaskGP(X, Y)
    seeded_fit(ours, 0)
    botorch.fit.fit_gpytorch_mll(ExactMarginalLogLikelihood(theirs.likelihood, theirs))
    for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        torch.testing.assert_close(a, b, msg=name)
