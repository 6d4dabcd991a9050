"""Files before any analysis: which files a folder holds, their text, and the kind of document a text is.

Cheap on purpose (no document models, no rules): the studio lists a workspace with these before its first
screen, and the analyzer (analysis/check.py) reads every file through them.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.data_files import decode
from contractstudio.reading.dialect_registry import (
    MAX_FILE_BYTES,
    YAML_ENDINGS,
    file_endings,
    for_file,
    foreign,
    sniff_kind,
)
from contractstudio.reading.folder_settings import SETTINGS_FILE
from contractstudio.reading.kinds import KNOWN_KINDS, NATIVE, top_kinds
from contractstudio.reading.project import IGNORE_FILE, kind_of_text, project_for
from contractstudio.storage.paths import base_problem

__all__ = ["IGNORE_FILE", "Ownership", "UnreadIgnoreFile", "decode", "discover", "kind_of_text", "ownership", "ownership_of",
           "project_files", "read_text", "survey"]

_API_VERSION = re.compile(r"^apiVersion[ \t]*:", re.M)
_CONTENT = re.compile(r"^[ \t]*[^\s#]", re.M)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Whether a file is ours: `ours` (analyze it), `foreign` (clearly another tool's file: skip it, saying why),
    `unknown` (no sign either way: skipped in a folder, analyzed when named, where YML003 says what it lacks),
    `unreadable` (a file of ours the tool could not read, a folder's `.contractstudioignore`: skipped, saying why)."""

    verdict: Literal["ours", "foreign", "unknown", "unreadable"]
    reason: str = ""

    @property
    def ours(self) -> bool:
        """Analyzed wherever it is found."""
        return self.verdict == "ours"


def ownership(text: str, *, path: str | Path | None = None, dialect: str | None = None, folder: Path | None = None) -> Ownership:
    """The one answer to "is this file ours?" (discovery, every command, the language server, the studio).

    `path`: the file's name (a file dialect's ending, `.py`, is read by that dialect); `dialect`: --dialect;
    `folder`: where the file is (its .contractstudio.yaml).
    A file that looks like ours but is broken (`kind: contrct`) is ours: its finding is the user's to see.
    """
    own = for_file(path) if path is not None else None
    if own is not None:  # a file of a file dialect's ending (a .py file) is ours when that dialect knows its text
        return Ownership("ours") if own.sniff(text) else Ownership("unknown", f"no {own.name} document in the file")
    if not _CONTENT.search(text):
        return Ownership("foreign", "the file is empty")
    kinds = top_kinds(text)
    if any(k in KNOWN_KINDS for k in kinds):
        return Ownership("ours")
    if dialect is not None and dialect != NATIVE:
        return Ownership("ours", f"read as {dialect} (--dialect)")
    if kinds and _API_VERSION.search(text):
        return Ownership("foreign", f"a Kubernetes-style manifest (apiVersion:, kind: {kinds[0]})")
    if kinds and dialect != NATIVE:
        if any(difflib.get_close_matches(k.lower(), KNOWN_KINDS, n=1, cutoff=0.6) for k in kinds):
            return Ownership("ours")  # a misspelt kind of ours: YML003 says which one it meant
        return Ownership("foreign", f"its kind '{kinds[0]}' is another tool's (ours: {', '.join(KNOWN_KINDS)})")
    if (other := foreign(text)) is not None:
        return Ownership("foreign", other)
    if dialect == NATIVE:
        return Ownership("ours")
    if sniff_kind(text) is not None:
        return Ownership("ours")
    forced = project_for(folder).settings_of(folder).dialect if folder is not None else None  # read once, cached
    if forced not in (None, NATIVE):
        return Ownership("ours", f"read as {forced} (.contractstudio.yaml)")
    return Ownership("unknown", "no top-level kind: and not the shape of a dialect")


def read_text(path: Path) -> tuple[str | None, Diagnostic | None]:
    """Read a file as UTF-8; an unreadable file is a diagnostic, not a crash."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        return None, make("YML001", f"cannot read the file: {err.strerror or err}", str(path), Span(1, 1, 1, 2))
    return decode(raw, str(path))


def _head(f: Path) -> str | None:
    """The text to tell the file's kind by: a file dialect's file (a .py file) only up to its size bound, which is all
    its dialect ever searches (a bigger one is refused by its reader, saying so)."""
    limit = MAX_FILE_BYTES + 1 if for_file(f) is not None else -1
    try:
        with f.open(encoding="utf-8", errors="replace") as text:
            return text.read(limit)
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class UnreadIgnoreFile:
    """A `.contractstudioignore` a folder walk met that could not be read: its patterns are not applied."""

    path: Path
    why: str


def project_files(folder: Path, endings: tuple[str, ...]) -> Iterator[Path | UnreadIgnoreFile]:
    """The files under a folder with one of `endings` that a face lists: the one walk of `check`'s discovery and the
    studio's file list, with one policy. Its project's `.contractstudioignore` files skip what they match (gitignore's
    semantics, from the project's root down: reading/project.py); no hidden folder, no folder settings file; only
    regular files (a FIFO or a device would block the scan); no link whose target leaves the project (to
    /proc/self/environ, ~/.aws/credentials: its text would be quoted in excerpts), the path policy's rule for bases.
    An ignore file met on the way that could not be read is yielded as such, where it is met."""
    project = project_for(folder)  # its root, settings and ignore rules, found once
    workspace = (project.root,)
    # a folder named that its ignore files skip is walked all the same (as a file named is analyzed), with their other rules
    real = Path(os.path.realpath(folder))
    named = real if real != project.root and project.ignored(folder, folder=True) else None
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        unread = project.rules(Path(os.path.realpath(here))).unread
        if unread is not None:
            yield UnreadIgnoreFile(here / IGNORE_FILE, unread)
        skipped = project.skipper(here, named=named)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not skipped(d, True))
        for name in sorted(filenames):
            if not name.endswith(endings) or name == SETTINGS_FILE or skipped(name, False):
                continue
            f = here / name
            # os.walk does not enter symlinked folders, so only a symlinked file can lead out: judged on its target
            if (f.is_symlink() and base_problem(f, workspace) is not None) or not f.is_file():
                continue
            yield f


def ownership_of(path: Path, *, dialect: str | None = None) -> Ownership | None:
    """A file's ownership as a folder's discovery judges it (its head read; None: it could not be read)."""
    text = _head(path)
    return None if text is None else ownership(text, path=path, dialect=dialect, folder=path.parent)


def survey(paths: Iterable[str | Path], *, python: bool = False, dialect: str | None = None) -> Iterator[tuple[Path, Ownership]]:
    """Every candidate file with its ownership: files named explicitly, and in folders the *.yaml/*.yml files
    (and, with `python` (`check`), the files of the file dialects' endings: *.py). A folder file of unknown shape
    is not listed (most YAML is not ours).

    The project's `.contractstudioignore` files (reading/project.py: gitignore's semantics, from the project's root
    down) list what discovery skips (`project_files`); naming a file or folder explicitly still analyzes it.
    """
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            text = _head(p) if p.is_file() else None
            if text is None:  # missing or unreadable: the analyzer's YML001 says so
                yield p, Ownership("ours")
            else:
                found = ownership(text, path=p, dialect=dialect, folder=p.parent)
                yield p, Ownership("ours") if found.verdict == "unknown" else found  # named: YML003 says what it lacks
            continue
        for file, why in project_for(p).unread(p):  # a link to /proc/self/mem, a FIFO, too big: said, and scanned as if absent
            if file.parent != Path(os.path.realpath(p)):  # the given folder's own is said as the walk reaches it
                yield file, Ownership("unreadable", f"its patterns are not applied: {why}")
        for f in project_files(p, (*YAML_ENDINGS, *file_endings()) if python else YAML_ENDINGS):
            if isinstance(f, UnreadIgnoreFile):
                yield f.path, Ownership("unreadable", f"its patterns are not applied: {f.why}")
                continue
            judged = ownership_of(f, dialect=dialect)
            if judged is not None and judged.verdict != "unknown":
                yield f, judged


def discover(paths: Iterable[str | Path], *, python: bool = False, dialect: str | None = None) -> Iterator[Path]:
    """The files to analyze (`survey`'s files that are ours): explicit files of unknown shape included."""
    for path, found in survey(paths, python=python, dialect=dialect):
        if found.ours:
            yield path
