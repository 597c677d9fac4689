"""benchmarks/regret_phases.py: the phases of a trial's dynamic regret, and its table from a results folder."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from regret_phases import change_point_regret, phase_regret  # noqa: E402

from torch_advbandit.experiments.botorch_drift import BoTorchDriftTrialConfig  # noqa: E402
from torch_advbandit.experiments.store import RecordStore  # noqa: E402


@pytest.mark.parametrize("horizon", [2, 5, 6, 50])
@pytest.mark.parametrize("after", [1, 3, 10])
def test_the_phases_are_sums_of_the_rounds_regret(horizon, after):
    per_round = torch.rand(horizon, generator=torch.Generator().manual_seed(horizon + after), dtype=torch.float64)
    cumulative, per_round = per_round.cumsum(0).tolist(), per_round.tolist()
    half = (horizon + 1) // 2  # the abrupt scenario's first round of the new function
    expected = (sum(per_round[:half]), sum(per_round[half : half + after]), sum(per_round[half + after :]))
    assert phase_regret(cumulative, after) == pytest.approx(expected, abs=1e-9)
    assert sum(phase_regret(cumulative, after)) == pytest.approx(cumulative[-1], abs=1e-9)


def test_the_table_pairs_each_method_with_botorch_on_the_same_seeds(tmp_path):
    store = RecordStore(tmp_path)
    for seed in (0, 1):
        for method in ("botorch_ucb", "wgp_auto_fitted"):
            store.put(BoTorchDriftTrialConfig("branin", "abrupt", method, seed, horizon=4, num_candidates=64).run())
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "regret_phases.py"), str(tmp_path), "--after", "1"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [line for line in out.stdout.splitlines() if line.startswith("| branin")]
    assert len(rows) == 1 and "| wgp_auto_fitted | 2 |" in rows[0]
    recs = {(r.trial.method, r.trial.seed): r.expected_regret for r in store.records()}
    mine = sum(recs["wgp_auto_fitted", s][1] for s in (0, 1)) / 2  # rounds [0, 2) of T = 4
    vanilla = sum(recs["botorch_ucb", s][1] for s in (0, 1)) / 2
    assert f"{mine:.2f} vs {vanilla:.2f}" in rows[0]


def test_bad_arguments_exit_with_status_2(tmp_path):
    script = str(ROOT / "benchmarks" / "regret_phases.py")
    out = subprocess.run([sys.executable, script, str(tmp_path), "--after", "0"], capture_output=True, text=True)
    assert out.returncode == 2 and "--after" in out.stderr


def test_change_rounds_are_the_rounds_selected_after_a_change_point_entered():
    rng = torch.Generator().manual_seed(5)
    ours, theirs = torch.rand(8, generator=rng, dtype=torch.float64), torch.rand(8, generator=rng, dtype=torch.float64)
    since = [0.0, 0.0, 4.0, 4.0, 0.0, 0.0, 6.0, 0.0]  # in force after rounds 2, 3, 6: rounds 3, 4, 7 select under it
    n, mine, vanilla = change_point_regret(ours.cumsum(0).tolist(), theirs.cumsum(0).tolist(), since)
    assert n == 3
    assert mine == pytest.approx(float(ours[[3, 4, 7]].sum()), abs=1e-12)
    assert vanilla == pytest.approx(float(theirs[[3, 4, 7]].sum()), abs=1e-12)
    assert change_point_regret([1.0, 2.0], [1.0, 2.0], [0.0, 0.0]) == (0, 0, 0)


def test_the_change_rounds_table_counts_the_runs_holding_a_change(tmp_path):
    store = RecordStore(tmp_path)
    for method in ("botorch_ucb", "wgp_auto_time_varying"):
        store.put(BoTorchDriftTrialConfig("branin", "abrupt", method, 0, horizon=4, num_candidates=64).run())
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "regret_phases.py"), str(tmp_path), "--change-rounds"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [line for line in out.stdout.splitlines() if line.startswith("| branin")]
    assert rows == ["| branin | abrupt | wgp_auto_time_varying | 1 | 0 | 0 | 0.0 | 0.0 |"]
