"""The Ray executor on a local Ray instance: the same results as the local
pool, byte for byte, in the same caches; and the one-line fallback to the
local pool when Ray is missing or the cluster does not answer.

Ray is part of the dev install: without it this module fails, never skips.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from click.testing import CliRunner
from repo_files import REPO, SEED_PATH

from routesim_evolve.build.cache import default_cache
from routesim_evolve.cli import main
from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.executor import (
    LOCAL,
    ExecutorKind,
    ExecutorSettings,
    open_executor,
)
from routesim_evolve.simulate.ray_executor import RayExecutor, RemoteRun, connect, run_remote
from routesim_evolve.simulate.reference import ReferenceCache
from routesim_evolve.simulate.run_outcome import RunStatus
from routesim_evolve.simulate.sandbox import SandboxLimits

#: Two bundled val scenarios from different arenas and graphs.
SCENARIOS = ("base-001", "drift-002")


@pytest.fixture(scope="module")
def worker_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Ray workers' cache root: their store starts empty."""
    return tmp_path_factory.mktemp("ray-workers")


@pytest.fixture(scope="module")
def executor(worker_root: Path) -> Iterator[RayExecutor]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"ROUTESIM_CACHE_DIR": str(worker_root)}})
    try:
        yield connect(None)  # joins the instance started above
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def examples() -> list[ScenarioExample]:
    val = load_examples(REPO / "corpus", "val")
    chosen = [e for e in val if e.path.stem in SCENARIOS]
    assert len(chosen) == len(SCENARIOS) and len({e.arena for e in chosen}) == 2
    return chosen


def _cache_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".") and p.parent.name != "locks"}


def test_a_ray_run_is_byte_identical_to_a_local_run(
    executor: RayExecutor, examples: list[ScenarioExample], seed_source: str
):
    build = default_cache().build(seed_source)
    assert build.binary is not None
    limits = SandboxLimits(timeout_s=60)
    for ex in examples:
        here = LOCAL.run_binary(build.binary, ex.path, limits=limits, source=seed_source)
        there = executor.run_binary(build.binary, ex.path, limits=limits, source=seed_source)
        assert here.status is RunStatus.OK and there.status is RunStatus.OK
        assert there.result_sha256 == here.result_sha256  # the result files' bytes
        same = {"wall_s", "peak_rss_bytes"}
        assert there.model_dump(exclude=same) == here.model_dump(exclude=same)


def test_evaluations_and_references_through_ray_equal_the_local_pool(
    executor: RayExecutor, examples: list[ScenarioExample], seed_source: str,
    tmp_path: Path, worker_root: Path,
):
    local = ReferenceCache(root=tmp_path / "local")
    remote = ReferenceCache(root=tmp_path / "ray", executor=executor)
    tasks_before = executor.tasks
    for cache in (local, remote):
        ReferenceResults(cache).with_oracle().precompute(examples, workers=2)
        # lnd-apriori, lnd-bimodal, ldk, oracle: once each
        assert cache.runs == 4 * len(examples)
    assert _cache_files(remote.root) == _cache_files(local.root)

    evals = {}
    for name, cache in (("local", local), ("ray", remote)):
        evaluator = Evaluator(ReferenceResults(cache), cache_dir=tmp_path / f"evals-{name}",
                              executor=cache.executor)
        evals[name] = evaluator.evaluate_many(seed_source, examples, workers=2)
        assert evaluator.recorded_runs() == len(examples)
    assert [e.model_dump() for e in evals["ray"]] == [e.model_dump() for e in evals["local"]]
    assert all(e.status == "ok" and e.score > 0 for e in evals["ray"])
    # Every evaluation in the cache is the same file; the determinism verdicts
    # the same by arena (their order is the order the threads finished).
    cached = {k: _cache_files(tmp_path / f"evals-{k}") for k in ("ray", "local")}
    verdicts = {k: {p: json.loads(cached[k].pop(p)) for p in list(cached[k])
                    if p.endswith("determinism.verdict")} for k in cached}
    assert len(cached["ray"]) == len(examples) and cached["ray"] == cached["local"]
    assert len(verdicts["ray"]) == 1 and verdicts["ray"] == verdicts["local"]
    # 4 reference runs per scenario, and the candidate twice per arena (the
    # determinism check): all on Ray.
    assert executor.tasks - tasks_before == 4 * len(examples) + 2 * len(examples)
    store = worker_root / "ray-worker"
    # The candidate's binary, the reference binary and LDK's bridge.
    assert len(list((store / "bin").iterdir())) == 3
    assert {p.name for p in (store / "scenarios").glob("*/*.json")} == {
        e.path.name for e in examples}


def test_eval_command_with_ray_prints_what_the_local_pool_prints(
    executor: RayExecutor, examples: list[ScenarioExample]
):
    # One secret for both: by default each run would play fresh hidden worlds.
    args = ["eval", "--corpus", str(REPO / "corpus"), "--scenarios",
            ",".join(e.name for e in examples), str(SEED_PATH), "--world-secret", "5e" * 32]
    local = CliRunner().invoke(main, args)
    remote = CliRunner().invoke(main, [*args, "--executor", "ray"])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert "--executor ray: 2 CPUs on 1 node(s) of the Ray cluster" in remote.stderr
    assert remote.stdout == local.stdout and "| candidate_impl |" in remote.stdout


def test_a_worker_with_other_sandbox_code_refuses_the_run(executor: RayExecutor):
    blob = executor._ship_file(SEED_PATH)  # any shipped file: the check comes first
    run = RemoteRun(sandbox="other", binary=blob, scenario=blob, graph=blob,
                    scenario_name="base-001.json", router="candidate",
                    limits=SandboxLimits(), source=None)
    outcome = ray.get(run_remote.remote(run))
    assert outcome.status is RunStatus.INTERNAL and outcome.harness_fault
    assert "other routesim-evolve sandbox code than the driver" in outcome.feedback


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_cluster_falls_back_to_the_local_pool_in_one_line():
    said: list[str] = []
    address = f"127.0.0.1:{_closed_port()}"
    settings = ExecutorSettings(kind=ExecutorKind.RAY, ray_address=address)
    assert open_executor(settings, say=said.append) is LOCAL
    assert len(said) == 1
    assert f"the Ray cluster at {address} is unreachable" in said[0]
    assert said[0].endswith("running on the local pool")


def test_without_ray_it_says_so_and_runs_locally(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "routesim_evolve.simulate.ray_executor", None)
    said: list[str] = []
    assert open_executor(ExecutorSettings(kind=ExecutorKind.RAY), say=said.append) is LOCAL
    assert len(said) == 1 and "Ray is not installed" in said[0]
    assert "running on the local pool" in said[0]


def test_a_refused_token_is_named_with_its_fix(monkeypatch: pytest.MonkeyPatch):
    def refused(address: str | None) -> RayExecutor:
        try:
            raise RuntimeError("Failed to connect to GCS: InvalidAuthToken: token is missing")
        except RuntimeError as exc:
            raise ConnectionError(f"Failed to connect to Ray cluster at {address}") from exc

    monkeypatch.setattr("routesim_evolve.simulate.ray_executor.connect", refused)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    said: list[str] = []
    assert open_executor(ExecutorSettings(kind=ExecutorKind.RAY), say=said.append) is LOCAL
    assert len(said) == 1 and "refused this machine's token: set RAY_AUTH_MODE=token" in said[0]


def test_ray_address_needs_the_ray_executor():
    res = CliRunner().invoke(main, ["eval", "--corpus", str(REPO / "corpus"), str(SEED_PATH),
                                    "--ray-address", "head:6379"])
    assert res.exit_code == 2 and "--ray-address needs --executor ray" in res.output
