"""Every policy gives the CPU's results on the device, up to rounding.

The device run and a CPU reference play the same candidates and rewards: at each round both
policies' per-candidate state (``P_t`` for the Exp3 family, the UCB scores ``μ_t + β_t σ_t`` for
GP-UCB) must agree to ``1e-8`` relative, and the device policy draws on its own generator (the
draw is exercised) but then plays the CPU's index, since CPU and CUDA generators give different
streams. RLS-kernelized Exp3 also samples its dictionary: the device policy runs its own
recursive leverage-score sampler and then uses the CPU's dictionary. On the ``cpu-audit``
parameter this checks that no tensor leaves the candidates' device (tests/device_audit.py); on
``cuda`` it is the CUDA-equals-CPU check.
"""

import math

import pytest
import torch
from conftest import DT
from policy_factories import FACTORIES

from torch_advbandit.center_selection import LandmarkSelector, NystromSample, UniformSelector, recursive_rls_nystrom
from torch_advbandit.environments import LowerBoundEnvironment, abrupt_environment, slowly_varying_environment
from torch_advbandit.estimators import nystrom_ips_estimate
from torch_advbandit.experiments import TrialConfig, build_environment, run_trial
from torch_advbandit.experiments.drift import DRIFT_POLICY_LABELS, DriftTrialConfig
from torch_advbandit.experiments.settings import POLICIES
from torch_advbandit.exploration import EXPLORATION_NAMES, exploration_distribution
from torch_advbandit.kernels import make_kernel

ROUNDS = 12


class Recording(LandmarkSelector):
    """Run ``inner`` and remember each dictionary (the CPU reference)."""

    def __init__(self, inner):
        self.inner, self.samples = inner, []

    def select(self, kernel, candidates, ridge, probs, generator):
        sample = self.inner.select(kernel, candidates, ridge, probs, generator)
        self.samples.append(sample)
        return sample


class Replaying(LandmarkSelector):
    """Run ``inner`` on the device (its output must be on the device), then use the CPU's dictionary."""

    def __init__(self, inner, samples):
        self.inner, self.reference = inner, iter(samples)

    def select(self, kernel, candidates, ridge, probs, generator):
        own = self.inner.select(kernel, candidates, ridge, probs, generator)
        assert own.indices.device == candidates.device and own.weights.device == candidates.device
        ref = next(self.reference)
        return NystromSample(ref.indices.to(candidates.device), ref.weights.to(candidates.device))


def fingerprint(policy):
    """``P_t`` (Exp3 family), or the UCB scores on every candidate (GP-UCB; ``None`` before data)."""
    if hasattr(policy, "probabilities"):
        return policy.probabilities()
    model = policy.model()
    if model is None:
        return None
    with torch.no_grad():
        post = model.posterior(policy.candidates.unsqueeze(-2))
        return post.mean.reshape(-1) + policy.confidence_width() * post.variance.reshape(-1).sqrt()


def build(name, device, n):
    X = torch.linspace(0, 1, n, dtype=DT, device=device).unsqueeze(-1)
    return FACTORIES[name](X, make_kernel("matern52", 1), torch.Generator(device=device).manual_seed(0), 40)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_device_run_equals_the_cpu_run_up_to_rounding(name, device):
    n = 600 if name == "rls_kernelized_exp3" else 40  # 600 > 192·log(10): a sampled dictionary
    ref, dev = build(name, "cpu", n), build(name, device, n)
    if name == "rls_kernelized_exp3":
        ref.estimator.selector = Recording(ref.estimator.selector)
        dev.estimator.selector = Replaying(dev.estimator.selector, ref.estimator.selector.samples)
    for t in range(ROUNDS):
        a, b = fingerprint(ref), fingerprint(dev)
        if a is None:
            assert b is None
        else:
            assert b.device == dev.candidates.device and b.dtype == DT
            torch.testing.assert_close(b.cpu(), a, rtol=1e-8, atol=1e-12)
        i = ref.select()
        j = dev.select()
        assert isinstance(j, int) and 0 <= j < n
        dev._pending = i  # play the CPU's candidate: the generators' streams differ across devices
        reward = math.sin(0.7 * t + 0.05 * i)
        ref.update(i, reward)
        dev.update(i, reward)
        if name == "rls_kernelized_exp3":
            assert dev.estimator.last_sample.indices.device == dev.candidates.device
    for key, value in ref.state_dict().items():
        other = dev.state_dict()[key]
        if isinstance(value, torch.Tensor) and key != "generator_state":
            assert other.device == dev.candidates.device or other.device.type == "cpu" and value.ndim == 0, key
            torch.testing.assert_close(other.cpu(), value, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_a_table_3_trial_runs_on_the_device(policy, device):
    """Setting, adversary, policy and regret bookkeeping all on ``device`` (``TrialConfig.device``)."""
    config = TrialConfig(1, "se", policy, 4, 0, num_functions=10, num_centres=5, device=device.type)
    env = build_environment(config)
    assert env.functions.device.type == device.type
    record = run_trial(config)
    assert len(record.expected_regret) == 4 and all(math.isfinite(r) for r in record.expected_regret)


@pytest.mark.parametrize("policy", list(DRIFT_POLICY_LABELS))
def test_a_figure_1_run_runs_on_the_device(policy, device):
    """The drifting-function experiment with ``device=``; its GP-UCB steps are compared with the CPU above."""
    record = DriftTrialConfig("abrupt", policy, seed=1, horizon=8, device=device.type).run()
    assert len(record.chosen) == 8 and all(math.isfinite(r) for r in record.expected_regret)
    assert all(0 <= i < 100 for i in record.chosen)


@pytest.mark.parametrize("scenario", [abrupt_environment, slowly_varying_environment])
def test_the_drift_scenarios_live_on_their_generators_device(scenario, device):
    X, env = scenario(torch.Generator(device=device).manual_seed(0), horizon=20)
    assert X.device.type == env.functions.device.type == device.type and X.dtype == DT
    assert math.isfinite(env.observe(3, 7))
    if device.type == "cpu":  # the same functions as the documented CPU construction
        X0, env0 = scenario(torch.Generator().manual_seed(0), horizon=20)
        assert torch.equal(env.functions, env0.functions)


@pytest.mark.parametrize("name", EXPLORATION_NAMES)
def test_every_exploration_distribution_on_the_device(name, device):
    """``approx_mvr`` needs more than ``192·log(1/δ) + 1 = 443`` steps to leave its exact MVR prefix."""
    X = torch.linspace(0, 1, 500, dtype=DT).unsqueeze(-1)
    k = make_kernel("se", 1)
    args = dict(noise=1.0, length=450)
    got = exploration_distribution(
        name, k, X.to(device), **args, generator=torch.Generator(device=device).manual_seed(0)
    )
    assert got.device.type == device.type and float(got.sum()) == pytest.approx(1.0)
    if name != "approx_mvr":  # deterministic: the CPU's distribution
        torch.testing.assert_close(got.cpu(), exploration_distribution(name, k, X, **args), rtol=1e-9, atol=1e-12)


def test_lower_bound_environment_and_dictionary_helpers_on_the_device(device):
    X = torch.linspace(0, 1, 700, dtype=DT, device=device).unsqueeze(-1)
    k = make_kernel("se", 1)
    gen = torch.Generator(device=device).manual_seed(0)
    env = LowerBoundEnvironment(k, X, 6, generator=gen)
    assert env.rewards(2, None).device.type == device.type
    probs = torch.softmax(torch.sin(9 * X[:, 0]), 0)
    for sample in (
        recursive_rls_nystrom(k, X, 1e-3, probs=probs, generator=gen),
        UniformSelector(40).select(k, X, 1e-3, probs, gen),
    ):
        assert sample.indices.device.type == sample.weights.device.type == device.type
        f_hat, width = nystrom_ips_estimate(k, X, probs, 5, 0.5, 1e-3, sample)
        assert f_hat.device.type == width.device.type == device.type and bool(torch.isfinite(width).all())
