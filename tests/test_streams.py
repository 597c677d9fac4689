"""Each component's output is pinned at its stream version: a change that alters what a seed produces
must bump the component's entry of ``STREAM_VERSIONS``, so stale records are never served."""

import hashlib
import json
from types import SimpleNamespace

import pytest
import torch

from torch_advbandit.experiments import BoTorchDriftTrialConfig, DriftTrialConfig, TrialConfig
from torch_advbandit.experiments.botorch_drift import BOTORCH_METHODS, PROBLEM_NAMES
from torch_advbandit.experiments.drift import DRIFT_POLICY_LABELS, SCENARIOS
from torch_advbandit.experiments.settings import POLICIES
from torch_advbandit.experiments.streams import CARRIED, STREAM_VERSIONS, reproduces, stream_of

#: (component, version) → digest of a tiny trial's draws and regret curve.
PINNED = {
    "hartmann3@1": "30b2e2dcc158da9d",
    "styblinskitang3@1": "5b1504a01654f3f7",
    "botorch_ucb@1": "3855651dcb5b728e",
    "branin@1": "3855651dcb5b728e",
    "hartmann6@1": "b15bfeb8f720f26c",  # probed with botorch_ucb (b25e3559023d4d3b: with sw_fitted@1)
    "levy4@1": "0117a72d42deedbf",
    "restart_fitted@1": "3855651dcb5b728e",
    "restart_fitted@2": "3855651dcb5b728e",
    "botorch_oracle@1": "939a1aee3ef79c09",
    "sw_fitted@1": "3855651dcb5b728e",
    "sw_fitted@2": "3855651dcb5b728e",
    "wgp_auto_fitted@1": "29b03a7998031973",
    "wgp_auto_fitted@2": "66bdd6c771ea9889",
    "wgp_auto_fitted@3": "29b03a7998031973",
    "wgp_auto_fitted@4": "fc0c5a18af9e6e41",  # 24 drifting rounds (versions 1-3: 8 abrupt rounds)
    "wgp_auto_fitted@5": "b9def132237c9232",
    "wgp_auto_fitted@6": "b9def132237c9232",  # the 24-round probe keeps η = 1 under both
    "wgp_auto_fitted@7": "7483d59772c346fc",
    "wgp_auto_fitted@8": "61c841455e569d13",
    "wgp_auto_fitted@9": "61c841455e569d13",  # no change point on the 24-round probe: the two-segment fit never runs
    "wgp_auto_fitted@10": "61c841455e569d13",  # no candidate repeated 16 times on the probe: the average never yields
    "wgp_auto_time_varying@1": "638f4dc53c543446",
    "wgp_auto_time_varying@2": "638f4dc53c543446",  # as wgp_auto_fitted@9
    "wgp_auto_time_varying@3": "638f4dc53c543446",  # as wgp_auto_fitted@10
    "wgp_auto_time_varying@4": "638f4dc53c543446",  # no change point on the probe: the segments never select
    "wgp_auto_tested@1": "3855651dcb5b728e",
    "wgp_auto_tested@2": "3855651dcb5b728e",
    "wgp_auto_tested@3": "3855651dcb5b728e",  # the 8-round probe never leaves η = 1
    "wgp_auto_tested@4": "3855651dcb5b728e",
    "wgp_auto_tested@5": "3855651dcb5b728e",
    "wgp_auto_tested@6": "3855651dcb5b728e",
    "tv_fitted@1": "3a6b026120574af3",
    "tv_fitted@2": "da6ea08d2915558d",
    "tv_tested@1": "376a480f3d010156",
    "tv_tested@2": "376a480f3d010156",  # the refit from the ε = 0 optimum never fits better on the 24-round probe
    "tv_changes@1": "30711ee5931056ed",
    "tv_changes@2": "30711ee5931056ed",  # the same choices on the 24-round probe
    "tv_changes_anytime@1": "fc3092c705b82a54",
    "wgp_fixed_fitted@1": "3855651dcb5b728e",
    "wgp_fixed_fitted@2": "3855651dcb5b728e",
    "wgp_fixed_tested@1": "3855651dcb5b728e",
    "abrupt@1": "3f3100e65df5bf5c",
    "adaptive@1": "307a872eed5ba76c",
    "apg_exp3@1": "e8536ee3f6322ec0",
    "igp_ucb@1": "c6c7520974d45137",
    "kernelized_exp3@1": "44e12e67fbc807d3",
    "kernelized_exp3_anytime@3": "39abbdf9471bd9df",
    "kernelized_exp3_auto_units@1": "3c49c81978d60049",
    "apg_exp3_anytime@1": "be325e3c625f3819",
    "kernelized_exp3_derived@1": "78e41265edcc4e86",
    "kernelized_exp3_derived@2": "4bcb790905d25ee3",
    "lower_bound@1": "730528e9ceb54410",
    "r_gp_ucb@1": "8aa7253b50bcfc60",
    "rls_kernelized_exp3@1": "a510a8ebdd0b6913",
    "rls_kernelized_exp3_truncated@1": "4f3b27daee4debf6",
    "rls_kernelized_exp3_derived@1": "8fb640daabbc531c",
    "rls_kernelized_exp3_derived@2": "1a9a767addb43b61",
    "slow@1": "ce386cfa6d84a626",
    "sw_gp_ucb@1": "3f3100e65df5bf5c",
    "uniform@1": "833a221b1f6be5d0",
    "wgp_ucb@1": "06840f44b8a30db6",
    "wgp_ucb_auto@1": "08538df8cef41e8d",
    "wgp_ucb_auto@2": "08538df8cef41e8d",  # change points enter after 10 scored rounds: the 10-round probe is unchanged
    "wgp_ucb_auto@3": "20d25067e4c82ee9",
}


def digest(record) -> str:
    text = json.dumps([record.chosen, [f"{v:.6g}" for v in record.expected_regret]])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tiny(component: str):
    if component in PROBLEM_NAMES:
        return BoTorchDriftTrialConfig(component, "abrupt", "botorch_ucb", 0, horizon=8, num_candidates=64)
    if component in ("tv_changes", "tv_changes_anytime"):  # a jump, so a change point is found
        return BoTorchDriftTrialConfig("branin", "abrupt", component, 0, horizon=24, num_candidates=64)
    fitted_late = ("wgp_auto_fitted", "wgp_auto_time_varying", "tv_fitted", "tv_tested")
    if component in fitted_late:  # long enough for the memory (or ε) to be fitted
        return BoTorchDriftTrialConfig("branin", "drift", component, 0, horizon=24, num_candidates=64)
    if component in BOTORCH_METHODS:
        return BoTorchDriftTrialConfig("branin", "abrupt", component, 0, horizon=8, num_candidates=64)
    if component in SCENARIOS:
        return DriftTrialConfig(component, "sw_gp_ucb", seed=0, horizon=10)
    if component in DRIFT_POLICY_LABELS:
        return DriftTrialConfig("abrupt", component, seed=0, horizon=10)
    if component in ("adaptive", "lower_bound"):
        return TrialConfig(1, "se", "kernelized_exp3", 12, 0, num_functions=10, num_centres=5, environment=component)
    if component in ("kernelized_exp3_anytime", "apg_exp3_anytime"):  # across the first epoch boundary (round 64)
        return TrialConfig(1, "matern52", component, 70, 0, num_functions=10, num_centres=5)
    return TrialConfig(1, "matern52", component, 12, 0, num_functions=10, num_centres=5)


def test_every_policy_and_environment_has_a_stream_version():
    components = set(POLICIES) | set(DRIFT_POLICY_LABELS) | set(SCENARIOS) | {"adaptive", "lower_bound"}
    assert components | set(PROBLEM_NAMES) | set(BOTORCH_METHODS) == set(STREAM_VERSIONS)
    with pytest.raises(ValueError, match="STREAM_VERSIONS"):
        stream_of("adaptive", "new_policy")


@pytest.mark.parametrize("component", sorted(STREAM_VERSIONS))
def test_output_matches_the_pinned_digest_of_its_version(component):
    torch.set_num_threads(1)
    name = f"{component}@{STREAM_VERSIONS[component]}"
    got = digest(tiny(component).run())
    assert PINNED.get(name) == got, (
        f"the output of {component!r} changed ({got}): bump STREAM_VERSIONS[{component!r}] "
        f"and pin the new digest as PINNED['{component}@<new version>'] = {got!r}"
    )


#: (component, version) → digest of three rounds on setting 3 (10 000 points), where Alg. 3's recursion
#: samples the dictionary: the tiny trials above use 400-point sets, which the recursion keeps whole.
RECURSION_PINNED = {  # the same three rounds: for SE the truncation moves P_t below the sixth digit
    "rls_kernelized_exp3@1": "abacc38081d87843",
    "rls_kernelized_exp3_truncated@1": "abacc38081d87843",
}


@pytest.mark.parametrize("component", ["rls_kernelized_exp3", "rls_kernelized_exp3_truncated"])
def test_rls_dictionaries_on_a_set_the_recursion_samples_match_the_pinned_digest(component):
    torch.set_num_threads(1)
    X = torch.linspace(0, 1, 10_000, dtype=torch.float64).unsqueeze(-1)
    policy = POLICIES[component](X, "se", 1000, torch.Generator().manual_seed(0))
    trace = []
    for _ in range(3):
        i = policy.select()
        policy.update(i, float(torch.sin(7 * X[i, 0])))
        trace.append([i, policy.estimator.last_sample.size, f"{float(policy.probabilities().max()):.6g}"])
    got = hashlib.sha256(json.dumps(trace).encode()).hexdigest()[:16]
    name = f"{component}@{STREAM_VERSIONS[component]}"
    assert RECURSION_PINNED.get(name) == got, f"the dictionaries of {name} changed ({got}): bump its stream version"


def record(stream: str, since: list[float], rounds: int | None = None, chosen: list | None = None) -> SimpleNamespace:
    rounds = len(since) if rounds is None else rounds
    chosen = list(range(rounds)) if chosen is None else chosen
    return SimpleNamespace(stream=stream, diagnostics={"since": since}, expected_regret=[1.0] * rounds, chosen=chosen)


def test_records_are_carried_through_every_step_whose_condition_never_held():
    """The GP-UCB policies of ``discount="auto"`` changed only while a change point is in force (``@1`` → ``@2``),
    then only where the average's pick was the candidate of 16 of the 20 selections before it (``@2`` → ``@3``), then,
    with the time-varying test, only while a change point is in force again (``@3`` → ``@4``): a record is the current
    version's output when every step's condition never held for it; no other is."""
    current = stream_of("branin", "wgp_auto_time_varying")
    assert STREAM_VERSIONS["wgp_auto_time_varying"] == 4
    at = f"{current.split('+')[0]}+wgp_auto_time_varying@{{}}".format
    held = [5] * 16 + [5, 1, 2]  # round 16 selects the candidate of the 16 rounds before it
    near = [5] * 15 + [1, 5, 2, 3]  # 15 of the 16 before round 16 (and of every window of 20)
    changed = [0.0, 31.0] + [0.0] * 17  # a change point in force after round 1
    assert reproduces(current, record(at(3), [0.0] * 19, chosen=held))  # step 3 → 4 reads no selection
    assert not reproduces(current, record(at(3), changed, chosen=near))  # step 3 → 4 fails
    assert reproduces(current, record(at(2), [0.0] * 19, chosen=near))
    assert not reproduces(current, record(at(2), [0.0] * 19, chosen=held))  # step 2 → 3 fails
    assert not reproduces(current, record(at(2), changed, chosen=near))  # step 2 → 3 holds, step 3 → 4 fails
    assert reproduces(current, record(at(1), [0.0] * 19, chosen=near))  # every step holds
    assert not reproduces(current, record(at(1), changed, chosen=near))  # step 1 → 2 fails
    assert not reproduces(current, record(at(1), [0.0] * 19, chosen=held))  # step 2 → 3 fails
    assert not reproduces(current, record(at(2), [0.0] * 19, chosen=near[:-1]))  # a round without a selection
    assert not reproduces(current, record(at(1), [0.0, 0.0], rounds=3))  # cut short
    assert not reproduces(current, record(at(0), [0.0] * 3))  # no step from version 0
    assert not reproduces(current, record("branin@2+wgp_auto_time_varying@2", [0.0] * 3))  # another component
    assert not reproduces(current, record("branin@1", [0.0] * 3)) and not reproduces(current, record("x", [0.0]))
    for component, steps in CARRIED.items():  # consecutive steps up to the current version
        assert [by for _, by, _ in steps] == [made + 1 for made, _, _ in steps]
        assert [made for made, _, _ in steps[1:]] == [by for _, by, _ in steps[:-1]]
        assert steps[-1][1] == STREAM_VERSIONS[component]
