"""Hostile candidates end as score-0 outcomes with useful feedback, and the
next candidate runs fine."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import orjson
import pytest
from repo_files import unavailable

from routesim_evolve.build import BinaryCache
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, NOLND_TAG, go_module_dir
from routesim_evolve.simulate import (
    LND_ROUTERS,
    ORACLE,
    ReferenceCache,
    RunOutcome,
    RunStatus,
    SandboxLimits,
    network_isolation_available,
    run_binary,
    run_candidate,
)
from routesim_evolve.simulate.reference import reference_key

MIB = 1 << 20
SEED = (go_module_dir() / CANDIDATE_SLOT).read_text()
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
SCENARIO = EXAMPLES / "base-example.json"

# Where hostile code goes: the first statement of RequestRoute.
HOOK = "\tif r.finished {\n\t\treturn nil, errors.New"


def seed_with(body: str) -> tuple[str, int]:
    """The seed with `body` run first in RequestRoute; and body's first line."""
    assert HOOK in SEED
    line = SEED[: SEED.index(HOOK)].count("\n") + 1
    return SEED.replace(HOOK, body.rstrip("\n") + "\n" + HOOK, 1), line


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> BinaryCache:
    return BinaryCache(root=tmp_path_factory.getbasetemp() / "routesim-cache")


def run(source: str, cache: BinaryCache, **kw: float) -> RunOutcome:
    return run_candidate(
        source,
        SCENARIO,
        timeout=kw.get("timeout", 5.0),
        memory=int(kw.get("memory", 256 * MIB)),
        cache=cache,
    )


def assert_seed_still_runs(cache: BinaryCache) -> None:
    """The run goes on: the next candidate works."""
    after = run(SEED, cache)
    assert after.ok, after.feedback
    assert after.result is not None and after.result.totals.payments == 12


def test_seed_runs(cache: BinaryCache) -> None:
    outcome = run(SEED, cache)
    assert outcome.status is RunStatus.OK and outcome.ok
    assert outcome.feedback == "" and outcome.exit_code == 0
    assert outcome.result is not None and outcome.result.router == "candidate"
    assert outcome.build is not None and outcome.build.ok


def test_infinite_loop_times_out_and_says_where(cache: BinaryCache) -> None:
    source, line = seed_with("\tfor r.maxShard > 0 {\n\t\tr.feesCommitted++\n\t}")
    outcome = run_candidate(source, SCENARIO, timeout=2.0, cache=cache)
    assert outcome.status is RunStatus.TIMEOUT and not outcome.ok
    assert outcome.wall_s < 6
    assert "within 2 s" in outcome.feedback
    # The loop's head or body, wherever the SIGQUIT caught it.
    assert any(f"candidate_impl.go:{n} " in outcome.feedback for n in (line, line + 1))
    assert_seed_still_runs(cache)


def test_memory_bomb_is_stopped_by_the_cap(cache: BinaryCache) -> None:
    source, line = seed_with("\tvar hog []int\n\tfor {\n\t\thog = append(hog, len(hog))\n\t}")
    outcome = run(source, cache, memory=128 * MIB, timeout=20.0)
    assert outcome.status is RunStatus.MEMORY, outcome.stderr[-2000:]
    assert "128 MiB memory cap" in outcome.feedback
    assert f"candidate_impl.go:{line + 2}" in outcome.feedback
    assert_seed_still_runs(cache)


def test_panic_gives_message_and_stack(cache: BinaryCache) -> None:
    source, line = seed_with("\tvar xs []int\n\t_ = xs[inFlight+3]")
    outcome = run(source, cache)
    assert outcome.status is RunStatus.PANIC and outcome.result is None
    assert "panicked" in outcome.feedback
    assert "index out of range [3] with length 0" in outcome.feedback
    assert f"candidate_impl.go:{line + 1} in main.(*seedRouter).RequestRoute" in outcome.feedback
    assert f"{line + 1} | _ = xs[inFlight+3]" in outcome.feedback
    assert_seed_still_runs(cache)


def test_explicit_panic_message(cache: BinaryCache) -> None:
    source, _ = seed_with('\tpanic(fmt.Sprintf("bad shard %d", amt))')
    source = source.replace("import (\n", 'import (\n\t"fmt"\n', 1)
    outcome = run(source, cache)
    assert outcome.status is RunStatus.PANIC
    assert "bad shard" in outcome.feedback


def test_deadlock_is_a_fatal_error(cache: BinaryCache) -> None:
    source, _ = seed_with("\tselect {}")
    outcome = run(source, cache)
    assert outcome.status is RunStatus.PANIC
    assert "deadlock" in outcome.feedback
    assert_seed_still_runs(cache)


def test_compile_error_scores_zero_with_the_line(cache: BinaryCache) -> None:
    source, line = seed_with("\tundefinedThing()")
    outcome = run(source, cache)
    assert outcome.status is RunStatus.COMPILE_ERROR and not outcome.ok
    assert f"candidate_impl.go:{line}:" in outcome.feedback
    assert "undefined: undefinedThing" in outcome.feedback
    assert_seed_still_runs(cache)


def test_rejected_source_scores_zero_with_the_line(cache: BinaryCache) -> None:
    source = SEED.replace("import (\n", 'import (\n\t"os/exec"\n', 1)
    outcome = run(source, cache)
    assert outcome.status is RunStatus.REJECTED and not outcome.ok
    assert '"os/exec" is forbidden' in outcome.feedback
    assert_seed_still_runs(cache)


def test_malformed_scenario_is_the_harness_fault(cache: BinaryCache, tmp_path: Path) -> None:
    doc = orjson.loads(SCENARIO.read_bytes())
    doc["payments"][0]["amount_msat"] = 0
    shutil.copy(EXAMPLES / "graph-small.json", tmp_path / "graph-small.json")
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(doc))
    outcome = run_candidate(SEED, bad, timeout=5.0, cache=cache)
    assert outcome.status is RunStatus.SCENARIO_ERROR and outcome.harness_fault
    assert "payments[0].amount_msat" in outcome.feedback


# Stand-ins for routesim, to test the sandbox itself.


def fake_binary(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-routesim"
    path.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done\n'
        'scenario=$a\nprobe=$(dirname "$scenario")\n' + body
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_unreadable_result_is_bad_output(tmp_path: Path) -> None:
    binary = fake_binary(tmp_path, 'echo \'{"format": 1}\' > "$out"\n')
    outcome = run_binary(binary, tmp_path / "s.json", limits=SandboxLimits(timeout_s=5))
    assert outcome.status is RunStatus.BAD_OUTPUT and not outcome.ok
    assert "not a valid routesim-result/1" in outcome.feedback


def test_output_is_capped_head_and_tail(tmp_path: Path) -> None:
    body = "head -c 3000000 /dev/zero | tr '\\0' x >&2\necho LAST WORDS >&2\nexit 3\n"
    binary = fake_binary(tmp_path, body)
    limits = SandboxLimits(timeout_s=10, output_cap_bytes=64 * 1024)
    outcome = run_binary(binary, tmp_path / "s.json", limits=limits)
    assert outcome.status is RunStatus.EXIT and outcome.exit_code == 3
    assert len(outcome.stderr) < 64 * 1024 + 100
    assert "bytes cut" in outcome.stderr and outcome.stderr.rstrip().endswith("LAST WORDS")
    assert "exit code 3" in outcome.feedback


def test_environment_is_scrubbed_and_scratch_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROUTESIM_SECRET", "leak")
    body = 'env > "$probe/env.txt"\npwd > "$probe/pwd.txt"\nexit 1\n'
    binary = fake_binary(tmp_path, body)
    limits = SandboxLimits(timeout_s=5, memory_bytes=300 * MIB, gomaxprocs=2)
    run_binary(binary, tmp_path / "s.json", limits=limits)
    lines = (tmp_path / "env.txt").read_text().splitlines()
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    assert {"PATH", "HOME", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK"} <= set(env)
    assert "ROUTESIM_SECRET" not in env
    assert env["GOMAXPROCS"] == "2" and env["GOMEMLIMIT"] == str(300 * MIB)
    scratch = Path((tmp_path / "pwd.txt").read_text().strip())
    assert env["HOME"] == str(scratch)
    assert not scratch.exists(), "the scratch folder must be removed"


def test_no_network(tmp_path: Path) -> None:
    if not network_isolation_available():
        unavailable("unshare -n does not work on this machine: runs keep the network")
    binary = fake_binary(tmp_path, 'cat /proc/net/dev > "$probe/net.txt"\nexit 1\n')
    run_binary(binary, tmp_path / "s.json", limits=SandboxLimits(timeout_s=5))
    lines = (tmp_path / "net.txt").read_text().splitlines()[2:]
    assert [ln.split(":")[0].strip() for ln in lines] == ["lo"]


# Reference results.


def test_reference_results_are_cached(cache: BinaryCache, tmp_path: Path) -> None:
    # Without lnd linked in (fast); --router candidate stands in for lnd.
    refs = ReferenceCache(cache, root=tmp_path, tags=(NOLND_TAG,))
    first = refs.result(SCENARIO, "candidate")
    assert first.router == "candidate" and refs.runs == 1
    assert refs.result(SCENARIO, "candidate") == first and refs.runs == 1
    again = ReferenceCache(cache, root=tmp_path, tags=(NOLND_TAG,))
    assert again.result(SCENARIO, "candidate") == first and again.runs == 0


def test_reference_key_covers_scenario_graph_module_router(tmp_path: Path) -> None:
    shutil.copy(SCENARIO, tmp_path / "s.json")
    shutil.copy(EXAMPLES / "graph-small.json", tmp_path / "graph-small.json")
    scenario = tmp_path / "s.json"
    key = reference_key(scenario, "lnd-bimodal", "m")
    assert key != reference_key(scenario, "lnd-apriori", "m")
    assert key != reference_key(scenario, "lnd-bimodal", "m2")
    graph = tmp_path / "graph-small.json"
    graph.write_bytes(graph.read_bytes() + b"\n")
    assert key != reference_key(scenario, "lnd-bimodal", "m")


def test_lnd_reference_routers(tmp_path: Path) -> None:
    # The full binary comes from the real (content-addressed) cache: linking
    # lnd takes 10-20 s, paid once per module content, not once per session.
    refs = ReferenceCache(BinaryCache(), root=tmp_path)
    routers = refs.routers()
    # The reference binary without its reference routers is exactly the
    # regression this test is for: it fails, never skips.
    missing = [r for r in (*LND_ROUTERS, ORACLE) if r not in routers]
    assert not missing, f"the full routesim binary lists no {', '.join(missing)} (has {routers})"
    for router in LND_ROUTERS:
        result = refs.result(SCENARIO, router)
        assert result.router == router and result.totals.payments == 12
    assert refs.runs == 2


@pytest.mark.parametrize("champion", sorted(
    (Path(__file__).resolve().parents[1] / "champions").glob("*.go")), ids=lambda p: p.name)
def test_every_champion_builds_and_runs(champion: Path) -> None:
    from routesim_evolve.evolve.seed import load_seed

    outcome = run_candidate(load_seed(champion).source, SCENARIO, timeout=60)
    assert outcome.ok, outcome.feedback
    assert outcome.result is not None and outcome.result.totals.succeeded > 0


def test_a_result_file_left_as_a_link_or_a_flood_is_refused_not_read(tmp_path: Path) -> None:
    """The scratch folder is the binary's: a result linked to a secret is
    refused without its bytes reaching the feedback, a huge one by its size."""
    from routesim_evolve.simulate.sandbox import _read_result

    secret = tmp_path / "world.key"
    secret.write_text("5ec7e7" * 10)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "result.json").symlink_to(secret)
    result, why = _read_result(scratch / "result.json", SandboxLimits())
    assert result is None and "symbolic link" in why and "5ec7e7" not in why
    (scratch / "result.json").unlink()
    (scratch / "result.json").write_bytes(b"{" + b" " * 2048)
    result, why = _read_result(scratch / "result.json", SandboxLimits(result_cap_bytes=1024))
    assert result is None and "over 1024 bytes" in why
    (scratch / "result.json").unlink()
    assert _read_result(scratch / "result.json", SandboxLimits())[1] == (
        "routesim exited 0 but wrote no result file")
