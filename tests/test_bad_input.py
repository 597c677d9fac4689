"""Every row of the bad-input table (docs/robustness.rst) is a test, and the table lists every case."""

import re
from pathlib import Path

import pytest
from bad_input_cases import CASES, render_table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "robustness.rst"


@pytest.mark.parametrize(("entry", "bad", "call", "exc", "pattern"), CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_bad_input_gets_a_clear_error(entry, bad, call, exc, pattern):
    if exc is None:
        call()  # documented as accepted
        return
    with pytest.raises(exc) as info:
        call()
    assert re.search(pattern, str(info.value)), f"message {str(info.value)!r} does not match {pattern!r}"


def test_the_docs_table_is_exactly_the_tested_cases():
    text = DOCS.read_text()
    start = text.index(".. bad-input-table-start") + len(".. bad-input-table-start")
    end = text.index(".. bad-input-table-end")
    assert text[start:end].strip() == render_table().strip(), "regenerate with: python -c 'from bad_input_cases ...'"
