"""Crash reports: the traceback of a bug, written to a file with every secret redacted (as traces are).

The CLI's last-resort handler and the studio's error modal both write one; it is meant to be pasted into an issue.
"""

from __future__ import annotations

import os
import tempfile
import traceback

from contractstudio.runtime.trace import redact


def crash_report(error: BaseException, prefix: str = "contractstudio-crash-") -> tuple[str, str]:
    """Write an error's traceback, redacted, to a new file; (its path, the redacted traceback)."""
    text = redact("".join(traceback.format_exception(error)))
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path, text
