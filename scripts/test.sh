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
# Vet and test build with the harness's settings (build/gomodule.py's
# build_env, build/cache.py's -trimpath): the packages of lnd's tree that
# the first run compiled for the reference binary are then reused from Go's
# build cache, not compiled again under other flags.
export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false -trimpath" GOPROXY=off \
  GOTOOLCHAIN=local GOWORK=off
step() { echo "== $1"; start=$SECONDS; }
took() { echo "   ($((SECONDS - start)) s)"; }
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"  # rustup's, not on this shell's PATH
fi
# The bridge's build folder is the one build/ldk.py uses, so the test
# profile reuses rust-lightning's compiled crates.
target=$(realpath -m "${ROUTESIM_LDK_TARGET:-ldk/target}")
step "cargo fmt, clippy and test (ldk/)"
(cd ldk && cargo fmt --check \
  && cargo clippy --release --locked -q --target-dir "$target" -- -D warnings \
  && cargo test --release --locked -q --target-dir "$target")
took
# go/ldkref's tests run the bridge the harness builds (build/ldk.py).
ROUTESIM_LDK_BRIDGE=$(python -c "from routesim_evolve.build.ldk import bridge_binary; print(bridge_binary())")
export ROUTESIM_LDK_BRIDGE
step "go vet"; (cd go && go vet ./...); took
step "go test"; (cd go && go test ./...); took
unset CGO_ENABLED GOFLAGS GOPROXY GOTOOLCHAIN GOWORK
step "ruff"; ruff check .; took
step "pytest"; pytest -q; took
