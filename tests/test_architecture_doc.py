"""docs/architecture.md is drawn from the code and stays so: every path it
names exists, every package of either language is in it, and each Python
package's row names exactly the modules the package has."""

from __future__ import annotations

import re

from repo_files import REPO

DOC = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "routesim_evolve"
GO = REPO / "go"
# A path in backticks, under one of the repository's top folders.
_PATH = re.compile(r"`((?:routesim_evolve|go|prompts|corpus|champions|docs|bench|scripts|"
                   r"tests|ldk)/[A-Za-z0-9_./*-]*)`")


def _text() -> str:
    return DOC.read_text()


def _rows() -> dict[str, str]:
    """The steps table's rows, by the package they name."""
    rows = {}
    for line in _text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and (m := re.fullmatch(r"`(routesim_evolve/\w+)`", cells[2])):
            rows[m.group(1)] = cells[3]
    return rows


def test_every_path_the_doc_names_exists() -> None:
    missing = []
    for m in _PATH.finditer(_text()):
        path = m.group(1).rstrip("/.")
        if "*" in path:
            if not list(REPO.glob(path)):
                missing.append(path)
        elif not (REPO / path).exists():
            missing.append(path)
    assert not missing, f"docs/architecture.md names paths that are gone: {missing}"


def test_every_python_package_has_its_row() -> None:
    packages = sorted(f"routesim_evolve/{p.parent.name}" for p in PACKAGE.glob("*/__init__.py"))
    rows = _rows()
    assert [p for p in packages if p not in rows] == [], "packages missing from the table"


def test_each_row_names_exactly_its_modules() -> None:
    for package, row in _rows().items():
        folder = REPO / package
        named = set(re.findall(r"`(\w+\.py)`", row))
        modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
        assert modules - named == set(), f"{package}: modules not in its row"
        strays = {n for n in named - modules if not (PACKAGE / n).is_file()}
        assert strays == set(), f"{package}: its row names modules it does not have"


def test_every_go_package_is_in_the_doc() -> None:
    text = _text()
    folders = sorted({p.parent for p in GO.rglob("*.go")
                      if "testdata" not in p.parts and not p.name.endswith("_test.go")})
    missing = []
    for folder in folders:
        rel = folder.relative_to(REPO).as_posix()
        if f"`{rel}`" not in text and f"`{folder.name}`" not in text:
            missing.append(rel)
    assert missing == [], f"Go packages missing from docs/architecture.md: {missing}"
