"""One error hierarchy, caught once in the CLI.

Problems inside a bundle are diagnostics, not exceptions.  Exceptions are for
when the tool cannot go on: unusable arguments, unreadable input, a missing
system dependency, or a verification failure under ``--strict``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bundler.diagnostics import Diagnostic

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


class BundlerError(Exception):
    """Base class; ``exit_code`` is what the CLI returns."""

    exit_code = EXIT_INVALID
    code = "RB900"

    def __init__(self, message: str, *, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics = list(diagnostics)


class UsageError(BundlerError):
    exit_code = EXIT_USAGE
    code = "RB901"


class InputError(BundlerError):
    """The input cannot be read at all (no such path, not a bundle)."""

    exit_code = EXIT_USAGE
    code = "RB902"


class InvalidBundleError(BundlerError):
    """Raised by operations that refuse to continue on an invalid bundle (``--strict``)."""

    exit_code = EXIT_INVALID
    code = "RB903"


class DependencyError(BundlerError):
    """A system tool (Graphviz ``dot``) is missing or broken."""

    exit_code = EXIT_USAGE
    code = "RB904"


class WriterError(BundlerError):
    """Misuse of the bundle writer API (a bug in the caller, not in a bundle)."""

    exit_code = EXIT_USAGE
    code = "RB905"


class OutputError(BundlerError):
    """The site could not be written (permissions, disk, collision)."""

    exit_code = EXIT_INVALID
    code = "RB906"
