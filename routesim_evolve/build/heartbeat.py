"""A line now and then while something slow runs, so that a first run that
compiles lnd for minutes does not look hung."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def heartbeat(say: Callable[[str], None] | None, what: str, *,
              first_s: float = 10.0, every_s: float = 30.0) -> Iterator[None]:
    """Say `what` with the time spent so far, first after `first_s` seconds
    and then every `every_s`, until the block ends. Work that ends sooner
    says nothing, so a warm cache stays quiet."""
    if say is None:
        yield
        return
    done = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        wait = first_s
        while not done.wait(wait):
            say(f"{what}: {time.monotonic() - start:.0f} s so far")
            wait = every_s

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
