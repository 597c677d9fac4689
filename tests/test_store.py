"""The record store: compact archives, stale records re-run, damaged archive lines never served."""

import json
import lzma

import pytest
from conftest import archived

from torch_advbandit.experiments import Grid, TrialConfig, run_sweep
from torch_advbandit.experiments import streams as streams_module
from torch_advbandit.experiments.store import ARCHIVE, CORRUPT, RecordStore, pending_configs

TINY = Grid("tiny", (1,), ("se",), ("uniform", "kernelized_exp3"), (8,), 2, num_functions=10, num_centres=5)


def test_a_sweep_ends_with_one_archive_and_a_rerun_runs_nothing(tmp_path, monkeypatch):
    configs = TINY.configs()
    first = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".trials.lock", ARCHIVE]
    stored = archived(tmp_path)
    assert sorted(stored) == sorted(c.key for c in configs)
    assert all(r["stream"] == c.stream for c, r in zip(configs, (stored[c.key] for c in configs), strict=True))
    calls = []
    monkeypatch.setattr(TrialConfig, "run", lambda self, on_round=None: calls.append(self))
    again = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert calls == [] and [r.to_dict() for r in again] == [r.to_dict() for r in first]
    raw = (tmp_path / ARCHIVE).read_bytes()
    RecordStore(tmp_path).compact()  # nothing loose: the archive is not rewritten
    assert (tmp_path / ARCHIVE).read_bytes() == raw


def test_a_record_from_another_stream_version_is_stale_and_runs_again(tmp_path, monkeypatch):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 99)  # a change to the algorithm
    with pytest.warns(RuntimeWarning, match=r"2 stale record\(s\)"):
        _, todo = pending_configs(configs, tmp_path)
    assert [c.policy for c in todo] == ["kernelized_exp3"] * 2
    with pytest.warns(RuntimeWarning, match="stale"):
        records = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert {r.stream for r in records if r.config["policy"] == "kernelized_exp3"} == {"adaptive@1+kernelized_exp3@99"}
    assert {r["stream"] for r in archived(tmp_path).values()} == {
        "adaptive@1+uniform@1",
        "adaptive@1+kernelized_exp3@99",
    }
    _, todo = pending_configs(configs, tmp_path)
    assert todo == []


def test_compacting_with_drop_stale_keeps_only_what_the_current_code_reproduces(tmp_path, monkeypatch):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 99)
    RecordStore(tmp_path).compact()  # by default a stale record stays stored
    assert len(archived(tmp_path)) == 4
    RecordStore(tmp_path).compact(drop_stale=True)
    assert {r["stream"] for r in archived(tmp_path).values()} == {"adaptive@1+uniform@1"}
    assert sorted(archived(tmp_path)) == sorted(c.key for c in configs if c.policy == "uniform")
    _, todo = pending_configs(configs, tmp_path)
    assert [c.policy for c in todo] == ["kernelized_exp3"] * 2


def test_a_record_without_a_stream_is_never_served(tmp_path):
    config = TINY.configs()[0]
    record = config.run()
    record.stream = ""  # made by code that did not version its streams
    RecordStore(tmp_path).put(record)
    with pytest.warns(RuntimeWarning, match="stale"):
        assert pending_configs([config], tmp_path)[1] == [config]


def _rewrite_archive(out, edit):
    path = out / ARCHIVE
    lines = lzma.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(lzma.compress(("\n".join(edit(lines)) + "\n").encode()))


@pytest.mark.parametrize(
    "damage",
    [
        lambda line: line[: len(line) // 2],  # cut short
        lambda line: json.dumps({**json.loads(line), "expected_regret": [float("nan")] * 8}),  # NaN
        lambda line: json.dumps({**json.loads(line), "chosen": [-1] * 8}),  # impossible draws
        lambda line: json.dumps({**json.loads(line), "extra": 1}),  # a field no record has
    ],
    ids=["truncated", "nan", "negative-index", "foreign-field"],
)
def test_a_damaged_archive_line_is_not_served_and_is_kept_aside(tmp_path, damage):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    _rewrite_archive(tmp_path, lambda lines: [damage(lines[0]), *lines[1:]])
    with pytest.warns(RuntimeWarning, match="damaged"):
        _, todo = pending_configs(configs, tmp_path)
    assert len(todo) == 1
    with pytest.warns(RuntimeWarning, match="damaged"):
        records = run_sweep(configs, tmp_path, backend="serial", progress=False)
    assert len(records) == 4 and len(archived(tmp_path)) == 4
    assert len((tmp_path / CORRUPT).read_text().splitlines()) == 1  # kept for inspection
    assert pending_configs(configs, tmp_path)[1] == []


def test_an_archive_that_does_not_decompress_is_moved_aside(tmp_path):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    path = tmp_path / ARCHIVE
    path.write_bytes(path.read_bytes()[:50])
    with pytest.warns(RuntimeWarning, match="moved to trials.jsonl.xz.corrupt"):
        _, todo = pending_configs(configs, tmp_path)
    assert todo == configs and (tmp_path / (ARCHIVE + ".corrupt")).exists()


def test_a_loose_record_replaces_the_archived_one_of_the_same_trial(tmp_path):
    config = TINY.configs()[0]
    store = RecordStore(tmp_path)
    store.put(config.run())
    store.compact()
    newer = config.run()
    newer.setup_seconds = 123.0
    store.put(newer)
    store.compact()
    assert archived(tmp_path)[config.key]["setup_seconds"] == 123.0 and not (tmp_path / "trials").exists()


def test_merge_copies_only_current_records_the_folder_lacks_and_only_reads_the_source(tmp_path, monkeypatch):
    """Merging: whole, current records of trials missing here; nothing here replaced; the source untouched."""
    here, there = tmp_path / "here", tmp_path / "there"
    mine = run_sweep(TINY.with_overrides(seeds=1).configs(), here, backend="serial", progress=False)
    theirs = TINY.configs()
    run_sweep(theirs, there, backend="serial", progress=False)
    stale_config = TrialConfig(1, "se", "uniform", 8, 5, num_functions=10, num_centres=5)
    with monkeypatch.context() as m:  # a record made by other code: never served, never copied
        m.setitem(streams_module.STREAM_VERSIONS, "uniform", 99)
        run_sweep([stale_config], there, backend="serial", progress=False)
    (there / "trials").mkdir()
    (there / "trials" / "damaged.json").write_text("{not json")
    before = {p: p.read_bytes() for p in there.rglob("*") if p.is_file()}
    own_lines = {k: json.dumps(v, sort_keys=True) for k, v in archived(here).items()}

    store = RecordStore(here)
    with pytest.warns(RuntimeWarning, match=r"1 damaged record\(s\)"):
        assert store.merge(there) == 2  # seed 1 of both policies
    store.compact()
    assert {p: p.read_bytes() for p in there.rglob("*") if p.is_file()} == before
    served = store.records()
    assert [r.trial.key for r in served] == sorted(c.key for c in theirs)
    assert {k: json.dumps(v, sort_keys=True) for k, v in archived(here).items() if k in own_lines} == own_lines
    own = sorted(mine, key=lambda r: r.trial.key)
    assert [r.to_dict() for r in served if r.trial.seed == 0] == [r.to_dict() for r in own]
    with pytest.warns(RuntimeWarning, match="damaged"):
        assert store.merge(there) == 0  # a second merge copies nothing
    assert store.merge(here) == 0
    with pytest.raises(ValueError, match="source must be a results folder"):
        store.merge(tmp_path / "missing")


def test_records_serve_what_get_serves(tmp_path, monkeypatch):
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    store = RecordStore(tmp_path)
    assert [r.trial.key for r in store.records()] == sorted(c.key for c in configs)
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 99)
    store = RecordStore(tmp_path)
    assert [r.trial.policy for r in store.records()] == ["uniform", "uniform"]
    assert sorted(store.stale) == sorted(c.key for c in configs if c.policy == "kernelized_exp3")
    assert [r.to_dict() for r in RecordStore(tmp_path).records()] == [
        RecordStore(tmp_path).get(c).to_dict() for c in sorted(configs, key=lambda c: c.key) if c.policy == "uniform"
    ]


def test_records_check_each_record_against_the_code_once(tmp_path, monkeypatch):
    """A ``CARRIED`` rule reads the whole record: ``records`` sorts each one into current or stale with one check."""
    import torch_advbandit.experiments.store as store_module

    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    checked = []

    def counted(stream, record):
        checked.append(record.trial.key)
        return streams_module.reproduces(stream, record)

    monkeypatch.setattr(store_module, "reproduces", counted)
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 99)
    store = RecordStore(tmp_path)
    assert len(store.records()) == 2 and len(store.stale) == 2
    assert sorted(checked) == sorted(c.key for c in configs)


def test_a_record_the_new_version_reproduces_is_served_with_the_stream_it_was_made_with(tmp_path, monkeypatch):
    """A change declared in ``CARRIED`` with the condition under which it alters nothing: the earlier version's
    records that show the condition never held are served; the others are stale and run again."""
    configs = TINY.configs()
    run_sweep(configs, tmp_path, backend="serial", progress=False)
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 2)
    rule = ((1, 2, lambda record: record.config["seed"] == 0),)  # stands for "no change point in any round"
    monkeypatch.setitem(streams_module.CARRIED, "kernelized_exp3", rule)
    with pytest.warns(RuntimeWarning, match=r"1 stale record\(s\)"):
        _, todo = pending_configs(configs, tmp_path)
    assert [(c.policy, c.seed) for c in todo] == [("kernelized_exp3", 1)]
    served = {(r.trial.policy, r.trial.seed): r.stream for r in RecordStore(tmp_path).records()}
    assert served[("kernelized_exp3", 0)] == "adaptive@1+kernelized_exp3@1" and ("kernelized_exp3", 1) not in served
    RecordStore(tmp_path).compact(drop_stale=True)  # the carried record stays
    assert len(archived(tmp_path)) == 3
    monkeypatch.setitem(streams_module.STREAM_VERSIONS, "kernelized_exp3", 3)  # no step leads from 2 to 3
    with pytest.warns(RuntimeWarning, match=r"1 stale record\(s\)"):
        _, todo = pending_configs(configs, tmp_path)
    assert [(c.policy, c.seed) for c in todo] == [("kernelized_exp3", s) for s in (0, 1)]
