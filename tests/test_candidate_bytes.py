"""A candidate that is not UTF-8 text (or is binary) is refused with its
reason wherever it arrives, never a crash: an agent's edit, a file named on
the command line, a seed file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_files import SEED_PATH

from routesim_evolve.build.source import NotSourceText, source_text
from routesim_evolve.cli import main
from routesim_evolve.evolve.seed import SeedError, load_seed
from routesim_evolve.reflect.cli_backend import check_candidate

REPO = Path(__file__).resolve().parents[1]


def _spoiled(tmp_path: Path, spoil: bytes) -> Path:
    """The seed with `spoil` in a comment."""
    path = tmp_path / "candidate_impl.go"
    path.write_bytes(SEED_PATH.read_bytes() + b"\n// " + spoil + b"\n")
    return path


@pytest.mark.parametrize(("spoil", "said"), [
    (b"\xff", "not UTF-8 text: byte 0xFF at offset"),
    (b"\xc3", "not UTF-8 text: byte 0xC3 at offset"),
    (b"\x00", "holds a NUL byte at offset"),
])
def test_source_text_names_the_first_bad_byte(spoil: bytes, said: str) -> None:
    with pytest.raises(NotSourceText, match=said):
        source_text(b"package main\n// " + spoil + b"\n", "x.go")
    assert source_text("package main // é\n".encode(), "x.go").endswith("é\n")


def test_an_agents_edit_that_is_not_text_is_a_failed_proposal(tmp_path: Path) -> None:
    found = check_candidate(_spoiled(tmp_path, b"\xff").read_bytes(), SEED_PATH.read_text())
    assert found.code is None and found.reason is not None
    assert "not UTF-8 text: byte 0xFF" in found.reason


def test_eval_of_a_file_that_is_not_text_exits_2_in_one_line(tmp_path: Path) -> None:
    path = _spoiled(tmp_path, b"\xff\xfe")
    result = CliRunner().invoke(main, ["eval", "--corpus", str(REPO / "corpus"),
                                       "--scenarios", "val-base-001", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path} is not UTF-8 text" in result.output
    assert "Traceback" not in result.output


def test_a_seed_file_that_is_not_text_is_a_seed_error(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="not UTF-8 text"):
        load_seed(_spoiled(tmp_path, b"\xff"))
