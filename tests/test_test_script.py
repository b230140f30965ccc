"""The test command compiles lnd's tree once (issue 29, item 11): its `go vet`
and `go test` build with the harness's settings, so that the packages the
first run compiled for the reference binary come from Go's build cache
instead of being compiled again under other flags."""

from __future__ import annotations

import re
import shlex

from repo_files import REPO

from routesim_evolve.build.cache import BUILD_FLAGS
from routesim_evolve.build.gomodule import build_env

SCRIPT = (REPO / "scripts" / "test.sh").read_text()


def _exported() -> dict[str, str]:
    """The variables scripts/test.sh exports before `go vet`."""
    head = SCRIPT[:SCRIPT.index("go vet ./...")]
    m = re.search(r"^export (.+?)(?<!\\)$", head.replace("\\\n", " "), re.M)
    assert m, "scripts/test.sh exports no build settings before go vet"
    return dict(word.split("=", 1) for word in shlex.split(m.group(1)))


def test_vet_and_test_build_as_the_harness_builds() -> None:
    exported = _exported()
    pinned = {k: v for k, v in build_env().items() if k in (
        "CGO_ENABLED", "GOPROXY", "GOTOOLCHAIN", "GOWORK")}
    for key, value in pinned.items():
        assert exported.get(key) == value, key
    flags = exported["GOFLAGS"].split()
    assert set(build_env()["GOFLAGS"].split()) <= set(flags)
    # -trimpath changes every compile's action: the harness builds with it.
    assert "-trimpath" in BUILD_FLAGS and "-trimpath" in flags
    assert SCRIPT.index("export CGO_ENABLED") < SCRIPT.index("go vet ./...") \
        < SCRIPT.index("go test ./...")
