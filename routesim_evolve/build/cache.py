"""A content-addressed cache of routesim binaries, one per candidate source.

A candidate is compiled into the routesim command without copying the module:
`go build -overlay` maps the candidate's slot (go/cmd/routesim/
candidate_impl.go) to the candidate written in a scratch folder. The key of a
binary is the sha256 of everything that decides it: the candidate, the
module's other sources, go.sum, `go version`, the build tags and flags. A key
is compiled at most once: a per-key flock makes parallel workers (threads or
processes) wait for the first, and binaries appear by atomic rename, so no one
ever runs a half-written file. Each is read-only, with its sha256 recorded in
memory and beside it, and is checked against that record on every look-up
and again by the run that starts it (`trusted.py`): a binary whose bytes
changed stops the run (TrustedFileChanged); one without a record was never
trusted here and is rebuilt. Every failure of a candidate build is
cached too (compile errors, timeouts, limits hit), so a candidate is compiled
at most once, whatever it does to the compiler.

The compiler is treated as hostile as the binary (`BuildLimits`): a time
limit sized to normal builds, memory, CPU and file-size limits on every
compiler process, a Go build cache of the candidates' own, checked against
its bound after every candidate build (emptied and warmed again past it),
and the binaries bounded, oldest evicted first.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import logging
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field

from routesim_evolve.build.allowlist import Finding, check_source
from routesim_evolve.build.gomodule import (
    CANDIDATE_SLOT,
    NOLND_TAG,
    ROUTESIM_PACKAGE,
    GoToolchainError,
    build_env,
    cache_root,
    go_binary,
    go_module_dir,
    go_version,
    module_fingerprint,
)
from routesim_evolve.build.trusted import seal, verify
from routesim_evolve.fsutil import (
    GIB,
    MIB,
    atomic_write,
    evict_oldest,
    file_lock,
    touch_if_stale,
)
from routesim_evolve.textclip import clip_line

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
            out.append(f"\t{n} | {clip_line(source_lines[n - 1].strip())}")
    if len(lines) > MAX_MESSAGE_LINES:
        out.append(f"... ({len(lines) - MAX_MESSAGE_LINES} more lines)")
    return "\n".join(out)


class BuildLimits(BaseModel):
    """What compiling one candidate may use. The compiler is as exposed as
    the binary: a few hundred bytes of source can ask it for gigabytes of
    initialised data or an exponential chain of generic instantiations."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Wall clock of one candidate build. A build with a warm cache takes
    #: about 1 s (2.4 s with both cores busy: bench/bench_build.py).
    timeout_s: float = Field(default=20.0, gt=0)
    #: Heap budget of each compiler process; RLIMIT_AS adds Go's reserve.
    memory_bytes: int = Field(default=2 * GIB, gt=0)
    address_space_overhead_bytes: int = Field(default=3 * GIB // 2, ge=0)
    #: CPU seconds of each compiler process (RLIMIT_CPU).
    cpu_seconds: int = Field(default=60, gt=0)
    #: Largest file the build may write (RLIMIT_FSIZE): the binary, and
    #: each object in the build cache. A candidate binary is about 7 MiB.
    output_bytes: int = Field(default=64 * MIB, gt=0)
    #: Bounds of the binaries kept, and of the candidates' Go build cache
    #: (each evicted, oldest first, past its bound).
    binaries_bytes: int = Field(default=2 * GIB, gt=0)
    go_cache_bytes: int = Field(default=2 * GIB, gt=0)

    def apply(self) -> None:
        """Set the limits in a child between fork and exec (setrlimit only)."""
        address_space = self.memory_bytes + self.address_space_overhead_bytes
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.output_bytes, self.output_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


#: What the trusted builds (the module itself: the seed and lnd's reference
#: routers) may take: the first one compiles lnd's whole dependency tree.
TRUSTED_TIMEOUT_S = 900.0


class BinaryCache:
    """Builds routesim binaries and keeps them under `root`/bin by key.

    Thread-safe and process-safe. `compiles` counts the compiler runs made
    through this instance (tests and benchmarks read it). Candidates build
    under `limits` in a Go build cache of their own (`candidate_go_cache`),
    warmed once per process and build tags by a trusted build of the in-tree
    seed, so that their time limit measures the candidate and not the
    dependencies (lnd's tree, when the tags link it in).
    """

    def __init__(
        self,
        root: Path | None = None,
        go_dir: Path | None = None,
        *,
        limits: BuildLimits | None = None,
        flags: tuple[str, ...] = BUILD_FLAGS,
    ) -> None:
        self.root = (root or cache_root()).resolve()
        self.go_dir = (go_dir or go_module_dir()).resolve()
        self.limits = limits or BuildLimits()
        self.flags = flags
        self.compiles = 0
        self._count_lock = threading.Lock()
        self._warmed: set[tuple[str, ...]] = set()

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
        self._warm_candidate_cache(tags)
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
        """The cached outcome of `key`, if any: a binary that matches its
        record, or a failure. A binary without a record is removed, never
        trusted; one whose bytes changed raises TrustedFileChanged."""
        binary = self.binary_path(key)
        if binary.is_file() or binary.is_symlink():
            if verify(binary):
                touch_if_stale(binary)  # eviction keeps the recently used
                return BuildOutcome(status=BuildStatus.OK, key=key, binary=binary)
            log.warning("binary %s has no recorded checksum: building again", binary)
            binary.unlink(missing_ok=True)
        failure = self._failure_path(key)
        if failure.is_file():
            try:
                cached = BuildOutcome.model_validate_json(failure.read_bytes())
            except (OSError, ValueError):
                log.warning("build failure record %s is unreadable: building again", failure)
                failure.unlink(missing_ok=True)
                return None
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
        if outcome.compiled and outcome.ok:
            self._evict_binaries()
        return outcome.model_copy(update={"seconds": time.monotonic() - start})

    def _warm_candidate_cache(self, tags: tuple[str, ...]) -> None:
        """Once per process and tags: a trusted build of the in-tree seed
        with the candidates' Go build cache, so that it holds every
        dependency those tags compile."""
        if tags in self._warmed:
            return
        with file_lock(_candidate_cache_lock()):
            self._empty_if_over_bound()
            self._warm(tags)
        self._warmed.add(tags)

    def _bound_candidate_cache(self, tags: tuple[str, ...]) -> None:
        """After each candidate build: a candidate can leave tens of MiB in
        the candidates' Go build cache (static tables), so its bound is
        checked every time. Over it, the cache is emptied and warmed again
        at once for every tag set this process builds with, under the
        exclusive lock that every candidate build's shared one waits for:
        no build finds it half gone, and none compiles the dependencies
        within a candidate's time limit."""
        if _tree_bytes(candidate_go_cache()) <= self.limits.go_cache_bytes:
            return
        with file_lock(_candidate_cache_lock()):
            if self._empty_if_over_bound():
                for warmed in sorted(self._warmed | {tags}):
                    self._warm(warmed)

    def _empty_if_over_bound(self) -> bool:
        """Empty the candidates' Go build cache if it is over its bound (the
        caller holds the exclusive lock); whether it did."""
        go_cache = candidate_go_cache()
        if _tree_bytes(go_cache) <= self.limits.go_cache_bytes:
            return False
        log.info("candidate Go build cache over its bound: emptying it")
        shutil.rmtree(go_cache, ignore_errors=True)
        return True

    def _warm(self, tags: tuple[str, ...]) -> None:
        """A trusted build of the in-tree seed with the candidates' cache."""
        with tempfile.TemporaryDirectory(dir=self._scratch_root()) as tmp:
            cmd = [go_binary(), "build", *self.flags, "-tags=" + ",".join(tags),
                   "-o", str(Path(tmp) / "seed"), ROUTESIM_PACKAGE]
            proc = _run_go(cmd, self.go_dir, self._env(candidate=True), TRUSTED_TIMEOUT_S)
            if proc.returncode != 0:
                raise GoToolchainError(f"building the seed failed:\n{proc.output}")

    def _env(self, *, candidate: bool) -> dict[str, str]:
        env = build_env()
        if candidate:
            env["GOCACHE"] = str(candidate_go_cache())
        return env

    def _scratch_root(self) -> Path:
        scratch_root = self.root / "scratch"
        scratch_root.mkdir(parents=True, exist_ok=True)
        return scratch_root

    def _compile(self, key: str, source: str | None, tags: tuple[str, ...]) -> BuildOutcome:
        binary = self.binary_path(key)
        binary.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="build-", dir=self._scratch_root()))
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
            hostile = source is not None
            if hostile:
                # Shared: candidate builds run together, and the bound's
                # emptying (exclusive) waits for them.
                with file_lock(_candidate_cache_lock(), shared=True):
                    proc = _run_go(cmd, self.go_dir, self._env(candidate=True),
                                   self.limits.timeout_s, limits=self.limits)
                self._bound_candidate_cache(tags)
            else:
                proc = _run_go(cmd, self.go_dir, self._env(candidate=False), TRUSTED_TIMEOUT_S)
            if proc.returncode != 0 or not tmp_binary.is_file():
                tmp_binary.unlink(missing_ok=True)
                if not hostile:
                    raise GoToolchainError(f"building routesim failed:\n{proc.output}")
                outcome = BuildOutcome(
                    status=BuildStatus.COMPILE_ERROR,
                    key=key,
                    message=self._failure_message(proc, scratch_file, source),
                    compiled=True,
                )
                # Every failure is the candidate's: the dependencies are
                # built (warm cache), so even a timeout is not retried.
                atomic_write(self._failure_path(key), outcome.model_dump_json().encode())
                return outcome
            seal(tmp_binary, binary)
            tmp_binary.replace(binary)
            return BuildOutcome(status=BuildStatus.OK, key=key, binary=binary, compiled=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _failure_message(self, proc: _GoRun, scratch_file: Path, source: str | None) -> str:
        """What the candidate's author reads: the compiler's message, or
        which limit the build hit."""
        limits = self.limits
        if proc.timed_out:
            return (f"The candidate did not compile within {limits.timeout_s:g} s (a normal "
                    "build takes about 1 s): it makes the Go compiler work too hard, e.g. "
                    "huge initialised data or deep chains of generic instantiations.")
        hit = _limit_hit(proc)
        if hit is not None:
            return {
                "memory": f"Compiling the candidate needed more than the compiler's "
                          f"{limits.memory_bytes // MIB} MiB memory cap",
                "cpu": f"Compiling the candidate took more than {limits.cpu_seconds} s of CPU",
                "output": f"Compiling the candidate wrote a file over "
                          f"{limits.output_bytes // MIB} MiB (the binary or a compiled "
                          "package): keep tables computed at run time, not initialised",
            }[hit] + ". The build was stopped."
        return "The candidate does not compile:\n" + clean_compiler_output(
            proc.output, scratch_file, source
        )

    def _evict_binaries(self) -> None:
        """Delete the least recently used binaries past the bound."""
        entries = [p for p in (self.root / "bin").glob("*/*") if p.is_file()
                   and not p.name.startswith(".") and "." not in p.name]
        evict_oldest(entries, self.limits.binaries_bytes, _remove_binary)


def _remove_binary(binary: Path) -> None:
    binary.unlink(missing_ok=True)
    binary.with_name(binary.name + ".sha256").unlink(missing_ok=True)


class _GoRun(BaseModel):
    """How one go command ended."""

    returncode: int
    output: str
    timed_out: bool = False


def _run_go(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float,
            *, limits: BuildLimits | None = None) -> _GoRun:
    """Run a go command in its own process group, killed whole at the
    timeout (the compiler and linker are its children)."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=limits.apply if limits is not None else None,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        return _GoRun(returncode=proc.returncode, output=_clip(out))
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return _GoRun(returncode=-signal.SIGKILL, output=_clip(out), timed_out=True)


def _clip(out: bytes, cap: int = 256 * 1024) -> str:
    return out[:cap].decode("utf-8", errors="replace")


def _limit_hit(proc: _GoRun) -> str | None:
    """Which rlimit stopped the build, from the signal or the message."""
    text = proc.output.lower()
    if "file too large" in text or "signal: file size limit exceeded" in text:
        return "output"
    if "cpu time limit exceeded" in text:
        return "cpu"
    if any(s in text for s in ("out of memory", "cannot allocate memory", "signal: killed")):
        return "memory"
    return None


def candidate_go_cache() -> Path:
    """The Go build cache of candidate builds, apart from the user's: one
    per machine (Go's cache is content-addressed, so every binary cache may
    share it)."""
    return cache_root() / "go-build-candidates"


def _candidate_cache_lock() -> Path:
    """The lock every candidate build holds shared, and the bound's
    emptying and the warm-up hold exclusive."""
    return candidate_go_cache().parent / "locks" / "candidate-go-cache.lock"


def _tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


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
