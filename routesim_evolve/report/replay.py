"""What worlds a table was played in, and the replay check as Markdown.

A table played in the corpus's own worlds can be forged: a candidate that
carries the corpus replays each scenario's seeded world and scores near the
oracle. So every such table says so, a table played in hidden worlds names
the secret that plays them again, and `--check-replay` shows each router's
score in the corpus's own worlds minus in hidden ones (score/compare.py,
`replay_check`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from routesim_evolve.corpus.worlds import WorldSecret
from routesim_evolve.score.compare import ReplayCheck

#: Said of every table played in the corpus's own worlds.
REPLAYABLE: Final = (
    "the corpus's own worlds (--world-secret public): REPLAYABLE, a candidate that carries "
    "the corpus can forge these scores; leave --world-secret out for hidden worlds")


def worlds_line(secret: WorldSecret, given: bool) -> str:
    """One line naming the worlds played: the public warning, or the secret
    that plays the same hidden worlds again (`given`: the user chose it)."""
    if secret.public:
        return f"Worlds: {REPLAYABLE}."
    how = "given" if given else "fresh"
    return (f"Worlds: hidden, under a {how} secret; this table is played again with "
            f"--world-secret {secret.key.hex()}")


def recorded_worlds(world_secret: str) -> str:
    """The worlds a comparison records (Comparison.world_secret) in words;
    "" when it records none."""
    if not world_secret:
        return ""
    if world_secret == "public":
        return f"Worlds: {REPLAYABLE}."
    return f"Worlds: hidden; played again with --world-secret {world_secret}"


def heading(title: str, secret: WorldSecret) -> str:
    """A table's heading, marked replayable in the corpus's own worlds."""
    return f"## {title}" + (" (corpus's own worlds: replayable)" if secret.public else "")


def render_replay_check(checks: Sequence[ReplayCheck]) -> str:
    """Each router's score in the corpus's own worlds, in hidden ones, and
    the paired difference with its 95 % interval; a flagged candidate named
    below the table, the reference routers marked as the control."""
    lines = ["| router | public | hidden | public − hidden | 95% CI | n (scenarios) | verdict |",
             "|---|---:|---:|---:|---|---:|---|"]
    for c in checks:
        d = c.difference
        interval = (f"[{d.ci_low:+.4f}, {d.ci_high:+.4f}]" if d.clusters > 1
                    else "— (one scenario)")
        lines.append(f"| {c.router} | {d.mean_a:.4f} | {d.mean_b:.4f} | {d.mean_diff:+.4f} | "
                     f"{interval} | {d.n} ({d.clusters}) | {_verdict(c)} |")
    lines.append("\nA candidate that scores more in the corpus's own worlds than in hidden "
                 "ones beyond noise (the 95 % interval above 0) may carry the corpus and "
                 "replay its worlds. The reference routers carry nothing: their differences "
                 "are what the worlds alone move, against which to read a candidate's.")
    flagged = [c.router for c in checks if c.flagged]
    lines.append("\n" + (f"FLAGGED: {', '.join(flagged)} score(s) more in the corpus's own "
                         "worlds than in hidden ones beyond noise: trust only hidden-world "
                         "tables of it." if flagged else
                         "No candidate scores more in the corpus's own worlds beyond noise."))
    return "\n".join(lines)


def _verdict(check: ReplayCheck) -> str:
    if check.difference.clusters < 2:
        return "control" if check.control else "no verdict: one scenario has no noise to measure"
    above = check.difference.ci_low > 0
    if check.control:
        return "control" + (" (above beyond noise: the worlds differ)" if above else "")
    return "**FLAGGED: may carry the corpus**" if check.flagged else "within noise or below"
