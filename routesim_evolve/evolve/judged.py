"""What the acceptance saw of each child, from the run log, for the report.

A sequential rule (sequential.py) records its decision with every accepted
and rejected event of log.jsonl (runlog.py). The report lists them, and a
run that kept nothing says what it refused and which came close, instead of
a bare "nothing found". Read from the log, so a resumed run's earlier
children are there too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import orjson

from routesim_evolve.evolve.sequential import Decision

#: How many refused children the closing note names.
NAMED = 5


class JudgedChild(Decision):
    """One child's acceptance (sequential.py's decision), with the iteration
    it came in and the gain the rule asked for."""

    iteration: int
    #: The gain the rule asked for; a refused child whose interval reaches
    #: it came close.
    wanted: float
    #: The child's candidate hash, from its proposal event (None in a log
    #: that did not name it).
    child: str | None = None

    @property
    def close(self) -> bool:
        return not self.kept and self.gain > 0 and self.high >= self.wanted

    def line(self) -> str:
        return (f"iteration {self.iteration}: {self.gain:+.4f} [{self.low:+.4f}, "
                f"{self.high:+.4f}] over {self.observations} evaluations, {self.outcome}")


def judged_children(log: Path) -> list[JudgedChild]:
    """Every child the log holds a decision for, in order."""
    if not log.is_file():
        return []
    out = []
    proposed: dict[int, str] = {}  # each iteration's child, from its proposal event
    for raw in log.read_bytes().splitlines():
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # a line cut by a crash
        event, decision = record.get("event"), record.get("decision")
        if event == "proposal" and record.get("children"):
            proposed[record["iteration"]] = record["children"][0]
        if event in ("accepted", "rejected") and isinstance(decision, dict):
            out.append(JudgedChild(iteration=record["iteration"],
                                   child=proposed.get(record["iteration"]), **decision))
    return out


def render_judged(children: Sequence[JudgedChild]) -> str:
    """The report's table: every child, its gain, interval and evaluations."""
    if not children:
        return "No child was judged by a sequential acceptance."
    rows = [f"| {c.iteration} | {'kept' if c.kept else 'refused'} | {c.gain:+.4f} | "
            f"[{c.low:+.4f}, {c.high:+.4f}] | {c.observations} | {c.outcome} |"
            for c in children]
    kept = sum(c.kept for c in children)
    evaluations = sum(c.observations for c in children)
    return "\n".join([
        f"{len(children)} children judged, {kept} kept; {evaluations} child evaluations "
        "(their parents' as many more at most, often cached). The interval is a plain 95 % "
        "t interval of the scenarios' differences.",
        "",
        "| iteration | verdict | gain | 95 % interval | evaluations | how |",
        "|---:|---|---:|---|---:|---|",
        *rows,
    ])


def refused_note(children: Sequence[JudgedChild]) -> str:
    """What a run that kept nothing says of what it refused."""
    refused = sorted((c for c in children if not c.kept), key=lambda c: -c.gain)
    if not refused:
        return ""
    close = [c for c in refused if c.close]
    named = "; ".join(c.line() for c in refused[:NAMED])
    return (f"The acceptance refused {len(refused)} children; the best by gain: {named}. "
            + (f"{len(close)} came close (a gain above 0 whose interval reaches "
               f"{close[0].wanted:+.3f}): a reply building on them may get there."
               if close else "None came close to the gain asked for."))
