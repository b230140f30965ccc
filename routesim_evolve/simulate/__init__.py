"""Run candidates and the reference routers on scenarios, safely.

`run_candidate(source, scenario)` builds a candidate (cached) and runs it in a
sandbox; every failure is a score-0 `RunOutcome` with feedback.
`reference_result(scenario, router)` gives a reference router's result
(lnd's, LDK's, the oracle's), computed once; `REFERENCE_ROUTERS` are their
records (`routers.py`).
"""

from routesim_evolve.simulate.reference import (
    ReferenceCache,
    ReferenceRunError,
    available_routers,
    reference_result,
)
from routesim_evolve.simulate.result_format import AttemptRecord, PaymentResult, Result, Totals
from routesim_evolve.simulate.routers import (
    LND_ROUTERS,
    ORACLE,
    PRODUCTION_ROUTERS,
    REFERENCE_ROUTERS,
)
from routesim_evolve.simulate.run_candidate import run_candidate
from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus
from routesim_evolve.simulate.sandbox import (
    SandboxLimits,
    network_isolation_available,
    run_binary,
)

__all__ = [
    "LND_ROUTERS",
    "ORACLE",
    "PRODUCTION_ROUTERS",
    "REFERENCE_ROUTERS",
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
