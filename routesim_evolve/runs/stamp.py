"""The scoring version and simulator a run dir was begun under.

GEPA's saved state holds scores, and a run resumed under another scoring
version would compare them with scores of another formula; its evaluation
cache would answer with them too. So a run dir is stamped with the version at
its start (`scoring.json`), a resume under another version is refused, and
the report reads an old run's evaluations under its own version. The same
holds for the simulator: the stamp records the fingerprint of the Go module
the candidates are built into (the candidate's file left out), and a resume
after the simulator, the toolkit or the harness changed is refused too; and
for the rule that draws hidden worlds from the run's secret
(corpus/worlds.py `WORLDS_RULE`): a resume re-draws them, and under another
rule it would play other worlds than its saved scores came from.
"""

from __future__ import annotations

import json
from pathlib import Path

from routesim_evolve.corpus.worlds import FIRST_WORLDS_RULE
from routesim_evolve.fsutil import atomic_write
from routesim_evolve.score.axes import SCORING_VERSION

SCORING_FILE = "scoring.json"
#: What a run dir holds once its search has begun.
_BEGUN = ("gepa", "evals")


class ScoringChanged(Exception):
    """The run dir was begun under another scoring version."""


def claim_scoring(run_dir: Path, simulator: str = "", worlds: str = "") -> None:
    """Stamp the run dir with today's scoring version, `simulator` (the
    module fingerprint) and `worlds` (the hidden worlds' rule), or raise
    ScoringChanged if its search began under another version (a run dir
    from before the stamp was scored by version 1), another simulator or
    another worlds rule (a stamp without one is taken as it is)."""
    begun = any((run_dir / name).exists() for name in _BEGUN)
    version = run_scoring_version(run_dir) if begun else SCORING_VERSION
    start_over = (f"Start a new run (without --name), or delete {run_dir} to run it again "
                  "from scratch.")
    if version != SCORING_VERSION:
        raise ScoringChanged(
            f"{run_dir} was begun under scoring version {version}, and this is version "
            f"{SCORING_VERSION} (docs/scoring.md): its search state holds scores of the "
            f"other version, which cannot be compared with today's. {start_over}")
    before = _stamp(run_dir).get("simulator", "") if begun else ""
    if before and simulator and before != simulator:
        raise ScoringChanged(
            f"{run_dir} was begun under another simulator (Go module {before[:12]}, today "
            f"{simulator[:12]}): go/ has changed since, so its saved scores cannot be "
            f"compared with today's. {start_over}")
    drawn = _stamp(run_dir).get("worlds", FIRST_WORLDS_RULE) if begun else ""
    if drawn and worlds and drawn != worlds:
        raise ScoringChanged(
            f"{run_dir} was begun under another rule for its hidden worlds ({drawn}, today "
            f"{worlds}): resumed, it would play other worlds than its saved scores came "
            f"from. {start_over}")
    stamp = {"version": SCORING_VERSION, **({"simulator": simulator} if simulator else {}),
             **({"worlds": worlds} if worlds else {})}
    atomic_write(run_dir / SCORING_FILE, json.dumps(stamp).encode())


def _stamp(run_dir: Path) -> dict[str, object]:
    try:
        stamp = json.loads((run_dir / SCORING_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def run_scoring_version(run_dir: Path) -> int | str:
    """The scoring version the run dir was begun under: its stamp's, 1 for a
    run from before the stamp, a description when the stamp is unreadable."""
    stamp = run_dir / SCORING_FILE
    if not stamp.is_file():
        return 1
    try:
        version = json.loads(stamp.read_bytes())["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown (unreadable " + stamp.name + ")"
    return version if isinstance(version, int) else f"unknown ({version!r})"
