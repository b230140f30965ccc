"""The one error type the command line shows to its user."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """A problem the user can fix (a file, a field, a setting, a missing
    install step): printed as `Error: …`, exit status 2."""

    exit_code = 2


class RunStopped(click.ClickException):
    """A run that had to stop before its budget for a reason outside the
    user's command (e.g. its LM kept refusing): exit status 3. Its run dir
    is kept, so it resumes."""

    exit_code = 3
