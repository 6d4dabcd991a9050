"""Exit codes shared by every command (CLI.md), and the one way to report a usage problem."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from contractstudio.safe_text import printable
from contractstudio.storage.paths import input_problem

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def usage_error(message: str, hint: str | None = None) -> int:
    """Print a usage problem (a missing file, a bad option value) and return exit code 2.

    The message is one line: a name it quotes (a file's, a row's, a contract's) may hold ESC or a line feed, shown
    as escapes, never a line of its own. A `hint` of the command's own words follows on a line of its own."""
    print(printable(f"contractstudio: error: {message}"), file=sys.stderr)
    if hint:
        print(printable(f"  {hint}"), file=sys.stderr)
    return EXIT_USAGE


def files_refused(paths: Iterable[str | Path | None], *, folders: bool = False) -> int | None:
    """Exit 2 with the one message when a file argument is missing or not a regular file (storage/paths.py), else None.

    Asked before anything is opened: a FIFO would block the command, a device would never end."""
    for path in paths:
        if path is not None and (problem := input_problem(path, folders=folders)):
            return usage_error(problem)
    return None


def exit_now(code: int) -> None:
    """End the process with `code` without the interpreter's teardown (freeing every module and object: 1-7 s of a
    loaded machine after a live eval, which imported litellm), once nothing is left that the teardown would finish.

    Returns (the caller exits as usual) when output cannot be flushed or a thread that is not a daemon still runs
    (the interpreter would wait for it). Otherwise the standard streams are flushed and the exit handlers run, as at
    a normal exit (logging's flush, a library's own), before `os._exit`."""
    import atexit
    import os
    import threading

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the interpreter's own exit says so as it always did
        return
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    atexit._run_exitfuncs()  # noqa: SLF001 - the handlers a normal exit runs (os._exit runs none)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)
