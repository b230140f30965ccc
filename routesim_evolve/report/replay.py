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
from routesim_evolve.score.compare import ReplayCheck, control_router
from routesim_evolve.score.stats import PairedComparison

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
    """Each router's score in the corpus's own worlds, in hidden ones, the
    paired difference with its 95 % interval, and a candidate's difference
    beyond the control's; a flagged candidate named below the table."""
    control = control_router(checks)
    lines = ["| router | public | hidden | public − hidden | 95% CI | beyond the control | "
             "95% CI | n (scenarios) | verdict |",
             "|---|---:|---:|---:|---|---:|---|---:|---|"]
    for c in checks:
        d, b = c.difference, c.beyond_control
        beyond = f"{b.mean_diff:+.4f} | {_interval(b)}" if b else "— | —"
        lines.append(f"| {c.router} | {d.mean_a:.4f} | {d.mean_b:.4f} | {d.mean_diff:+.4f} | "
                     f"{_interval(d)} | {beyond} | {d.n} ({d.clusters}) | "
                     f"{_verdict(c, c.router == control)} |")
    lines.append("\nA candidate that scores more in the corpus's own worlds than in hidden "
                 "ones may carry the corpus and replay its worlds. The reference routers "
                 "carry nothing: their differences are what the worlds alone move (the "
                 "corpus was sized in its own worlds, so honest routers may score more there "
                 "too). A candidate is flagged when its difference exceeds the control's "
                 "(the reference router whose difference is largest), scenario by scenario, "
                 "beyond noise: the interval of *beyond the control* above 0.")
    flagged = [c.router for c in checks if c.flagged]
    lines.append("\n" + (f"FLAGGED: {', '.join(flagged)} score(s) more in the corpus's own "
                         "worlds than in hidden ones, beyond the control and beyond noise: "
                         "trust only hidden-world tables of it." if flagged else
                         "No candidate scores more in the corpus's own worlds beyond the "
                         "control and noise."))
    return "\n".join(lines)


def _interval(pair: PairedComparison) -> str:
    """A 95 % interval, or why there is none: one scenario is a point."""
    if pair.clusters < 2:
        return "— (one scenario)"
    return f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}]"


def _verdict(check: ReplayCheck, the_control: bool) -> str:
    if check.control:
        return "control (the largest difference)" if the_control else "control"
    if check.difference.clusters < 2:
        return "no verdict: one scenario has no noise to measure"
    return "**FLAGGED: may carry the corpus**" if check.flagged else "within noise or below"
