"""The LDK bridge (ldk/, the routesim-ldk binary): LDK's real router in its
own process, which the reference routesim binary runs for `--router ldk`.

It is built with cargo once per content and kept in the cache folder under a
key of its sources, its Cargo.lock and the Rust toolchain, so that editing
the bridge builds it again, and the reference results it made are keyed by
the same content. The routesim binary starts it by the path it is given, which
the reference run makes the descriptor it checked (`sandbox.run_binary`).
Cargo's own build folder is ldk/target (or $ROUTESIM_LDK_TARGET): one per
checkout, shared by every cache folder, so a new cache folder costs a copy,
not a compile of rust-lightning. The crates
come from crates.io at the versions Cargo.lock pins (`--locked`);
`scripts/install.sh` fetches them, and later builds need no network.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.build.trusted import make_trusted
from routesim_evolve.fsutil import files_fingerprint
from routesim_evolve.layout import LDK_DIR

#: The bridge's binary, as Cargo.toml names it.
BRIDGE_NAME = "routesim-ldk"

#: A cold build of the bridge compiles rust-lightning: minutes on 2 cores.
BUILD_TIMEOUT_S = 1800.0


class LdkBuildError(RuntimeError):
    """The bridge does not build (or cargo is missing): a harness problem."""


@functools.cache
def cargo_binary() -> str:
    """The cargo command: $ROUTESIM_CARGO, else `cargo` on PATH, else
    rustup's ~/.cargo/bin/cargo (installed, but not on this shell's PATH)."""
    rustup_cargo = Path.home() / ".cargo" / "bin" / "cargo"
    found = (os.environ.get("ROUTESIM_CARGO") or shutil.which("cargo")
             or (str(rustup_cargo) if rustup_cargo.is_file() else None))
    if not found:
        raise LdkBuildError(
            "no `cargo` on PATH: the ldk reference router is built with Rust's cargo "
            "(install Rust 1.75 or later, or set ROUTESIM_CARGO), then run scripts/install.sh"
        )
    return found


def cargo_env() -> dict[str, str]:
    """The environment of cargo: the caller's, with rustup's homes pinned
    when cargo is rustup's proxy in some <home>/.cargo/bin, so that a run
    under another HOME (an agent's jail, a test) still finds the toolchain
    and the fetched crates."""
    env = dict(os.environ)
    bin_dir = Path(cargo_binary()).resolve().parent
    if bin_dir.name == "bin" and bin_dir.parent.name == ".cargo":
        home = bin_dir.parent.parent
        if (home / ".rustup").is_dir():
            env.setdefault("RUSTUP_HOME", str(home / ".rustup"))
        env.setdefault("CARGO_HOME", str(home / ".cargo"))
    return env


def bridge_sources(ldk_dir: Path = LDK_DIR) -> list[Path]:
    """What the bridge is built from: its manifest, lock file and sources."""
    sources = [ldk_dir / "Cargo.toml", ldk_dir / "Cargo.lock"]
    return sources + sorted((ldk_dir / "src").rglob("*.rs"))


def bridge_key(ldk_dir: Path = LDK_DIR) -> str:
    """Hash of the bridge's sources and the Rust toolchain that builds it."""
    salt = _toolchain_version().encode()
    return files_fingerprint(ldk_dir, bridge_sources(ldk_dir), salt=salt)[:24]


@functools.cache
def _toolchain_version() -> str:
    proc = subprocess.run([cargo_binary(), "--version"], capture_output=True, text=True,
                          timeout=60, check=False, env=cargo_env())
    return proc.stdout.strip()


def bridge_binary(ldk_dir: Path = LDK_DIR, root: Path | None = None) -> Path:
    """The bridge's binary, built on first use and kept in the cache folder
    (read-only, checked by content on every call: `trusted.py`). Raises
    LdkBuildError with cargo's message when it does not build, and
    TrustedFileChanged when its bytes are not the ones built."""
    root = root or cache_root()
    binary = root / "ldk" / f"{BRIDGE_NAME}-{bridge_key(ldk_dir)}"
    target = Path(os.environ.get("ROUTESIM_LDK_TARGET") or ldk_dir / "target")

    def build(tmp: Path) -> None:
        cmd = [cargo_binary(), "build", "--release", "--locked", "--manifest-path",
               str(ldk_dir / "Cargo.toml"), "--target-dir", str(target)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                                  check=False, env=cargo_env())
        except subprocess.TimeoutExpired as exc:
            raise LdkBuildError(
                f"building the LDK bridge took over {BUILD_TIMEOUT_S:.0f} s") from exc
        if proc.returncode != 0:
            raise LdkBuildError(f"building the LDK bridge failed ({' '.join(cmd)}):\n"
                                f"{proc.stderr[-4000:]}")
        shutil.copy2(target / "release" / BRIDGE_NAME, tmp)

    return make_trusted(binary, root / "locks", build)
