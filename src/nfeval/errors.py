"""The errors ``nfeval`` raises for its users (re-exported by the package root).

Every message says what went wrong and the fix; the command line prints it as one line and
exits with the error's ``exit_status`` (2 unless the class says otherwise).
"""

from __future__ import annotations

__all__ = ["Interrupted", "NfevalError", "NothingScored"]


class NfevalError(Exception):
    """An error with a message meant for the user: what went wrong and the fix."""


class NothingScored(NfevalError):
    """The input was read but no item in it can be scored (``nfeval`` exits with 1)."""

    exit_status = 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while scoring. The message says what is cached and how to resume
    (``nfeval`` prints it and exits with 130)."""

    exit_status = 130
