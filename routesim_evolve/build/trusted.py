"""Trusted files, checked by content before each use.

The harness runs some files as itself, outside any jail, or believes what
they say: the routesim builds (candidates' and the reference build with lnd,
`cache.py`), our Go tools such as candcheck (`tools.py`), LDK's bridge
(`ldk.py`) and the Go toolchain every build calls (`gomodule.py`). Each is

- made read-only (a-w) once built, with its sha256 recorded in this
  process's memory and in a read-only sidecar `<file>.sha256` beside it (the
  toolchain, which the harness does not build, in one record file in the
  cache folder, written the first time a process trusts it);
- checked before each use: the file is opened without following a symlink,
  must be a regular file, and is hashed through that descriptor (memoised on
  its fstat's device, inode, size, mtime and ctime: ctime moves on every
  write, chmod, utime or rename, and user space cannot set it back) and
  compared with the record; where the harness starts the file itself it
  runs `/proc/self/fd/N` of that same descriptor (`CheckedFile.exec_path`),
  so a swap between the check and the start runs nothing unchecked.

A mismatch raises `TrustedFileChanged` (exit 2 through the command line's
UserError path) naming the file, both hashes and what to do; from then on
every check in the process refuses (`TrustedFileChanged` again), so nothing
made after it is trusted, and `first_mismatch()` returns it for a loop that
catches its steps' errors to stop on.

What this guarantees: within one process, once a file's hash is recorded
(when the process built it or first read its record), no other bytes under
that name run or are believed, whether swapped in place (same size, mtime
put back), renamed over it, or replaced by a symlink or a script. What it
does not: the record a new process starts from is the sidecar (or the
toolchain's record file) in the cache folder; an attacker who can write the
cache folder between two runs can replace a file and its record together,
and the next process trusts the pair. Keeping the cache folder out of every
agent's writable binds, and the files read-only, is what guards that. The
toolchain is checked before each `go` command, but go then starts compile
and link by path, so a swap within that command is not seen; the tools
(candcheck, scenariocheck, maxflow) run through their checked descriptor
(`tools.run_tool`). root ignores a-w, and can set the clock back to forge a ctime.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from routesim_evolve.cli_error import UserError
from routesim_evolve.fsutil import atomic_write, file_lock

#: What a sidecar holds: one sha256, hex.
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

#: Suffix of a trusted file's sidecar.
SIDECAR_SUFFIX = ".sha256"

#: What to do about a changed file in the cache folder.
CACHE_REMEDY = ("find out what wrote into the cache folder, then delete the cache folder "
                "($ROUTESIM_CACHE_DIR, else ~/.cache/routesim-evolve) to rebuild it")


class TrustedFileChanged(UserError):
    """A trusted file's bytes are not the ones the harness recorded: the run
    stops, and nothing the file made is trusted."""

    def __init__(self, path: Path, expected: str, found: str, remedy: str) -> None:
        super().__init__(
            f"the trusted file {path} has changed since it was built or first trusted "
            f"(expected sha256 {expected}, found {found}): it was not run, and nothing it "
            f"made is trusted. To go on, {remedy}."
        )
        self.path = path
        self.expected = expected
        self.found = found
        self.remedy = remedy


@dataclass(frozen=True)
class CheckedFile:
    """An open descriptor of a file whose bytes were checked. `trusted` is
    False when no record exists yet (never built, or built elsewhere)."""

    path: Path
    fd: int
    sha256: str
    trusted: bool

    @property
    def exec_path(self) -> str:
        """The checked bytes themselves, for exec (pass `fd` in pass_fds)."""
        return f"/proc/self/fd/{self.fd}"


_lock = threading.Lock()
#: Expected sha256 by absolute path: this process's own record.
_expected: dict[str, str] = {}
#: sha256 by fstat signature, so an unchanged file is hashed once.
_digests: dict[tuple[int, ...], str] = {}
#: The first mismatch seen: every later check refuses with it.
_tampered: TrustedFileChanged | None = None


def sidecar(path: Path) -> Path:
    """Where `path`'s recorded sha256 is kept for other processes."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def record(path: Path, sha256: str) -> None:
    """Remember `sha256` as `path`'s content in this process."""
    with _lock:
        _expected[os.path.abspath(path)] = sha256


def seal(built: Path, final: Path) -> str:
    """A file the harness just built at `built`, to be renamed to `final`:
    make it read-only, record its sha256 for `final` in memory and in the
    sidecar (written first, so no reader sees the file without it)."""
    fd = os.open(built, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "a build made no regular file", str(built))
        os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o222)
        digest = _hash_fd(fd)
    finally:
        os.close(fd)
    atomic_write(sidecar(final), digest.encode() + b"\n", mode=0o444)
    record(final, digest)
    return digest


def expected_sha256(path: Path) -> str | None:
    """`path`'s recorded sha256: this process's record, else its sidecar's
    (then remembered), else None."""
    key = os.path.abspath(path)
    with _lock:
        if key in _expected:
            return _expected[key]
    try:
        text = sidecar(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not _SHA256.match(text):
        return None
    with _lock:
        return _expected.setdefault(key, text)


@contextmanager
def open_checked(
    path: Path, *, expected: str | None = None, remedy: str = CACHE_REMEDY
) -> Iterator[CheckedFile]:
    """Open `path` and check its bytes against `expected` (else its record).
    Raises TrustedFileChanged on a mismatch, a symlink or a non-regular
    file, and FileNotFoundError when it is absent."""
    _refuse_after_tampering()
    expected = expected or expected_sha256(path)
    fd = _open_no_follow(path, expected, remedy)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            _refuse(path, expected, "not a regular file", remedy)
        found = _hash_fd(fd, st)
        if expected is not None and found != expected:
            _refuse(path, expected, found, remedy)
        yield CheckedFile(path=path, fd=fd, sha256=found, trusted=expected is not None)
    finally:
        os.close(fd)


def verify(path: Path, *, expected: str | None = None, remedy: str = CACHE_REMEDY) -> bool:
    """Check `path` now (for callers that hand the path on): True when it
    matches its record, False when it is absent or has none; a mismatch
    raises TrustedFileChanged."""
    try:
        with open_checked(path, expected=expected, remedy=remedy) as checked:
            return checked.trusted
    except FileNotFoundError:
        return False


def matches(path: Path, sha256: str) -> bool:
    """Whether `path` is a regular file (not a symlink) holding the bytes
    of `sha256`; records and refuses nothing (for a store that fetches a
    file again when it differs)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        return stat.S_ISREG(st.st_mode) and _hash_fd(fd, st) == sha256
    finally:
        os.close(fd)


def make_trusted(path: Path, locks: Path, make: Callable[[Path], None]) -> Path:
    """`path`, built by `make(tmp)` the first time anyone asks (under a lock
    in `locks`, so concurrent callers wait for the one building), sealed,
    then renamed into place; checked against its record on every call. A
    file without a record was never trusted here: it is built again."""
    if verify(path):
        return path
    with file_lock(locks / f"{path.name}.lock"):
        if verify(path):
            return path
        path.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.unlink(missing_ok=True)
        make(tmp)
        seal(tmp, path)
        tmp.replace(path)
    return path


def _open_no_follow(path: Path, expected: str | None, remedy: str) -> int:
    # O_NONBLOCK: a FIFO put in a file's place must not hang the open.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        return os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _refuse(path, expected, f"a symbolic link to {os.readlink(path)}", remedy)
        raise


def _hash_fd(fd: int, st: os.stat_result | None = None) -> str:
    """sha256 of the file behind `fd`, memoised on its fstat signature."""
    st = st or os.fstat(fd)
    signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _lock:
        if signature in _digests:
            return _digests[signature]
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        digest.update(chunk)
        offset += len(chunk)
    found = digest.hexdigest()
    with _lock:
        _digests[signature] = found
    return found


def _refuse(path: Path, expected: str | None, found: str, remedy: str) -> None:
    global _tampered
    error = TrustedFileChanged(path, expected or "a regular file", found, remedy)
    with _lock:
        _tampered = _tampered or error
    raise error


def _refuse_after_tampering() -> None:
    first = _tampered
    if first is not None:
        raise TrustedFileChanged(first.path, first.expected, first.found, first.remedy)


def first_mismatch() -> TrustedFileChanged | None:
    """The first mismatch this process saw, if any: for a loop that catches
    its steps' errors (GEPA's) to stop on, and raise."""
    return _tampered


def forget_tampering() -> None:
    """Clear the refusal that follows a mismatch (tests that tamper on
    purpose, then go on in the same process)."""
    global _tampered
    with _lock:
        _tampered = None
