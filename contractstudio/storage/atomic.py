"""Saving files so that nothing a user typed is ever lost: the file on disk is the old or the new text, never a mix.

Shared by the studio (save, export, theme and trust files, traces) and the CLI (`export -o`, `run --trace`).
What is saved is the file a user means: a symlink is followed to its target, a file with hard links
keeps them, permissions and owner are kept, and only regular files are ever replaced (a FIFO or a
device is refused). What cannot be kept is said (`Saved.notes`), never silently changed.

A file the tool names itself inside a folder (a trace of `eval --traces`, the reply cache's database) is another
matter: nobody meant a link planted there, so `write_named` refuses a symbolic link at that name (never follows it),
keeps the file inside the folder, and replaces a hard-linked file by a new one instead of writing through it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

try:  # advisory locks tell a live save's temporary file from one left by a killed save
    import fcntl
except ImportError:  # pragma: no cover - Windows: leftovers are not cleaned up
    fcntl = None  # type: ignore[assignment]


class NotARegularFile(OSError):
    """The target exists and is not a regular file (a folder, FIFO, device or socket): never replaced."""


@dataclass(slots=True)
class Saved:
    """Where the text went, and what could not be kept as it was (said to the user)."""

    path: Path
    notes: list[str] = field(default_factory=list)


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _what(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def real_target(path: Path) -> Path:
    """The file a write to `path` means: symlinks followed (also a dangling one, to the file it names)."""
    return Path(os.path.realpath(path))


def target_problem(path: str | Path) -> str | None:
    """Why `path` cannot be written (checked before any work), or None; never opens the target."""
    given = Path(path)
    target = real_target(given)
    shown = str(given) if target == given.absolute() else f"{given} (-> {target})"
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):  # missing, or under a file: the folder's check says which
        st = None
    except OSError as err:
        return f"cannot use {shown}: {err.strerror or err}"
    if st is not None and not stat.S_ISREG(st.st_mode):
        return f"{shown} is {_what(st.st_mode)}; only regular files are written"
    folder = target.parent
    if not folder.is_dir():
        return f"the folder {folder} does not exist" if not folder.exists() else f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in the folder {folder}: permission denied"
    return None


def current_umask() -> int:
    """The process umask (read without changing it where the OS tells it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it (and put it back)
    os.umask(mask)
    return mask


def _temp_pattern(name: str) -> re.Pattern[str]:
    # tempfile.mkstemp names: prefix + 8 characters of [a-z0-9_] + suffix
    return re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}\.tmp")


def remove_leftovers(target: Path) -> list[Path]:
    """Delete `.NAME.XXXXXXXX.tmp` files a killed save of `target` left; a save in progress holds a lock and is kept."""
    if fcntl is None:
        return []
    pattern = _temp_pattern(target.name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a writer that is still alive: skip
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def write_atomic(path: str | Path, text: str) -> Saved:
    """Write `text` (UTF-8) to `path`: the file on disk is the old or the new text, never a mix.

    A temporary file in the target's folder is written, synced and renamed over the target, keeping
    its permissions and owner. A file with several hard links is written in place instead (the
    complete new text is first synced to a temporary file, and the result is read back and compared),
    so every link sees the new text. Raises NotARegularFile for a folder, FIFO, device or socket.
    """
    target = real_target(Path(path))
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(f"{path} is {_what(st.st_mode)}; only regular files are written")
    return _replace(target, text, st, keep_links=True)


def named_file_problem(folder: str | Path, name: str) -> str | None:
    """Why the tool may not write the file it names `name` inside `folder` (a trace of `eval --traces`, the reply
    cache's database), or None: the name is one plain component, the file is not a symbolic link (never followed,
    whoever planted it) nor anything but a regular file, and it stays in the folder. Never opens anything."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
        return f"{name!r} is not a file name inside {folder}"
    path = Path(folder) / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as err:
        return f"cannot use {path}: {err.strerror or err}"
    if st is not None and stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link; a file the tool names in a folder is never written through one"
    if st is not None and not stat.S_ISREG(st.st_mode):
        return f"it is {_what(st.st_mode)}; only regular files are written"
    if Path(os.path.realpath(path)).parent != Path(os.path.realpath(folder)):
        return f"it is not inside {folder}"
    return None


def named_file(folder: str | Path, name: str) -> Path:
    """`folder / name` once `named_file_problem` allows it; else NotARegularFile (an OSError naming that path)."""
    path = Path(folder) / name
    if (problem := named_file_problem(folder, name)) is not None:
        raise NotARegularFile(errno.ELOOP if "symbolic link" in problem else errno.EINVAL, problem, str(path))
    return path


def write_named(folder: str | Path, name: str, text: str) -> Saved:
    """Write `text` to the file the tool names `name` inside `folder`, atomically, after `named_file_problem` allows it.

    A symbolic link there is refused (NotARegularFile naming it), and the rename replaces the folder's entry
    itself: a link planted after the check is replaced, never followed; a hard link planted there keeps its
    other name's text (the new text gets a new file, never written in place)."""
    path = named_file(folder, name)
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    return _replace(path, text, st, keep_links=False)


def _replace(target: Path, text: str, st: os.stat_result | None, *, keep_links: bool) -> Saved:
    saved = Saved(target)
    remove_leftovers(target)
    data = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    keep_tmp = False
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # tells remove_leftovers that this save is alive
        _write_all(fd, data)
        os.fsync(fd)
        if keep_links and st is not None and st.st_nlink > 1:
            # A rename would give this name a new inode and leave the other links on the old text.
            with open(target, "r+b") as f:
                keep_tmp = True  # from here on the temporary file is the only sure copy of the new text
                f.write(data)
                f.truncate()
                f.flush()
                os.fsync(f.fileno())
            if target.read_bytes() != data:
                raise OSError(f"writing {target} in place did not give the new text; it is kept in {tmp}")
            keep_tmp = False
            saved.notes.append(f"{target.name} has {st.st_nlink} hard links: written in place so that all of them see the new text")
            os.close(fd)
            fd = -1
            os.unlink(tmp)
            return saved
        if st is not None:
            _keep_owner(fd, st, saved)  # before the mode: a change of owner clears set-id bits
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask())
        os.replace(tmp, target)  # atomic on POSIX and Windows: readers see old or new; a link at target is replaced
    except BaseException:
        if not keep_tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    _sync_folder(target.parent)
    return saved


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _keep_owner(fd: int, st: os.stat_result, saved: Saved) -> None:
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) == (st.st_uid, st.st_gid):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except PermissionError:
        try:  # a user may still hand the file to one of their groups
            os.fchown(fd, -1, st.st_gid)
        except PermissionError:
            pass
        saved.notes.append(f"the owner of {saved.path.name} could not be kept (uid {st.st_uid}, gid {st.st_gid}): "
                           "it now belongs to you")


def _sync_folder(folder: Path) -> None:
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
