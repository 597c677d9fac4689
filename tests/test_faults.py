"""Faults in sweeps: killed workers, raising trials, a full disk, damaged record files.

In every case the sweep reports the fault, keeps each finished trial, and a re-run completes only
what is missing.
"""

import errno
import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

from torch_advbandit.experiments import Grid, TrialConfig, run_sweep
from torch_advbandit.experiments.records import TrialRecord, record_path
from torch_advbandit.experiments.store import RecordStore, pending_configs

TINY = Grid("tiny", (1,), ("se",), ("uniform",), (8,), 3, num_functions=10, num_centres=5)


def mtimes(trials):
    return {p.name: p.stat().st_mtime_ns for p in trials.glob("*.json")}


def test_truncated_record_is_moved_aside_and_rerun(tmp_path):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False, compact=False)
    trials = tmp_path / "trials"
    damaged = record_path(trials, configs[1])
    damaged.write_text(damaged.read_text()[:100])  # a crash mid-write by some other tool
    before = mtimes(trials)
    with pytest.warns(RuntimeWarning, match="damaged record"):
        records = run_sweep(configs, tmp_path, backend="serial", progress=False, compact=False)
    assert [r.trial for r in records] == configs
    after = mtimes(trials)
    assert after[damaged.name] != before[damaged.name]
    assert all(after[k] == v for k, v in before.items() if k != damaged.name), "an intact record was re-run"
    assert (trials / (damaged.name + ".corrupt")).exists()  # kept for inspection, never deleted


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: {**r, "config": {**r["config"], "horizon": 9}},  # another trial's content
        lambda r: {**r, "expected_regret": r["expected_regret"][:-1]},  # rounds missing
        lambda r: {"config": r["config"]},  # fields missing
        lambda r: [1, 2, 3],  # not a record at all
        lambda r: {**r, "round_seconds": []},  # parses, but the wall times are gone
        lambda r: {**r, "expected_regret": [str(v) for v in r["expected_regret"]]},  # numbers as strings
        lambda r: {**r, "realised_regret": [math.nan] * len(r["realised_regret"])},  # NaN
        lambda r: {**r, "setup_seconds": "1e400"},  # becomes inf once read as a number
        lambda r: {**r, "extra": 1},  # a field no record has: made by other code
        lambda r: "[" * 100_000 + "]" * 100_000,  # nested beyond the parser's recursion limit
    ],
    ids=[
        "wrong-config",
        "short",
        "missing-fields",
        "not-a-record",
        "no-times",
        "strings",
        "nan",
        "inf",
        "foreign-field",
        "deep",
    ],
)
def test_inconsistent_record_counts_as_pending(tmp_path, edit):
    config = TINY.configs()[0]
    path = config.run().save(tmp_path / "trials")
    edited = edit(json.loads(path.read_text()))
    text = edited if isinstance(edited, str) else json.dumps(edited)
    path.write_text(text.replace('"1e400"', "1e400"))
    with pytest.warns(RuntimeWarning, match="moved to"):
        _, todo = pending_configs([config], tmp_path)
    assert todo == [config] and not path.exists()


def test_full_disk_on_write_is_reported_and_leaves_no_partial_file(tmp_path, monkeypatch):
    configs = TINY.configs()
    real_dump = json.dump

    def dump(obj, fh, *args, **kwargs):
        if obj["config"]["seed"] == 1:
            fh.write('{"config": ')  # part of the record reaches the disk, then it is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_dump(obj, fh, *args, **kwargs)

    monkeypatch.setattr(json, "dump", dump)
    with pytest.raises(RuntimeError, match=r"(?s)1 trial\(s\) failed.*seed1.*No space left"):
        run_sweep(configs, tmp_path, backend="serial", progress=False, compact=False)
    trials = tmp_path / "trials"
    assert sorted(p.name for p in trials.iterdir()) == sorted(record_path(trials, c).name for c in configs[::2])
    before = mtimes(trials)
    monkeypatch.setattr(json, "dump", real_dump)
    run_sweep(configs, tmp_path, backend="serial", progress=False, compact=False)
    after = mtimes(trials)
    assert len(after) == 3 and all(after[k] == v for k, v in before.items())


def test_records_and_reports_get_ordinary_permissions(tmp_path):
    config = TINY.configs()[0]
    path = config.run().save(tmp_path / "trials")
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o644 & ~umask


def test_a_full_disk_while_saving_a_figure_leaves_no_truncated_png(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from torch_advbandit.experiments.report import save_figure

    target = tmp_path / "figure.png"
    save_figure(plt.subplots()[0], target)
    before = target.read_bytes()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])

    def full(self, fh, **kwargs):
        fh.write(b"\x89PNG partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(type(fig), "savefig", full)
    with pytest.raises(OSError, match="No space"):
        save_figure(fig, target)
    assert target.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["figure.png"]


def test_record_save_is_atomic(tmp_path, monkeypatch):
    record = TINY.configs()[0].run()
    path = record.save(tmp_path)
    good = path.read_text()

    def broken(*args, **kwargs):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError):
        record.save(tmp_path)
    assert path.read_text() == good and [p.name for p in tmp_path.iterdir()] == [path.name]


KILLER = """
import os, signal
from torch_advbandit.experiments import adversarial
_run = adversarial.TrialConfig.run
def run(self, on_round=None, **options):
    if self.seed == 1:
        os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies mid-trial
    return _run(self, on_round, **options)
adversarial.TrialConfig.run = run
"""


def test_worker_killed_mid_trial_is_reported_and_the_rerun_completes_the_rest(tmp_path):
    """A ``sitecustomize`` makes every process kill itself on the seed-1 trial; the driver survives."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILLER)
    code = textwrap.dedent(
        f"""
        from torch_advbandit.experiments import Grid, run_sweep
        grid = Grid("tiny", (1,), ("se",), ("uniform",), (8,), 3, num_functions=10, num_centres=5)
        run_sweep(grid.configs(), {str(tmp_path)!r}, backend="local", workers=1, progress=False)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "trial(s) failed" in out.stderr and "seed1" in out.stderr, out.stderr[-2000:]
    store = RecordStore(tmp_path)
    first = [store.get(c) for c in TINY.configs()]
    assert first[0] is not None and first[1] is None  # seed 0 finished first and is archived
    records = run_sweep(TINY.configs(), tmp_path, backend="local", workers=1, progress=False)
    assert [r.trial.seed for r in records] == [0, 1, 2]
    assert records[0].to_dict() == first[0].to_dict()  # not re-run: the same wall times


def test_every_record_stores_its_seed_and_full_configuration(tmp_path):
    config = TrialConfig(2, "matern32", "kernelized_exp3", 6, 4, num_functions=12, num_centres=6)
    record = TrialRecord.load(config.run().save(tmp_path))
    assert record.config == {
        "setting": 2,
        "kernel": "matern32",
        "policy": "kernelized_exp3",
        "horizon": 6,
        "seed": 4,
        "num_functions": 12,
        "num_centres": 6,
        "device": "cpu",
        "timed_rounds": None,
        "environment": "adaptive",
    }
    assert {"torch", "python"} <= set(record.environment)
