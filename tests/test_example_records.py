"""The drifting-Branin example keeps finished loops and serves only records made by the same code."""

import json
import runpy
import warnings
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "examples" / "drifting_branin.py"


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(SCRIPT), run_name="drifting_branin_records")


def test_saved_loops_are_served_back_to_the_same_code(example, tmp_path):
    path, fp = tmp_path / "runs-vanilla.json", example["code_fingerprint"]()
    runs = {0: [1.0, 2.5, 3.0], 3: [0.5, 0.5, 4.0]}
    example["save_runs"](path, fp, 3, runs)
    assert example["load_runs"](path, fp, 3) == runs
    assert [p.name for p in tmp_path.iterdir()] == ["runs-vanilla.json"], "a temporary file was left behind"


def test_records_of_other_code_or_other_rounds_are_not_served(example, tmp_path):
    path, fp = tmp_path / "runs-vanilla.json", example["code_fingerprint"]()
    example["save_runs"](path, "0" * 64, 3, {0: [1.0, 2.0, 3.0]})
    assert example["load_runs"](path, fp, 3) == {}
    example["save_runs"](path, fp, 3, {0: [1.0, 2.0, 3.0]})
    assert example["load_runs"](path, fp, 4) == {}
    assert example["load_runs"](tmp_path / "missing.json", fp, 3) == {}


@pytest.mark.parametrize(
    "text",
    [
        '{"fingerprint": "',  # cut off mid-write
        "[1, 2, 3]",  # not a record
        '{"fingerprint": "FP", "rounds": 3}',  # no runs
        '{"fingerprint": "FP", "rounds": 3, "runs": {"0": [1.0, 2.0]}}',  # a curve too short
        '{"fingerprint": "FP", "rounds": 3, "runs": {"x": [1.0, 2.0, 3.0]}}',  # not a seed
        '{"fingerprint": "FP", "rounds": 3, "runs": {"0": [1.0, "a", 3.0]}}',  # not a number
    ],
)
def test_damaged_records_warn_and_are_not_served(example, tmp_path, text):
    path, fp = tmp_path / "runs-vanilla.json", example["code_fingerprint"]()
    path.write_text(text.replace("FP", fp))
    with pytest.warns(UserWarning, match="damaged"):
        assert example["load_runs"](path, fp, 3) == {}


def test_the_fingerprint_follows_the_package_sources(example, monkeypatch):
    fp = example["code_fingerprint"]()
    assert len(fp) == 64 and fp == example["code_fingerprint"]()
    read_bytes = Path.read_bytes

    def edited(self):  # one comment character added to one source file of the package
        return read_bytes(self) + (b"#" if self.name == "memory_average.py" else b"")

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert example["code_fingerprint"]() != fp


def test_a_rerun_reuses_every_finished_loop(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SMOKE_TEST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr("sys.argv", ["drifting_branin.py", "--methods", "vanilla", "changes", "--out", str(tmp_path)])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    first = capsys.readouterr().out
    records = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("runs-*.json")}
    assert set(records) == {"runs-vanilla.json", "runs-changes.json"}
    namespace = runpy.run_path(str(SCRIPT), run_name="drifting_branin_records")
    assert records["runs-vanilla.json"]["fingerprint"] == namespace["code_fingerprint"]()
    calls = []
    namespace["main"].__globals__["run"] = lambda *args: calls.append(args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no record may be reported damaged
        namespace["main"]()
    assert calls == [], "a finished loop was run again"
    assert capsys.readouterr().out.split("plot:")[0] == first.split("plot:")[0]
