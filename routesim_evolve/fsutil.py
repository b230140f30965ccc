"""Files every package writes: locks, atomic writes, eviction, sizes.

Workers may be threads or processes, so locks are `flock` locks on a lock
file: each `open` gets its own open file description, which makes them
exclusive between threads of one process too (POSIX record locks would not).
It depends on no package of the project, so any of them may use it.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
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
