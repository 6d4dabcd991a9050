"""Saving files so that nothing a user typed is ever lost: the file on disk is the old or the new text, never a mix.

Shared by the studio (save, export, theme and trust files) and the CLI (`export -o`).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Temporary file in the same folder, fsync, then rename over the target (keeping its permissions)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)  # atomic on POSIX and Windows: readers see old or new
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # the rename itself is durable only once the folder is synced
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
