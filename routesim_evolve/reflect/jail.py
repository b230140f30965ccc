"""The jail every agent CLI runs in: a bubblewrap mount and PID namespace.

An agentic LM is an untrusted process that reads files and runs commands.
Path rules in its own permissions are not a boundary (a permitted `gofmt`
could rewrite the simulator; a tool kept in a writable cache could be
replaced and run by a trusted script), so the agent runs under `bwrap`
(Debian's bubblewrap) with:

* the whole file system bound **read-only**: no trusted source, tool,
  toolchain, module cache, venv or cache can be written;
* **/tmp and /var/tmp empty** (private to the jail): the harness's scratch
  files there (a candidate's result names its scenario's hidden seed) are
  not the agent's to read; only what the tool needs is bound back
  read-only (**visible**: its install, the venv, the project, the eval
  script's folder);
* the **hidden** folders replaced by empty ones: the run dir (its world
  key, hidden worlds, evaluations), the folder of runs beside it, and the
  project cache (references, candidates' builds, the tools);
* writable only its work dir, a private temp dir, the tool's own output dir
  and the tool's **state** (its login and settings, e.g. ~/.claude);
* its own PID namespace and /proc: it cannot see the harness's processes,
  their memory or their environment; it dies with its parent.

The network stays shared: the agent must reach its model's API. Scores
reach it only through the harness's evaluation socket (propose/eval_service.py),
a server outside the jail that builds and runs its file as any candidate is.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.errors import BackendUnavailable

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; "
                "scripts/install.sh does it when it can)")
# The shared scratch folders, each replaced by an empty one in the jail.
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
    """What an agent may not see and what it may write besides its work dir."""

    model_config = ConfigDict(frozen=True)

    #: Folders replaced by empty ones inside the jail.
    hidden: tuple[Path, ...] = ()
    #: The tool's own state (login, settings, sessions): bound read-write.
    state: tuple[Path, ...] = ()

    def with_state(self, *paths: Path) -> AgentJail:
        return self.model_copy(update={"state": (*self.state, *paths)})

    def command(self, argv: Sequence[str], *, writable: Sequence[Path], cwd: Path,
                visible: Sequence[Path] = ()) -> list[str]:
        """`argv` run in the jail, in `cwd`, able to write `writable` too and
        to read `visible` (what it needs from the scratch folders)."""
        bwrap = bwrap_binary()
        if bwrap is None:
            raise BackendUnavailable(f"agents run in a jail: {INSTALL_HINT}")
        args = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL", *_UNSHARE,
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for path in _existing(PRIVATE_TMP):
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
        for path in _existing((*self.state, *writable)):
            args += ["--bind", str(path), str(path)]
        return [*args, "--chdir", str(cwd), "--", *argv]

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


def _existing(paths: Sequence[Path]) -> list[Path]:
    """The paths that exist, resolved, each once, in order."""
    seen: dict[Path, None] = {}
    for path in paths:
        if path.exists():
            seen.setdefault(path.resolve(), None)
    return list(seen)
