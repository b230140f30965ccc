"""A long-lived sandboxed process that answers one JSON line per request line:
a candidate served to a driver (`routesim --serve`, docs/realnet.md).

The process is run as every candidate run is (sandbox.py): its binary opened
and checked by content, no network, the same rlimits and environment, its
own session so that the whole group is killed at the end. What differs is
the shape: requests go to its standard input as they come, and each answer
is read with its own deadline, so that a router that stops answering costs
one deadline and not the driver's whole run. Its standard error is kept
(head and tail) for the message of whatever ends the session.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import queue
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from routesim_evolve.build.trusted import open_checked
from routesim_evolve.simulate.sandbox import (
    SandboxLimits,
    _apply_limits,
    _CappedReader,
    _child_env,
    _unshare_prefix,
    _Watchdog,
)

#: The longest answer line kept: a route of 20 hops is under 4 KB.
MAX_ANSWER_BYTES: Final = 1 << 20

#: Answers read ahead of the requests that ask for them.
ANSWER_QUEUE: Final = 4


class SessionError(RuntimeError):
    """The served process broke the session: it exited, answered too late, or
    answered what is not one JSON object; the message says which, with the
    tail of what it printed on standard error."""


class ServedProcess:
    """`with ServedProcess(binary, args, limits, scratch) as p: p.ask({...})`."""

    def __init__(self, binary: Path, args: list[str], limits: SandboxLimits,
                 scratch: Path) -> None:
        self.binary, self.args, self.limits, self.scratch = binary, args, limits, scratch
        self._stack = contextlib.ExitStack()
        # Bounded: a router printing lines nobody asked for blocks on its own
        # pipe instead of filling the driver's memory.
        self._answers: queue.Queue[bytes | None] = queue.Queue(maxsize=ANSWER_QUEUE)
        self._closed = threading.Event()

    def __enter__(self) -> Self:
        checked = self._stack.enter_context(open_checked(self.binary.resolve()))
        prefix = _unshare_prefix() if self.limits.isolate_network else ()
        self.proc = subprocess.Popen(
            [*prefix, checked.exec_path, *self.args], cwd=self.scratch,
            env=_child_env(self.limits, self.scratch), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=functools.partial(_apply_limits, self.limits),
            start_new_session=True, close_fds=True, pass_fds=(checked.fd,))
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._stderr = _CappedReader(self.proc.stderr, self.limits.output_cap_bytes)
        self._stderr.start()
        threading.Thread(target=self._read_answers, daemon=True).start()
        self._dog = _Watchdog(self.proc.pid, self.limits)
        self._dog.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the session: close its input, then kill the group if it lingers."""
        self._closed.set()
        with contextlib.suppress(OSError):
            if self.proc.stdin:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._dog._signal(signal.SIGKILL)
            self.proc.wait()
        self._dog.done.set()
        self._stack.close()

    def _read_answers(self) -> None:
        assert self.proc.stdout is not None
        for line in itertools.chain(_lines(self.proc.stdout), [None]):
            while not self._closed.is_set():
                try:
                    self._answers.put(line, timeout=0.5)
                    break
                except queue.Full:
                    continue

    def ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request line and return the answer's JSON object."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise self._broken(f"its input closed ({exc})") from exc
        try:
            line = self._answers.get(timeout=timeout_s)
        except queue.Empty:
            raise self._broken(f"no answer within {timeout_s:.0f} s") from None
        if line is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)  # its output closed: it is ending
            raise self._broken("it exited")
        try:
            answer = json.loads(line)
        except ValueError:
            raise self._broken(f"it answered what is not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise self._broken("it answered what is not a JSON object")
        return answer

    def _broken(self, what: str) -> SessionError:
        code = self.proc.poll()
        ended = f" (exit code {code})" if code is not None else ""
        return SessionError(f"the served router broke the session: {what}{ended}\n"
                            f"{self._stderr.text()[-2000:]}")


def _lines(stream: Any) -> Iterator[bytes]:
    """Lines of a pipe, each cut at MAX_ANSWER_BYTES (the rest of an
    overlong line is dropped, so a flood cannot fill the driver's memory)."""
    while line := stream.readline(MAX_ANSWER_BYTES + 1):
        if not line.endswith(b"\n") and len(line) > MAX_ANSWER_BYTES:
            while (rest := stream.readline(MAX_ANSWER_BYTES)) and not rest.endswith(b"\n"):
                pass
        yield line[:MAX_ANSWER_BYTES].rstrip(b"\n")
