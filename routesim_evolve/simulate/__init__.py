"""Run candidates and lnd's reference routers on scenarios, safely.

`run_candidate(source, scenario)` builds a candidate (cached) and runs it in a
sandbox; every failure is a score-0 `RunOutcome` with feedback.
`reference_result(scenario, router)` gives lnd's result, computed once.
"""

from routesim_evolve.simulate.outcome import RunOutcome, RunStatus
from routesim_evolve.simulate.reference import (
    LND_ROUTERS,
    ORACLE,
    ReferenceCache,
    ReferenceRunError,
    available_routers,
    reference_result,
)
from routesim_evolve.simulate.result import AttemptRecord, PaymentResult, Result, Totals
from routesim_evolve.simulate.runner import run_candidate
from routesim_evolve.simulate.sandbox import (
    SandboxLimits,
    network_isolation_available,
    run_binary,
)

__all__ = [
    "LND_ROUTERS",
    "ORACLE",
    "AttemptRecord",
    "PaymentResult",
    "ReferenceCache",
    "ReferenceRunError",
    "Result",
    "RunOutcome",
    "RunStatus",
    "SandboxLimits",
    "Totals",
    "available_routers",
    "network_isolation_available",
    "reference_result",
    "run_binary",
    "run_candidate",
]
