"""kill -9 the main command mid-run, restart it with the same --name: it
repeats no evaluation and proposes exactly the candidates an uninterrupted
run with the same seed proposes (offline proposer); killed in the middle of
a sequential decision, it decides that child as the uninterrupted run did."""

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


def _command(runs: Path, name: str, *, acceptance: str = "paired",
             max_evals: int = 120) -> list[str]:
    # The paired rule judges a child on its minibatch alone, so 120
    # evaluations make the 8 proposals the first test needs; the sequential
    # rule plays the champion's near-neutral moves far longer (2 proposals
    # in 120): the second test.
    return [sys.executable, "-m", "routesim_evolve", "--corpus", str(CORPUS),
            "--seed-file", str(CHAMPION), "--reflection-lm", "offline", "--seed", "7",
            "--max-evals", str(max_evals), "--runs", str(runs), "--name", name,
            "--world-secret", SECRET, "--acceptance", acceptance]


def _sequential_command(runs: Path, name: str) -> list[str]:
    return _command(runs, name, acceptance="sequential", max_evals=SEQUENTIAL_BUDGET)


# The champion's first child is played far beyond its minibatch (with 200
# evaluations it is kept after 88 observations). With 120, the seed's val
# pass (8), the minibatch (3 + 3) and the left-out train scenarios (5 + 5),
# five rounds of 8 + 8 reseeded copies reach 104, and the sixth is not drawn
# (the 8 of a kept child's val pass are kept back). Killed at 100, in the
# fifth round, the resumed run must draw all five again from the cache.
SEQUENTIAL_BUDGET = 120
KILL_AT = 100


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
    whole = subprocess.run(_command(tmp_path, "whole"), cwd=REPO,
                           capture_output=True, text=True, timeout=900)
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = _proposed(tmp_path / "whole")
    assert len(expected) >= 8, "the uninterrupted run proposed too little to compare"

    killed = tmp_path / "killed"
    proc = subprocess.Popen(_command(tmp_path, "killed"), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 600
    while _proposals_logged(killed) < 6 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    evals_before = {p.relative_to(killed) for p in (killed / "evals").glob("*/*.json")}

    resumed = subprocess.run(_command(tmp_path, "killed"), cwd=REPO,
                             capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming" in resumed.stderr
    assert _proposed(killed) == expected
    evals_after = {p.relative_to(killed) for p in (killed / "evals").glob("*/*.json")}
    assert evals_before <= evals_after


def _decisions(run_dir: Path) -> list[dict]:
    """Every child's decision, in order: what it was judged on and the verdict."""
    lines = (run_dir / "log.jsonl").read_text().splitlines()
    return [json.loads(line)["decision"] for line in lines
            if '"event":"accepted"' in line or '"event":"rejected"' in line]


def _evals(run_dir: Path) -> int:
    return sum(1 for _ in (run_dir / "evals").glob("*/*.json"))


def test_a_run_killed_in_the_middle_of_a_decision_decides_it_as_if_never_killed(
        tmp_path: Path):
    """The rounds a killed decision drew are cached and counted as spent;
    resumed, the same child is judged again on them, and must be decided on
    as many observations as the uninterrupted run's, not fewer because the
    budget left looks smaller."""
    whole = subprocess.run(_sequential_command(tmp_path, "whole"), cwd=REPO,
                           capture_output=True, text=True, timeout=1200)
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = _decisions(tmp_path / "whole")
    assert expected and expected[0]["observations"] > 8, "no decision reached the rounds"

    killed = tmp_path / "killed"
    proc = subprocess.Popen(_sequential_command(tmp_path, "killed"), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 900
    while proc.poll() is None and time.monotonic() < deadline and _evals(killed) < KILL_AT:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _decisions(killed) == [], "killed after the first decision, not in it"

    resumed = subprocess.run(_sequential_command(tmp_path, "killed"), cwd=REPO,
                             capture_output=True, text=True, timeout=1200)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "resuming" in resumed.stderr
    assert _decisions(killed) == expected
    assert _proposed(killed) == _proposed(tmp_path / "whole")
