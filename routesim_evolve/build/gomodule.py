"""Where the Go module and toolchain are, and what identifies a build of them.

Every cache key in this package starts from `module_fingerprint`: a hash of the
module's sources (other than the candidate's slot, unless asked), go.mod,
go.sum and the allow-list, so that editing the simulator invalidates every
binary and every reference result built from it.

The toolchain is trusted on first use: the first process that runs it with a
cache folder records the sha256 of `go` and of the tools `go build` runs from
GOTOOLDIR in that folder (`trusted/go-toolchain.json`, read-only), and every
later `go_binary()` checks them against that record (`trusted.py`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from routesim_evolve.build.trusted import open_checked, record, verify
from routesim_evolve.fsutil import atomic_write, file_lock, files_fingerprint
from routesim_evolve.layout import GO_DIR

#: The candidate's slot in the routesim command, relative to the module.
CANDIDATE_SLOT = Path("cmd/routesim/candidate_impl.go")

#: The routesim command's package, as `go build` names it.
ROUTESIM_PACKAGE = "./cmd/routesim"

#: The build tag that keeps lnd's routing stack out of a candidate's link.
NOLND_TAG = "routesim_nolnd"


class GoToolchainError(RuntimeError):
    """The Go toolchain is missing or does not work: a harness problem, never
    the candidate's."""


def go_module_dir() -> Path:
    """The Go module: $ROUTESIM_GO_DIR, else the repository's go/ folder."""
    env = os.environ.get("ROUTESIM_GO_DIR")
    if env:
        return Path(env).resolve()
    return GO_DIR.resolve()


def cache_root() -> Path:
    """The cache folder: $ROUTESIM_CACHE_DIR, else ~/.cache/routesim-evolve."""
    env = os.environ.get("ROUTESIM_CACHE_DIR")
    root = Path(env) if env else Path.home() / ".cache" / "routesim-evolve"
    return root.resolve()


#: The programs of GOTOOLDIR that `go build` runs (the others, vet, cover,
#: fix, serve only commands the harness does not run).
BUILD_TOOLS = ("asm", "cgo", "compile", "link")


def go_binary() -> str:
    """The go command: $ROUTESIM_GO, else `go` on PATH (symlinks resolved),
    with the tools `go build` runs, checked against the toolchain's record
    before every use: a change raises TrustedFileChanged."""
    go = _go_path()
    trusted = _trusted_toolchain(go, str(cache_root()))
    for path in trusted:
        verify(path, remedy=_toolchain_remedy())
    return go


@functools.cache
def _go_path() -> str:
    found = os.environ.get("ROUTESIM_GO") or shutil.which("go")
    if not found:
        raise GoToolchainError("no `go` on PATH (set ROUTESIM_GO)")
    return os.path.realpath(found)


def toolchain_record() -> Path:
    """Where the cache folder keeps the toolchain's hashes."""
    return cache_root() / "trusted" / "go-toolchain.json"


def _toolchain_remedy() -> str:
    return (f"reinstall Go; if you changed it on purpose, delete {toolchain_record()} so "
            "that the next run trusts the toolchain now installed")


@functools.cache
def _trusted_toolchain(go: str, root: str) -> tuple[Path, ...]:
    """Once per process and cache folder: `go` and its build tools, each
    checked against the folder's record (hashed into it when absent) and
    recorded in this process's memory."""
    del root  # part of the memo's key: the record lives in that folder
    path = toolchain_record()
    with file_lock(path.parent / "go-toolchain.lock"):
        known: dict[str, str] = json.loads(path.read_text()) if path.is_file() else {}
        files = [Path(go)]
        files += _build_tools(_first_trust(Path(go), known))
        for tool in files[1:]:
            _first_trust(tool, known)
        if not path.is_file() or json.loads(path.read_text()) != known:
            atomic_write(path, json.dumps(known, indent=1, sort_keys=True).encode(), mode=0o444)
    return tuple(files)


def _first_trust(path: Path, known: dict[str, str]) -> Path:
    """Check `path` against `known` (hashing it into `known` when absent)
    and record it in memory."""
    with open_checked(path, expected=known.get(str(path)), remedy=_toolchain_remedy()) as f:
        known[str(path)] = f.sha256
    record(path, f.sha256)
    return path


def _build_tools(go: Path) -> list[Path]:
    """The files of GOTOOLDIR that `go build` runs, as the checked `go`
    names the folder."""
    try:
        out = subprocess.run([str(go), "env", "GOTOOLDIR"], capture_output=True, text=True,
                             check=True, timeout=60, env=build_env())
    except (OSError, subprocess.SubprocessError) as exc:
        raise GoToolchainError(f"`go env GOTOOLDIR` failed: {exc}") from exc
    tool_dir = Path(os.path.realpath(out.stdout.strip()))
    return [tool_dir / name for name in BUILD_TOOLS if (tool_dir / name).is_file()]


def build_env(*, home: Path | None = None) -> dict[str, str]:
    """The environment of `go build`: the caller's, with everything pinned
    that would make a build fetch, depend on cgo, or differ between workers."""
    env = dict(os.environ)
    env.update(
        CGO_ENABLED="0",
        GOFLAGS="-mod=readonly -buildvcs=false",
        GOPROXY="off",
        GOTOOLCHAIN="local",
        GOWORK="off",
    )
    if home is not None:
        env["HOME"] = str(home)
    return env


def _go_says(*args: str) -> str:
    """What a quick `go ARGS` query prints, as builds here see it."""
    try:
        out = subprocess.run([go_binary(), *args], capture_output=True, text=True, check=True,
                             timeout=60, env=build_env())
    except (OSError, subprocess.SubprocessError) as exc:
        raise GoToolchainError(f"`go {' '.join(args)}` failed: {exc}") from exc
    return out.stdout.strip()


@functools.cache
def go_version() -> str:
    """`go version`'s output, part of every binary's key."""
    return _go_says("version")


#: What installs the Go modules (and everything else) on a new machine.
INSTALL_HINT = "run `bash scripts/install.sh` from the repository (it needs the Go module proxy)"


@functools.cache
def require_modules(go_dir: Path | None = None) -> None:
    """Fail early, and say what to do, when the module cache lacks part of
    the module graph: every build and `go doc` here runs with GOPROXY=off,
    so a missing module would otherwise surface as a cryptic error deep in
    a run. `go list -m all` needs exactly the go.mod files `go doc` needs."""
    go_dir = go_dir or go_module_dir()
    try:
        out = subprocess.run(
            [go_binary(), "list", "-m", "all"],
            cwd=go_dir,
            env=build_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GoToolchainError(f"`go list -m all` in {go_dir} failed: {exc}") from exc
    if out.returncode != 0:
        first = (out.stderr.strip().splitlines() or ["(no message)"])[0]
        raise GoToolchainError(
            f"the Go module cache lacks modules {go_dir}/go.mod needs ({first}): {INSTALL_HINT}"
        )


def _module_files(go_dir: Path, include_candidate: bool) -> Iterator[Path]:
    """The files a routesim build depends on, sorted: Go sources (not tests),
    go.mod, go.sum and the allow-list."""
    files: list[Path] = []
    for path in go_dir.rglob("*"):
        rel = path.relative_to(go_dir)
        if any(part.startswith(".") or part == "testdata" for part in rel.parts):
            continue
        if path.suffix == ".go" and not path.name.endswith("_test.go"):
            if rel == CANDIDATE_SLOT and not include_candidate:
                continue
            files.append(path)
    files += [go_dir / "go.mod", go_dir / "go.sum", go_dir / "cmd/candcheck/allowlist.json"]
    return iter(sorted(p for p in files if p.is_file()))


def module_fingerprint(go_dir: Path | None = None, *, include_candidate: bool = False) -> str:
    """sha256 of the module's build inputs (memoised: every build and every
    reference look-up asks)."""
    go_dir = (go_dir or go_module_dir()).resolve()
    return files_fingerprint(go_dir, list(_module_files(go_dir, include_candidate)))


@functools.cache
def go_env(name: str) -> str:
    """One `go env` value (e.g. GOMODCACHE) as builds here see it."""
    return _go_says("env", name)



#: The module path of lnd in go.mod: the reference routers' version.
LND_MODULE = "github.com/lightningnetwork/lnd"


@functools.cache
def lnd_version(go_dir: Path | None = None) -> str:
    """lnd's version as go.mod requires it (the one source of truth)."""
    go_mod = (go_dir or go_module_dir()) / "go.mod"
    found = re.search(rf"^\s*{re.escape(LND_MODULE)}\s+(\S+)", go_mod.read_text(), re.M)
    if found is None:
        raise GoToolchainError(f"{go_mod}: no `require {LND_MODULE}` line")
    return found.group(1)
