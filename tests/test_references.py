"""Every reference in the project's text resolves inside the repository: file paths, Markdown links,
the papers' citation keys; and nothing points at files that are not part of it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXT_FILES = sorted(
    [ROOT / "README.md"]
    + list((ROOT / "benchmarks").glob("*.md"))
    + list((ROOT / "docs").glob("*.rst"))
    + list((ROOT / "torch_advbandit").rglob("*.py"))
    + list((ROOT / "benchmarks").glob("*.py"))
    + list((ROOT / "benchmarks").glob("*.sh"))
    + list((ROOT / "examples").glob("*.py"))
    + list((ROOT / "tutorials").glob("*.ipynb"))
)
PACKAGE_DIRS = ("policies", "estimators", "experiments", "environments")
PATH = re.compile(
    r"(?<![\w/.<-])((?:docs|benchmarks|tests|tutorials|examples|torch_advbandit|" + "|".join(PACKAGE_DIRS) + r")"
    r"/[\w./-]*\w\.(?:rst|md|py|ipynb|sh|png))"
)
LINK = re.compile(r"\]\(([^)\s]+)\)")
CITATION = re.compile(r"\[([A-Z][a-z]+\d{4})\]")
FORBIDDEN = re.compile(r"\.\./shared|ALGORITHMS\.md|API\.md|\bseed [12]\b(?!-)|\bseed Eqs?\.")


def defined_keys() -> set[str]:
    return set(re.findall(r"^   \* - \[([A-Za-z]+\d{4})\]", (ROOT / "docs" / "references.rst").read_text(), re.M))


def resolves(path: str, origin: Path) -> bool:
    path = path.split("#")[0]
    return any((base / path).exists() for base in (ROOT, origin.parent, ROOT / "torch_advbandit"))


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_text_references_resolve(path):
    text = path.read_text()
    missing = [p for p in PATH.findall(text) if not resolves(p, path)]
    links = LINK.findall(text) if path.suffix in (".md", ".ipynb") else []
    links = [t for t in links if "://" not in t and not t.startswith(("#", "mailto:"))]
    missing += [t for t in links if not resolves(t, path)]
    assert not missing, f"{path.name} refers to files not in the repository: {sorted(set(missing))}"
    unknown = set(CITATION.findall(text)) - defined_keys()
    assert not unknown, f"{path.name} cites keys not defined in docs/references.rst: {sorted(unknown)}"
    outside = FORBIDDEN.findall(text)
    assert not outside, f"{path.name} points outside the repository: {outside}"


def test_the_reference_check_can_fail(tmp_path):
    bad = tmp_path / "x.md"
    bad.write_text("see [the spec](nowhere/spec.md) and docs/missing.rst, [Nobody1999]")
    assert not resolves("nowhere/spec.md", bad) and not resolves("docs/missing.rst", bad)
    assert "Nobody1999" not in defined_keys() and {"Iwazaki2026", "Deng2022"} <= defined_keys()
    assert FORBIDDEN.search("as in seed 1, Eq. 3") and not FORBIDDEN.search("the seed-1 trial")
