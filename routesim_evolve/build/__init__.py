"""Build candidate routers into routesim binaries, safely and once.

`build_candidate(source)` vets the source against the allow-list (the Go tool
candcheck), then compiles it without lnd, caching the binary by content.
"""

from routesim_evolve.build.allowlist import (
    AllowList,
    CheckReport,
    Finding,
    check_source,
    load_allowlist,
)
from routesim_evolve.build.cache import (
    BinaryCache,
    BuildOutcome,
    BuildStatus,
    build_candidate,
    default_cache,
)
from routesim_evolve.build.gomodule import GoToolchainError, go_module_dir, module_fingerprint

__all__ = [
    "AllowList",
    "BinaryCache",
    "BuildOutcome",
    "BuildStatus",
    "CheckReport",
    "Finding",
    "GoToolchainError",
    "build_candidate",
    "check_source",
    "default_cache",
    "go_module_dir",
    "load_allowlist",
    "module_fingerprint",
]
