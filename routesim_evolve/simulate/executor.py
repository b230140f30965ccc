"""Where sandboxed runs happen: this machine's pool, or a Ray cluster.

Every run of a binary on a scenario, a candidate's or a reference router's,
goes through an `Executor`. The callers (the evaluator, GEPA's threads, the
reference cache) keep their thread pools; a thread hands its run to the
executor and waits for the outcome. The local executor runs it here; the Ray
executor ships the binary and the scenario through Ray's object store and
runs it on a cluster worker in the same sandbox with the same limits. Builds,
scoring and every cache stay on the driver, so results and cache entries are
the same whichever executor ran them.
"""

from __future__ import annotations

import enum
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, Unpack

from pydantic import BaseModel, ConfigDict, model_validator

from routesim_evolve.simulate.run_outcome import RunOutcome
from routesim_evolve.simulate.sandbox import RunOptions, run_binary

#: Seconds to wait for a cluster's address to answer before giving up on it
#: (ray.init itself waits minutes on an address that never answers).
PROBE_TIMEOUT_S = 5.0


class ExecutorKind(enum.StrEnum):
    """Which executor runs the pairs."""

    LOCAL = "local"
    RAY = "ray"


class ExecutorSettings(BaseModel):
    """The executor a command runs its pairs on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ExecutorKind = ExecutorKind.LOCAL
    #: A Ray cluster's address (HOST:PORT of its head); None: $RAY_ADDRESS,
    #: else a cluster started here by `ray start`, else a new Ray instance
    #: on this machine.
    ray_address: str | None = None

    @model_validator(mode="after")
    def _address_needs_ray(self) -> ExecutorSettings:
        if self.ray_address is not None and self.kind is not ExecutorKind.RAY:
            raise ValueError("--ray-address needs --executor ray")
        return self


class Executor(Protocol):
    """Runs a routesim binary on a scenario in the sandbox (sandbox.run_binary)."""

    def run_binary(
        self, binary: Path, scenario_path: Path, **options: Unpack[RunOptions]
    ) -> RunOutcome: ...

    def slots(self) -> int:
        """How many runs it can take at once: the default concurrency."""
        ...


class LocalExecutor:
    """Runs on this machine, in the caller's thread."""

    def run_binary(
        self, binary: Path, scenario_path: Path, **options: Unpack[RunOptions]
    ) -> RunOutcome:
        return run_binary(binary, scenario_path, **options)

    def slots(self) -> int:
        return os.cpu_count() or 1


#: The executor of every caller that names none.
LOCAL = LocalExecutor()


def open_executor(settings: ExecutorSettings, *, say: Callable[[str], None]) -> Executor:
    """The executor `settings` ask for. When Ray is missing or the cluster
    cannot be reached, `say` hears why in one line and the local pool runs."""
    if settings.kind is ExecutorKind.LOCAL:
        return LOCAL
    try:
        from routesim_evolve.simulate.ray_executor import connect
    except ImportError as exc:
        say(f"--executor ray: Ray is not installed ({exc}; pip install 'routesim-evolve[ray]'): "
            "running on the local pool")
        return LOCAL
    address = settings.ray_address or os.environ.get("RAY_ADDRESS")
    if address is not None and (why := unreachable(address)) is not None:
        say(f"--executor ray: the Ray cluster at {address} is unreachable ({why}): "
            "running on the local pool")
        return LOCAL
    try:
        executor = connect(address)
    except Exception as exc:  # Ray raises many kinds; any of them means no cluster
        say(f"--executor ray: could not start or join Ray ({_why_not(exc)}): "
            "running on the local pool")
        return LOCAL
    say(f"--executor ray: {executor.describe()}")
    return executor


def _why_not(exc: BaseException) -> str:
    """ray.init's failure in a few words; a refused token in the words
    that say how to fix it."""
    chain: list[BaseException] = [exc]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) and len(chain) < 8:
        chain.append(cause)
    if any("InvalidAuthToken" in str(e) or type(e).__name__ == "AuthenticationError"
           for e in chain):
        return ("the cluster refused this machine's token: set RAY_AUTH_MODE=token and give "
                "it the cluster's token, see docs/ray.md")
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def unreachable(address: str) -> str | None:
    """Why nothing answers at a Ray address, or None when something does.
    Addresses Ray resolves itself ("auto", "local") are left to it."""
    host_port = address.removeprefix("ray://")
    host, sep, port = host_port.rpartition(":")
    if not sep or not port.isdigit():
        return None if address in ("auto", "local") else "expected HOST:PORT"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
