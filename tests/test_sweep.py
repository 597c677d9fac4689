"""The resumable sweep: grids as data, worker backends, kill-and-resume, Ray, growth fits."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import archived

from torch_advbandit.environments import AdaptiveAdversary, LowerBoundEnvironment
from torch_advbandit.experiments import GRIDS, Grid, TrialConfig, run_sweep, run_trial, summarize
from torch_advbandit.experiments import adversarial as adversarial_module
from torch_advbandit.experiments.report import SummaryRow
from torch_advbandit.experiments.tables import fit_exponent, growth_rows, table3_markdown

TINY = Grid("tiny", (1,), ("se",), ("uniform", "kernelized_exp3"), (12,), 2, num_functions=15, num_centres=8)


def test_table3_grid_is_the_papers_experiment():
    configs = GRIDS["table3"].configs()
    assert len(configs) == 4 * 3 * 4 * 10
    timed = {(c.policy, c.setting) for c in configs if c.timed_rounds == 1}
    assert timed == {("kernelized_exp3", 3), ("kernelized_exp3", 4)}
    assert {c.horizon for c in configs} == {1000} and {c.environment for c in configs} == {"adaptive"}
    growth = GRIDS["growth"].configs()
    assert {c.horizon for c in growth} == {250, 500, 1000, 2000, 4000}
    assert {c.environment for c in growth} == {"adaptive", "lower_bound"}


def test_grid_overrides_ignore_none_and_validate():
    g = GRIDS["table3-quick"].with_overrides(seeds=1, kernels=("se",), horizons=None)
    assert g.seeds == 1 and g.kernels == ("se",) and g.horizons == GRIDS["table3-quick"].horizons
    with pytest.raises(ValueError, match="policy"):
        Grid("bad", (1,), ("se",), ("nope",), (10,), 1).configs()


def test_a_first_seed_shares_every_experiments_seeds_between_machines():
    from torch_advbandit.experiments.catalog import EXPERIMENTS, Options

    whole = {c.key for c in TINY.with_overrides(seeds=5).configs()}
    parts = [TINY.with_overrides(first_seed=k, seeds=n).configs() for k, n in ((0, 2), (2, 3))]
    assert {c.seed for c in parts[1]} == {2, 3, 4} and whole == {c.key for part in parts for c in part}
    for name in EXPERIMENTS:  # every experiment takes it, the drift kinds included
        seeds = {t.seed for t in EXPERIMENTS[name].configs(Options(quick=True, seeds=2, first_seed=7))}
        assert seeds == {7, 8}, name
    for first, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="first_seed"):
            TINY.with_overrides(first_seed=first).configs()


def test_lower_bound_trials_have_their_own_key_and_environment():
    a = TrialConfig(1, "se", "uniform", 50, 0, num_centres=10)
    b = TrialConfig(1, "se", "uniform", 50, 0, num_centres=10, environment="lower_bound")
    assert a.key == "s1-se-uniform-T50-seed0-F1000x100-cpu".replace("x100", "x10")  # old keys unchanged
    assert b.key.endswith("-lower_bound") and a.key != b.key
    assert isinstance(adversarial_module.build_environment(b), LowerBoundEnvironment)
    with pytest.raises(ValueError, match="environment"):
        TrialConfig(1, "se", "uniform", 50, 0, environment="stochastic")


def test_local_workers_give_the_serial_results(tmp_path):
    configs = TINY.configs()
    local = run_sweep(configs, tmp_path / "local", backend="local", workers=2, progress=False)
    assert [r.trial for r in local] == configs
    for record, config in zip(local, configs, strict=True):
        serial = run_trial(config)
        assert record.chosen == serial.chosen  # thread counts differ: regrets agree to rounding
        assert record.expected_regret == pytest.approx(serial.expected_regret, rel=5e-8, abs=0)  # 8 digits stored
    assert sorted(archived(tmp_path / "local")) == sorted(c.key for c in configs)
    assert not (tmp_path / "local" / "trials").exists()  # compacted: no loose files left


def test_failed_trial_is_reported_and_the_others_are_kept(tmp_path, monkeypatch):
    real = adversarial_module.run_trial

    def flaky(config, **kwargs):
        if config.policy == "kernelized_exp3" and config.seed == 1:
            raise RuntimeError("worker lost")
        return real(config, **kwargs)

    monkeypatch.setattr(adversarial_module, "run_trial", flaky)
    with pytest.raises(RuntimeError, match=r"(?s)1 trial\(s\) failed.*kernelized_exp3-T12-seed1"):
        run_sweep(TINY.configs(), tmp_path, backend="serial", progress=False)
    assert len(archived(tmp_path)) == 3  # the finished trials are archived
    monkeypatch.setattr(adversarial_module, "run_trial", real)
    assert len(run_sweep(TINY.configs(), tmp_path, backend="serial", progress=False)) == 4


def test_bad_backend_and_workers_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="backend"):
        run_sweep(TINY.configs(), tmp_path, backend="slurm")
    with pytest.raises(ValueError, match="workers"):
        run_sweep(TINY.configs(), tmp_path, workers=0)


def _cli(out, *extra):
    return [
        sys.executable,
        "-m",
        "torch_advbandit.cli",
        "reproduce",
        "table3",
        "--quick",
        "--out",
        str(out),
        "--settings",
        "1",
        "--kernel",
        "se",
        "--policy",
        "uniform",
        "kernelized_exp3",
        "--seeds",
        "5",
        "--horizon",
        "60",
        "--functions",
        "30",
        "--no-progress",
        *extra,
    ]


@pytest.mark.slow
def test_quick_sweep_killed_midway_resumes_with_every_trial_once(tmp_path):
    trials = tmp_path / "trials"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(
        _cli(tmp_path, "--workers", "1"), start_new_session=True, env=env, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(list(trials.glob("*.json"))) < 3 and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver, its Manager and its workers, mid-trial
    proc.wait()
    before = {p.name[: -len(".json")]: json.loads(p.read_text()) for p in trials.glob("*.json")}
    assert 3 <= len(before) < 10, "the sweep must be killed part-way for this test to mean anything"

    done = subprocess.run(_cli(tmp_path, "--workers", "2"), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    after = archived(tmp_path)
    assert len(after) == 10  # 2 policies × 5 seeds, each exactly once
    assert all(after[key] == record for key, record in before.items()), "a finished trial was run again"
    leftovers = [p.name for p in trials.iterdir()] if trials.exists() else []
    assert all(name.startswith(".") and name.endswith(".tmp") for name in leftovers)  # a killed write's temp file
    assert "Random" in done.stdout and (tmp_path / "table3.md").exists()
    assert (tmp_path / "table3_setting1_T60.png").stat().st_size > 0


def _children(pid):
    """PIDs of the live (not zombie) processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _sweep_with_two_workers(tmp_path, stderr):
    """A CLI sweep of two long trials on two workers, started and running mid-trial: ``(driver, children)``."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    cli = [sys.executable, "-m", "torch_advbandit.cli", "reproduce", "table3", "--quick", "--out", str(tmp_path)]
    cli += ["--settings", "1", "--kernel", "se", "--policy", "kernelized_exp3", "--seeds", "2"]
    cli += ["--horizon", "20000", "--functions", "30", "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cli, start_new_session=True, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 120
    workers = []
    while time.monotonic() < deadline and proc.poll() is None and len(workers) < 3:  # Manager + 2 workers
        workers = _children(proc.pid)
        time.sleep(0.1)
    if len(workers) < 3:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the sweep must be running its workers for this test to mean anything")
    time.sleep(2.0)  # mid-trial: 20 000 rounds take minutes
    return proc, workers


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the worker processes")
def test_sigterm_stops_the_workers_too(tmp_path):
    """``kill``/``timeout`` send SIGTERM to the driver only: its workers must not run on, orphaned."""
    proc, workers = _sweep_with_two_workers(tmp_path, stderr=subprocess.PIPE)
    try:
        os.kill(proc.pid, signal.SIGTERM)  # the driver alone, as `kill` or `timeout` would
        assert proc.wait(timeout=60) == 130
        assert "interrupted; finished trials are kept" in proc.stderr.read().decode()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "worker processes outlived the driver"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _children(proc.pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_sigkill_of_the_driver_takes_the_workers_with_it(tmp_path):
    """``kill -9`` of the driver runs no handler: the kernel's parent-death signal must end the workers."""
    proc, workers = _sweep_with_two_workers(tmp_path, stderr=subprocess.DEVNULL)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "worker processes outlived a killed driver"
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_ray_backend_runs_a_tiny_sweep_on_a_local_instance(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'torch_advbandit[ray]')")
    configs = TINY.configs()[:2]
    records = run_sweep(configs, tmp_path, backend="ray", workers=1, progress=False)
    assert [r.trial for r in records] == configs
    for record, config in zip(records, configs, strict=True):
        assert record.chosen == run_trial(config).chosen
    assert len(archived(tmp_path)) == 2


def test_fit_exponent_recovers_a_power_law_and_rejects_bad_input():
    T = [250, 500, 1000, 2000, 4000]
    slope, se = fit_exponent(T, [3.0 * t**0.62 for t in T])
    assert slope == pytest.approx(0.62, abs=1e-12) and se == pytest.approx(0.0, abs=1e-10)
    noisy = [3.0 * t**0.5 * f for t, f in zip(T, [1.1, 0.9, 1.05, 0.95, 1.0], strict=True)]
    slope, se = fit_exponent(T, noisy)
    x, y = torch.tensor(T, dtype=torch.float64).log(), torch.tensor(noisy, dtype=torch.float64).log()
    A = torch.stack([torch.ones_like(x), x], -1)
    assert slope == pytest.approx(float(torch.linalg.lstsq(A, y.unsqueeze(-1)).solution[1, 0]), rel=1e-10)
    assert se > 0
    with pytest.raises(ValueError, match="two horizons"):
        fit_exponent([10], [1.0])
    with pytest.raises(ValueError, match="positive"):
        fit_exponent([10, 20], [1.0, 0.0])


def test_growth_rows_fit_each_cell_over_its_horizons():
    rows = [
        SummaryRow(1, "se", "kernelized_exp3", t, 3, 2.0 * t**0.5, 0.1, 0.0, 0.0, 1e-3, environment="lower_bound")
        for t in (100, 400, 1600)
    ] + [SummaryRow(1, "se", "uniform", t, 3, 0.5 * t, 0.1, 0.0, 0.0, 1e-4) for t in (100, 400)]
    fits = {(g.environment, g.policy): g for g in growth_rows(rows)}
    assert fits[("lower_bound", "kernelized_exp3")].exponent == pytest.approx(0.5)
    assert fits[("adaptive", "uniform")].exponent == pytest.approx(1.0)
    assert fits[("lower_bound", "kernelized_exp3")].horizons == (100, 400, 1600)


def test_table3_markdown_has_a_row_per_setting_and_algorithm():
    configs = TINY.with_overrides(seeds=1).configs()
    records = [run_trial(c) for c in configs]
    timing = run_trial(TrialConfig(1, "se", "apg_exp3", 12, 0, 15, 8, timed_rounds=1))
    table = table3_markdown(summarize([*records, timing]))
    lines = table.splitlines()
    assert lines[0].startswith("| setting | algorithm | T | SE regret (seeds) | SE s / round |")
    assert [line.split("|")[2].strip() for line in lines[2:]] == ["Kernelized Exp3", "APG-Exp3", "Random"]
    assert "one round timed" in lines[3]
    # two horizons: a row block per T, never one cell hiding the other (it did before)
    longer = [run_trial(c) for c in TINY.with_overrides(seeds=1, horizons=(20,), policies=("uniform",)).configs()]
    lines = table3_markdown(summarize([*records, *longer])).splitlines()[2:]
    assert [(line.split("|")[2].strip(), line.split("|")[3].strip()) for line in lines] == [
        ("Kernelized Exp3", "12"),
        ("Random", "12"),
        ("Random", "20"),
    ]


def test_adaptive_adversary_is_still_the_default_environment():
    assert isinstance(adversarial_module.build_environment(TINY.configs()[0]), AdaptiveAdversary)


def test_reproduce_growth_and_figure1_commands_write_their_tables(tmp_path, capsys):
    from torch_advbandit.cli import main

    args = ["--backend", "serial", "--no-progress", "--seeds", "1"]
    growth = ["reproduce", "growth", "--quick", "--out", str(tmp_path / "g"), "--kernel", "se", "--functions", "10"]
    assert main([*growth, "--horizon", "10", "20", *args]) == 0
    table = (tmp_path / "g" / "growth.md").read_text()
    assert "| lower_bound | 1 | se | Kernelized Exp3 | 10, 20 |" in table and (tmp_path / "g" / "growth.png").exists()
    assert main(["reproduce", "figure1", "--out", str(tmp_path / "f"), "--horizon", "25", *args]) == 0
    table = (tmp_path / "f" / "figure1.md").read_text()
    assert table.count("| abrupt |") == 4 and table.count("| slow |") == 4
    assert (tmp_path / "f" / "figure1.png").exists() and len(archived(tmp_path / "f")) == 8
    assert main(["reproduce", "figure1", "--out", str(tmp_path / "f"), "--horizon", "25", "30", *args]) == 2
    assert "one --horizon" in capsys.readouterr().err


def test_makespan_is_the_lpt_schedule_within_grahams_bound_of_brute_force():
    import itertools
    import random

    from torch_advbandit.experiments.report import makespan

    rng = random.Random(0)
    for _ in range(60):
        jobs = [rng.choice([1.0, 2.0, 3.0, 5.0, 8.0]) * rng.random() for _ in range(rng.randint(1, 7))]
        slots = rng.randint(1, 4)
        best = min(
            max(sum(j for j, s in zip(jobs, assign, strict=True) if s == k) for k in range(slots))
            for assign in itertools.product(range(slots), repeat=len(jobs))
        )
        got = makespan(jobs, slots)
        assert best - 1e-12 <= got <= (4 / 3 - 1 / (3 * slots)) * best + 1e-12
        assert got >= max(max(jobs), sum(jobs) / slots) - 1e-12
    assert makespan([], 3) == 0.0 and makespan([2.0, 2.0], 1) == 4.0
    for bad, error in (((1.0,), 0), ((1.0,), True), ((-1.0,), 2), ((float("nan"),), 2)):
        with pytest.raises(ValueError):
            makespan(list(bad), error)
