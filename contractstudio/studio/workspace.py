"""The files the studio works on, and saving them without ever losing or clobbering work.

No textual import here: this is plain file handling the app drives.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.dialect_registry import YAML_ENDINGS, file_endings
from contractstudio.reading.files import UnreadIgnoreFile, decode, ownership_of, project_files
from contractstudio.reading.project import kind_of_path, kind_of_text
from contractstudio.storage.atomic import Saved, write_atomic  # write_atomic re-exported for the studio's modules

KINDS = ("contract", "agent", "pipeline", "tools", "trace", "dataset", "results")
__all__ = ["KINDS", "Buffer", "ChangedOnDisk", "DiskStamp", "Workspace", "WorkspaceFile", "kind_of_path", "kind_of_text",
           "write_atomic"]


def _listed(root: Path) -> Iterator[WorkspaceFile]:
    """The files of a folder the studio lists: those `check` looks at (reading/files.py's project_files: one walk, with
    the project's ignore files and the path policy's rule for links out of the project), plus JSON Lines (traces,
    datasets, results); each listed when it has one of the studio's kinds or is ours (a misspelt kind, a dialect set
    by the folder's settings)."""
    for path in project_files(root, (*YAML_ENDINGS, ".jsonl", *file_endings())):
        if isinstance(path, UnreadIgnoreFile):
            continue  # `check` says why its patterns are not applied
        kind = kind_of_path(path)
        # a YAML file without one of our kinds may still be ours (a file dialect's file was judged by kind_of_path already)
        if kind in KINDS or (path.name.endswith(YAML_ENDINGS) and (found := ownership_of(path)) is not None and found.ours):
            yield WorkspaceFile(path, kind)


def bundled_samples() -> Path:
    """The samples folder next to the package (a source checkout) or inside it (an install)."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here.parent / "samples", here / "samples"):
        if candidate.is_dir():
            return candidate
    return here.parent / "samples"


@dataclass(slots=True)
class WorkspaceFile:
    path: Path
    kind: str | None

    @property
    def label(self) -> str:
        return self.path.name


@dataclass(slots=True)
class Workspace:
    """The folders and files given on the command line (or the samples)."""

    roots: list[Path]
    files: list[WorkspaceFile] = field(default_factory=list)

    @classmethod
    def open(cls, paths: list[str | Path]) -> Workspace:
        """Files and folders; no path: the current folder, else the bundled samples."""
        if not paths:
            here = Path.cwd()
            ws = cls([here])
            ws.scan()
            if not any(f.kind in KINDS for f in ws.files):
                ws = cls([bundled_samples()])
                ws.scan()
            return ws
        ws = cls([Path(p) for p in paths])
        ws.scan()
        return ws

    def scan(self) -> bool:
        """(Re)read the file list: YAML files with a kind, plus traces (*.jsonl); True when files came or went.

        Files opened from outside the roots (`add`) stay listed while they exist.
        """
        before = self.files
        seen: dict[Path, WorkspaceFile] = {}
        for root in self.roots:
            if root.is_dir():
                for listed in _listed(root):
                    seen.setdefault(listed.path.resolve(), listed)
            elif root.is_file() or not root.exists():  # named: listed whatever it holds, as `check` analyzes it
                seen[root.resolve()] = WorkspaceFile(root, kind_of_path(root))
        for f in before:
            if f.path.resolve() not in seen and f.path.is_file() and not self.inside(f.path):
                seen[f.path.resolve()] = f
        order = {k: i for i, k in enumerate(KINDS)}
        self.files = sorted(seen.values(), key=lambda f: (order.get(f.kind or "", 99), str(f.path)))
        return [(f.path, f.kind) for f in before] != [(f.path, f.kind) for f in self.files]

    def inside(self, path: Path) -> bool:
        """Whether a path is under one of the workspace's folders (or is one of its files)."""
        resolved = path.resolve()
        return any(resolved == r.resolve() or (r.is_dir() and resolved.is_relative_to(r.resolve())) for r in self.roots)

    def typed_path(self, text: str) -> Path | None:
        """The file a path typed in the palette names (absolute, ~, or relative to a workspace folder), if it exists."""
        text = text.strip()
        if not text or "\n" in text:
            return None
        typed = Path(text).expanduser()
        bases = [r if r.is_dir() else r.parent for r in self.roots] + [Path.cwd()]
        for candidate in [typed] if typed.is_absolute() else [b / typed for b in bases]:
            try:
                if candidate.is_file():
                    return candidate
            except OSError:  # a name too long, a folder without permission: not a file to open
                continue
        return None

    def of_kind(self, *kinds: str) -> list[WorkspaceFile]:
        return [f for f in self.files if f.kind in kinds]

    def add(self, path: Path) -> None:
        if all(f.path.resolve() != path.resolve() for f in self.files):
            self.files.append(WorkspaceFile(path, kind_of_path(path)))

    def display(self, path: Path) -> str:
        """A short name for a path: relative to its root when inside one."""
        for root in self.roots:
            base = root if root.is_dir() else root.parent
            try:
                return str(path.resolve().relative_to(base.resolve()))
            except ValueError:
                continue
        return str(path)


@dataclass(frozen=True, slots=True)
class DiskStamp:
    """What a file looked like on disk when we last read or wrote it."""

    mtime_ns: int
    ctime_ns: int  # a program can put back an mtime, never a ctime
    size: int
    inode: int
    digest: str

    @classmethod
    def of(cls, path: Path) -> DiskStamp | None:
        try:
            st = path.stat()
            data = path.read_bytes()
        except OSError:
            return None
        return cls(st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, hashlib.sha256(data).hexdigest())


class ChangedOnDisk(Exception):
    """The file changed on disk since it was opened; saving would clobber someone's work."""


class ReadOnlyFile(OSError):
    """The studio could not decode the file's bytes, so it never writes over them."""


BOM = "\ufeff"


@dataclass(slots=True)
class Buffer:
    """An open file: the text last read or saved, and the disk stamp at that moment.

    `unreadable` is set when the bytes are not UTF-8 text (or hold NUL bytes: UTF-16, binary):
    the editor shows them read-only and saving is refused, so no byte is ever replaced.
    A UTF-8 BOM is kept: it is not part of the text, and is written back on save.
    """

    path: Path
    saved_text: str
    stamp: DiskStamp | None
    bom: bool = False
    unreadable: Diagnostic | None = None

    @classmethod
    def load(cls, path: Path) -> Buffer:
        """Read a file; bytes that are not UTF-8 text make a read-only buffer with the same finding as `check`."""
        raw = path.read_bytes()
        text, problem = decode(raw, str(path))
        if text is None:
            text = raw.decode("utf-8", errors="replace")  # shown, never saved
        elif "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            problem = make("YML001", "the file contains NUL bytes: it is binary (or UTF-16), not UTF-8 YAML text",
                           str(path), Span(line, 1, line, 2))
        return cls(path, text, DiskStamp.of(path), raw.startswith(BOM.encode("utf-8")), problem)

    @property
    def read_only_reason(self) -> str | None:
        """Why this buffer may not be saved, or None."""
        if self.unreadable is None:
            return None
        return f"{self.unreadable.message}; the studio never writes over bytes it could not read (convert it to UTF-8 and reopen it)"

    def changed_on_disk(self, *, by_content: bool = False) -> bool:
        """True when the file on disk is no longer what we read or wrote.

        The poll trusts an unchanged stat (mtime, ctime, size, inode); a save (`by_content`) always compares the hash.
        """
        if self.stamp is None:
            return self.path.exists()
        try:
            st = self.path.stat()
        except OSError:
            return True
        same_stat = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino) == (
            self.stamp.mtime_ns, self.stamp.ctime_ns, self.stamp.size, self.stamp.inode)
        if same_stat and not by_content:
            return False
        now = DiskStamp.of(self.path)
        return now is None or now.digest != self.stamp.digest

    def save(self, text: str, *, force: bool = False) -> Saved:
        """Write atomically (a BOM kept); refuses (ChangedOnDisk) when another program changed the file, unless forced."""
        if self.unreadable is not None:
            raise ReadOnlyFile(self.read_only_reason)
        if not force and self.changed_on_disk(by_content=True):
            raise ChangedOnDisk(str(self.path))
        saved = write_atomic(self.path, (BOM if self.bom else "") + text)
        self.saved_text = text
        self.stamp = DiskStamp.of(self.path)
        return saved
