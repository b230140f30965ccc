"""The repository's own files the tests read: its root and the seed router
every evolution starts from."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED_PATH = REPO / "go" / "cmd" / "routesim" / "candidate_impl.go"
