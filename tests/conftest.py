"""Shared fixtures: a tiny generated corpus the pipeline tests run on, and
a home for agent CLIs run in their jail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_files import REPO, SEED_PATH, unavailable

from routesim_evolve.build.gomodule import cache_root, go_env
from routesim_evolve.reflect.jail import bwrap_binary


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


@pytest.fixture
def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for agent CLIs (their state folders are made there, not in the
    real one), on a machine where their jail starts."""
    if bwrap_binary() is None:
        unavailable("bubblewrap (bwrap) is not installed, and agents run in its jail "
                    "(apt-get install bubblewrap)")
    # What HOME would move: Go's caches and the project cache stay put.
    for name in ("GOMODCACHE", "GOCACHE", "GOPATH"):
        monkeypatch.setenv(name, go_env(name))
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(cache_root()))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    return home
