"""Files before any analysis: which files a folder holds, their text, and the kind of document a text is.

Cheap on purpose (no document models, no rules): the studio lists a workspace with these before its first
screen, and the analyzer (analysis/check.py) reads every file through them.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.dialects import NATIVE, SETTINGS_FILE, folder_settings, sniff_kind
from contractstudio.reading.dialects.symbolicai import is_contracted
from contractstudio.storage.paths import base_problem, project_of

IGNORE_FILE = ".contractstudioignore"
_KIND_LINE = re.compile(r"^kind:\s*['\"]?([A-Za-z_]+)", re.M)


def kind_of_text(text: str) -> str | None:
    """The first top-level `kind:` of a YAML text (or the kind another format reads as), without parsing it."""
    m = _KIND_LINE.search(text)
    return m.group(1) if m else sniff_kind(text)


def read_text(path: Path) -> tuple[str | None, Diagnostic | None]:
    """Read a file as UTF-8; an unreadable file is a diagnostic, not a crash."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        return None, make("YML001", f"cannot read the file: {err.strerror or err}", str(path), Span(1, 1, 1, 2))
    return decode(raw, str(path))


def decode(raw: bytes, path: str) -> tuple[str | None, Diagnostic | None]:
    """A file's bytes as UTF-8 text (a BOM dropped), or None and the finding (the CLI and the studio say the same)."""
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        return None, make("YML001", f"the file is not UTF-8 text (byte {err.start})", path, Span(line, 1, line, 2))


def _ignored(rel: str, patterns: list[str], is_dir: bool) -> bool:
    for pat in patterns:
        if pat.endswith("/"):
            if is_dir and fnmatch.fnmatch(rel, pat.rstrip("/")):
                return True
        elif fnmatch.fnmatch(rel, pat):
            return True
    return False


def discover(paths: Iterable[str | Path], *, python: bool = False) -> Iterator[Path]:
    """Files to analyze: explicit files always; in folders, *.yaml/*.yml with a top-level kind (or of a dialect)
    and, with `python` (`check`), *.py files with a SymbolicAI-style `@contract` class (other Python files are not ours).

    A folder's `.contractstudioignore` lists glob patterns (a trailing '/'
    for folders) that discovery skips; naming a file or folder explicitly
    still analyzes it.
    """
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            yield p
            continue
        workspace = (project_of(p / IGNORE_FILE),)  # the project of the folder given (storage/paths.py)
        for dirpath, dirnames, filenames in os.walk(p):
            here = Path(dirpath)
            patterns: list[str] = []
            ignore = here / IGNORE_FILE
            if ignore.is_file():
                patterns = [ln.strip() for ln in ignore.read_text(errors="replace").splitlines() if ln.strip() and not ln.startswith("#")]
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not _ignored(d, patterns, True))
            # A folder whose .contractstudio.yaml names a dialect: every YAML file in it is of that format.
            every = any(n.endswith((".yaml", ".yml")) for n in filenames) and folder_settings(here).dialect not in (None, NATIVE)
            for name in sorted(filenames):
                is_py = python and name.endswith(".py")
                if not (is_py or name.endswith((".yaml", ".yml"))) or name == SETTINGS_FILE or _ignored(name, patterns, False):
                    continue
                f = here / name
                # a FIFO or a device would block the scan; a symlink out of the project (to /proc/self/environ, to
                # ~/.aws/credentials) would be quoted in excerpts: the path policy's rule for bases. Named explicitly, it is read.
                # (os.walk does not enter symlinked folders, so only a symlinked file can lead out: judged on its target)
                if (f.is_symlink() and base_problem(f, workspace) is not None) or not f.is_file():
                    continue
                try:
                    head = f.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if is_contracted(head) if is_py else (every or kind_of_text(head)):
                    yield f
