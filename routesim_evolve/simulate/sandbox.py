"""Run a routesim binary on one scenario as hostile code.

The candidate's source passed the allow-list, but that is one fence; the
process gets more:

- a wall-clock timeout (SIGQUIT first, so Go prints where it was, then
  SIGKILL), and RLIMIT_CPU as a backstop should the watcher die;
- a memory cap: GOMEMLIMIT makes the Go collector work to stay under the
  heap budget, RLIMIT_AS stops the process past it. Go reserves address
  space it never touches (measured with Go 1.26 on linux/amd64: a run of the
  small example needs 724 MiB of address space with 8 MiB resident, and a
  heap of H needs about H + 1.2 GiB), so RLIMIT_AS is the budget plus
  `address_space_overhead_bytes` (1.5 GiB);
- no network: `unshare -n` (a fresh network namespace with only a down
  loopback) when it works, else a logged warning;
- a scrubbed environment (PATH, HOME, GOMAXPROCS, GOMEMLIMIT, GOTRACEBACK),
  a scratch working folder removed afterwards, no core dumps, capped files
  and capped captured output.

What runs is what was checked: the binary (and a reference router's bridge
process it starts, such as LDK's) are
opened, checked against the hash recorded when they were built
(`build/trusted.py`; a binary the harness has no record of, such as a test's
stand-in, is run unchecked), and started through that open descriptor
(`/proc/self/fd/N`), so a file swapped after the check never runs.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import functools
import hashlib
import logging
import math
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, NamedTuple, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from routesim_evolve.build.trusted import CheckedFile, open_checked
from routesim_evolve.fsutil import GIB, MIB
from routesim_evolve.hostile_fs import Folder, HostileEntry
from routesim_evolve.simulate.diagnose import looks_like_memory, parse_crash, render_frames
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.routers import bridge_of
from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus
from routesim_evolve.textclip import clip_block, quoted_output

log = logging.getLogger(__name__)


#: The child's PATH: the binary needs none, but a shell-less exec of
#: `unshare` is resolved by the parent anyway.
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxLimits(BaseModel):
    """What one run may use."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=60.0, gt=0)
    #: The heap budget: GOMEMLIMIT, and RLIMIT_AS less the overhead.
    memory_bytes: int = Field(default=1 * GIB, gt=0)
    address_space_overhead_bytes: int = Field(default=3 * GIB // 2, ge=0)
    gomaxprocs: int = Field(default=1, ge=1)
    #: Captured bytes kept per stream (half from the head, half the tail).
    output_cap_bytes: int = Field(default=256 * 1024, gt=0)
    #: Largest file the process may write, and largest result read. An
    #: honest result takes at most about 7 KB a payment (40 attempts logged;
    #: a router's error text is cut to 1,000 bytes by the simulator), so 16 MiB
    #: holds scenarios of over 2,000 payments, while a flood of text stops
    #: here instead of in the harness's memory and the evaluation cache.
    result_cap_bytes: int = Field(default=16 * MIB, gt=0)
    #: Time between SIGQUIT (print stacks) and SIGKILL after a timeout.
    kill_grace_s: float = Field(default=1.0, ge=0)
    isolate_network: bool = True
    #: Where scratch folders go; None for the system's temporary folder.
    scratch_parent: Path | None = None

    @property
    def address_space_bytes(self) -> int:
        """RLIMIT_AS."""
        return self.memory_bytes + self.address_space_overhead_bytes

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU: a backstop well past what the timeout allows."""
        return math.ceil(2 * self.timeout_s * self.gomaxprocs) + 10

    def but(self, **changes: float | int | None) -> SandboxLimits:
        """These limits with the named fields changed (validated); a None
        keeps the field, so callers never restate a default."""
        given = {k: v for k, v in changes.items() if v is not None}
        if not given:
            return self  # the hot path: every run asks, most change nothing
        return SandboxLimits.model_validate({**self.model_dump(), **given})


#: The limits of one run unless a caller says otherwise: the one place the
#: default time (60 s) and heap (1 GiB) budgets live.
DEFAULT_LIMITS = SandboxLimits()


@functools.cache
def _unshare_prefix() -> tuple[str, ...]:
    """`unshare -n` if this machine allows new network namespaces, else ()."""
    unshare = shutil.which("unshare")
    if unshare:
        try:
            probe = subprocess.run([unshare, "-n", "true"], capture_output=True, timeout=10)
            if probe.returncode == 0:
                return (unshare, "-n", "--")
            reason = probe.stderr.decode(errors="replace").strip()
        except (OSError, subprocess.SubprocessError) as exc:
            reason = str(exc)
    else:
        reason = "no unshare command"
    log.warning("running candidates WITH network access: unshare -n failed (%s)", reason)
    return ()


def network_isolation_available() -> bool:
    """True when runs get no network (`unshare -n` works here)."""
    return bool(_unshare_prefix())


def _child_env(limits: SandboxLimits, home: Path) -> dict[str, str]:
    return {
        "PATH": CHILD_PATH,
        "HOME": str(home),
        "GOMAXPROCS": str(limits.gomaxprocs),
        "GOMEMLIMIT": str(limits.memory_bytes),
        # single: a panic prints only its goroutine (a candidate's thousand
        # goroutines would drown it); SIGQUIT still dumps all of them.
        "GOTRACEBACK": "single",
    }


def _apply_limits(limits: SandboxLimits) -> None:
    """Runs in the child between fork and exec: only setrlimit calls, which
    take no locks (preexec_fn must not, as other threads may be running)."""
    setrlimit = resource.setrlimit
    setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    setrlimit(resource.RLIMIT_CORE, (0, 0))
    setrlimit(resource.RLIMIT_FSIZE, (limits.result_cap_bytes, limits.result_cap_bytes))
    setrlimit(resource.RLIMIT_NOFILE, (256, 256))


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping its head and its tail: a panic's report comes
    last, after whatever the candidate printed."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_len = 0
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):
                self.total += len(chunk)
                room = self.half - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_len += len(chunk)
                    while self.tail_len - len(self.tail[0]) >= self.half:
                        self.tail_len -= len(self.tail.popleft())
        except (OSError, ValueError):
            pass  # the pipe was closed under us: keep what we have

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half :]
        cut = self.total - len(self.head) - len(tail)
        middle = f"\n[... {cut} bytes cut ...]\n".encode() if cut > 0 else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", errors="replace")


class _Watchdog(threading.Thread):
    """SIGQUIT at the deadline (Go prints its stacks), SIGKILL after grace."""

    def __init__(self, pid: int, limits: SandboxLimits) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.limits = limits
        self.done = threading.Event()
        self.fired = False

    def run(self) -> None:
        if self.done.wait(self.limits.timeout_s):
            return
        self.fired = True
        self._signal(signal.SIGQUIT)
        if not self.done.wait(self.limits.kill_grace_s):
            self._signal(signal.SIGKILL)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)  # the child leads its own session


class _Exit(BaseModel):
    """How the process ended."""

    model_config = ConfigDict(frozen=True)

    code: int
    timed_out: bool
    wall_s: float
    #: ru_maxrss: on Linux it includes the forking Python's footprint
    #: before exec, so it is an upper bound, useful for large runs only.
    peak_rss_bytes: int
    stdout: str
    stderr: str


def _spawn_and_wait(
    cmd: list[str], cwd: Path, limits: SandboxLimits, pass_fds: tuple[int, ...] = ()
) -> _Exit:
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=_child_env(limits, cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=functools.partial(_apply_limits, limits),
        start_new_session=True,
        close_fds=True,
        pass_fds=pass_fds,
    )
    assert proc.stdout is not None and proc.stderr is not None
    readers = [_CappedReader(s, limits.output_cap_bytes) for s in (proc.stdout, proc.stderr)]
    for r in readers:
        r.start()
    dog = _Watchdog(proc.pid, limits)
    dog.start()
    try:
        # wait4 rather than proc.wait: it also gives the peak RSS.
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        dog.done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join(timeout=5)
    proc.stdout.close()
    proc.stderr.close()
    return _Exit(
        code=proc.returncode,
        timed_out=dog.fired,
        wall_s=time.monotonic() - start,
        peak_rss_bytes=usage.ru_maxrss * 1024,
        stdout=readers[0].text(),
        stderr=readers[1].text(),
    )


def _read_result(path: Path, limits: SandboxLimits) -> tuple[Result | None, str]:
    """The result file, parsed; or None and why not (the why in the second
    place, else the file's sha256). The scratch folder is the binary's to
    write: the file is taken as hostile_fs takes any (no link followed, a
    regular file with one name, capped), so a binary that planted a link
    to a secret gets it refused, not quoted back in its feedback."""
    try:
        with Folder(path.parent) as folder:
            data = folder.read(path.name, limits.result_cap_bytes)
    except HostileEntry as exc:
        if exc.errno == errno.ENOENT:
            return None, "routesim exited 0 but wrote no result file"
        return None, f"the result file was refused: {exc}"
    try:
        return Result.model_validate_json(data), hashlib.sha256(data).hexdigest()
    except ValidationError as exc:
        return None, clip_block(f"the result file is not a valid routesim-result/1: {exc}", 2000)


def refused_scenario(stderr: str) -> bool:
    """routesim's own refusal of a scenario: exit 2 with its message last and
    no Go trace. A router cannot exit without a trace (it has no os.Exit),
    so it cannot pass its crash off as the harness's fault."""
    lines = stderr.strip().splitlines()
    return bool(lines) and lines[-1].startswith("routesim: ") and not any(
        line.startswith("goroutine ") for line in lines
    )


def classify(
    ex: _Exit, scenario: str, limits: SandboxLimits, source: str | None
) -> tuple[RunStatus, str]:
    """A failed run's status and feedback (exit code non-zero or timeout)."""
    crash = parse_crash(ex.stderr)
    where = render_frames(crash, source)
    if ex.timed_out:
        text = (
            f"Timed out: the router did not finish scenario {scenario} within "
            f"{limits.timeout_s:g} s of wall-clock time and was killed."
        )
        return RunStatus.TIMEOUT, text + (f"\nIt was running:\n{where}" if where else "")
    # Only the runtime's own fatal error, or the kernel's kill, means memory:
    # text the router printed earlier is not evidence.
    ran_out = crash.kind == "fatal" and looks_like_memory(crash.message)
    if ran_out or ex.code == -signal.SIGKILL:
        text = (
            f"Out of memory: the router needed more than the {limits.memory_bytes // MIB} MiB "
            f"memory cap on scenario {scenario} and was stopped."
        )
        return RunStatus.MEMORY, text + (f"\nIt was allocating:\n{where}" if where else "")
    if crash.kind in ("panic", "fatal"):
        what = "panicked" if crash.kind == "panic" else "crashed (fatal runtime error)"
        text = f"The router {what} on scenario {scenario}: {crash.message}"
        return RunStatus.PANIC, text + (f"\n{where}" if where else "")
    if ex.code == 2 and refused_scenario(ex.stderr):
        return (
            RunStatus.SCENARIO_ERROR,
            f"routesim refused scenario {scenario} (not the router's doing).\n"
            + quoted_output(ex.stderr),
        )
    how = f"signal {-ex.code}" if ex.code < 0 else f"exit code {ex.code}"
    return RunStatus.EXIT, f"routesim failed with {how} on scenario {scenario}.\n" + quoted_output(
        ex.stderr
    )


#: The router a routesim binary plays unless told otherwise: its candidate.
CANDIDATE_ROUTER = "candidate"


class RunOptions(TypedDict, total=False):
    """How one run goes besides the binary and the scenario, passed through
    as keywords by every executor: the router the binary plays (a reference
    router's name, else CANDIDATE_ROUTER), its limits (else DEFAULT_LIMITS),
    the candidate's source, which lets feedback quote its lines, and the
    bridge binary a bridged reference router runs (`routers.py`)."""

    router: str
    limits: SandboxLimits | None
    source: str | None
    bridge: Path | None


class ResolvedRun(NamedTuple):
    """RunOptions with their defaults filled in."""

    router: str
    limits: SandboxLimits
    source: str | None
    bridge: Path | None


def resolve_run(options: RunOptions) -> ResolvedRun:
    """The one place a run's defaults are applied, for every executor."""
    return ResolvedRun(options.get("router", CANDIDATE_ROUTER),
                       options.get("limits") or DEFAULT_LIMITS, options.get("source"),
                       options.get("bridge"))


def run_binary(binary: Path, scenario_path: Path, **options: Unpack[RunOptions]) -> RunOutcome:
    """Run `binary --router ROUTER --no-timing` on one scenario inside the
    sandbox. Never raises for what the binary does: every failure is a
    RunOutcome. A binary (or bridge) whose bytes differ from its record
    raises TrustedFileChanged, and is not run."""
    router, limits, source, bridge_path = resolve_run(options)
    with contextlib.ExitStack() as files:
        checked = files.enter_context(open_checked(Path(binary).resolve()))
        bridge = (files.enter_context(open_checked(Path(bridge_path).resolve()))
                  if bridge_path is not None else None)
        return _run_checked(checked, bridge, Path(scenario_path).resolve(), router, limits,
                            source)


def _bridge_option(router: str) -> str:
    """The flag that hands routesim `router`'s bridge."""
    if (bridge := bridge_of(router)) is None:
        raise ValueError(f"router {router!r} runs no bridge, yet one was given")
    return bridge.option


def _run_checked(binary: CheckedFile, bridge: CheckedFile | None, scenario: Path, router: str,
                 limits: SandboxLimits, source: str | None) -> RunOutcome:
    name = scenario.name
    prefix = _unshare_prefix() if limits.isolate_network else ()
    scratch = Path(tempfile.mkdtemp(prefix="routesim-run-", dir=limits.scratch_parent))
    try:
        out = scratch / "result.json"
        cmd = [*prefix, binary.exec_path, "--router", router, "--no-timing"]
        fds = [binary.fd]
        if bridge is not None:
            cmd += [_bridge_option(router), bridge.exec_path]
            fds.append(bridge.fd)
        cmd += ["--out", str(out), str(scenario)]
        try:
            ex = _spawn_and_wait(cmd, scratch, limits, tuple(fds))
        except OSError as exc:
            # exec fails with ENOMEM when the binary's static data alone
            # exceeds the address-space cap: the candidate's doing.
            status = RunStatus.MEMORY if exc.errno == errno.ENOMEM else RunStatus.INTERNAL
            return RunOutcome(
                status=status,
                scenario=str(scenario),
                router=router,
                feedback=f"could not run routesim on scenario {name}: {exc}",
            )
        common = {
            "scenario": str(scenario),
            "router": router,
            "exit_code": ex.code,
            "wall_s": ex.wall_s,
            "peak_rss_bytes": ex.peak_rss_bytes,
            "stderr": ex.stderr,
        }
        if ex.code == 0 and not ex.timed_out:
            result, why = _read_result(out, limits)
            if result is not None:
                return RunOutcome(status=RunStatus.OK, result=result, result_sha256=why, **common)
            return RunOutcome(status=RunStatus.BAD_OUTPUT, feedback=why, **common)
        status, feedback = classify(ex, name, limits, source)
        return RunOutcome(status=status, feedback=feedback, **common)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
