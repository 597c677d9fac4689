import pytest
from conftest import archived

from torch_advbandit.cli import main


def test_run_writes_table_records_and_plot(tmp_path, capsys):
    out = tmp_path / "res"
    args = [
        "run",
        "--setting",
        "2",
        "--kernel",
        "matern32",
        "--horizon",
        "12",
        "--seeds",
        "2",
        "--functions",
        "15",
        "--centres",
        "8",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "| 2 | matern32 | Kernelized Exp3 | 12 | 2 |" in printed
    assert "| 2 | matern32 | Random | 12 | 2 |" in printed
    assert len(archived(out)) == 4
    assert (out / "summary.csv").exists() and (out / "summary.md").exists()
    assert (out / "regret_setting2_matern32_T12.png").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--horizon", "0"], "horizon"),
        (["--seeds", "0"], "seeds"),
        (["--first-seed", "-1"], "--first-seed"),
        (["--functions", "-3"], "num_functions"),
    ],
)
def test_bad_arguments_give_one_line_error(tmp_path, capsys, extra, message):
    args = ["run", "--setting", "1", "--out", str(tmp_path), "--no-progress", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_unknown_choice_is_an_argparse_error(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--setting", "9", "--out", str(tmp_path)])
    assert exc.value.code == 2


def _one_line_error(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_out_that_is_a_file_is_a_one_line_error(tmp_path, capsys):
    target = tmp_path / "a-file"
    target.write_text("not a folder")
    _one_line_error(capsys, ["run", "--setting", "1", "--horizon", "3", "--out", str(target), "--no-progress"], "error")
    assert target.read_text() == "not a folder"


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the answer on a machine without CUDA")
def test_device_without_cuda_is_a_one_line_error(tmp_path, capsys):
    args = ["run", "--setting", "1", "--horizon", "3", "--out", str(tmp_path), "--device", "cuda", "--no-progress"]
    _one_line_error(capsys, args, "no CUDA device")


def test_device_never_reaches_a_file_name(tmp_path, capsys):
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    out = tmp_path / "out"
    args = ["run", "--setting", "1", "--horizon", "3", "--seeds", "1", "--out", str(out), "--no-progress"]
    _one_line_error(capsys, [*args, "--device", "/../../victim"], "device must be cpu, cuda, mps")
    assert victim.read_text() == "{}" and not out.exists()


def test_reproduce_drop_stale_deletes_records_of_other_code(tmp_path, capsys, monkeypatch):
    from torch_advbandit.experiments import streams

    out = tmp_path / "res"
    base = ["reproduce", "table3", "--quick", "--out", str(out), "--settings", "1", "--kernel", "se"]
    base += ["--seeds", "1", "--horizon", "5", "--functions", "10", "--backend", "serial", "--no-progress"]
    assert main([*base, "--policy", "uniform", "kernelized_exp3"]) == 0
    assert len(archived(out)) == 2
    monkeypatch.setitem(streams.STREAM_VERSIONS, "kernelized_exp3", 99)  # its record is now stale
    assert main([*base, "--policy", "uniform"]) == 0
    assert len(archived(out)) == 2  # kept by default (never served)
    assert main([*base, "--policy", "uniform", "--drop-stale"]) == 0
    assert [r["config"]["policy"] for r in archived(out).values()] == ["uniform"]


def test_negative_checkpoint_minutes_is_a_one_line_error(tmp_path, capsys):
    args = ["reproduce", "table3", "--quick", "--out", str(tmp_path), "--checkpoint-minutes", "-1", "--no-progress"]
    _one_line_error(capsys, args, "--checkpoint-minutes must be ≥ 0")


def test_report_merges_folders_and_writes_the_table_without_running_a_trial(tmp_path, capsys, monkeypatch):
    """Two machines' results folders: ``report`` merges them and tabulates every seed; nothing runs."""
    from torch_advbandit.experiments import TrialConfig

    base = ["reproduce", "table3", "--quick", "--settings", "1", "--kernel", "se", "matern32"]
    base += ["--policy", "kernelized_exp3", "uniform", "--horizon", "5", "--functions", "10"]
    base += ["--backend", "serial", "--no-progress"]
    first, second = tmp_path / "first", tmp_path / "second"
    assert main([*base, "--seeds", "2", "--out", str(first)]) == 0
    assert main([*base, "--first-seed", "1", "--seeds", "2", "--out", str(second)]) == 0  # seeds 1, 2: 1 repeats
    assert sorted({r["config"]["seed"] for r in archived(second).values()}) == [1, 2]
    written = {name: (first / name).read_text() for name in ("table3.md", "summary.csv")}
    capsys.readouterr()
    monkeypatch.setattr(TrialConfig, "run", lambda self, *a, **k: pytest.fail(f"{self.key} was run"))
    assert main(["report", "table3", "--out", str(first)]) == 0  # the sweep's own files, from the records alone
    assert {name: (first / name).read_text() for name in written} == written
    assert main(["report", "table3", "--out", str(first), "--merge", str(second)]) == 0
    printed = capsys.readouterr().out
    assert "merged 4 record(s) from 1 folder(s)" in printed and "(3)" in printed
    assert sorted(r["config"]["seed"] for r in archived(first).values()) == [0] * 4 + [1] * 4 + [2] * 4
    assert "(3)" in (first / "table3.md").read_text() and (first / "table3_setting1_T5.png").exists()
    assert main(["report", "table3", "--out", str(second)]) == 0  # a folder alone: its own records
    from torch_advbandit.experiments import streams

    monkeypatch.setitem(streams.STREAM_VERSIONS, "uniform", 99)  # Random's records are now stale: said, left out
    with pytest.warns(RuntimeWarning, match=r"6 stale record\(s\) under .* left out"):
        assert main(["report", "table3", "--out", str(first)]) == 0
    assert "Random" not in (first / "table3.md").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "table3", "--out", "{tmp}/missing"], "missing: no such results folder"),
        (["report", "table3", "--out", "{tmp}", "--merge", "{tmp}/missing"], "missing: no such results folder"),
        (["report", "figure1", "--out", "{tmp}"], "no current figure1 records"),
    ],
)
def test_report_errors_are_one_line(tmp_path, capsys, args, message):
    _one_line_error(capsys, [a.format(tmp=tmp_path) for a in args], message)
