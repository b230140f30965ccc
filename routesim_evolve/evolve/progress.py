"""What a run shows while it works: metric calls used of the budget, best
val score, the current proposer, evaluations per minute, cost so far and
the estimated time left.

On a terminal it is one live panel (rich) that redraws in place, with each
event printed above it; anywhere else (CI, a log file, a pipe) it is one
plain line per event, as before, so logs stay greppable.
"""

from __future__ import annotations

import sys
from typing import Protocol, TextIO

from pydantic import BaseModel
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text


class ProgressSnapshot(BaseModel):
    """The run's figures at one moment."""

    elapsed_s: float
    used: int
    limit: int
    best_val: float | None
    proposer: str
    cost: str  # empty when no LM has replied
    evals_per_min: float | None  # None until the first evaluation
    eta_s: float | None

    def line(self) -> str:
        """The plain-text form, one line."""
        best = "—" if self.best_val is None else f"{self.best_val:.4f}"
        parts = [f"[{self.elapsed_s:6.0f}s] evals {self.used}/{self.limit}", f"best val {best}"]
        if self.cost:
            parts.append(f"cost {self.cost}")
        parts.append(f"proposer {self.proposer}")
        if self.evals_per_min is not None:
            parts.append(f"{self.evals_per_min:.1f} evals/min")
        if self.eta_s is not None:
            parts.append(f"~{_duration(self.eta_s)} left")
        return "  ".join(parts)


class ProgressView(Protocol):
    def show(self, snapshot: ProgressSnapshot, note: str) -> None: ...

    def close(self) -> None: ...


class LineView:
    """One line per event: for logs and CI."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def show(self, snapshot: ProgressSnapshot, note: str) -> None:
        print(f"{snapshot.line()}  {note}".rstrip(), file=self._stream, flush=True)

    def close(self) -> None:
        pass


class LiveView:
    """A panel redrawn in place, the events scrolling above it."""

    def __init__(self, stream: TextIO) -> None:
        self._console = Console(file=stream)
        self._live = Live(console=self._console, auto_refresh=False, transient=False)
        self._live.start()

    def show(self, snapshot: ProgressSnapshot, note: str) -> None:
        if note:
            # Plain text: a note may hold brackets, and numbers need no colours.
            stamp = (f"{snapshot.elapsed_s:6.0f}s ", "dim")
            self._console.print(Text.assemble(stamp, note), highlight=False)
        self._live.update(_panel(snapshot), refresh=True)

    def close(self) -> None:
        self._live.stop()


def make_view(stream: TextIO | None = None) -> ProgressView:
    """The live panel on a terminal, plain lines anywhere else."""
    stream = stream if stream is not None else sys.stderr
    return LiveView(stream) if stream.isatty() else LineView(stream)


def _panel(s: ProgressSnapshot) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    share = f" ({100 * s.used / s.limit:.0f} %)" if s.limit else ""
    table.add_row("metric calls", f"{s.used} of {s.limit}{share}")
    table.add_row("best val score", "—" if s.best_val is None else f"{s.best_val:.4f}")
    table.add_row("proposer", s.proposer)
    rate = "—" if s.evals_per_min is None else f"{s.evals_per_min:.1f}"
    table.add_row("evaluations/min", rate)
    table.add_row("cost so far", s.cost or "$0.00 (no LM replies)")
    table.add_row("time", f"{_duration(s.elapsed_s)} elapsed"
                  + (f", ~{_duration(s.eta_s)} left" if s.eta_s is not None else ""))
    return table


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
