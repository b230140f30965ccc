"""What the benchmarks share: the repository's root, and the command line
of a benchmark that runs over one split of a corpus."""

from __future__ import annotations

import argparse
from pathlib import Path

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
