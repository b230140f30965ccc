"""The Ray executor: sandboxed runs fan out over a Ray cluster.

The driver builds every binary (a static Go binary, CGO_ENABLED=0: a worker
needs no Go toolchain and no C library) and puts it in Ray's object store
once; each scenario goes there once too, with its graph beside it. A run is
one Ray task: the worker writes what it has not seen yet into a store of its
own, content-addressed (`<cache_root>/ray-worker`), and runs the binary with
sandbox.run_binary under the limits the driver sent. The outcome comes back
to the driver, which scores and caches it as it would a local run.

The driver ships a binary's bytes as checked against their record
(`build/trusted.py`); a worker's copy is named by that sha256, fetched again
when it differs, recorded in the worker's memory and started through the
descriptor the sandbox checked.

Ray is the scheduler: a task asks for `gomaxprocs` CPUs, and the driver's
threads (the evaluator's pool, GEPA's) wait on their task each. Importing
this module needs Ray (pip install 'routesim-evolve[ray]').
"""

from __future__ import annotations

import collections
import functools
import hashlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

import orjson
import ray
from ray.exceptions import RayError

import routesim_evolve.simulate.diagnose as diagnose
import routesim_evolve.simulate.result_format as result_format
import routesim_evolve.simulate.routers as routers
import routesim_evolve.simulate.run_outcome as run_outcome
import routesim_evolve.simulate.sandbox as sandbox
from routesim_evolve.build.cache import BuildLimits
from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.build.trusted import (
    CACHE_REMEDY,
    TrustedFileChanged,
    matches,
    open_checked,
    record,
)
from routesim_evolve.corpus.load import scenario_graph_file
from routesim_evolve.fsutil import atomic_write, evict_oldest, touch_if_stale
from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus
from routesim_evolve.simulate.sandbox import RunOptions, SandboxLimits, resolve_run, run_binary

log = logging.getLogger(__name__)

#: Binaries the driver keeps in the object store (most recently used first):
#: a task in flight holds its own, so one dropped here is only shipped again.
KEEP_BINARIES = 32


@dataclass(frozen=True)
class Shipped:
    """A file in the object store. The reference is nested in this object,
    so Ray does not fetch it for every task: a worker gets it only when its
    store lacks the file."""

    sha256: str
    size: int
    ref: ray.ObjectRef


@dataclass(frozen=True)
class RemoteRun:
    """One run as a task receives it."""

    #: The driver's sandbox code (`sandbox_fingerprint`): a worker with other
    #: code refuses the run rather than judge it by other rules.
    sandbox: str
    binary: Shipped
    scenario: Shipped
    graph: Shipped
    scenario_name: str
    router: str
    limits: SandboxLimits
    source: str | None
    #: The bridge binary, for a bridged reference router only (`routers.py`).
    bridge: Shipped | None = None


def connect(address: str | None) -> RayExecutor:
    """Join the Ray cluster at `address` (or start one here, as ray.init
    does), unless this process has joined one already."""
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
    return RayExecutor()


class RayExecutor:
    """Runs on the Ray cluster this process has joined."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._binaries: collections.OrderedDict[tuple[str, int, int], Shipped] = (
            collections.OrderedDict())
        self._files: dict[tuple[str | int, ...], Shipped] = {}
        self.tasks = 0  # runs sent to the cluster (tests and benchmarks read it)

    def slots(self) -> int:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def describe(self) -> str:
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
        address = ray.get_runtime_context().gcs_address
        return f"{self.slots()} CPUs on {nodes} node(s) of the Ray cluster at {address}"

    def run_binary(
        self, binary: Path, scenario_path: Path, **options: Unpack[RunOptions]
    ) -> RunOutcome:
        router, limits, source, bridge_path = resolve_run(options)
        scenario = Path(scenario_path).resolve()
        try:
            graph = self._ship_file(Path(scenario_graph_file(scenario)))
            bridge = self._ship_binary(Path(bridge_path)) if bridge_path is not None else None
            run = RemoteRun(
                sandbox=sandbox_fingerprint(),
                binary=self._ship_binary(Path(binary)),
                scenario=self._ship_scenario(scenario, graph),
                graph=graph,
                scenario_name=scenario.name,
                router=router,
                limits=limits,
                source=source,
                bridge=bridge,
            )
        except (OSError, ValueError) as exc:
            return _lost(scenario, router, f"could not ship the run to Ray: {exc}")
        with self._lock:
            self.tasks += 1
        task = run_remote.options(num_cpus=limits.gomaxprocs).remote(run)
        try:
            outcome: RunOutcome = ray.get(task)
        except RayError as exc:
            return _lost(scenario, router, f"the Ray cluster lost the run: {_first_line(exc)}")
        # The worker's copy of the scenario is where it ran; the caller's
        # path is what a local run reports.
        return outcome.model_copy(update={"scenario": str(scenario)})

    def _ship_binary(self, binary: Path) -> Shipped:
        version = _version(binary)
        with self._lock:
            if (known := self._binaries.get(version)) is not None:
                self._binaries.move_to_end(version)
                return known
            shipped = _put_checked(binary)
            self._binaries[version] = shipped
            while len(self._binaries) > KEEP_BINARIES:
                self._binaries.popitem(last=False)
            return shipped

    def _ship_file(self, path: Path) -> Shipped:
        version = _version(path)
        with self._lock:
            if (known := self._files.get(version)) is None:
                known = self._files[version] = _put(path.read_bytes())
            return known

    def _ship_scenario(self, scenario: Path, graph: Shipped) -> Shipped:
        """The scenario with its graph named by content: the worker keeps
        graphs in its store as `<sha256>.json`, beside the scenario folders."""
        version = (*_version(scenario), graph.sha256)
        with self._lock:
            if (known := self._files.get(version)) is not None:
                return known
            doc = orjson.loads(scenario.read_bytes())
            doc["graph"] = f"../../graphs/{graph.sha256}.json"
            shipped = _put(orjson.dumps(doc))
            self._files[version] = shipped
            return shipped


def _version(path: Path) -> tuple[str, int, int]:
    """A file's identity for the driver's memo: path, mtime and size."""
    st = path.stat()
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


def _put_checked(binary: Path) -> Shipped:
    """A trusted binary's bytes, read through the descriptor whose content
    was checked against its record, and checked again as read."""
    with open_checked(binary) as checked:
        data = b"".join(iter(functools.partial(os.read, checked.fd, 1 << 20), b""))
    shipped = _put(data)
    if shipped.sha256 != checked.sha256:
        raise TrustedFileChanged(binary, checked.sha256, shipped.sha256, CACHE_REMEDY)
    return shipped


def _put(data: bytes) -> Shipped:
    return Shipped(sha256=hashlib.sha256(data).hexdigest(), size=len(data), ref=ray.put(data))


def _lost(scenario: Path, router: str, why: str) -> RunOutcome:
    """A run the cluster could not make: the harness's fault, so that the
    evaluator scores it 0 without caching it, and runs it again later."""
    return RunOutcome(status=RunStatus.INTERNAL, scenario=str(scenario), router=router,
                      feedback=why)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@functools.cache
def sandbox_fingerprint() -> str:
    """The sha256 of the modules that run a binary and judge how it ended."""
    digest = hashlib.sha256()
    # The modules themselves, not their names: a rename cannot drop one.
    for module in (sandbox, diagnose, run_outcome, result_format, routers,
                   sys.modules[__name__]):
        digest.update(hashlib.sha256(Path(str(module.__file__)).read_bytes()).digest())
    return digest.hexdigest()


@ray.remote
def run_remote(run: RemoteRun) -> RunOutcome:
    """A Ray worker's side of one run."""
    if run.sandbox != sandbox_fingerprint():
        return _lost(Path(run.scenario_name), run.router,
                     f"the Ray worker on {ray.util.get_node_ip_address()} runs other "
                     "routesim-evolve sandbox code than the driver: install the same "
                     "version on every node")
    store = WorkerStore(cache_root() / "ray-worker")
    binary = store.binary(run.binary)
    store.graph(run.graph)
    scenario = store.scenario(run.scenario, run.scenario_name)
    bridge = store.binary(run.bridge) if run.bridge is not None else None
    return run_binary(binary, scenario, router=run.router, limits=run.limits, source=run.source,
                      bridge=bridge)


class WorkerStore:
    """A worker node's copies of shipped files, by content: binaries (the
    least recently used evicted past the binary cache's bound), graphs,
    and scenarios each in a folder of its own under their file name."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def binary(self, shipped: Shipped) -> Path:
        """The shipped binary, as the driver checked it: a copy here that
        differs (or is a symlink) is fetched again."""
        path = self.root / "bin" / shipped.sha256
        if matches(path, shipped.sha256):
            touch_if_stale(path)  # eviction keeps the recently used
        else:
            path.unlink(missing_ok=True)
            self._fetch(shipped, path, mode=0o555)
            evict_oldest([p for p in path.parent.iterdir() if not p.name.startswith(".")],
                         BuildLimits().binaries_bytes, lambda p: p.unlink(missing_ok=True))
        record(path, shipped.sha256)
        return path

    def graph(self, shipped: Shipped) -> Path:
        path = self.root / "graphs" / f"{shipped.sha256}.json"
        self._fetch(shipped, path, mode=0o644)
        return path

    def scenario(self, shipped: Shipped, name: str) -> Path:
        path = self.root / "scenarios" / shipped.sha256 / name
        self._fetch(shipped, path, mode=0o644)
        return path

    @staticmethod
    def _fetch(shipped: Shipped, path: Path, *, mode: int) -> bool:
        """Write the file from the object store unless it is here already;
        True when it was written."""
        try:
            if path.stat().st_size == shipped.size:
                return False
        except FileNotFoundError:
            pass
        data = ray.get(shipped.ref)
        if hashlib.sha256(data).hexdigest() != shipped.sha256:
            raise RuntimeError(f"{path.name}: the shipped bytes do not match their sha256")
        atomic_write(path, data, mode=mode)
        return True
