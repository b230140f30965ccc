"""A content-addressed cache of routesim binaries, one per candidate source.

A candidate is compiled into the routesim command without copying the module:
`go build -overlay` maps the candidate's slot (go/cmd/routesim/
candidate_impl.go) to the candidate written in a scratch folder. The key of a
binary is the sha256 of everything that decides it: the candidate, the
module's other sources, go.sum, `go version`, the build tags and flags. A key
is compiled at most once: a per-key flock makes parallel workers (threads or
processes) wait for the first, and binaries appear by atomic rename, so no one
ever runs a half-written file. Compile errors are cached too, so a candidate
the compiler refused is not compiled again.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.allowlist import Finding, check_source
from routesim_evolve.build.fsutil import atomic_write, file_lock
from routesim_evolve.build.gomodule import (
    CANDIDATE_SLOT,
    NOLND_TAG,
    ROUTESIM_PACKAGE,
    build_env,
    cache_root,
    go_binary,
    go_module_dir,
    go_version,
    module_fingerprint,
)

log = logging.getLogger(__name__)

#: Flags of every build. -trimpath keeps stack traces free of local paths
#: (and the scratch folder out of the binary); -s -w drop the symbol table
#: and DWARF, which only debuggers read: panics still name functions and
#: lines, and the link is faster.
BUILD_FLAGS: tuple[str, ...] = ("-trimpath", "-ldflags=-s -w")

#: Longest compiler message kept in feedback, in lines.
MAX_MESSAGE_LINES = 40


class BuildStatus(enum.StrEnum):
    """How a build ended."""

    OK = "ok"
    REJECTED = "rejected"  # the allow-list refused the source
    COMPILE_ERROR = "compile_error"


class BuildOutcome(BaseModel):
    """The result of building one candidate. `binary` is set when ok;
    otherwise `message` says why, with positions in candidate_impl.go."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: BuildStatus
    key: str
    binary: Path | None = None
    message: str = ""
    findings: tuple[Finding, ...] = ()
    #: True when this call ran the compiler (False on a cache hit).
    compiled: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when a binary was built or found."""
        return self.status is BuildStatus.OK and self.binary is not None


def build_key(
    source: str | None, tags: tuple[str, ...], go_dir: Path, flags: tuple[str, ...]
) -> str:
    """The key of a build: the candidate (None: the module's own slot) plus
    the module, the toolchain, the tags and the flags."""
    digest = hashlib.sha256()
    if source is None:
        digest.update(b"module\0" + module_fingerprint(go_dir, include_candidate=True).encode())
    else:
        digest.update(b"candidate\0" + source.encode("utf-8", "surrogateescape"))
        digest.update(b"\0" + module_fingerprint(go_dir, include_candidate=False).encode())
    digest.update(b"\0" + go_version().encode())
    digest.update(b"\0tags=" + ",".join(sorted(tags)).encode())
    digest.update(b"\0flags=" + "\x1f".join(flags).encode())
    return digest.hexdigest()


def clean_compiler_output(output: str, scratch_file: Path, source: str | None) -> str:
    """The compiler's message as a candidate's author should read it: the
    scratch path rewritten to candidate_impl.go, the package header dropped,
    each candidate position followed by its source line, and capped."""
    slot = CANDIDATE_SLOT.name
    text = output.replace(str(scratch_file), slot).replace(str(CANDIDATE_SLOT), slot)
    lines = [ln for ln in text.splitlines() if not ln.startswith("# ")]
    source_lines = source.splitlines() if source is not None else []
    out: list[str] = []
    for line in lines[:MAX_MESSAGE_LINES]:
        out.append(line)
        m = re.match(rf"^\s*{re.escape(slot)}:(\d+):", line)
        if m and 0 < int(m.group(1)) <= len(source_lines):
            n = int(m.group(1))
            out.append(f"\t{n} | {source_lines[n - 1].strip()}")
    if len(lines) > MAX_MESSAGE_LINES:
        out.append(f"... ({len(lines) - MAX_MESSAGE_LINES} more lines)")
    return "\n".join(out)


class BinaryCache:
    """Builds routesim binaries and keeps them under `root`/bin by key.

    Thread-safe and process-safe. `compiles` counts the compiler runs made
    through this instance (tests and benchmarks read it).
    """

    def __init__(
        self,
        root: Path | None = None,
        go_dir: Path | None = None,
        *,
        compile_timeout: float = 900.0,
        flags: tuple[str, ...] = BUILD_FLAGS,
    ) -> None:
        self.root = (root or cache_root()).resolve()
        self.go_dir = (go_dir or go_module_dir()).resolve()
        self.compile_timeout = compile_timeout
        self.flags = flags
        self.compiles = 0
        self._count_lock = threading.Lock()

    def build(self, source: str, *, tags: tuple[str, ...] = (NOLND_TAG,)) -> BuildOutcome:
        """Build a candidate: allow-list check, then compile, unless the
        cache has it. Never raises for a bad candidate; a broken toolchain
        raises GoToolchainError."""
        start = time.monotonic()
        key = build_key(source, tags, self.go_dir, self.flags)
        hit = self._lookup(key)
        if hit is not None:
            return hit.model_copy(update={"seconds": time.monotonic() - start})
        report = check_source(source, go_dir=self.go_dir, root=self.root)
        if not report.ok:
            return BuildOutcome(
                status=BuildStatus.REJECTED,
                key=key,
                message="The candidate breaks the allow-list:\n" + report.render(),
                findings=report.findings,
                seconds=time.monotonic() - start,
            )
        return self._build_locked(key, source, tags, start)

    def build_module(self, *, tags: tuple[str, ...] = ()) -> BuildOutcome:
        """Build the routesim command as it is on disk (the seed candidate in
        its slot): the reference binary, with lnd linked in by default."""
        start = time.monotonic()
        key = build_key(None, tags, self.go_dir, self.flags)
        hit = self._lookup(key)
        if hit is not None:
            return hit.model_copy(update={"seconds": time.monotonic() - start})
        return self._build_locked(key, None, tags, start)

    def binary_path(self, key: str) -> Path:
        """Where the binary of `key` lives once built."""
        return self.root / "bin" / key[:2] / key

    def _failure_path(self, key: str) -> Path:
        return self.root / "bin" / key[:2] / f"{key}.fail.json"

    def _lookup(self, key: str) -> BuildOutcome | None:
        """The cached outcome of `key`, if any: a binary or a compile error."""
        binary = self.binary_path(key)
        if binary.is_file():
            return BuildOutcome(status=BuildStatus.OK, key=key, binary=binary)
        failure = self._failure_path(key)
        if failure.is_file():
            cached = BuildOutcome.model_validate_json(failure.read_bytes())
            return cached.model_copy(update={"compiled": False})
        return None

    def _build_locked(
        self, key: str, source: str | None, tags: tuple[str, ...], start: float
    ) -> BuildOutcome:
        """Compile under the key's lock; whoever waited finds the result."""
        with file_lock(self.root / "locks" / f"{key}.lock"):
            hit = self._lookup(key)
            if hit is not None:
                return hit.model_copy(update={"seconds": time.monotonic() - start})
            outcome = self._compile(key, source, tags)
        return outcome.model_copy(update={"seconds": time.monotonic() - start})

    def _compile(self, key: str, source: str | None, tags: tuple[str, ...]) -> BuildOutcome:
        binary = self.binary_path(key)
        binary.parent.mkdir(parents=True, exist_ok=True)
        scratch_root = self.root / "scratch"
        scratch_root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="build-", dir=scratch_root))
        try:
            cmd = [go_binary(), "build", *self.flags]
            if tags:
                cmd.append("-tags=" + ",".join(tags))
            scratch_file = scratch / CANDIDATE_SLOT.name
            if source is not None:
                scratch_file.write_text(source, encoding="utf-8", errors="surrogateescape")
                overlay = {"Replace": {str(self.go_dir / CANDIDATE_SLOT): str(scratch_file)}}
                (scratch / "overlay.json").write_bytes(orjson.dumps(overlay))
                cmd.append("-overlay=" + str(scratch / "overlay.json"))
            tmp_binary = binary.with_name(f".{key}.{scratch.name}.tmp")
            cmd += ["-o", str(tmp_binary), ROUTESIM_PACKAGE]
            with self._count_lock:
                self.compiles += 1
            log.info("compiling %s (tags %s)", key[:12], ",".join(tags) or "none")
            try:
                proc = subprocess.run(
                    cmd,
                    cwd=self.go_dir,
                    env=build_env(),
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=self.compile_timeout,
                )
                output, returncode = proc.stderr + proc.stdout, proc.returncode
            except subprocess.TimeoutExpired:
                output = f"the compiler did not finish within {self.compile_timeout:.0f} s"
                returncode = -1
            if returncode != 0:
                tmp_binary.unlink(missing_ok=True)
                outcome = BuildOutcome(
                    status=BuildStatus.COMPILE_ERROR,
                    key=key,
                    message="The candidate does not compile:\n"
                    + clean_compiler_output(output, scratch_file, source),
                    compiled=True,
                )
                if returncode > 0:  # a timeout may be the machine's fault: retry later
                    atomic_write(self._failure_path(key), outcome.model_dump_json().encode())
                return outcome
            tmp_binary.replace(binary)
            return BuildOutcome(status=BuildStatus.OK, key=key, binary=binary, compiled=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


_default_cache: BinaryCache | None = None
_default_lock = threading.Lock()


def default_cache() -> BinaryCache:
    """The process's shared cache, under cache_root()."""
    global _default_cache
    with _default_lock:
        if _default_cache is None:
            _default_cache = BinaryCache()
        return _default_cache


def build_candidate(source: str, *, cache: BinaryCache | None = None) -> BuildOutcome:
    """Build a candidate's routesim binary (without lnd), from cache if it can."""
    return (cache or default_cache()).build(source)
