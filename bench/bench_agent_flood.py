"""What an agent that floods its output costs the harness's memory.

    python bench/bench_agent_flood.py [--gib 1]

Two stand-in agents write lines of 64 KiB (one 0xFF byte a line) through
the harness's own watcher (reflect/process.py `run_cli`): one GIB
gibibytes to stdout and stderr alike (stopped once stdout passes
MAX_STDOUT_BYTES), one GIB gibibytes to stderr alone (read to its end, its
last STDERR_KEEP_BYTES kept). Printed for each: how it ended, after how
long, and how much the harness's peak resident memory grew.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import click

from routesim_evolve.fsutil import MIB
from routesim_evolve.reflect.errors import TransientError
from routesim_evolve.reflect.process import MAX_STDOUT_BYTES, STDERR_KEEP_BYTES, run_cli

AGENT = """import sys
line = b"\\xff" + b"x" * 65534 + b"\\n"
streams = [sys.stderr.buffer] + ([sys.stdout.buffer] if {stdout} else [])
for _ in range({lines}):
    for stream in streams:
        stream.write(line)
"""


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _flood(lines: int, *, stdout: bool) -> tuple[str, float, int]:
    """How one flood ended, its seconds, and the peak RSS growth."""
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "agent.py"
        agent.write_text(AGENT.format(lines=lines, stdout=stdout))
        before = _peak_rss_bytes()
        started = time.monotonic()
        try:
            run_cli([sys.executable, str(agent)], stdin="", cwd=Path(tmp), env=dict(os.environ),
                    timeout=600, idle_timeout=600, name="flood")
            ended = "exited by itself"
        except TransientError as exc:
            ended = str(exc)[:120]
        return ended, time.monotonic() - started, _peak_rss_bytes() - before


@click.command()
@click.option("--gib", type=click.FloatRange(min=0.01), default=1.0, show_default=True,
              help="Gibibytes the agent writes to each stream.")
def main(gib: float) -> None:
    lines = int(gib * 1024 * 1024 * 1024 // 65536)
    print(f"bound on what is kept: stdout {MAX_STDOUT_BYTES / MIB:.0f} MiB, "
          f"stderr {STDERR_KEEP_BYTES / 1024:.0f} KiB")
    # stderr alone first: peak RSS only grows, so the smaller case goes first.
    for stdout, what in ((False, "stderr alone"), (True, "stdout and stderr")):
        ended, seconds, grown = _flood(lines, stdout=stdout)
        print(f"{gib:g} GiB to {what}: {ended} after {seconds:.1f} s; "
              f"harness peak RSS grew by {grown / MIB:.1f} MiB")


if __name__ == "__main__":
    main()
