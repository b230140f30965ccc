"""Real lnd and btcd, built once from the Go module proxy, for the regtest
networks that check the simulator against real nodes (docs/realnet.md).

Nothing here is written by hand in their place: the binaries are lnd's
`cmd/lnd` and `cmd/lncli` at the version go/go.mod requires (one source of
truth, `lnd_version`), and btcd at the version lnd's own go.mod requires.

Why each is built inside its own module, a copy of its module-cache folder:
lnd's go.mod replaces google.golang.org/protobuf with lightninglabs' fork,
and a module that requires lnd does not inherit replace directives, so
`go build github.com/lightningnetwork/lnd/cmd/lnd` from our module fails in
lnrpc (`unknown field UseHexForBytes`), and `go install …@version` refuses a
module with replaces. In its own module lnd's go.mod and go.sum rule.

A release lnd needs no build tag for what the driver calls (lnrpc and
routerrpc are always in); the tags below add the sub-servers a user
looking around with lncli expects, and leave out the database back-ends
(postgres, etcd, sqlite) that only make the build longer. No `dev` or
`integration` tag: the network runs lnd as users run it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from routesim_evolve.build.gomodule import (
    LND_MODULE,
    cache_root,
    go_binary,
    go_version,
    lnd_version,
)
from routesim_evolve.build.heartbeat import heartbeat
from routesim_evolve.fsutil import atomic_write, file_lock

#: btcd's module path, whose version lnd's go.mod names.
BTCD_MODULE: Final = "github.com/btcsuite/btcd"

#: lnd's build tags (see the module docstring).
LND_TAGS: Final = "signrpc walletrpc chainrpc invoicesrpc peersrpc"

Say = Callable[[str], None]


class RealnetBuildError(RuntimeError):
    """Building lnd or btcd failed; the message names the step and what Go said."""


@dataclass(frozen=True)
class RealBinaries:
    """The four programs a regtest network runs."""

    lnd: Path
    lncli: Path
    btcd: Path
    btcctl: Path

    def all(self) -> tuple[Path, ...]:
        return (self.lnd, self.lncli, self.btcd, self.btcctl)


@dataclass(frozen=True)
class _Program:
    module: str
    package: str  # relative to the module's root
    name: str
    tags: str = ""


def real_binaries(say: Say | None = None) -> RealBinaries:
    """The built programs, building them first when this version's are not
    in the cache (about 5 minutes on 2 cores with lnd's routing packages
    already compiled; `say` hears the progress and the time)."""
    lnd = lnd_version()
    btcd = btcd_version(lnd)
    folder = _build_folder(lnd, btcd)
    bins = RealBinaries(*(folder / "bin" / name for name in ("lnd", "lncli", "btcd", "btcctl")))
    stamp = folder / "built.json"
    with file_lock(folder / ".lock"):
        if stamp.is_file() and all(p.is_file() for p in bins.all()):
            return bins
        started = time.monotonic()
        programs = (
            _Program(LND_MODULE, "cmd/lnd", "lnd", LND_TAGS),
            _Program(LND_MODULE, "cmd/lncli", "lncli", LND_TAGS),
            _Program(BTCD_MODULE, ".", "btcd"),
            _Program(BTCD_MODULE, "cmd/btcctl", "btcctl"),
        )
        sources = {LND_MODULE: lnd, BTCD_MODULE: btcd}
        for program in programs:
            src = _module_copy(program.module, sources[program.module], folder / "src", say)
            _build(program, src, folder / "bin" / program.name, say)
        took = time.monotonic() - started
        atomic_write(stamp, json.dumps({"lnd": lnd, "btcd": btcd, "go": go_version(),
                                        "seconds": round(took, 1)}, indent=1).encode())
        if say:
            say(f"realnet: built lnd {lnd} and btcd {btcd} in {took:.0f} s ({folder / 'bin'})")
    return bins


def btcd_version(lnd: str) -> str:
    """The btcd version lnd's own go.mod requires."""
    go_mod = module_dir(LND_MODULE, lnd) / "go.mod"
    found = re.search(rf"^\s*{re.escape(BTCD_MODULE)}\s+(\S+)", go_mod.read_text(), re.M)
    if found is None:
        raise RealnetBuildError(f"{go_mod}: no `require {BTCD_MODULE}` line")
    return found.group(1)


def _build_folder(lnd: str, btcd: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"lnd-{lnd}-btcd-{btcd}")
    return cache_root() / "realnet" / safe


def module_dir(module: str, version: str) -> Path:
    """The module's folder in the module cache, downloaded from the proxy
    when absent (`go mod download`, which the proxy serves)."""
    try:
        out = subprocess.run([go_binary(), "mod", "download", "-json", f"{module}@{version}"],
                             capture_output=True, text=True, timeout=900, env=_fetch_env(),
                             check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise RealnetBuildError(f"`go mod download {module}@{version}` failed: {exc}") from exc
    try:
        info = json.loads(out.stdout)
    except json.JSONDecodeError:
        info = {}
    if out.returncode != 0 or "Dir" not in info:
        said = info.get("Error") or out.stderr.strip() or "no folder reported"
        raise RealnetBuildError(f"`go mod download {module}@{version}`: {said}")
    return Path(info["Dir"])


def _module_copy(module: str, version: str, under: Path, say: Say | None) -> Path:
    """A writable copy of the module's folder, where its own go.mod rules."""
    dest = under / module.rsplit("/", 1)[-1]
    if (dest / "go.mod").is_file():
        return dest
    if say:
        say(f"realnet: copying {module}@{version} out of the module cache")
    src = module_dir(module, version)
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(src, partial, symlinks=True)
    for path in [partial, *partial.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    partial.rename(dest)
    return dest


def _build(program: _Program, src: Path, out: Path, say: Say | None) -> None:
    """`go build` one program inside its module copy, fetching what its
    go.sum names from the proxy."""
    out.parent.mkdir(parents=True, exist_ok=True)
    args = [go_binary(), "build", "-trimpath", "-o", str(out)]
    if program.tags:
        args += ["-tags", program.tags]
    args.append("./" + program.package if program.package != "." else ".")
    if say:
        say(f"realnet: building {program.name} ({program.module}/{program.package})")
    with heartbeat(say, f"realnet: building {program.name}"):
        try:
            done = subprocess.run(args, cwd=src, env=_fetch_env(), capture_output=True, text=True,
                                  timeout=3600, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RealnetBuildError(f"building {program.name} in {src}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RealnetBuildError(f"building {program.name} in {src} failed:\n{tail}")


def _fetch_env() -> dict[str, str]:
    """`go`'s environment for these builds: the caller's proxy (the
    harness's own builds run with GOPROXY=off; these fetch lnd's whole
    module graph), no cgo, this toolchain, no workspace."""
    env = dict(os.environ)
    env.update(CGO_ENABLED="0", GOTOOLCHAIN="local", GOWORK="off",
               GOFLAGS="-mod=readonly -buildvcs=false")
    if env.get("GOPROXY", "") in ("", "off"):
        env["GOPROXY"] = "https://proxy.golang.org,direct"
    return env
