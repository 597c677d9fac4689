"""The drifting benchmark's table: ratios to vanilla BoTorch over the seeds both were run on."""

from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig
from torch_advbandit.experiments.catalog import EXPERIMENTS, Options
from torch_advbandit.experiments.drift_report import drifting_markdown


def run(method: str, seed: int):
    return BoTorchDriftTrialConfig("branin", "abrupt", method, seed, horizon=3, num_candidates=32).run()


def test_a_method_run_on_fewer_seeds_is_compared_with_botorch_on_those_seeds():
    botorch = [run("botorch_ucb", seed) for seed in (0, 1, 2)]
    window = [run("sw_fitted", seed) for seed in (0, 2)]
    final = {(r.trial.method, r.trial.seed): r.expected_regret[-1] for r in botorch + window}
    assert final["botorch_ucb", 1] != final["botorch_ucb", 0]  # the unpaired seed would move the ratio
    expected = (final["sw_fitted", 0] + final["sw_fitted", 2]) / (final["botorch_ucb", 0] + final["botorch_ucb", 2])
    rows = {line.split(" | ")[2]: line for line in drifting_markdown(botorch + window).splitlines()[2:]}
    assert rows["SW-GP-UCB, W = 20, fitted"].endswith(f"| 2 | {(final['sw_fitted', 0] + final['sw_fitted', 2]) / 2:.2f}"
                                                      f" ± {abs(final['sw_fitted', 0] - final['sw_fitted', 2]) / 2:.2f}"
                                                      f" | {expected:.2f} |")  # fmt: skip
    assert rows["BoTorch SingleTaskGP + UCB (refit each round)"].endswith("| 1.00 |")


def test_without_botorch_on_a_seed_the_ratio_is_a_dash():
    assert drifting_markdown([run("sw_fitted", 0)]).endswith("| — |")


def test_a_sweep_of_some_methods_includes_vanilla_botorch_on_the_same_seeds():
    configs = EXPERIMENTS["drifting"].configs(Options(quick=True, policies=("sw_fitted",), seeds=2))
    runs = {(c.method, c.problem, c.scenario, c.seed) for c in configs}
    assert len(runs) == len(configs) == 2 * 3 * 2
    assert {(p, s, seed) for m, p, s, seed in runs if m == "botorch_ucb"} == {
        (p, s, seed) for m, p, s, seed in runs if m == "sw_fitted"
    }
