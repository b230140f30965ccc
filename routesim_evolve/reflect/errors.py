"""The failures a reflection back-end reports.

`TransientError` stays inside the back-ends: it marks a failure worth another
try (timeout, rate limit, overload, a crashed agent CLI). `ProposalFailed` is
the only exception that leaves them during a run; the dispatcher turns it
into a skipped iteration, so a flaky provider costs an iteration, never the
run. A `permanent` one (bad key, unknown model, exhausted quota) will fail
the same way next time: a run stops after a few of them in a row.
`BackendUnavailable` is raised before the run, by the preflight check.
"""

from __future__ import annotations


class ProposalFailed(Exception):
    """No usable candidate came out of this proposal; skip the iteration."""

    def __init__(self, reason: str, *, permanent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        # Waiting will not help: the request itself or the account is wrong.
        self.permanent = permanent


class TransientError(Exception):
    """A failure that may go away on its own: retried with backoff."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        # The server's own hint (Retry-After), honoured when it asks for longer
        # than our backoff would wait.
        self.retry_after = retry_after


class BackendUnavailable(ValueError):
    """A back-end cannot work at all (no key, no CLI, unreachable server):
    found before the run starts; the message says what to set."""
