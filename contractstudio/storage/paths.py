"""The one path policy: which files may be read, decided before anything is opened.

Every file a user names on a command line (`check`, `run --input`, `--replay`, `eval --data`, `--baseline`,
`--resume`, `export`, `convert`, `graph`, `simulate`) is asked `input_problem` first: a folder, a FIFO, a
device or a socket is refused with one message, so nothing blocks on open or reads without end. A file that
another file names (a LocalAI-RAG `extends:` base, a `pipelines_root:`) is asked `base_problem`: it must be
a regular file inside the workspace, never under /proc, /sys or /dev, so a file from a pull request cannot
make the tool read (and quote) the environment or anything else outside the folders being checked.
Writes have their twin in `storage/atomic.py` (`target_problem`).

Imports nothing of ours: every layer may use it. Messages name files as given; the one printing path
(`safe_text.printable`, applied where they are shown) escapes what a name may hold.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

# Kernel and device trees: their "files" are views of the running system (the environment, memory, devices),
# regular in name only (/proc/self/environ has size 0 and is a regular file to stat).
SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))
SETTINGS_MARKER = ".contractstudio.yaml"  # a folder with our settings is part of the project

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def what_it_is(mode: int) -> str:
    """The kind of a file that is not a regular one, in words ('a folder', 'a FIFO (named pipe)', ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def input_problem(path: str | Path, *, folders: bool = False) -> str | None:
    """Why a file the user named cannot be read as a file (the message to print), or None; never opens it.

    `folders`: a folder is a valid argument too (`check`, `test`)."""
    name = str(path)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return f"no such file{' or folder' if folders else ''}: {name}"
    except OSError as err:
        return f"cannot read {name}: {err.strerror or err}"
    if stat.S_ISDIR(st.st_mode):
        return None if folders else f"{name} is a folder, not a file"
    if not stat.S_ISREG(st.st_mode):
        return f"{name} is {what_it_is(st.st_mode)}, not a regular file; only regular files are read"
    if under_system_tree(Path(os.path.realpath(path))):
        return f"{name} is a view of the running system, not a file of yours; it is not read"
    return None


def under_system_tree(real: Path) -> bool:
    """Whether a resolved path is under /proc, /sys or /dev."""
    return any(real.is_relative_to(tree) for tree in SYSTEM_TREES)


def project_of(file: Path) -> Path:
    """The top of the project a file belongs to (resolved): the nearest folder above it holding .git (a checkout),
    else the highest holding a .contractstudio.yaml, else the file's own folder."""
    folder = Path(os.path.realpath(file)).parent
    top = folder
    for place in (folder, *folder.parents):
        if os.path.lexists(place / ".git"):
            return place
        if os.path.lexists(place / SETTINGS_MARKER):
            top = place
    return top


def inside(real: Path, roots: Iterable[Path]) -> bool:
    """Whether a resolved path is one of the roots or below one."""
    return any(real.is_relative_to(root) for root in roots)


def base_problem(path: Path, workspace: Iterable[Path]) -> str | None:
    """Why a file another file names (an `extends:` base) may not be read, or None: it must be a regular file
    inside the workspace and outside /proc, /sys and /dev. Decided on the resolved path, before any open."""
    real = Path(os.path.realpath(path))
    if under_system_tree(real):
        return "it is a view of the running system (/proc, /sys, /dev), not a file of the workspace"
    roots = [Path(os.path.realpath(r)) for r in workspace]
    if not inside(real, roots):
        return f"it is outside the workspace ({', '.join(str(r) for r in roots)})"
    try:
        st = os.stat(real)
    except OSError as err:
        return err.strerror or str(err)
    if not stat.S_ISREG(st.st_mode):
        return f"it is {what_it_is(st.st_mode)}, not a regular file"
    return None


def folder_problem(folder: str | Path) -> str | None:
    """Why files cannot be written into `folder` (a folder a run fills, e.g. `eval --traces`), or None.

    Checked before the run and never creates anything: the folder is made by `make_folder` when its first file is
    written, so a refused run, or one that writes nothing, leaves no trace on disk."""
    given = Path(folder)
    real = Path(os.path.realpath(given))
    if under_system_tree(real):
        return f"{given} is under /proc, /sys or /dev, not a folder of yours"
    existing = next(place for place in (real, *real.parents) if os.path.lexists(place))  # "/" always exists
    shown = given if existing == real else existing  # named as given, or the part of it that is in the way
    if not existing.is_dir():
        return f"{shown} is {'a file' if existing.is_file() else 'not a folder'}, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write in the folder {shown}: permission denied"
    return None


def make_folder(folder: str | Path) -> Path:
    """Make the folder (and its parents) a first file is about to be written into, after `folder_problem` allows it."""
    if (problem := folder_problem(folder)) is not None:
        raise OSError(problem)
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path
