"""The one error type the command line shows to its user."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """A problem the user can fix (a file, a field, a setting, a missing
    install step): printed as `Error: …`, exit status 2."""

    exit_code = 2
