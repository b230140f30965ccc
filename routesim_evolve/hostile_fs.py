"""Files in folders an untrusted process can write: taken without trusting them.

An agent's work dir, its output dir, its private home and the evaluation
spool are the agent's to change while the harness works beside them. Any
name there may be a symbolic link to a trusted file (the harness that writes
through it overwrites that file; the one that reads through it hands its
bytes to the agent), a hard link, a directory, a FIFO (an `open` that never
returns), a device, a file of a gibibyte, or a file swapped for another
between a check and a use. So the harness never goes through a path there:

* it opens the folder once, as a descriptor, when it has just made the
  folder itself, and every name relative to that
  descriptor, never following a link (O_NOFOLLOW), never waiting on a FIFO
  (O_NONBLOCK);
* it reads a file only when the descriptor it opened is of a regular file
  with one link, judged by `fstat` on that descriptor (not the path), and
  only up to a cap, into memory: the copy is what it uses, whatever the
  name holds a moment later;
* it writes only new files (O_CREAT | O_EXCL), in folders it made fresh, so
  there is nothing an agent could have planted for it to write through.

Every refusal is `HostileEntry` (an OSError), which callers turn into a
message for the agent and a failed turn, never a crash of the harness.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class HostileEntry(OSError):
    """A name in an untrusted folder that is not a plain file the harness
    may take: the message says which and why; `errno` is the system's,
    when the system refused (ENOENT: the name is gone)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        # OSError(errno, text) keeps the text as strerror; str() says both.
        self.message = str(args[-1]) if args else ""

    def __str__(self) -> str:
        return self.message


def _plain_name(name: str) -> str:
    """`name` if it names an entry of the folder itself, not a path."""
    if not name or name in {".", ".."} or "/" in name or "\0" in name:
        raise HostileEntry(f"{name!r} is not a file name")
    return name


class Folder:
    """A folder held by a descriptor opened when the harness trusted its
    path; every operation is relative to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, _FOLDER_FLAGS)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def read(self, name: str, cap: int) -> bytes:
        """The bytes of regular file `name`, at most `cap` of them; raises
        HostileEntry for a link, a directory, a FIFO, a device, a hard
        link, a file over the cap or a name that is gone."""
        try:
            fd = os.open(_plain_name(name), _READ_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise HostileEntry(exc.errno, f"{name}: cannot open it as a plain file "
                                          f"({_why(exc)})") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise HostileEntry(f"{name} is not a regular file")
            if info.st_nlink != 1:
                raise HostileEntry(f"{name} is a hard link ({info.st_nlink} names)")
            if info.st_size > cap:
                raise HostileEntry(f"{name} is over {cap} bytes")
            data = _read_at_most(fd, cap + 1)
        finally:
            os.close(fd)
        if len(data) > cap:
            raise HostileEntry(f"{name} is over {cap} bytes")
        return data

    def create(self, name: str, data: bytes, *, mode: int = 0o644) -> None:
        """Write a new file `name`; raises HostileEntry if anything is
        there already (a planted link, folder or file)."""
        try:
            fd = os.open(_plain_name(name), _CREATE_FLAGS, mode, dir_fd=self.fd)
        except OSError as exc:
            raise HostileEntry(exc.errno, f"{name}: cannot create it ({_why(exc)})") from None
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def remove(self, name: str) -> None:
        """Unlink `name` if it is not a folder; whatever it was, never
        followed. Missing is fine."""
        try:
            os.unlink(_plain_name(name), dir_fd=self.fd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise HostileEntry(exc.errno, f"{name}: cannot remove it ({_why(exc)})") from None

    def names(self, limit: int) -> list[str]:
        """Up to `limit` names in the folder, as they come (a folder of a
        million planted names costs no more than `limit`)."""
        found: list[str] = []
        with os.scandir(self.fd) as entries:
            for entry in entries:
                found.append(entry.name)
                if len(found) >= limit:
                    break
        return found


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
        return "a symbolic link"
    return exc.strerror or type(exc).__name__
