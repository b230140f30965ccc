"""The binary cache compiles a source once, whoever asks and how often."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import routesim_evolve.build.cache as cache_module
from routesim_evolve.build import BinaryCache, BuildStatus
from routesim_evolve.build.cache import build_key, clean_compiler_output
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, NOLND_TAG, cache_root, go_module_dir

SEED = (go_module_dir() / CANDIDATE_SLOT).read_text()


def variant(tag: str) -> str:
    """The seed with a unique constant, so its key has never been built."""
    return SEED + f'\nconst buildTestMarker = "{tag}-{uuid.uuid4().hex}"\n'


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> BinaryCache:
    return BinaryCache(root=tmp_path_factory.getbasetemp() / "routesim-cache")


def test_second_build_does_no_compile(cache: BinaryCache) -> None:
    source = variant("hit")
    first = cache.build(source)
    assert first.ok and first.compiled, first.message
    assert first.binary is not None and os.access(first.binary, os.X_OK)
    compiles = cache.compiles
    start = time.monotonic()
    second = cache.build(source)
    elapsed = time.monotonic() - start
    assert second.ok and not second.compiled
    assert second.binary == first.binary
    assert cache.compiles == compiles
    assert elapsed < 0.5, f"a cache hit took {elapsed:.2f} s"


def test_a_fresh_cache_instance_finds_the_binary(cache: BinaryCache) -> None:
    source = variant("fresh")
    assert cache.build(source).compiled
    other = BinaryCache(root=cache.root)
    assert not other.build(source).compiled
    assert other.compiles == 0


def test_compile_error_names_the_line_and_is_cached(cache: BinaryCache) -> None:
    source = SEED.replace("return &seedRouter{", "unused := 1\n\treturn &seedRouter{", 1)
    line = source.splitlines().index("\tunused := 1") + 1
    outcome = cache.build(source)
    assert outcome.status is BuildStatus.COMPILE_ERROR and outcome.binary is None
    assert f"candidate_impl.go:{line}:" in outcome.message
    assert "declared and not used: unused" in outcome.message
    assert f"{line} | unused := 1" in outcome.message  # the offending line, quoted
    assert "/scratch/" not in outcome.message  # no scratch paths leak
    compiles = cache.compiles
    again = cache.build(source)
    assert again.status is BuildStatus.COMPILE_ERROR and not again.compiled
    assert again.message == outcome.message
    assert cache.compiles == compiles


def test_the_harness_shares_no_name_with_the_candidate(cache: BinaryCache) -> None:
    # The command's code lives in cmd/internal/routesimcmd: package main has
    # only main, so a candidate may use any other name the harness uses.
    outcome = cache.build(SEED + "\ntype routerMaker int\nfunc run() {}\n")
    assert outcome.ok, outcome.message


def test_parallel_threads_compile_once(cache: BinaryCache) -> None:
    source = variant("threads")
    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(lambda _: cache.build(source), range(4)))
    assert all(o.ok for o in outcomes)
    assert sum(o.compiled for o in outcomes) == 1
    assert len({o.binary for o in outcomes}) == 1


_WORKER = """
import sys
from pathlib import Path
from routesim_evolve.build import BinaryCache
outcome = BinaryCache(root=Path(sys.argv[1])).build(Path(sys.argv[2]).read_text())
print(outcome.status.value, int(outcome.compiled), outcome.binary)
"""


def test_parallel_processes_compile_once(cache: BinaryCache, tmp_path: Path) -> None:
    source_file = tmp_path / "candidate.go"
    source_file.write_text(variant("processes"))
    cmd = [sys.executable, "-c", _WORKER, str(cache.root), str(source_file)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(4)]
    lines = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [ln[0] for ln in lines] == ["ok"] * 4
    assert sum(int(ln[1]) for ln in lines) == 1
    assert len({ln[2] for ln in lines}) == 1


def test_key_depends_on_source_and_tags() -> None:
    go_dir = go_module_dir()
    flags = ("-trimpath",)
    base = build_key(SEED, (NOLND_TAG,), go_dir, flags)
    assert base == build_key(SEED, (NOLND_TAG,), go_dir, flags)
    assert base != build_key(SEED + "\n", (NOLND_TAG,), go_dir, flags)
    assert base != build_key(SEED, (), go_dir, flags)
    assert base != build_key(SEED, (NOLND_TAG,), go_dir, ())
    assert base != build_key(None, (NOLND_TAG,), go_dir, flags)


def test_clean_compiler_output_rewrites_the_scratch_path() -> None:
    scratch = Path("/tmp/x/scratch/build-1/candidate_impl.go")
    raw = f"# github.com/x\n{scratch}:2:3: boom\ncmd/routesim/main.go:44:6: other\n"
    text = clean_compiler_output(raw, scratch, "package main\n\tboom()\n")
    assert text.splitlines() == [
        "candidate_impl.go:2:3: boom",
        "\t2 | boom()",
        "cmd/routesim/main.go:44:6: other",
    ]


def test_cache_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(tmp_path / "c"))
    assert cache_root() == (tmp_path / "c").resolve()
    monkeypatch.delenv("ROUTESIM_CACHE_DIR")
    assert cache_root() == (Path.home() / ".cache" / "routesim-evolve").resolve()


def test_the_candidate_cache_is_warmed_once_per_tag_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A build with other tags (lnd linked in) compiles other dependencies:
    # warmed only for the first tags, it would spend the candidate's time
    # limit compiling lnd's tree.
    warmups: list[list[str]] = []

    def fake_go(cmd: list[str], *args: object, **kwargs: object) -> object:
        warmups.append(cmd)
        return cache_module._GoRun(returncode=0, output="")

    monkeypatch.setattr(cache_module, "_run_go", fake_go)
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(tmp_path / "cache"))
    cache = BinaryCache(root=tmp_path / "bins")
    for tags in [(NOLND_TAG,), (NOLND_TAG,), (), ()]:
        cache._warm_candidate_cache(tags)
    tags_built = [next(a for a in cmd if a.startswith("-tags=")) for cmd in warmups]
    assert tags_built == [f"-tags={NOLND_TAG}", "-tags="]


def test_the_candidate_go_cache_is_bounded_after_every_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed_source: str
) -> None:
    """A candidate that leaves tens of MiB in the candidates' Go build cache
    (static tables) cannot grow it past its bound during a run: it is checked
    after each build, emptied past it and warmed again at once."""
    warmups = 0
    bound = 1000

    def fake_go(cmd: list[str], cwd: Path, env: dict[str, str], *args: object,
                **kwargs: object) -> object:
        nonlocal warmups
        out = Path(cmd[cmd.index("-o") + 1])
        if out.name == "seed":
            warmups += 1
        else:  # a candidate: leaves more than the bound behind
            blob = Path(env["GOCACHE"]) / uuid.uuid4().hex
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(b"x" * (2 * bound))
        out.write_bytes(b"\x7fELF")
        return cache_module._GoRun(returncode=0, output="")

    monkeypatch.setattr(cache_module, "_run_go", fake_go)
    monkeypatch.setattr(cache_module, "check_source", lambda *a, **k: _Passed())
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(tmp_path / "cache"))
    limits = cache_module.BuildLimits(go_cache_bytes=bound)
    cache = BinaryCache(root=tmp_path / "bins", limits=limits)
    for i in range(3):
        assert cache.build(seed_source + f"\nconst bloat{i} = 1\n").ok
        assert cache_module._tree_bytes(cache_module.candidate_go_cache()) <= bound
    # The first warm-up, then one after each build that went over.
    assert warmups == 1 + 3


class _Passed:
    ok = True
