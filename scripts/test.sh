#!/usr/bin/env bash
# The whole test suite, Go and Python: formatting, vet, lint, unit and
# integration tests. Slow benchmarks are marked out of the default run
# (pytest -m slow runs them). README's second set-up command and .ci/run
# both call this script.
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
