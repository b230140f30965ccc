"""Run a candidate's source on a scenario: build (cached), then sandboxed run."""

from __future__ import annotations

from pathlib import Path

from routesim_evolve.build.cache import BinaryCache, BuildStatus, default_cache
from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.simulate.executor import LOCAL, Executor
from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS, SandboxLimits

_BUILD_STATUS = {
    BuildStatus.REJECTED: RunStatus.REJECTED,
    BuildStatus.COMPILE_ERROR: RunStatus.COMPILE_ERROR,
}


def run_candidate(
    source: str,
    scenario_path: str | Path,
    *,
    timeout: float | None = None,
    memory: int | None = None,
    gomaxprocs: int | None = None,
    cache: BinaryCache | None = None,
    limits: SandboxLimits | None = None,
    executor: Executor = LOCAL,
) -> RunOutcome:
    """Build the candidate `source` (the whole candidate_impl.go) and run it
    on one scenario within `limits` (DEFAULT_LIMITS when not given);
    `timeout` (wall-clock seconds), `memory` (the heap budget in bytes) and
    `gomaxprocs`, when given, override those fields. Never raises for anything
    the candidate does; a build that fails becomes a score-0 outcome with the
    compiler's or the allow-list's message as feedback. The build happens
    here; `executor` runs the binary (on this machine, or a Ray cluster)."""
    scenario = str(Path(scenario_path).resolve())
    try:
        build = (cache or default_cache()).build(source)
    except (GoToolchainError, OSError) as exc:
        return RunOutcome(
            status=RunStatus.INTERNAL, scenario=scenario, feedback=f"could not build: {exc}"
        )
    if not build.ok or build.binary is None:
        status = _BUILD_STATUS.get(build.status, RunStatus.INTERNAL)
        return RunOutcome(status=status, scenario=scenario, feedback=build.message, build=build)
    limits = (limits or DEFAULT_LIMITS).but(
        timeout_s=timeout, memory_bytes=memory, gomaxprocs=gomaxprocs
    )
    outcome = executor.run_binary(build.binary, Path(scenario), limits=limits, source=source)
    return outcome.model_copy(update={"build": build})
