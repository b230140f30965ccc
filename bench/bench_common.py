"""What the benchmarks share: the repository's root, the command line of a
benchmark that runs over one split of a corpus, and running Go benchmarks."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from routesim_evolve.build.gomodule import build_env, go_binary, go_module_dir

REPO = Path(__file__).resolve().parents[1]


def split_parser(doc: str) -> argparse.ArgumentParser:
    """The options of a benchmark over one split, described by the first
    paragraph of its `doc`: --corpus (the bundled one), --split (val) and
    --repeats (3)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--split", default="val")
    parser.add_argument("--repeats", type=int, default=3)
    return parser


def go_bench(package: str, pattern: str, *flags: str) -> str:
    """The output of the Go module's benchmarks matching `pattern` in
    `package` (no tests), with the harness's build settings; exits with Go's
    message when they fail."""
    proc = subprocess.run(
        [go_binary(), "test", package, "-run", "^$", "-bench", pattern, *flags],
        cwd=go_module_dir(), env=build_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"go test failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.stdout
