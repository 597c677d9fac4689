"""Snapshots of running trials: a stopped trial continues to the record of an uninterrupted run."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torch_advbandit.experiments import TrialConfig, run_sweep, run_trial
from torch_advbandit.experiments._progress import Progress, drain
from torch_advbandit.experiments.checkpoints import RelayedCheckpoint, TrialCheckpoint, checkpoint_path
from torch_advbandit.experiments.sweep import execute_trial


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
        _small("kernelized_exp3_auto_units"),  # the rewards' range is part of the state
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


def test_relayed_snapshots_continue_a_trial_whose_worker_does_not_see_the_results_folder():
    """Ray workers send their snapshots' bytes to the driver and get the last one back on a re-run."""
    config = _small("rls_kernelized_exp3_truncated")
    whole = run_trial(config)
    sent = []
    checkpoint = RelayedCheckpoint(config.key, config.stream, None, lambda *m: sent.append(m), every_seconds=0)

    def stop(t):
        if t + 1 == 11:
            raise Stop

    with pytest.raises(Stop):
        run_trial(config, on_round=stop, checkpoint=checkpoint)
    assert [key for key, _ in sent] == [config.key] * 11 and all(isinstance(data, bytes) for _, data in sent)
    seen = []
    resumed = RelayedCheckpoint(config.key, config.stream, sent[-1][1], sent.append, every_seconds=3600)
    _same_run(run_trial(config, on_round=seen.append, checkpoint=resumed), whole)
    assert seen[0] == 11
    damaged = RelayedCheckpoint(config.key, config.stream, sent[-1][1][:100], sent.append)
    with pytest.warns(RuntimeWarning, match="does not load"):
        assert damaged.load() is None
    with pytest.warns(RuntimeWarning, match="belongs to"):
        assert RelayedCheckpoint("other-trial", config.stream, sent[-1][1], sent.append).load() is None
    with pytest.raises(TypeError, match="saved"):
        RelayedCheckpoint(config.key, config.stream, "not bytes", sent.append)


def test_execute_trial_relays_snapshots_through_its_queue_and_the_driver_sorts_the_messages():
    config = _small("kernelized_exp3")

    class Queue(list):
        put = list.append

    q = Queue()
    record = execute_trial(dataclasses.asdict(config), None, q, (None, 0.0))
    snapshots = [m for m in q if len(m) == 2]
    assert len(snapshots) == config.horizon - 1  # none after the last round: the record follows
    with pytest.raises(ValueError, match="progress_queue"):
        execute_trial(dataclasses.asdict(config), None, None, (None, 0.0))
    again = execute_trial(dataclasses.asdict(config), None, Queue(), (None, 3600.0), snapshots[19][1])
    assert again["chosen"] == record["chosen"] and again["expected_regret"] == record["expected_regret"]

    import queue

    inbox, kept = queue.Queue(), []
    for message in q:
        inbox.put(message)
    bars = Progress([config], enabled=False, name="test")
    drain(inbox, bars, lambda key, data: kept.append(data))
    assert inbox.empty() and kept == [data for _, data in snapshots]


@pytest.mark.slow
def test_a_ray_sweep_continues_a_stopped_trial_from_the_snapshot_its_driver_kept(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'torch_advbandit[ray]')")
    import torch_advbandit.experiments.sweep as sweep

    written, atomic_file = [], sweep.atomic_file

    def spy(path, *args, **kwargs):
        written.append(Path(path))
        return atomic_file(path, *args, **kwargs)

    monkeypatch.setattr(sweep, "atomic_file", spy)  # the driver writes what its worker relays
    config = _small("kernelized_exp3")
    whole = run_trial(config)
    checkpoint = _stopped_at(config, tmp_path, 20)
    state = checkpoint.load()
    checkpoint.save({**state, "round_seconds": [123.0] * 20})  # marks the rounds played before the stop
    (record,) = run_sweep([config], tmp_path, backend="ray", workers=1, progress=False, checkpoint_every=0)
    assert record.round_seconds[:20] == [123.0] * 20 and 123.0 not in record.round_seconds[20:]
    assert record.chosen == whole.chosen
    assert written == [checkpoint_path(tmp_path, config.key)] * 9  # after rounds 21-29 (none after the last)
    assert not any((tmp_path / "checkpoints").iterdir())  # deleted once the record was written


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
