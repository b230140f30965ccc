"""The allow-list refuses every forbidden construct, with its line, before
anything is compiled."""

from __future__ import annotations

import pytest

from routesim_evolve.build import BinaryCache, BuildStatus, check_source, load_allowlist
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, go_module_dir

SEED = (go_module_dir() / CANDIDATE_SLOT).read_text()

# The line an import inserted right after the seed's `import (` lands on.
IMPORT_LINE = SEED.splitlines().index("import (") + 2


def with_import(spec: str) -> str:
    """The seed with one more import inside its import block."""
    return SEED.replace("import (\n", f"import (\n\t{spec}\n", 1)


def with_top(text: str) -> tuple[str, int]:
    """The seed with `text` added at the end; and the line it starts on."""
    return SEED + "\n" + text + "\n", len(SEED.splitlines()) + 2


def cases() -> list[tuple[str, str, int, str]]:
    """(name, source, line, rule) for each forbidden construct."""
    out = [
        (name, with_import(spec), IMPORT_LINE, "import")
        for name, spec in [
            ("os", '"os"'),
            ("os/exec", '"os/exec"'),
            ("net", '"net"'),
            ("net/http", '"net/http"'),
            ("syscall", '"syscall"'),
            ("unsafe", '"unsafe"'),
            ("plugin", '"plugin"'),
            ("reflect", '"reflect"'),
            ("runtime", '"runtime"'),
            ("renamed os", 'sys "os"'),
            ("simulator internals", '"github.com/routesim-evolve/routesim/sim"'),
        ]
    ]
    cgo = SEED.replace("import (\n", '// #include <stdlib.h>\nimport "C"\n\nimport (\n', 1)
    out.append(("cgo", cgo, IMPORT_LINE, "import"))
    for name, text, rule in [
        ("linkname", "//go:linkname nanotime runtime.nanotime\nfunc nanotime() int64", "directive"),
        ("embed", "//go:embed secret.txt\nvar secret string", "directive"),
        ("func init", "func init() {}", "reserved"),
        ("func main", "func main() {}", "reserved"),
        ("harness code", "var _ = main", "foreign"),
    ]:
        src, line = with_top(text)
        out.append((name, src, line, rule))
    return out


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> BinaryCache:
    # One cache folder for the whole session: candcheck is built once.
    return BinaryCache(root=tmp_path_factory.getbasetemp() / "routesim-cache")


def test_seed_passes(cache: BinaryCache) -> None:
    report = check_source(SEED, root=cache.root)
    assert report.ok, report.render()


@pytest.mark.parametrize(("name", "source", "line", "rule"), cases(), ids=[c[0] for c in cases()])
def test_forbidden_construct_is_refused_with_its_line(
    cache: BinaryCache, name: str, source: str, line: int, rule: str
) -> None:
    report = check_source(source, root=cache.root)
    assert not report.ok
    assert any(f.rule == rule and f.line == line for f in report.findings), report.render()
    before = cache.compiles
    outcome = cache.build(source)
    assert outcome.status is BuildStatus.REJECTED
    assert outcome.binary is None
    assert f"candidate_impl.go:{line}:" in outcome.message
    assert cache.compiles == before, "a rejected candidate must not be compiled"


def test_every_allowed_import_passes(cache: BinaryCache) -> None:
    # The Python view of the allow-list is the Go tool's: one file.
    allowed = load_allowlist().allowed_imports
    assert "container/heap" in allowed and "os" not in allowed
    source = SEED.replace("import (\n", "import (\n" + "".join(f'\t_ "{p}"\n' for p in allowed), 1)
    report = check_source(source, root=cache.root)
    assert report.ok, report.render()


def test_missing_contract_is_refused(cache: BinaryCache) -> None:
    report = check_source("package main\n\nfunc helper() {}\n", root=cache.root)
    assert [f.rule for f in report.findings] == ["contract"]


def test_oversized_source_is_refused(cache: BinaryCache) -> None:
    limit = load_allowlist().max_source_bytes
    report = check_source(SEED + "//" + "x" * limit + "\n", root=cache.root)
    assert [f.rule for f in report.findings] == ["size"]
