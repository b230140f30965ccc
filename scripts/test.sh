#!/usr/bin/env bash
# The whole test suite, Go and Python: formatting, vet, lint, unit and
# integration tests. Benchmarks are scripts under bench/, never part of
# it; a test marked `slow` would be left out too (pyproject.toml).
# README's second set-up command and .ci/run both call this script.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(cd go && gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
echo "== go vet"
(cd go && go vet ./...)
echo "== go test"
(cd go && go test ./...)
echo "== ruff"
ruff check .
echo "== pytest"
pytest -q
