"""Files before any analysis: which files a folder holds, their text, and the kind of document a text is.

Cheap on purpose (no document models, no rules): the studio lists a workspace with these before its first
screen, and the analyzer (analysis/check.py) reads every file through them.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.data_files import UnreadableData, decode, read_bounded
from contractstudio.reading.dialect_registry import (
    MAX_FILE_BYTES,
    YAML_ENDINGS,
    file_endings,
    for_file,
    foreign,
    sniff_kind,
)
from contractstudio.reading.folder_settings import SETTINGS_FILE, folder_settings
from contractstudio.reading.kinds import KNOWN_KINDS, NATIVE, first_kind, top_kinds
from contractstudio.storage.paths import base_problem, project_of

IGNORE_FILE = ".contractstudioignore"
MAX_IGNORE_BYTES = 64 * 1024  # as for folder settings: a list of patterns, not a dataset
# fnmatch's translation of a pattern costs the square of its length when its '[' are left open ('[a' * 30,000 took
# 147 s); a path pattern is a few dozen characters, so a longer line is a planted one
MAX_IGNORE_PATTERN = 256
_API_VERSION = re.compile(r"^apiVersion[ \t]*:", re.M)
_CONTENT = re.compile(r"^[ \t]*[^\s#]", re.M)


def kind_of_text(text: str) -> str | None:
    """The first top-level `kind:` of a YAML text (or the kind another format reads as), without parsing it."""
    return first_kind(text) or sniff_kind(text)


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
    forced = folder_settings(folder).dialect if folder is not None else None
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


def ignore_patterns(folder: Path) -> tuple[list[str], str | None]:
    """The glob patterns of a folder's `.contractstudioignore` (none when it has none), and why the file could not
    be read, if it could not: read like every data file of ours (reading/data_files.py: the path policy first,
    at most 64 KB), so a link to /proc or a FIFO is never opened; a line over MAX_IGNORE_PATTERN characters makes the
    file unread too (matching it would cost the square of its length)."""
    ignore = folder / IGNORE_FILE
    if not os.path.lexists(ignore):
        return [], None
    try:
        raw = read_bounded(ignore, MAX_IGNORE_BYTES)
    except UnreadableData as err:
        return [], str(err)
    lines = raw.decode("utf-8", errors="replace").splitlines()
    patterns: list[str] = []
    for number, line in enumerate(lines, 1):
        if line.startswith("#") or not line.strip():
            continue
        if len(line.strip()) > MAX_IGNORE_PATTERN:
            return [], f"line {number} is longer than {MAX_IGNORE_PATTERN} characters, which no pattern needs"
        patterns.append(line.strip())
    return patterns, None


def _ignored(rel: str, patterns: list[str], is_dir: bool) -> bool:
    for pat in patterns:
        if pat.endswith("/"):
            if is_dir and fnmatch.fnmatch(rel, pat.rstrip("/")):
                return True
        elif fnmatch.fnmatch(rel, pat):
            return True
    return False


def _head(f: Path) -> str | None:
    """The text to tell the file's kind by: a file dialect's file (a .py file) only up to its size bound, which is all
    its dialect ever searches (a bigger one is refused by its reader, saying so)."""
    limit = MAX_FILE_BYTES + 1 if for_file(f) is not None else -1
    try:
        with f.open(encoding="utf-8", errors="replace") as text:
            return text.read(limit)
    except OSError:
        return None


def survey(paths: Iterable[str | Path], *, python: bool = False, dialect: str | None = None) -> Iterator[tuple[Path, Ownership]]:
    """Every candidate file with its ownership: files named explicitly, and in folders the *.yaml/*.yml files
    (and, with `python` (`check`), the files of the file dialects' endings: *.py). A folder file of unknown shape
    is not listed (most YAML is not ours).

    A folder's `.contractstudioignore` lists glob patterns (a trailing '/'
    for folders) that discovery skips; naming a file or folder explicitly
    still analyzes it.
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
        workspace = (project_of(p / IGNORE_FILE),)  # the project of the folder given (storage/paths.py)
        for dirpath, dirnames, filenames in os.walk(p):
            here = Path(dirpath)
            patterns, unread = ignore_patterns(here)
            if unread is not None:  # a link to /proc/self/mem, a FIFO, too big: said, and its folder scanned as if absent
                yield here / IGNORE_FILE, Ownership("unreadable", f"its patterns are not applied: {unread}")
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not _ignored(d, patterns, True))
            for name in sorted(filenames):
                own_format = python and name.endswith(file_endings())
                if not (own_format or name.endswith(YAML_ENDINGS)) or name == SETTINGS_FILE or _ignored(name, patterns, False):
                    continue
                f = here / name
                # a FIFO or a device would block the scan; a symlink out of the project (to /proc/self/environ, to
                # ~/.aws/credentials) would be quoted in excerpts: the path policy's rule for bases. Named explicitly, it is read.
                # (os.walk does not enter symlinked folders, so only a symlinked file can lead out: judged on its target)
                if (f.is_symlink() and base_problem(f, workspace) is not None) or not f.is_file():
                    continue
                text = _head(f)
                if text is None:
                    continue
                found = ownership(text, path=f, dialect=dialect, folder=here)
                if found.verdict != "unknown":
                    yield f, found


def discover(paths: Iterable[str | Path], *, python: bool = False, dialect: str | None = None) -> Iterator[Path]:
    """The files to analyze (`survey`'s files that are ours): explicit files of unknown shape included."""
    for path, found in survey(paths, python=python, dialect=dialect):
        if found.ours:
            yield path
