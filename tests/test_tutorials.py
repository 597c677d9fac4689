import os
import runpy
from pathlib import Path

import pytest

TUTORIALS = sorted((Path(__file__).parents[1] / "tutorials").glob("*.py"))


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_in_smoke_mode(path, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(os.environ, "SMOKE_TEST", "1")
    monkeypatch.setitem(os.environ, "TUTORIAL_OUT", str(tmp_path))
    runpy.run_path(str(path), run_name="__main__")
    assert list(tmp_path.glob("*.png")), "the tutorial wrote no figure"
    assert "final regret" in capsys.readouterr().out


EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_in_smoke_mode(path, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(os.environ, "SMOKE_TEST", "1")
    monkeypatch.setitem(os.environ, "EXAMPLE_OUT", str(tmp_path))
    monkeypatch.setattr("sys.argv", [str(path)])
    runpy.run_path(str(path), run_name="__main__")
    assert list(tmp_path.glob("*.png")), "the example wrote no figure"
    assert "dynamic regret" in capsys.readouterr().out
