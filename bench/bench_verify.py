"""What checking a trusted file before each use costs (build/trusted.py).

    python bench/bench_verify.py [--repeats 30]

For a candidate binary (the seed, built without lnd into a scratch cache
folder) and the reference binary (lnd linked in, from the cache folder),
the milliseconds of one check: hashing the whole file through its
descriptor (a file never seen, or changed: its ctime moved), and the check
of an unchanged file (open, fstat, memo hit). Then `go_binary()`: the
toolchain's go, asm, cgo, compile and link checked the same way (its first
call in a process also runs `go env GOTOOLDIR`).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click

import routesim_evolve.build.gomodule as gomodule
import routesim_evolve.build.trusted as trusted
from routesim_evolve.build.cache import BinaryCache
from routesim_evolve.build.gomodule import CANDIDATE_SLOT, go_binary, go_module_dir
from routesim_evolve.fsutil import MIB


def median_ms(step: Callable[[], object], repeats: int) -> float:
    """The median wall time of `step`, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def check(path: Path) -> None:
    with trusted.open_checked(path):
        pass


def check_unseen(path: Path) -> None:
    trusted._digests.clear()  # as for a file whose ctime moved: hashed again
    check(path)


def trust_toolchain_afresh() -> None:
    """go_binary() as a process's first call makes it: every file hashed."""
    gomodule._trusted_toolchain.cache_clear()
    trusted._digests.clear()
    go_binary()


def report(label: str, path: Path, repeats: int) -> None:
    size = path.stat().st_size / MIB
    cold = median_ms(lambda: check_unseen(path), repeats)
    warm = median_ms(lambda: check(path), repeats)
    print(f"{label:<22} {size:6.1f} MiB   hash {cold:7.2f} ms   unchanged {warm:6.3f} ms")


@click.command()
@click.option("--repeats", default=30, show_default=True, help="checks per figure")
def main(repeats: int) -> None:
    seed = (go_module_dir() / CANDIDATE_SLOT).read_text()
    with tempfile.TemporaryDirectory() as tmp:
        candidate = BinaryCache(root=Path(tmp)).build(seed).binary
        assert candidate is not None
        report("candidate binary", candidate, repeats)
    reference = BinaryCache().build_module().binary
    assert reference is not None
    report("reference binary", reference, repeats)
    first = median_ms(trust_toolchain_afresh, max(3, repeats // 10))
    print(f"{'go_binary() (5 files)':<22} {'':10}   hash {first:7.2f} ms   unchanged "
          f"{median_ms(go_binary, repeats):6.3f} ms")


if __name__ == "__main__":
    main()
