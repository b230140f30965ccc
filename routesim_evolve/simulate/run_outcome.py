"""The outcome of running one candidate on one scenario.

Every way a run can end is a `RunOutcome`, never an exception: a candidate
that does not build, crashes, hangs or eats memory scores 0 on the scenario,
and `feedback` tells its author what went wrong and where.
"""

from __future__ import annotations

import enum

from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.cache import BuildOutcome
from routesim_evolve.simulate.result_format import Result


class RunStatus(enum.StrEnum):
    """How a run ended. Only OK carries a result."""

    OK = "ok"
    REJECTED = "rejected"  # the allow-list refused the source
    COMPILE_ERROR = "compile_error"
    TIMEOUT = "timeout"  # wall-clock limit hit; killed
    MEMORY = "memory"  # the memory cap was hit
    PANIC = "panic"  # a Go panic or fatal runtime error
    EXIT = "exit"  # another non-zero exit or a signal
    BAD_OUTPUT = "bad_output"  # exit 0 but no readable result
    SCENARIO_ERROR = "scenario_error"  # routesim refused the scenario (exit 2): not the candidate
    INTERNAL = "internal"  # the harness could not run the binary at all


#: Statuses that are the harness's or the scenario's fault, not the
#: candidate's; an evaluator may prefer to stop on these rather than score 0.
HARNESS_STATUSES = frozenset({RunStatus.SCENARIO_ERROR, RunStatus.INTERNAL})


class RunOutcome(BaseModel):
    """One candidate (or reference router) on one scenario."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: RunStatus
    scenario: str
    router: str = "candidate"
    result: Result | None = None
    #: sha256 of the result file as written: equal for byte-identical runs.
    result_sha256: str | None = None
    #: For a proposer: empty when ok, else what went wrong and where.
    feedback: str = ""
    exit_code: int | None = None
    wall_s: float = 0.0
    peak_rss_bytes: int | None = None
    #: Standard error, capped (head and tail kept).
    stderr: str = ""
    build: BuildOutcome | None = None

    @property
    def ok(self) -> bool:
        """True when the run produced a result."""
        return self.status is RunStatus.OK and self.result is not None

    @property
    def harness_fault(self) -> bool:
        """True when the failure is not the candidate's doing."""
        return self.status in HARNESS_STATUSES
