"""The two failures a reflection back-end reports.

`TransientError` stays inside the back-ends: it marks a failure worth another
try (timeout, rate limit, overload, a crashed agent CLI). `ProposalFailed` is
the only exception that leaves them; the GEPA driver turns it into a skipped
iteration, so a flaky provider costs an iteration, never the run.
"""

from __future__ import annotations


class ProposalFailed(Exception):
    """No usable candidate came out of this proposal; skip the iteration."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransientError(Exception):
    """A failure that may go away on its own: retried with backoff."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        # The server's own hint (Retry-After), honoured when it asks for longer
        # than our backoff would wait.
        self.retry_after = retry_after
