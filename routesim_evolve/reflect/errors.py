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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple


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


class SdkErrors(NamedTuple):
    """The exception types of a provider's SDK that a model check tells
    apart: an unknown model, a refused key, and anything else it raises."""

    not_found: type[Exception]
    refused: type[Exception]
    other: type[Exception]


@contextmanager
def model_check(
    name: str, model: str, where: str, sdk: SdkErrors, *, name_hint: str = "", key_hint: str = ""
) -> Iterator[None]:
    """Wraps a query to `where` (the API, or the server at a URL) about
    `model`: the SDK's errors become a BackendUnavailable that says what to do."""
    try:
        yield
    except sdk.not_found:
        raise BackendUnavailable(
            f"{name}: {where} does not know model {model!r}; check the name{name_hint}"
        ) from None
    except sdk.refused as err:
        reason = getattr(err, "message", str(err))
        raise BackendUnavailable(f"{name}: {where} refused the key ({reason}){key_hint}") from None
    except sdk.other as err:
        raise BackendUnavailable(f"{name}: cannot reach {where}: {err}") from None
