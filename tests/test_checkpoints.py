"""Snapshots of running trials: a stopped trial continues to the record of an uninterrupted run."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torch_advbandit.experiments import TrialConfig, run_sweep, run_trial
from torch_advbandit.experiments.checkpoints import TrialCheckpoint, checkpoint_path


class Stop(Exception):
    """Stands for a kill between two rounds."""


def _small(policy, **kw):
    return TrialConfig(1, "se", policy, 30, 1, num_functions=15, num_centres=8, **kw)


def _stopped_at(config, tmp_path, rounds):
    """Run ``config`` with a snapshot after every round and stop it after ``rounds`` rounds."""
    checkpoint = TrialCheckpoint(checkpoint_path(tmp_path, config.key), config.key, config.stream, every_seconds=0)

    def stop(t):
        if t + 1 == rounds:
            raise Stop

    with pytest.raises(Stop):
        run_trial(config, on_round=stop, checkpoint=checkpoint)
    return checkpoint


def _same_run(a, b):
    assert a.chosen == b.chosen
    assert a.expected_regret == b.expected_regret and a.realised_regret == b.realised_regret
    assert a.diagnostics == b.diagnostics and len(a.round_seconds) == len(b.round_seconds)


@pytest.mark.parametrize(
    "config",
    [
        _small("kernelized_exp3"),
        _small("kernelized_exp3_anytime"),  # epochs: the state spans an epoch switch (rounds 16, 32)
        _small("rls_kernelized_exp3_truncated"),
        _small("apg_exp3"),
        _small("uniform"),
        _small("kernelized_exp3", environment="lower_bound"),
    ],
    ids=lambda c: f"{c.policy}-{c.environment}",
)
def test_a_stopped_trial_continues_from_its_snapshot_to_the_uninterrupted_record(config, tmp_path):
    whole = run_trial(config)
    checkpoint = _stopped_at(config, tmp_path, 17)
    assert checkpoint.load()["policy"]["t"] == 17
    seen = []
    resumed = run_trial(config, on_round=seen.append, checkpoint=checkpoint)
    assert seen[0] == 17  # only the remaining rounds were played
    _same_run(resumed, whole)


def test_a_damaged_foreign_or_stale_snapshot_is_ignored_with_a_warning(tmp_path):
    config = _small("kernelized_exp3")
    whole = run_trial(config)
    path = checkpoint_path(tmp_path, config.key)
    checkpoint = _stopped_at(config, tmp_path, 9)
    good = path.read_bytes()
    cases = {
        "does not load": lambda: path.write_bytes(good[: len(good) // 2]),
        "belongs to": lambda: TrialCheckpoint(path, "other-trial", config.stream).save({"t": 1}),
        "other code": lambda: TrialCheckpoint(path, config.key, "adaptive@1+kernelized_exp3@0").save({"t": 1}),
        "incomplete": lambda: TrialCheckpoint(path, config.key, config.stream).save({"chosen": [1]}),
    }
    for reason, damage in cases.items():
        damage()
        with pytest.warns(RuntimeWarning, match=reason):
            seen = []
            _same_run(run_trial(config, on_round=seen.append, checkpoint=checkpoint), whole)
        assert seen[0] == 0, reason
    # snapshots whose policy part does not fit this policy: other settings, or a state it refuses
    path.write_bytes(good)
    state = checkpoint.load()
    checkpoint.save({**state, "policy": {**state["policy"], "hyperparameters": "{'eta': 0.5}"}})
    with pytest.warns(RuntimeWarning, match="settings differ"):
        _same_run(run_trial(config, checkpoint=checkpoint), whole)
    checkpoint.save({**state, "policy": {**state["policy"], "n": 399}})
    with pytest.warns(RuntimeWarning, match="refuses its state"):
        _same_run(run_trial(config, checkpoint=checkpoint), whole)


def test_the_sweep_continues_a_stopped_trial_and_deletes_its_snapshot(tmp_path):
    config = _small("kernelized_exp3")
    whole = run_trial(config)
    checkpoint = _stopped_at(config, tmp_path, 20)
    state = checkpoint.load()
    checkpoint.save({**state, "round_seconds": [123.0] * 20})  # marks the rounds played before the stop
    (record,) = run_sweep([config], tmp_path, backend="serial", progress=False, checkpoint_every=0)
    assert record.round_seconds[:20] == [123.0] * 20 and 123.0 not in record.round_seconds[20:]
    assert record.chosen == whole.chosen
    assert record.expected_regret == pytest.approx(whole.expected_regret, rel=5e-8, abs=0)  # 8 digits stored
    assert not checkpoint_path(tmp_path, config.key).exists()
    assert not any((tmp_path / "checkpoints").iterdir())


def test_checkpoint_settings_are_validated(tmp_path):
    with pytest.raises(ValueError, match="every_seconds"):
        TrialCheckpoint(tmp_path / "x.pt", "k", "s", every_seconds=-1)
    with pytest.raises(ValueError, match="checkpoint_every"):
        run_sweep([_small("uniform")], tmp_path, backend="serial", progress=False, checkpoint_every=-5)


def test_a_snapshot_written_by_another_process_is_continued(tmp_path):
    config = _small("rls_kernelized_exp3_truncated")
    script = (
        "import sys\n"
        "from torch_advbandit.experiments import TrialConfig, run_trial\n"
        "from torch_advbandit.experiments.checkpoints import TrialCheckpoint, checkpoint_path\n"
        f"c = TrialConfig(1, 'se', {config.policy!r}, 30, 1, num_functions=15, num_centres=8)\n"
        f"cp = TrialCheckpoint(checkpoint_path({str(tmp_path)!r}, c.key), c.key, c.stream, every_seconds=0)\n"
        "def stop(t):\n"
        "    if t + 1 == 13:\n"
        "        sys.exit(3)\n"
        "run_trial(c, on_round=stop, checkpoint=cp)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    assert subprocess.run([sys.executable, "-c", script], env=env, timeout=300).returncode == 3
    checkpoint = TrialCheckpoint(checkpoint_path(tmp_path, config.key), config.key, config.stream)
    seen = []
    _same_run(run_trial(config, on_round=seen.append, checkpoint=checkpoint), run_trial(config))
    assert seen[0] == 13


COMMITTED = sorted((Path(__file__).parents[1] / "benchmarks" / "results").glob("*/checkpoints/*.pt"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_committed_snapshots_belong_to_the_current_code(path):
    """A snapshot kept in benchmarks/results continues its trial only with the stream it was made by: a change
    that bumps the policy's stream must delete it (the trial would silently restart from round 0)."""
    match = re.fullmatch(r"s(\d+)-(\w+?)-(\w+)-T(\d+)-seed(\d+)-F(\d+)x(\d+)-(\w+)", path.stem)
    assert match, f"{path.name} is not the snapshot of an adversarial trial"
    setting, kernel, policy, horizon, seed, functions, centres, device = match.groups()
    config = TrialConfig(int(setting), kernel, policy, int(horizon), int(seed), int(functions), int(centres), device)
    assert config.key == path.stem
    saved = TrialCheckpoint(path, config.key, config.stream).load()
    assert saved is not None, f"{path.name} was made by other code: delete it"
    assert 0 < len(saved["chosen"]) == saved["policy"]["t"] < config.horizon
