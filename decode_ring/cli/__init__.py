"""decode-ring, the command line: ``main`` runs it (``app`` holds the commands).

``main`` imports the commands when it runs, not when this module is imported, so that Ctrl-C
while they load (a few tenths of a second: the models, the servers, the plan) exits 130
quietly, as it does at any later point. The command line's other names (``COMMANDS``, the
exit statuses) are ``app``'s, read through this module as well.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["main"]

EXIT_INTERRUPTED: Final = 128 + 2
# What this module hands on from ``app``, which it imports on first use.
_FROM_APP: Final = frozenset(
    {
        "COMMANDS",
        "EXIT_BROKEN_PIPE",
        "EXIT_INTERRUPTED",
        "EXIT_IO_ERROR",
        "EXIT_OK",
        "EXIT_REFUSED",
        "EXIT_USAGE",
        "HELP_EPILOG",
        "Command",
        "build_parser",
        "compute",
        "parse",
        "server_command",
    }
)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``decode-ring``; returns the exit status (the README's table)."""
    try:
        from .app import run  # the commands: loading them may be interrupted too
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return run(argv)


def __getattr__(name: str) -> Any:
    if name not in _FROM_APP:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import app  # the commands, on first use of one of their names

    return getattr(app, name)


if __name__ == "__main__":
    sys.exit(main())
