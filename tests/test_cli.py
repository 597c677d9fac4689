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
    [(["--horizon", "0"], "horizon"), (["--seeds", "0"], "seeds"), (["--functions", "-3"], "num_functions")],
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
