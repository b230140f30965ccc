"""The jail every agent CLI runs in: bubblewrap, with only what an agent needs.

An agentic LM is an untrusted process that reads files and runs commands.
Path rules in its own permissions are not a boundary (a permitted `gofmt`
could rewrite the simulator; a tool kept in a writable cache could be
replaced and run by a trusted script), so the agent runs under `bwrap`
(Debian's bubblewrap) in a file system built for it, not the user's:

* **read-only**: the system's programs and libraries (`SYSTEM_DIRS`), a
  short list of /etc (`SYSTEM_ETC`: users, name resolution, certificates,
  the dynamic linker's cache), and what the caller names as **visible**:
  the tool's install, the interpreters it runs on, the Go toolchain and
  module cache, the eval script's folder;
* **writable**: the caller's folders alone (its work dir, output dir,
  private home and the eval spool), all made fresh by the harness;
* **nothing else**: no user's home, no project, no run dir, no cache, no
  other folder of the machine. /tmp and /var/tmp are empty and the jail's
  own; the root is a read-only tmpfs holding only the mount points;
* the **hidden** folders (the run dir, the project cache, other runs) are
  replaced by empty ones even where a visible folder holds them;
* its own PID, IPC and UTS namespaces and /proc: it cannot see the
  harness's processes, their memory or their environment; no capability;
  it dies with its parent.

The network stays shared: the agent must reach its model's API. Scores
reach it only through the harness's evaluation spool (propose/eval_service.py),
a server outside the jail that builds and runs its file as any candidate is.
What the jail does not guarantee is written in docs/llm.md ("The agents' jail").
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.errors import BackendUnavailable

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; "
                "scripts/install.sh does it when it can)")
#: The system's programs and libraries, bound read-only (a merged-/usr
#: system's /bin, /lib... are links into /usr, made as links).
SYSTEM_DIRS = (Path("/usr"), Path("/bin"), Path("/sbin"), Path("/lib"), Path("/lib32"),
               Path("/lib64"), Path("/libx32"))
#: What of /etc a program needs: users and groups, name resolution, TLS
#: certificates, the dynamic linker, time zone, terminal and MIME data. Not
#: the rest (password hashes, host keys, package credentials).
SYSTEM_ETC = tuple(Path("/etc", name) for name in (
    "passwd", "group", "hosts", "host.conf", "resolv.conf", "nsswitch.conf", "gai.conf",
    "services", "protocols", "localtime", "timezone", "ssl", "ca-certificates",
    "ca-certificates.conf", "pki", "crypto-policies", "alternatives", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "os-release", "debian_version", "terminfo", "mime.types",
    "shells", "inputrc",
))
# The shared scratch folders, each an empty one of the jail's own.
PRIVATE_TMP = (Path("/tmp"), Path("/var/tmp"))
# Namespaces the agent gets its own of. `-try`: a user or cgroup namespace
# where the kernel allows one (bwrap run as root needs neither).
_UNSHARE = ("--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try")


@functools.cache
def bwrap_binary() -> str | None:
    """bubblewrap's path, or None when it is not installed."""
    return shutil.which("bwrap")


class AgentJail(BaseModel):
    """What an agent may not see, besides everything not bound."""

    model_config = ConfigDict(frozen=True)

    #: Folders replaced by empty ones inside the jail, wherever they lie.
    hidden: tuple[Path, ...] = ()
    #: Folders every agent of this jail may write besides its own: for a
    #: caller that watches its agents (a test's call log). A run shares none.
    shared: tuple[Path, ...] = ()

    def command(self, argv: Sequence[str], *, writable: Sequence[Path], cwd: Path,
                visible: Sequence[Path] = ()) -> list[str]:
        """`argv` run in the jail, in `cwd`, able to write `writable` and to
        read `visible` besides the system's files."""
        bwrap = bwrap_binary()
        if bwrap is None:
            raise BackendUnavailable(f"agents run in a jail: {INSTALL_HINT}")
        args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL", *_UNSHARE,
                "--tmpfs", "/", "--dev", "/dev", "--proc", "/proc"]
        args += _system_binds()
        for path in PRIVATE_TMP:
            args += ["--tmpfs", str(path)]
        for path in _existing(visible):
            args += ["--ro-bind", str(path), str(path)]
        # After what is visible: a run dir inside a visible folder is hidden.
        for path in _existing(self.hidden):
            # An empty folder nothing can be written to (or an empty file).
            args += (["--tmpfs", str(path), "--remount-ro", str(path)] if path.is_dir()
                     else ["--ro-bind", "/dev/null", str(path)])
        # After the hidden ones: a writable folder inside a hidden one (a
        # scratch dir under the runs folder) is bound back over it.
        for path in _existing((*writable, *self.shared)):
            args += ["--bind", str(path), str(path)]
        # Last, the root's own tmpfs made read-only: only the binds above
        # can be written.
        return [*args, "--remount-ro", "/", "--chdir", str(cwd), "--", *argv]

    def probe(self) -> None:
        """Raise BackendUnavailable, with bwrap's own words, unless a jail
        starts here (bwrap installed, namespaces allowed)."""
        try:
            argv = self.command(["true"], writable=(), cwd=Path("/"))
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as err:
            raise BackendUnavailable(f"agents run in a jail, which cannot start: {err}") from None
        if done.returncode != 0:
            said = " ".join((done.stderr or done.stdout).split())[-300:]
            raise BackendUnavailable(
                f"agents run in a jail, which cannot start here (bwrap: {said}); the kernel "
                "must allow user namespaces (sysctl kernel.unprivileged_userns_clone=1) or "
                "bwrap must be setuid"
            )


def _system_binds() -> list[str]:
    """The system's folders and /etc's few files, read-only; a link among
    them (merged /usr) made as the same link."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for path in SYSTEM_ETC:
        if path.exists():
            # A link (resolv.conf into /run) is bound as what it points to.
            args += ["--ro-bind", str(path.resolve()), str(path)]
    return args


def _existing(paths: Sequence[Path]) -> list[Path]:
    """The paths that exist, resolved, each once, in order."""
    seen: dict[Path, None] = {}
    for path in paths:
        if path.exists():
            seen.setdefault(path.resolve(), None)
    return list(seen)
