"""Files every package writes: locks, atomic writes, eviction, sizes.

Workers may be threads or processes, so locks are `flock` locks on a lock
file: each `open` gets its own open file description, which makes them
exclusive between threads of one process too (POSIX record locks would not).
It depends on no package of the project, so any of them may use it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

#: Sizes in bytes.
MIB = 1 << 20
GIB = 1 << 30


@contextmanager
def file_lock(path: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold a lock on `path` (created if absent) for the block: exclusive,
    or shared with other shared holders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `path` so that readers see the old file or the whole
    new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_fingerprints: dict[tuple[object, ...], str] = {}
_fingerprints_lock = threading.Lock()


def files_fingerprint(root: Path, files: Sequence[Path], *, salt: bytes = b"") -> str:
    """sha256 over `salt` and, in order, each file's path below `root` and
    the sha256 of its bytes. Memoised on the files' stat signatures: cache
    keys ask for it on every look-up."""
    stats = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    memo_key = (str(root), salt, stats)
    with _fingerprints_lock:
        if memo_key in _fingerprints:
            return _fingerprints[memo_key]
    digest = hashlib.sha256(salt)
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    fingerprint = digest.hexdigest()
    with _fingerprints_lock:
        _fingerprints[memo_key] = fingerprint
    return fingerprint


def evict_oldest(
    files: list[Path], bound_bytes: int, remove: Callable[[Path], None]
) -> None:
    """`remove` the least recently modified of `files` until their total
    size is within `bound_bytes` (callers touch a file when they use it)."""
    sized = [(p, p.stat()) for p in files]
    total = sum(st.st_size for _, st in sized)
    for path, st in sorted(sized, key=lambda item: item[1].st_mtime):
        if total <= bound_bytes:
            return
        remove(path)
        total -= st.st_size


#: How stale a file's mtime may get before a use touches it for eviction's
#: recency: a touch moves its ctime, so the next content check of a trusted
#: file hashes it again (about 15 ms for a candidate) instead of every use.
TOUCH_INTERVAL_S = 3600.0


def touch_if_stale(path: Path) -> None:
    """Mark `path` as recently used for `evict_oldest`, at most hourly."""
    if time.time() - path.stat().st_mtime > TOUCH_INTERVAL_S:
        os.utime(path)
