"""Shared fixtures: a tiny generated corpus the pipeline tests run on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_files import REPO, SEED_PATH


def make_corpus(out: Path, *, arenas: str = "base,attribution", seed: int = 3) -> Path:
    """Generate a small corpus with the project's own generator."""
    subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out", str(out),
         "--nodes", "150", "--split-sizes", "1,1,1", "--payments", "5,6",
         "--arenas", arenas, "--seed", str(seed)],
        check=True, cwd=REPO, capture_output=True,
    )
    return out


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Base and attribution arenas, one scenario per split and arena."""
    return make_corpus(tmp_path_factory.mktemp("corpus") / "tiny")


@pytest.fixture(scope="session")
def seed_source() -> str:
    return SEED_PATH.read_text()
