"""Where evolution starts: the in-tree seed router or a prior champion."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.build.cache import BinaryCache, default_cache
from routesim_evolve.build.gomodule import go_module_dir
from routesim_evolve.build.source import NotSourceText, read_source

CANDIDATE_FILE = Path("cmd") / "routesim" / "candidate_impl.go"

# Champions written while the simulator lived inside lnd's tree import its
# package from lnd's path; the package is ours now.
LND_ROUTING_IMPORT = '"github.com/lightningnetwork/lnd/routing"'
OUR_ROUTING_IMPORT = '"github.com/routesim-evolve/routesim/routing"'
_LND_IMPORT_LINE = re.compile(
    r'^(\s*(?:import\s+)?(?:\w+\s+)?)"github\.com/lightningnetwork/lnd/routing"', re.MULTILINE
)


class Seed(BaseModel):
    """The seed's source and where it came from."""

    source: str
    origin: str
    notes: list[str] = []


class SeedError(Exception):
    """The seed file cannot be used; the message says why."""


def in_tree_seed() -> Path:
    """The in-tree seed candidate."""
    return go_module_dir() / CANDIDATE_FILE


def load_seed(path: Path | None = None) -> Seed:
    """The seed candidate, with a lnd-path champion's import rewritten."""
    path = path or in_tree_seed()
    try:
        source = read_source(path)
    except OSError as exc:
        raise SeedError(f"{path}: cannot read the seed file: {exc.strerror}") from None
    except NotSourceText as exc:
        raise SeedError(str(exc)) from None
    if not re.search(r"^package main\b", source, re.MULTILINE):
        raise SeedError(f"{path}: a candidate must be 'package main'")
    if "newCandidateRouter" not in source:
        raise SeedError(f"{path}: a candidate must define newCandidateRouter")
    notes = []
    rewritten, count = _LND_IMPORT_LINE.subn(lambda m: m.group(1) + OUR_ROUTING_IMPORT, source)
    if count:
        notes.append(
            f"{path}: rewrote the import {LND_ROUTING_IMPORT} to {OUR_ROUTING_IMPORT} "
            "(the simulator's routing package lives in this project now)"
        )
    return Seed(source=rewritten, origin=str(path), notes=notes)


def check_seed_builds(seed: Seed, cache: BinaryCache | None = None) -> None:
    """Raises SeedError with the allow-list's or the compiler's message when
    the seed does not build: every evaluation of the run would score 0."""
    outcome = (cache or default_cache()).build(seed.source)
    if not outcome.ok:
        raise SeedError(f"{seed.origin} does not build, so nothing could be evaluated; fix it "
                        f"and run again:\n{outcome.message}")
