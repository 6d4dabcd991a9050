"""Exit codes shared by every command (CLI.md), and the one way to report a usage problem."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from contractstudio.safe_text import printable
from contractstudio.storage.paths import input_problem

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def usage_error(message: str) -> int:
    """Print a usage problem (a missing file, a bad option value) and return exit code 2."""
    print(printable(f"contractstudio: error: {message}", lines=True), file=sys.stderr)  # a name may hold ESC
    return EXIT_USAGE


def files_refused(paths: Iterable[str | Path | None], *, folders: bool = False) -> int | None:
    """Exit 2 with the one message when a file argument is missing or not a regular file (storage/paths.py), else None.

    Asked before anything is opened: a FIFO would block the command, a device would never end."""
    for path in paths:
        if path is not None and (problem := input_problem(path, folders=folders)):
            return usage_error(problem)
    return None
