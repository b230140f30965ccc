"""The repository's own files the tests read: its root and the seed router
every evolution starts from; and what a test does when the machine lacks
something it needs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[1]
SEED_PATH = REPO / "go" / "cmd" / "routesim" / "candidate_impl.go"


def unavailable(message: str) -> NoReturn:
    """Skip a test whose need this machine does not meet, except in CI (the CI
    variable set), where .ci/run provides it and its lack is a failure."""
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must have it (.ci/run provides it)")
    pytest.skip(message + "; in CI (CI set) this test fails instead")
