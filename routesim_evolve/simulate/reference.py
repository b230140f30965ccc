"""The reference routers' results (lnd's, LDK's, the oracle's), computed
once and kept on disk.

The reference binary is the routesim command as it is on disk, built without
the routesim_nolnd tag so lnd's routing stack is linked in; it is built once
per module content. Which routers there are, and which run a bridge process
(ldk runs LDK in the one built from ldk/, build/ldk.py), is `routers.py`. A
reference result is keyed by the scenario file's bytes, its graph file's
bytes, the module's fingerprint (the candidate's slot left out: it does not
change the references' routes), the key of the router's bridge if it has
one, and the router's name, so evolution never pays for a reference twice on
one scenario. The reference binary and the bridge are checked by content
before each run (`build/trusted.py`, through `BinaryCache`, the bridge's
`binary` and the sandbox, which starts the descriptor it checked).
"""

from __future__ import annotations

import hashlib
import logging
import re
import subprocess
from pathlib import Path

from routesim_evolve.build.cache import BinaryCache, default_cache
from routesim_evolve.build.gomodule import module_fingerprint
from routesim_evolve.build.trusted import open_checked
from routesim_evolve.corpus.load import scenario_graph_file
from routesim_evolve.fsutil import GIB, atomic_write, file_lock
from routesim_evolve.simulate.executor import LOCAL, Executor
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.routers import bridge_of
from routesim_evolve.simulate.run_outcome import RunOutcome
from routesim_evolve.simulate.sandbox import SandboxLimits

#: Limits of a reference run: lnd is trusted but slower and hungrier.
REFERENCE_LIMITS = SandboxLimits(timeout_s=1800.0, memory_bytes=4 * GIB)

#: Bumped when the cached entry's meaning changes.
_ENTRY_VERSION = b"reference-result/1"


log = logging.getLogger(__name__)


class ReferenceRunError(RuntimeError):
    """A reference router failed on a scenario: the harness's problem."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__(f"{outcome.router} failed on {outcome.scenario}: {outcome.feedback}")
        self.outcome = outcome


def reference_key(scenario_path: Path, router: str, module_hash: str) -> str:
    """The cache key of one reference result."""
    digest = hashlib.sha256(_ENTRY_VERSION)
    for part in (
        scenario_path.read_bytes(),
        Path(scenario_graph_file(scenario_path)).read_bytes(),
        module_hash.encode(),
        router.encode(),
    ):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


class ReferenceCache:
    """Builds the full routesim binary and caches reference results."""

    def __init__(
        self,
        binaries: BinaryCache | None = None,
        *,
        root: Path | None = None,
        limits: SandboxLimits = REFERENCE_LIMITS,
        tags: tuple[str, ...] = (),
        executor: Executor = LOCAL,
    ) -> None:
        self.binaries = binaries or default_cache()
        # Where the runs happen; the binary is built and the results kept here.
        self.executor = executor
        # Tags of the reference build: none links lnd in. Tests pass
        # routesim_nolnd to check the caching with --router candidate.
        self.tags = tags
        self.root = (root or self.binaries.root) / "reference"
        self.limits = limits
        self.runs = 0  # reference runs made by this instance (tests read it)

    def binary(self) -> Path:
        """The full routesim binary (lnd linked in), built once per module
        content. Raises RuntimeError if the module itself does not build."""
        outcome = self.binaries.build_module(tags=self.tags)
        if not outcome.ok or outcome.binary is None:
            raise RuntimeError(f"the routesim module does not build:\n{outcome.message}")
        return outcome.binary

    def routers(self) -> tuple[str, ...]:
        """The routers the full binary has, as its -h lists them."""
        return available_routers(self.binary())

    def _entry(self, scenario: Path, router: str) -> tuple[str, Path]:
        """The cache key of `router`'s result on a scenario, and its file."""
        module_hash = module_fingerprint(self.binaries.go_dir, include_candidate=False)
        if (bridge := bridge_of(router)) is not None:
            module_hash += bridge.cache_salt()
        key = reference_key(scenario, router, module_hash + ",".join(self.tags))
        return key, self.root / key[:2] / f"{key}.json"

    def cached(self, scenario_path: str | Path, router: str) -> bool:
        """Whether `router`'s result on a scenario is in the cache already."""
        return self._entry(Path(scenario_path).resolve(), router)[1].is_file()

    def result(self, scenario_path: str | Path, router: str) -> Result:
        """`router`'s result on a scenario, from the cache or by running it
        once (concurrent callers wait for the one run)."""
        scenario = Path(scenario_path).resolve()
        key, path = self._entry(scenario, router)
        if (known := _read_cached(path)) is not None:
            return known
        with file_lock(self.root / "locks" / f"{key}.lock"):
            if (known := _read_cached(path)) is not None:
                return known
            self.runs += 1
            bridge = bridge_of(router)
            outcome = self.executor.run_binary(
                self.binary(), scenario, router=router, limits=self.limits,
                bridge=bridge.binary() if bridge is not None else None)
            if not outcome.ok or outcome.result is None:
                raise ReferenceRunError(outcome)
            atomic_write(path, outcome.result.model_dump_json().encode())
            return outcome.result


def _read_cached(path: Path) -> Result | None:
    """A cached result, or None when absent or damaged (then removed, to be
    run again: a damaged entry is never trusted)."""
    try:
        return Result.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        log.warning("reference result %s is damaged", path)
        path.unlink(missing_ok=True)
        return None


def available_routers(binary: Path) -> tuple[str, ...]:
    """The router names a routesim binary was built with, read from the
    usage text of its --router flag (the bytes checked against their record
    are the ones run)."""
    with open_checked(binary) as checked:
        proc = subprocess.run([checked.exec_path, "-h"], capture_output=True, text=True,
                              timeout=30, check=False, pass_fds=(checked.fd,))
    m = re.search(r"router to run: ([^\n(]+)", proc.stderr + proc.stdout)
    if not m:
        return ()
    return tuple(name.strip() for name in m.group(1).split(",") if name.strip())


def reference_result(
    scenario_path: str | Path, router: str, *, cache: ReferenceCache | None = None
) -> Result:
    """A reference `router` on a scenario, computed at most once per content."""
    return (cache or ReferenceCache()).result(scenario_path, router)
