"""How long building a changed candidate takes with a warm Go build cache.

    python bench/bench_build.py [--runs 7] [--full-runs 7] [--no-compare-flags]

Each run builds the seed candidate with one constant changed, so the binary
cache misses while Go's build cache is warm: what is measured is compiling
package main and linking, plus the allow-list check. Figures: the candidate
build (routesim_nolnd, lnd left out of the link), the same with lnd linked
in (for the record), a binary-cache hit, and the candidate build without
`-ldflags=-s -w` to show what dropping symbols buys. Goal: under 2 s median.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import click
from pydantic import BaseModel

from routesim_evolve.build.cache import BUILD_FLAGS, BinaryCache, BuildOutcome
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, NOLND_TAG, go_module_dir, go_version

GOAL_S = 2.0


class Figures(BaseModel):
    """Wall times of one kind of build, in seconds."""

    label: str
    times: list[float]

    def line(self) -> str:
        t = self.times
        return (
            f"{self.label:<44} median {statistics.median(t):6.3f} s   "
            f"min {min(t):6.3f}   max {max(t):6.3f}   (n={len(t)})"
        )


def variant(seed: str, nonce: str, i: int) -> str:
    """The seed with its minShardMsat constant changed: a cache miss."""
    old = "minShardMsat = 10_000_000"
    assert old in seed, "the seed's minShardMsat constant moved; update the bench"
    return seed.replace(old, f"minShardMsat = 10_000_000 + {i} // {nonce}", 1)


def timed(build: Callable[[], BuildOutcome], want_compile: bool) -> float:
    start = time.perf_counter()
    outcome = build()
    elapsed = time.perf_counter() - start
    if not outcome.ok:
        raise SystemExit(f"build failed:\n{outcome.message}")
    if outcome.compiled != want_compile:
        raise SystemExit(f"expected compiled={want_compile}, got {outcome.compiled}")
    return elapsed


def measure(label: str, cache: BinaryCache, seed: str, tags: tuple[str, ...], runs: int) -> Figures:
    """Median/min/max of `runs` cache-missing builds, after one warm-up
    (which builds candcheck and warms Go's cache for these flags)."""
    nonce = uuid.uuid4().hex
    timed(lambda: cache.build(variant(seed, nonce, -1), tags=tags), want_compile=True)
    times = [
        timed(lambda i=i: cache.build(variant(seed, nonce, i), tags=tags), want_compile=True)
        for i in range(runs)
    ]
    return Figures(label=label, times=times)


def measure_hits(cache: BinaryCache, seed: str, runs: int) -> Figures:
    source = variant(seed, uuid.uuid4().hex, 0)
    timed(lambda: cache.build(source), want_compile=True)
    times = [timed(lambda: cache.build(source), want_compile=False) for _ in range(runs)]
    return Figures(label="cache hit (no compile)", times=times)


@click.command()
@click.option("--runs", default=7, show_default=True, help="builds per candidate figure")
@click.option("--full-runs", default=7, show_default=True, help="builds with lnd linked in")
@click.option("--compare-flags/--no-compare-flags", default=True, show_default=True)
def main(runs: int, full_runs: int, compare_flags: bool) -> None:
    seed = (go_module_dir() / CANDIDATE_SLOT).read_text()
    print(go_version())
    print(f"build flags: {' '.join(BUILD_FLAGS)}, CGO_ENABLED=0, -overlay for the candidate")
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        cache = BinaryCache(root=Path(tmp) / "default")
        rows = [measure(f"candidate build (-tags {NOLND_TAG})", cache, seed, (NOLND_TAG,), runs)]
        rows.append(measure_hits(cache, seed, runs))
        if compare_flags:
            plain = BinaryCache(root=Path(tmp) / "plain", flags=("-trimpath",))
            label = "candidate build without -ldflags=-s -w"
            rows.append(measure(label, plain, seed, (NOLND_TAG,), runs))
        if full_runs > 0:
            rows.append(measure("full build (lnd linked in)", cache, seed, (), full_runs))
    for row in rows:
        print(row.line())
    median = statistics.median(rows[0].times)
    verdict = "meets" if median < GOAL_S else "MISSES"
    print(f"candidate build median {median:.3f} s {verdict} the {GOAL_S:.0f} s goal")


if __name__ == "__main__":
    main()
