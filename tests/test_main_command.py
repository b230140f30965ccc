"""The main command exactly as a newcomer types it (README's first set-up
command, after the install step), in a subprocess on the bundled corpus."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "routesim_evolve", *args],
        cwd=REPO, capture_output=True, text=True, timeout=900, env=env,
    )


SIGNED_OUT_AGENT = """#!/bin/sh
# An agent CLI installed but never signed in, as `npm install` leaves it:
# it starts, says it is signed out, and any real use is recorded.
[ "$1" = --version ] && {{ echo "{tool} 1.0"; exit 0; }}
[ "$2" = status ] && {{ echo "Not logged in"; exit 1; }}
echo "$@" >> {used}
exit 1
"""


def test_main_command_on_the_bundled_corpus_offline(tmp_path: Path):
    # No key, and agent CLIs installed but signed out (as on a new machine
    # where `npm install` put them on PATH): the offline proposer.
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY",
                        "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")}
    agents = tmp_path / "agents"
    agents.mkdir()
    used = tmp_path / "agents-used"
    for tool in ("claude", "codex"):
        (agents / tool).write_text(SIGNED_OUT_AGENT.format(tool=tool, used=used))
        (agents / tool).chmod(0o755)
    env["PATH"] = os.pathsep.join([str(agents), *(
        d for d in env.get("PATH", "").split(os.pathsep)
        if not any(Path(d, agent).exists() for agent in ("claude", "codex"))
    )])
    run = _main("--corpus", "corpus", "--runs", str(tmp_path), "--name", "newcomer", env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "using the offline proposer" in run.stderr
    assert f"the codex CLI at {agents / 'codex'} is not signed in" in run.stderr
    assert not used.exists(), used.read_text()
    best = re.search(r"^Best candidate: (\S+)$", run.stdout, re.M)
    assert best and Path(REPO, best.group(1)).is_file()
    assert re.search(r"^Val score: 0\.\d{4} \(seed 0\.\d{4}\)$", run.stdout, re.M)
    assert "| arena | router | scenarios | success |" in run.stdout
    for router in ("best", "seed", "lnd-apriori", "lnd-bimodal"):
        assert re.search(rf"^\| all \| {router} \| \d+ \|", run.stdout, re.M), router
    # The run plays fresh hidden worlds, where the seed's few knobs may or
    # may not move val (by less than the 4 printed digits, too). When nothing
    # beat the seed, whether its proposer ran dry or the budget ran out, the
    # run says so once, with what helps; when something did, it does not
    # claim otherwise.
    report = json.loads((tmp_path / "newcomer" / "report.json").read_text())
    best_val, seed_val = report["best_val"], report["seed_val"]
    said = run.stderr.count("Stopping early") + run.stderr.count("No candidate beat the seed")
    if best_val <= seed_val:
        assert said == 1, run.stderr[-3000:]
        assert "--reflection-lm" in run.stderr and "--seed-file champions/" in run.stderr
    else:
        assert "No candidate beat the seed" not in run.stderr, run.stderr[-3000:]
        assert run.stderr.count("Stopping early") <= 1, run.stderr[-3000:]
    # The budget is a limit.
    for used, limit in re.findall(r"evals (\d+)/(\d+)", run.stderr):
        assert int(used) <= int(limit)
    # Every split was played in hidden worlds, under a secret only the run
    # dir's owner can read (docs/scoring.md, "Hidden worlds").
    run_dir = tmp_path / "newcomer"
    assert (run_dir / "world.key").stat().st_mode & 0o077 == 0
    for split in ("train", "val", "test"):
        played = sorted((run_dir / "worlds" / split).glob("*.json"))
        corpus = sorted((REPO / "corpus" / split).glob("*.json"))
        assert [p.name for p in played] == [c.name for c in corpus]
        for p, c in zip(played, corpus, strict=True):
            assert json.loads(p.read_text())["seed"] != json.loads(c.read_text())["seed"]


def test_missing_go_modules_say_what_to_run(tmp_path: Path):
    env = dict(os.environ, GOMODCACHE=str(tmp_path / "empty-modcache"),
               ROUTESIM_CACHE_DIR=str(tmp_path / "cache"))
    run = _main("--corpus", "corpus", "--runs", str(tmp_path), env=env)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "scripts/install.sh" in run.stderr
    assert "Traceback" not in run.stderr



def test_a_seed_file_that_does_not_build_is_refused_before_any_evaluation(tmp_path: Path):
    seed = tmp_path / "broken.go"
    seed.write_text((REPO / "go/cmd/routesim/candidate_impl.go").read_text()
                    .replace("func newCandidateRouter(", "func newCandidateRouter(,", 1))
    runs = tmp_path / "runs"
    run = _main("--corpus", "corpus", "--seed-file", str(seed), "--runs", str(runs),
                "--name", "broken")
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"{seed} does not build" in run.stderr
    assert "candidate_impl.go:" in run.stderr  # the compiler's own message, with its line
    assert "Traceback" not in run.stderr and "evals" not in run.stderr
    assert not (runs / "broken").exists()


def test_a_truncated_scenario_file_is_named_in_one_line(tmp_path: Path):
    corpus = tmp_path / "corpus"
    subprocess.run(["cp", "-r", str(REPO / "corpus"), str(corpus)], check=True)
    broken = corpus / "val" / "base-001.json"
    broken.write_bytes(broken.read_bytes()[:300])
    run = _main("--corpus", str(corpus), "--runs", str(tmp_path / "runs"))
    assert run.returncode == 2, run.stderr[-2000:]
    assert f"{broken}: invalid JSON at line" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "runs").exists()
