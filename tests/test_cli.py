import pytest

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
    assert len(list((out / "trials").glob("*.json"))) == 4
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
