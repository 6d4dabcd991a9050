"""Exit codes shared by every command (CLI.md), and the one way to report a usage problem."""

from __future__ import annotations

import sys

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def usage_error(message: str) -> int:
    """Print a usage problem (a missing file, a bad option value) and return exit code 2."""
    print(f"contractstudio: error: {message}", file=sys.stderr)
    return EXIT_USAGE
