"""Run an agent CLI as a watched subprocess.

An agent can hang without exiting: codex retrying a host it cannot reach,
a login prompt nobody answers. So besides a limit on the whole run, a run
that shows no progress (no event on stdout that the tool counts as
progress) for `idle_timeout` seconds is stopped. Either stop kills the
agent's whole process group (agents start their own subprocesses) and is a
`TransientError`; a non-zero exit is one too; a missing program is a
`ProposalFailed`.

What the agent prints is the agent's: bytes, read as bytes and decoded with
replacement (a 0xFF byte is one odd character, not a dead reader), and
bounded. Stdout is kept up to `MAX_STDOUT_BYTES` (the reply is its last
event); past that the agent is stopped and its turn fails. Of stderr only
the last `STDERR_KEEP_BYTES` are kept. So an agent that prints a gibibyte
costs the harness at most about `MAX_STDOUT_BYTES + STDERR_KEEP_BYTES`.
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
from typing import IO

from pydantic import BaseModel, ConfigDict

from routesim_evolve.fsutil import MIB
from routesim_evolve.reflect.errors import ProposalFailed, TransientError

# How much of stderr (or stdout) a failure quotes.
STDERR_TAIL = 2_000
#: The most of an agent's stdout kept: its events, the reply the last.
MAX_STDOUT_BYTES = 32 * MIB
#: The tail of an agent's stderr kept, for messages.
STDERR_KEEP_BYTES = 64 * 1024
# How often the watcher looks at the clocks.
_POLL_S = 0.2
# How much one read takes from a pipe, and of a line with no end yet.
_CHUNK = 64 * 1024
_LINE_KEEP = 1 * MIB

Progress = Callable[[str], bool]


class CLIRun(BaseModel):
    """What one finished agent process left behind."""

    model_config = ConfigDict(frozen=True)

    stdout: str
    stderr: str
    returncode: int


class _Watch:
    """The process's output, read on threads as bytes, and when it last
    progressed."""

    def __init__(self, proc: subprocess.Popen[bytes], is_progress: Progress) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.flooded = False
        self.last_progress = time.monotonic()
        self._is_progress = is_progress
        assert proc.stdout is not None and proc.stderr is not None
        self.threads = [
            threading.Thread(target=self._read_out, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self._read_err, args=(proc.stderr,), daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _read_out(self, pipe: IO[bytes]) -> None:
        pending = b""
        while chunk := _read_chunk(pipe):
            if len(self.out) + len(chunk) > MAX_STDOUT_BYTES:
                self.flooded = True
                continue  # drained, not kept: the watcher stops the agent
            self.out += chunk
            *lines, pending = (pending + chunk).split(b"\n")
            if self._progressed(lines):
                self.last_progress = time.monotonic()
            pending = pending[-_LINE_KEEP:]  # a line past this is judged by its tail

    def _progressed(self, lines: list[bytes]) -> bool:
        """Whether any line shows progress; a judge that fails on a line
        says no, and the reader goes on draining the pipe."""
        try:
            return any(self._is_progress(line.decode("utf-8", "replace")) for line in lines)
        except Exception:  # the line is the agent's: the reader must live
            return False

    def _read_err(self, pipe: IO[bytes]) -> None:
        while chunk := _read_chunk(pipe):
            self.err += chunk
            del self.err[:-STDERR_KEEP_BYTES]

    def join(self, timeout: float) -> None:
        for t in self.threads:
            t.join(timeout)

    def stdout(self) -> str:
        return self.out.decode("utf-8", "replace")

    def stderr(self) -> str:
        return self.err.decode("utf-8", "replace")


def _read_chunk(pipe: IO[bytes]) -> bytes:
    """What the pipe has, up to _CHUNK bytes; b"" at its end or on an error."""
    try:
        return pipe.read1(_CHUNK)  # type: ignore[attr-defined,no-any-return]
    except (OSError, ValueError):
        return b""


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
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as err:
        raise ProposalFailed(f"cannot start {args[0]}: {err}", permanent=True) from err
    watch = _Watch(proc, is_progress)
    # On a thread too: an agent that never reads its stdin must not block us.
    threading.Thread(target=_feed, args=(proc, stdin.encode()), daemon=True).start()
    started = time.monotonic()
    while proc.poll() is None:
        now = time.monotonic()
        if now - started > timeout:
            _kill_group(proc)
            raise TransientError(f"{tool} timed out after {timeout:.0f}s")
        if watch.flooded:
            _kill_group(proc)
            raise TransientError(f"{tool} printed over {MAX_STDOUT_BYTES // MIB} MiB and was "
                                 "stopped")
        if now - watch.last_progress > idle_timeout:
            _kill_group(proc)
            tail = watch.stderr().strip()[-STDERR_TAIL:]
            raise TransientError(
                f"{tool} made no progress for {idle_timeout:.0f}s and was stopped"
                + (f"; its last words: {tail}" if tail else "")
            )
        time.sleep(_POLL_S)
    watch.join(timeout=5)
    if watch.flooded:
        raise TransientError(f"{tool} printed over {MAX_STDOUT_BYTES // MIB} MiB")
    stdout, stderr = watch.stdout(), watch.stderr()
    if proc.returncode != 0:
        tail = (stderr.strip() or stdout.strip())[-STDERR_TAIL:]
        raise TransientError(f"{tool} exited with status {proc.returncode}: {tail}")
    return CLIRun(stdout=stdout, stderr=stderr, returncode=proc.returncode)


def _feed(proc: subprocess.Popen[bytes], text: bytes) -> None:
    """Write the prompt and close stdin; an agent that exits before reading
    it all is judged by its exit status, not by the broken pipe."""
    assert proc.stdin is not None
    with suppress(BrokenPipeError, OSError):
        proc.stdin.write(text)
    with suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
