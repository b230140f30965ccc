#!/usr/bin/env bash
# Install everything the project needs, from the package registries only:
# bubblewrap (the agents' jail) when apt can install it; the Python package
# with its test tools and Ray (in the dev extra, as the
# Ray executor's test runs by default; Ray added 9-22 s to a fresh pip
# install), and every Go module the builds, the tests and the prompt's
# `go doc` extraction read. After this, nothing the main job or the test
# suite does fetches anything (they run Go with GOPROXY=off).
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install -q -e ".[dev]"

# Agent CLIs (claude, codex) run in a bubblewrap jail (docs/llm.md): install
# Debian's package when absent and apt is at hand. Without it everything
# else works; a run with an agent refuses to start, saying so.
if ! command -v bwrap >/dev/null && command -v apt-get >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq bubblewrap; } >/dev/null; then
    echo "install.sh: could not install bubblewrap (agents need it): apt-get install bubblewrap" >&2
  fi
fi
# LDK's bridge (ldk/): rust-lightning's crates from crates.io at the versions
# Cargo.lock pins, compiled once (ldk/target) and kept in the project cache.
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"  # rustup's, not on this shell's PATH
fi
if ! command -v "${ROUTESIM_CARGO:-cargo}" >/dev/null; then
  echo "install.sh: no cargo: the ldk reference router needs Rust 1.75+ (https://rustup.rs)" >&2
  exit 2
fi
start=$SECONDS
"${ROUTESIM_CARGO:-cargo}" fetch --locked --manifest-path ldk/Cargo.toml
python -c "from routesim_evolve.build.ldk import bridge_binary; print('LDK bridge:', bridge_binary())"
echo "install.sh: LDK bridge ready in $((SECONDS - start)) s"
cd go
# The modules that builds and tests compile ...
go mod download
# ... and the go.mod files of the whole module graph: `go doc` on a
# dependency's package (the prompt quotes lnd's route.Route) loads the full
# graph, which `go mod download` alone does not fetch.
go list -m all >/dev/null
