import json

import pytest
import torch

from torch_advbandit import UniformRandom
from torch_advbandit.environments import ObliviousEnvironment
from torch_advbandit.experiments import (
    SETTINGS,
    TrialConfig,
    TrialRecord,
    markdown_table,
    play,
    plot_regret,
    run_sweep,
    run_trial,
    summarize,
    write_csv,
)
from torch_advbandit.experiments import adversarial as adversarial_module


def test_settings_are_the_papers_grids():
    assert [(s.n, s.d) for s in SETTINGS.values()] == [(400, 1), (400, 2), (10_000, 1), (10_000, 2), (1024, 6)]
    X = SETTINGS[2].candidates()
    assert X.shape == (400, 2) and X.dtype == torch.float64
    assert float(X.min()) == 0.0 and float(X.max()) == 1.0
    assert len(torch.unique(X, dim=0)) == 400


def test_play_records_expected_and_realised_regret_by_definition():
    gen = torch.Generator().manual_seed(0)
    F = torch.rand(12, 6, generator=gen, dtype=torch.float64)
    pol = UniformRandom(torch.rand(6, 1, dtype=torch.float64), None, 12, generator=gen)
    traj = play(pol, ObliviousEnvironment(F), 12)
    cum = F.cumsum(0)
    expected = cum.max(1).values - (F @ torch.full((6,), 1 / 6, dtype=torch.float64)).cumsum(0)
    realised = cum.max(1).values - F[torch.arange(12), torch.tensor(traj.chosen)].cumsum(0)
    torch.testing.assert_close(torch.tensor(traj.expected_regret, dtype=torch.float64), expected)
    torch.testing.assert_close(torch.tensor(traj.realised_regret, dtype=torch.float64), realised)
    assert len(traj.round_seconds) == 12 and min(traj.round_seconds) >= 0


def small(policy="kernelized_exp3", seed=0, **kw):
    return TrialConfig(1, "se", policy, kw.pop("horizon", 15), seed, num_functions=20, num_centres=10, **kw)


def test_trial_is_reproducible_and_records_round_trip(tmp_path):
    a, b = run_trial(small(seed=3)), run_trial(small(seed=3))
    assert a.chosen == b.chosen and a.expected_regret == b.expected_regret
    path = a.save(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind
    loaded = TrialRecord.load(path)
    assert loaded.config == a.config and loaded.chosen == a.chosen
    # regrets keep 8 significant digits (relative error ≤ 5e-8), and the stored record is a fixed point
    for name in ("expected_regret", "realised_regret"):
        assert getattr(loaded, name) == pytest.approx(getattr(a, name), rel=5e-8, abs=0)
        assert all(v == float(f"{v:.8g}") for v in getattr(loaded, name))
    assert loaded.to_dict() == json.loads(path.read_text()) and loaded.stream == small(seed=3).stream
    assert json.loads(path.read_text())["config"]["seed"] == 3
    # wall times keep 4 significant digits, a timer's resolution being far coarser than repr's 17
    assert loaded.round_seconds == pytest.approx(a.round_seconds, rel=5e-4) and loaded.round_seconds != a.round_seconds
    assert all(t == float(f"{t:.4g}") for t in loaded.round_seconds)


def test_same_seed_same_adversary_for_every_policy():
    build = adversarial_module.build_environment
    a, b = build(small("kernelized_exp3", seed=1)), build(small("uniform", seed=1))
    assert torch.equal(a.functions, b.functions)
    assert not torch.equal(a.functions, build(small("uniform", seed=2)).functions)


def test_serial_sweep_skips_finished_trials(tmp_path, monkeypatch):
    configs = [small(seed=s) for s in range(2)]
    first = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert len(first) == 2

    def boom(*args, **kwargs):
        raise AssertionError("a finished trial was run again")

    monkeypatch.setattr(adversarial_module, "run_trial", boom)
    again = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert [r.chosen for r in again] == [r.chosen for r in first]


def test_interrupted_sweep_keeps_finished_trials(tmp_path, monkeypatch):
    real = adversarial_module.run_trial
    calls = []

    def flaky(config, **kwargs):
        calls.append(config.seed)
        if config.seed == 1:
            raise KeyboardInterrupt
        return real(config, **kwargs)

    monkeypatch.setattr(adversarial_module, "run_trial", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_sweep([small(seed=0), small(seed=1)], tmp_path, backend="serial", progress=False)
    monkeypatch.setattr(adversarial_module, "run_trial", real)
    records = run_sweep([small(seed=0), small(seed=1)], tmp_path, backend="serial", progress=False)
    assert [r.config["seed"] for r in records] == [0, 1] and calls == [0, 1]


def test_reports(tmp_path):
    records = [run_trial(small(p, seed=s)) for p in ("kernelized_exp3", "uniform") for s in range(2)]
    rows = summarize(records)
    assert [(r.policy, r.seeds) for r in rows] == [("kernelized_exp3", 2), ("uniform", 2)]
    finals = [r.expected_regret[-1] for r in records[:2]]
    assert rows[0].regret_mean == pytest.approx(sum(finals) / 2)
    assert rows[0].regret_se == pytest.approx(abs(finals[0] - finals[1]) / 2)
    table = markdown_table(rows)
    assert "Kernelized Exp3" in table and "Random" in table
    csv_text = write_csv(rows, tmp_path / "s.csv").read_text().splitlines()
    assert csv_text[0].startswith("setting,kernel,policy") and len(csv_text) == 3
    (png,) = plot_regret(records, tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(setting=9), "setting"),
        (dict(kernel="rbf"), "kernel"),
        (dict(policy="exp4"), "policy"),
        (dict(horizon=0), "horizon"),
        (dict(seed=-1), "seed"),
    ],
)
def test_trial_config_validation(kw, match):
    base = dict(setting=1, kernel="se", policy="uniform", horizon=10, seed=0)
    with pytest.raises(ValueError, match=match):
        TrialConfig(**{**base, **kw})


def test_timed_rounds_protocol_and_dictionary_sizes(tmp_path):
    timed = run_trial(small("kernelized_exp3", timed_rounds=2, horizon=50))
    assert len(timed.expected_regret) == 2 and timed.trial.timing_only
    rls = run_trial(small("rls_kernelized_exp3", horizon=5))
    # setting 1 has 400 < 192·log(10) points: Alg. 3 returns the whole set every round
    assert rls.diagnostics["dictionary_size"] == [400.0] * 5
    rows = summarize([timed, rls])
    assert rows[0].timing_only and rows[1].dictionary_size == 400
    table = markdown_table(rows)
    assert "one round timed" in table and "| 400 |" in table
    assert plot_regret([timed], tmp_path) == []  # timing-only trials have no regret curve


def test_cli_times_exact_exp3_for_one_round_on_large_settings(tmp_path, monkeypatch):
    from torch_advbandit import cli

    seen = []

    def fake_run_sweep(configs, out, **kwargs):
        seen.extend(configs)
        return []

    monkeypatch.setattr("torch_advbandit.experiments.run_sweep", fake_run_sweep)
    monkeypatch.setattr("torch_advbandit.experiments.catalog.plot_regret", lambda records, out: [])
    args = ["run", "--setting", "3", "--policy", "kernelized_exp3", "rls_kernelized_exp3", "--seeds", "1"]
    assert cli.main([*args, "--out", str(tmp_path), "--no-progress"]) == 0
    assert {(c.policy, c.timed_rounds) for c in seen} == {("kernelized_exp3", 1), ("rls_kernelized_exp3", None)}
    seen.clear()
    assert cli.main([*args, "--out", str(tmp_path), "--no-progress", "--full-exact"]) == 0
    assert {c.timed_rounds for c in seen} == {None}
