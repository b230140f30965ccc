"""kill -9 the main command mid-run, restart it with the same --name: it
repeats no evaluation and proposes exactly the candidates an uninterrupted
run with the same seed proposes (offline proposer)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAMPION = REPO / "champions" / "probabilistic.go"  # marks knobs that move scores
# The bundled corpus: 8 train scenarios, so minibatches of 3 are drawn at random.
CORPUS = REPO / "corpus"


# Both runs play the same hidden worlds (corpus/worlds.py), as one run resumed does.
SECRET = "5e" * 32


def _command(corpus: Path, runs: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "routesim_evolve", "--corpus", str(corpus),
            "--seed-file", str(CHAMPION), "--reflection-lm", "offline", "--seed", "7",
            "--max-evals", "120", "--runs", str(runs), "--name", name,
            "--world-secret", SECRET,
            # The paired rule judges a child on its minibatch alone, so 120
            # evaluations make the 8 proposals this needs; the sequential
            # rule plays the champion's near-neutral moves far longer (2
            # proposals in 120). Its account across a resume: test_rules.py.
            "--acceptance", "paired"]


def _proposed(run_dir: Path) -> list[str]:
    """Every distinct candidate the run proposed, in order of first proposal."""
    seen: list[str] = []
    for line in (run_dir / "log.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "proposal":
            seen += [c for c in event["children"] if c not in seen]
    return seen


def _proposals_logged(run_dir: Path) -> int:
    log = run_dir / "log.jsonl"
    if not log.is_file():
        return 0
    return sum('"event":"proposal"' in line for line in log.read_text().splitlines())


def test_a_killed_run_resumes_as_if_never_killed(tmp_path: Path):
    whole = subprocess.run(_command(CORPUS, tmp_path, "whole"), cwd=REPO,
                           capture_output=True, text=True, timeout=900)
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = _proposed(tmp_path / "whole")
    assert len(expected) >= 8, "the uninterrupted run proposed too little to compare"

    killed = tmp_path / "killed"
    proc = subprocess.Popen(_command(CORPUS, tmp_path, "killed"), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 600
    while _proposals_logged(killed) < 6 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    evals_before = {p.relative_to(killed) for p in (killed / "evals").glob("*/*.json")}

    resumed = subprocess.run(_command(CORPUS, tmp_path, "killed"), cwd=REPO,
                             capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming" in resumed.stderr
    assert _proposed(killed) == expected
    evals_after = {p.relative_to(killed) for p in (killed / "evals").glob("*/*.json")}
    assert evals_before <= evals_after
