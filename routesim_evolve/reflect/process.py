"""Run an agent CLI as a watched subprocess.

An agent can hang without exiting: codex retrying a host it cannot reach,
a login prompt nobody answers. So besides a limit on the whole run, a run
that shows no progress (no event on stdout that the tool counts as
progress) for `idle_timeout` seconds is stopped. Either stop kills the
agent's whole process group (agents start their own subprocesses) and is a
`TransientError`; a non-zero exit is one too; a missing program is a
`ProposalFailed`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.errors import ProposalFailed, TransientError

# How much of stderr (or stdout) a failure quotes.
STDERR_TAIL = 2_000
# How often the watcher looks at the clocks.
_POLL_S = 0.2

Progress = Callable[[str], bool]


class CLIRun(BaseModel):
    """What one finished agent process left behind."""

    model_config = ConfigDict(frozen=True)

    stdout: str
    stderr: str
    returncode: int


class _Watch:
    """The process's output, read on threads, and when it last progressed."""

    def __init__(self, proc: subprocess.Popen[str], is_progress: Progress) -> None:
        self.out: list[str] = []
        self.err: list[str] = []
        self.last_progress = time.monotonic()
        self._is_progress = is_progress
        assert proc.stdout is not None and proc.stderr is not None
        self.threads = [
            threading.Thread(target=self._read, args=(proc.stdout, self.out, True), daemon=True),
            threading.Thread(target=self._read, args=(proc.stderr, self.err, False), daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _read(self, pipe: object, sink: list[str], counts: bool) -> None:
        for line in iter(pipe.readline, ""):  # type: ignore[attr-defined]
            sink.append(line)
            if counts and self._is_progress(line):
                self.last_progress = time.monotonic()

    def join(self, timeout: float) -> None:
        for t in self.threads:
            t.join(timeout)


def run_cli(
    args: Sequence[str],
    *,
    stdin: str,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    idle_timeout: float,
    is_progress: Progress = lambda line: bool(line.strip()),
    name: str | None = None,
) -> CLIRun:
    """Run an agent CLI (`name` in messages: the program's, by default;
    args[0] may be the jail) to completion under both limits."""
    tool = name or Path(args[0]).name
    try:
        proc = subprocess.Popen(
            list(args), cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
    except OSError as err:
        raise ProposalFailed(f"cannot start {args[0]}: {err}", permanent=True) from err
    watch = _Watch(proc, is_progress)
    # On a thread too: an agent that never reads its stdin must not block us.
    threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    started = time.monotonic()
    while proc.poll() is None:
        now = time.monotonic()
        if now - started > timeout:
            _kill_group(proc)
            raise TransientError(f"{tool} timed out after {timeout:.0f}s")
        if now - watch.last_progress > idle_timeout:
            _kill_group(proc)
            tail = "".join(watch.err).strip()[-STDERR_TAIL:]
            raise TransientError(
                f"{tool} made no progress for {idle_timeout:.0f}s and was stopped"
                + (f"; its last words: {tail}" if tail else "")
            )
        time.sleep(_POLL_S)
    watch.join(timeout=5)
    stdout, stderr = "".join(watch.out), "".join(watch.err)
    if proc.returncode != 0:
        tail = (stderr.strip() or stdout.strip())[-STDERR_TAIL:]
        raise TransientError(f"{tool} exited with status {proc.returncode}: {tail}")
    return CLIRun(stdout=stdout, stderr=stderr, returncode=proc.returncode)


def _feed(proc: subprocess.Popen[str], text: str) -> None:
    """Write the prompt and close stdin; an agent that exits before reading
    it all is judged by its exit status, not by the broken pipe."""
    assert proc.stdin is not None
    with suppress(BrokenPipeError, OSError):
        proc.stdin.write(text)
    with suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
