"""Small trusted Go tools of the module (candcheck, scenariocheck), built on
first use and kept in the cache folder under a key of their sources,
read-only and checked by content before each use (`trusted.py`).

A tool's key hashes `go version` and the non-test .go and .json files of the
packages it is built from (its own and the in-module packages it imports),
so that editing any of them builds the tool again and nothing else does.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

import routesim_evolve.build.gomodule as gomodule
from routesim_evolve.build.trusted import make_trusted, open_checked


class GoTool(BaseModel):
    """A command of the module: `main` is its package; `packages` are every
    in-module package it is built from (main included), relative to the module."""

    model_config = ConfigDict(frozen=True)

    name: str
    main: Path
    packages: tuple[Path, ...]


#: The in-module packages a tool that runs the simulator is built from,
#: beside its own (maxflow, worldstart).
SIMULATOR_PACKAGES: tuple[Path, ...] = (
    Path("cmd/internal/checkcmd"), Path("internal/flownet"), Path("internal/pq"),
    Path("internal/saturating"), Path("scenario"), Path("sim"), Path("routing"))


def tool_key(tool: GoTool, go_dir: Path) -> str:
    """Hash of the tool's sources and the toolchain."""
    digest = hashlib.sha256(gomodule.go_version().encode())
    for pkg in sorted(tool.packages):
        for path in sorted((go_dir / pkg).iterdir()):
            if path.suffix in {".go", ".json"} and not path.name.endswith("_test.go"):
                digest.update(f"{pkg}/{path.name}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:24]


def tool_binary(tool: GoTool, go_dir: Path | None = None, root: Path | None = None) -> Path:
    """The tool's binary, built on first use and kept in the cache folder;
    raises TrustedFileChanged when its bytes are not the ones built."""
    go_dir = go_dir or gomodule.go_module_dir()
    root = root or gomodule.cache_root()
    binary = root / "tools" / f"{tool.name}-{tool_key(tool, go_dir)}"

    def build(tmp: Path) -> None:
        cmd = [gomodule.go_binary(), "build", "-trimpath", "-o", str(tmp), "./" + str(tool.main)]
        proc = subprocess.run(
            cmd, cwd=go_dir, env=gomodule.build_env(), capture_output=True, text=True, timeout=600
        )
        if proc.returncode != 0:
            raise gomodule.GoToolchainError(f"building {tool.name} failed:\n{proc.stderr}")

    return make_trusted(binary, root / "locks", build)


def run_tool(tool: GoTool, args: Sequence[str], *, timeout: float, go_dir: Path | None = None,
             root: Path | None = None,
             input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the tool (built on first use) with `args` and `input` on its
    standard input, capturing its output:
    the descriptor whose bytes were checked is what runs, so a swap between
    the check and the start changes nothing. Raises TrustedFileChanged when
    its bytes are not the ones built."""
    with open_checked(tool_binary(tool, go_dir, root)) as checked:
        return subprocess.run([checked.exec_path, *args], capture_output=True, timeout=timeout,
                              pass_fds=(checked.fd,), input=input)
