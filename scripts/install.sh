#!/usr/bin/env bash
# Install everything the project needs, from the package registries only:
# the Python package with its test tools and Ray (in the dev extra, as the
# Ray executor's test runs by default; Ray added 9-22 s to a fresh pip
# install), and every Go module the builds, the tests and the prompt's
# `go doc` extraction read. After this, nothing the main job or the test
# suite does fetches anything (they run Go with GOPROXY=off).
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install -q -e ".[dev]"
cd go
# The modules that builds and tests compile ...
go mod download
# ... and the go.mod files of the whole module graph: `go doc` on a
# dependency's package (the prompt quotes lnd's route.Route) loads the full
# graph, which `go mod download` alone does not fetch.
go list -m all >/dev/null
