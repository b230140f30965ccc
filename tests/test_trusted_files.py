"""Every trusted file (a routesim build, the reference build, candcheck and
the other tools, LDK's bridge, the Go toolchain) is read-only once built and
checked by content before each use: swapped bytes (same size, mtime put
back), a symlink or a script in its place stop the run with a clear error,
exit 2 on the command line; an untouched cache goes on working."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from repo_files import REPO

import routesim_evolve.build.gomodule as gomodule
import routesim_evolve.build.ldk as ldk
import routesim_evolve.build.trusted as trusted
import routesim_evolve.simulate.ray_executor as ray_executor
from routesim_evolve.build.allowlist import check_source
from routesim_evolve.build.cache import BinaryCache
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, NOLND_TAG, go_module_dir
from routesim_evolve.build.trusted import TrustedFileChanged
from routesim_evolve.simulate.reference import ReferenceCache, available_routers
from routesim_evolve.simulate.run_outcome import RunStatus
from routesim_evolve.simulate.sandbox import SandboxLimits, run_binary

SEED = (go_module_dir() / CANDIDATE_SLOT).read_text()
SCENARIO = REPO / "docs" / "examples" / "base-example.json"
REJECTED_SOURCE = 'package main\n\nimport "os"\n\nvar _ = os.Args\n'


@pytest.fixture(autouse=True)
def _clear_refusal() -> Iterator[None]:
    """A mismatch makes every later check in the process refuse: these tests
    tamper on purpose, so each starts and ends without it."""
    trusted.forget_tampering()
    yield
    trusted.forget_tampering()


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget this process's records, as a new process starts: only the
    sidecars are left to go by."""
    monkeypatch.setattr(trusted, "_expected", {})
    monkeypatch.setattr(trusted, "_digests", {})


def swap_bytes(path: Path) -> None:
    """Change one byte, then put the size, mode and mtime back."""
    before = path.stat()
    path.chmod(0o755)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    path.chmod(stat.S_IMODE(before.st_mode))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def symlink_to_script(path: Path) -> None:
    """Put a symlink to an executable script in the file's place."""
    script = path.with_name("evil.sh")
    script.write_text("#!/bin/sh\necho '{\"ok\": true}'\n")
    script.chmod(0o755)
    path.unlink()
    path.symlink_to(script)


def script_in_place(path: Path) -> None:
    """Put a script, as a regular file, in the file's place."""
    path.unlink()
    path.write_text("#!/bin/sh\necho '{\"ok\": true}'\n")
    path.chmod(0o755)


TAMPERINGS: dict[str, Callable[[Path], None]] = {
    "same-size swap": swap_bytes, "symlink": symlink_to_script, "script": script_in_place,
}


def assert_read_only(path: Path) -> None:
    assert stat.S_IMODE(path.stat().st_mode) & 0o222 == 0, oct(path.stat().st_mode)
    side = trusted.sidecar(path)
    assert stat.S_IMODE(side.stat().st_mode) & 0o222 == 0
    assert len(side.read_text().strip()) == 64


def variant() -> str:
    return SEED + f'\nconst trustedTestMarker = "{uuid.uuid4().hex}"\n'


# Candidate builds (BinaryCache).


@pytest.mark.parametrize("tamper", TAMPERINGS.values(), ids=TAMPERINGS.keys())
def test_a_changed_candidate_binary_is_refused(tmp_path: Path, tamper: Callable[[Path], None]):
    source = variant()
    built = BinaryCache(root=tmp_path).build(source)
    assert built.ok and built.binary is not None
    assert_read_only(built.binary)
    again = BinaryCache(root=tmp_path).build(source)
    assert again.ok and not again.compiled  # untouched: found, not built again
    tamper(built.binary)
    with pytest.raises(TrustedFileChanged, match=f"{built.binary.name}.*expected sha256"):
        BinaryCache(root=tmp_path).build(source)


def test_a_swap_between_runs_is_refused_by_the_sidecar(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    source = variant()
    built = BinaryCache(root=tmp_path).build(source)
    assert built.binary is not None
    expected = trusted.sidecar(built.binary).read_text().strip()
    swap_bytes(built.binary)
    new_process(monkeypatch)
    with pytest.raises(TrustedFileChanged) as refused:
        BinaryCache(root=tmp_path).build(source)
    assert refused.value.expected == expected and refused.value.found != expected
    assert "delete the cache folder" in str(refused.value)


def test_after_a_mismatch_nothing_is_trusted(tmp_path: Path):
    cache = BinaryCache(root=tmp_path)
    source, other = variant(), variant()
    first, second = cache.build(source), cache.build(other)
    assert first.binary is not None and second.binary is not None
    swap_bytes(first.binary)
    with pytest.raises(TrustedFileChanged):
        cache.build(source)
    with pytest.raises(TrustedFileChanged, match=first.binary.name):
        cache.build(other)  # intact itself, but the run has stopped
    mismatch = trusted.first_mismatch()
    assert mismatch is not None and mismatch.path == first.binary


def test_the_run_checks_what_it_starts(tmp_path: Path):
    built = BinaryCache(root=tmp_path).build(variant())
    assert built.binary is not None
    limits = SandboxLimits(timeout_s=30)
    assert run_binary(built.binary, SCENARIO, limits=limits).status is RunStatus.OK
    swap_bytes(built.binary)  # after the cache's look-up, before the run
    with pytest.raises(TrustedFileChanged, match=built.binary.name):
        run_binary(built.binary, SCENARIO, limits=limits)


# The reference build (lnd's routers): the same cache, built from the module.


def test_a_changed_reference_binary_is_refused(tmp_path: Path):
    # Without lnd linked in (fast): the build, cache and checks are the same.
    refs = ReferenceCache(BinaryCache(root=tmp_path), root=tmp_path, tags=(NOLND_TAG,))
    binary = refs.binary()
    assert_read_only(binary)
    assert "candidate" in available_routers(binary)
    assert refs.result(SCENARIO, "candidate").router == "candidate"
    swap_bytes(binary)
    with pytest.raises(TrustedFileChanged, match=binary.name):
        available_routers(binary)
    trusted.forget_tampering()
    with pytest.raises(TrustedFileChanged, match=binary.name):
        ReferenceCache(BinaryCache(root=tmp_path), root=tmp_path / "r2",
                       tags=(NOLND_TAG,)).result(SCENARIO, "candidate")


# candcheck, the allow-list's judge, and the other tools.


@pytest.mark.parametrize("tamper", TAMPERINGS.values(), ids=TAMPERINGS.keys())
def test_a_changed_candcheck_is_never_run(tmp_path: Path, tamper: Callable[[Path], None]):
    assert not check_source(REJECTED_SOURCE, root=tmp_path).ok
    [tool] = [p for p in (tmp_path / "tools").iterdir() if p.name.startswith("candcheck-")
              and "." not in p.name]
    assert_read_only(tool)
    tamper(tool)
    with pytest.raises(TrustedFileChanged, match=tool.name):
        check_source(REJECTED_SOURCE, root=tmp_path)


def test_a_changed_tool_stops_the_command_with_exit_2(tiny_corpus: Path, tmp_path: Path):
    env = {**os.environ, "ROUTESIM_CACHE_DIR": str(tmp_path)}
    cmd = [sys.executable, "-m", "routesim_evolve", "corpus", "validate", str(tiny_corpus)]
    first = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    [tool] = [p for p in (tmp_path / "tools").iterdir() if p.name.startswith("scenariocheck-")
              and "." not in p.name]
    expected = trusted.sidecar(tool).read_text().strip()
    swap_bytes(tool)
    again = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert again.returncode == 2, again.stderr
    assert f"Error: the trusted file {tool} has changed" in again.stderr
    assert f"expected sha256 {expected}, found " in again.stderr
    assert "delete the cache folder" in again.stderr and "Traceback" not in again.stderr


# LDK's bridge.


def test_a_changed_ldk_bridge_is_refused(tmp_path: Path):
    bridge = ldk.bridge_binary(root=tmp_path)
    assert_read_only(bridge)
    assert ldk.bridge_binary(root=tmp_path) == bridge
    # The full reference binary from the real cache (lnd linked in: built
    # once per module content), starting the bridge through its descriptor.
    reference = ReferenceCache(BinaryCache(), root=tmp_path).binary()
    ran = run_binary(reference, SCENARIO, router="ldk", bridge=bridge)
    assert ran.status is RunStatus.OK, ran.feedback
    swap_bytes(bridge)
    with pytest.raises(TrustedFileChanged, match=bridge.name):
        ldk.bridge_binary(root=tmp_path)
    trusted.forget_tampering()
    with pytest.raises(TrustedFileChanged, match=bridge.name):
        run_binary(reference, SCENARIO, router="ldk", bridge=bridge)


# The Go toolchain, trusted on first use per cache folder.


@pytest.fixture
def go_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the go command standing in for the toolchain (the real one
    is not ours to change), with the cache folder in tmp_path."""
    real = Path(gomodule.go_binary())
    copy = tmp_path / "go-bin" / "go"
    copy.parent.mkdir()
    shutil.copy2(real, copy)
    monkeypatch.setenv("GOROOT", gomodule.go_env("GOROOT"))
    monkeypatch.setenv("ROUTESIM_GO", str(copy))
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(tmp_path / "cache"))
    gomodule._go_path.cache_clear()
    yield copy
    gomodule._go_path.cache_clear()


def test_the_toolchain_is_recorded_then_checked(go_copy: Path):
    assert gomodule.go_binary() == str(go_copy)
    record_file = gomodule.toolchain_record()
    assert stat.S_IMODE(record_file.stat().st_mode) & 0o222 == 0
    recorded = json.loads(record_file.read_text())
    assert str(go_copy) in recorded
    assert any(Path(p).name == "compile" for p in recorded)
    assert any(Path(p).name == "link" for p in recorded)
    assert gomodule.go_binary() == str(go_copy)  # untouched: still fine
    swap_bytes(go_copy)
    with pytest.raises(TrustedFileChanged, match=f"{go_copy}.*delete {record_file}"):
        gomodule.go_binary()


def test_a_compiler_unlike_the_record_is_refused(go_copy: Path,
                                                 monkeypatch: pytest.MonkeyPatch):
    gomodule.go_binary()
    record_file = gomodule.toolchain_record()
    recorded = json.loads(record_file.read_text())
    [compile_tool] = [p for p in recorded if Path(p).name == "compile"]
    recorded[compile_tool] = "0" * 64  # as if compile changed since it was recorded
    record_file.chmod(0o644)
    record_file.write_text(json.dumps(recorded))
    new_process(monkeypatch)
    gomodule._trusted_toolchain.cache_clear()
    with pytest.raises(TrustedFileChanged, match=f"{compile_tool}.*expected sha256 0000"):
        gomodule.go_binary()


# Ray: the driver ships checked bytes; a worker's copy that differs is fetched again.


def test_the_driver_ships_no_changed_binary(tmp_path: Path):
    built = BinaryCache(root=tmp_path).build(variant())
    assert built.binary is not None
    swap_bytes(built.binary)
    with pytest.raises(TrustedFileChanged, match=built.binary.name):
        ray_executor._put_checked(built.binary)


@pytest.mark.parametrize("tamper", TAMPERINGS.values(), ids=TAMPERINGS.keys())
def test_a_changed_worker_copy_is_fetched_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                tamper: Callable[[Path], None]):
    data = b"#!/bin/sh\nexit 0\n" + b"#" * 4096
    shipped = ray_executor.Shipped(sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                                   ref=None)
    monkeypatch.setattr(ray_executor.ray, "get", lambda ref: data)
    store = ray_executor.WorkerStore(tmp_path / "worker")
    copy = store.binary(shipped)
    assert copy.read_bytes() == data
    tamper(copy)
    assert store.binary(shipped) == copy
    assert not copy.is_symlink() and copy.read_bytes() == data
    with trusted.open_checked(copy) as checked:  # what the worker's run checks
        assert checked.trusted and checked.sha256 == shipped.sha256


def test_a_checker_changed_under_an_evolution_stops_it_and_names_nothing_best(
    tiny_corpus: Path, tmp_path: Path
) -> None:
    """GEPA catches what its steps raise and goes on; a mismatch met inside
    one (the allow-list checker swapped between two proposals) still stops
    the run with the error, before any best is named or tested."""
    from routesim_evolve.build.allowlist import candcheck_binary
    from routesim_evolve.evolve.driver import evolve
    from routesim_evolve.propose.offline import OfflineProposer
    from routesim_evolve.runs.settings import EvolveSettings

    checker = candcheck_binary()
    check_source(SEED)  # built and trusted before the run

    class Tampering(OfflineProposer):
        name = "offline"

        def propose(self, parent: str, feedback: object) -> str | None:
            swap_bytes(checker)
            return variant()  # new source: the build runs the checker

    run_dir = tmp_path / "run"
    settings = EvolveSettings(corpus=tiny_corpus, run_dir=run_dir, max_evals=30,
                              max_concurrency=1)
    try:
        with pytest.raises(TrustedFileChanged, match=checker.name):
            evolve(settings, [Tampering(seed=1)], say=lambda m: None)
    finally:
        swap_bytes(checker)  # the same byte flipped back: the checker as built
    assert not (run_dir / "best.go").exists()
