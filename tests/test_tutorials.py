import os
import runpy
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "tutorials").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom_in_smoke_mode(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the tutorials need nbformat (pip install -e '.[test]')")
    nbclient = pytest.importorskip("nbclient", reason="the tutorials need nbclient (pip install -e '.[test]')")
    monkeypatch.setitem(os.environ, "SMOKE_TEST", "1")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend, so figures are outputs
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=600, kernel_name="python3")
    client.execute(cwd=str(path.parent))
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert "regret" in "".join(o.get("text", "") for o in outputs), "the notebook printed no regret"
    assert any("image/png" in o.get("data", {}) for o in outputs), "the notebook drew no figure"


def test_saved_notebooks_are_executed_and_small():
    for path in NOTEBOOKS:
        assert path.stat().st_size < 3_000_000, f"{path.name} is over 3 MB"
        text = path.read_text()
        assert '"execution_count": null' not in text, f"{path.name} is saved without its outputs"


EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_in_smoke_mode(path, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(os.environ, "SMOKE_TEST", "1")
    monkeypatch.setitem(os.environ, "EXAMPLE_OUT", str(tmp_path))
    monkeypatch.setattr("sys.argv", [str(path)])
    runpy.run_path(str(path), run_name="__main__")
    assert list(tmp_path.glob("*.png")), "the example wrote no figure"
    assert "dynamic regret" in capsys.readouterr().out
