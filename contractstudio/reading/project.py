"""The project a path belongs to: its root, its settings and its ignore rules, found once per root and cached.

As actionlint's `Project`: every face (`check`, `test`, the studio's workspace, eval, the language server) asks
`project_for(path)` instead of walking up the folders and reading ignore files itself. The ignore rules are the
`.contractstudioignore` files from the root down to a path's folder, each read with gitignore's semantics by
`pathspec` (a pattern without a slash matches at any depth below its file; a leading `/` anchors it to its file's
folder; a trailing `/` matches folders; `!` takes a path back; a deeper file's rules win over a shallower one's).
Each file is read once and again only when it changed (its stat), through the bounded reader of every data file.

`kind_of_path` is the one answer to "of which kind is this file" before any analysis (reading/files.py's
`ownership` says whether it is ours at all).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pathspec

from contractstudio.reading.data_files import UnreadableData, read_bounded
from contractstudio.reading.dialect_registry import MAX_FILE_BYTES, for_file, sniff_kind
from contractstudio.reading.folder_settings import FolderSettings, folder_settings, nearest_settings_file
from contractstudio.reading.json_lines import first_json_line
from contractstudio.reading.kinds import NATIVE, first_kind
from contractstudio.storage.paths import project_of

IGNORE_FILE = ".contractstudioignore"
MAX_IGNORE_BYTES = 64 * 1024  # as for folder settings: a list of patterns, not a dataset
# a path pattern is a few dozen characters: a longer line is a planted one (fnmatch-style translation of a pattern
# with its '[' left open costs the square of its length: '[a' x 30,000 held check 147 s)
MAX_IGNORE_PATTERN = 256


def kind_of_text(text: str, dialect: str | None = None) -> str | None:
    """The first top-level `kind:` of a YAML text (or the kind another format reads it as, unless `dialect` is the
    native one: `--dialect contractstudio`), without parsing it."""
    return first_kind(text) or (sniff_kind(text) if dialect != NATIVE else None)


def is_python(path: str | Path) -> bool:
    """Whether a path names a file a file dialect reads (a `.py` file's contracted classes, read statically): the
    dialect registry's endings decide, for the analyzer, the loader and `run path.py:Class` alike."""
    return for_file(path) is not None


def _jsonl_kind(path: Path) -> str:
    """A JSON Lines file's kind from its first line: a trace's event, an eval results record, or a dataset row."""
    value = first_json_line(path)
    if value is None:
        return "trace"  # nothing readable: offered as a trace, whose reader says what is wrong with it
    if isinstance(value, dict) and "key" in value and "outcome" in value:
        return "results"
    if isinstance(value, dict) and "type" in value and "seq" in value:
        return "trace"
    return "dataset"


def kind_of_path(path: Path) -> str | None:
    """A file's kind: JSON Lines are traces, datasets or eval results; a file dialect's file (a `.py` file's contracted
    class is a contract, read statically) is what its dialect finds; else its first `kind:` line."""
    if not path.is_file():  # opening a FIFO would block
        return None
    if path.suffix == ".jsonl":
        return _jsonl_kind(path)
    own = for_file(path)
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            if own is not None:
                return own.sniff(f.read(MAX_FILE_BYTES))
            return kind_of_text(f.read(65536))
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """One folder's `.contractstudioignore`: its patterns (None: the folder has none), or why it could not be read."""

    spec: pathspec.GitIgnoreSpec | None = None
    unread: str | None = None


def read_ignore_file(folder: Path) -> IgnoreRules:
    """A folder's ignore file, read like every data file of ours (reading/data_files.py: the path policy first, at
    most 64 KB), so a link to /proc or a FIFO is never opened; a line over MAX_IGNORE_PATTERN characters makes the
    file unread too."""
    ignore = folder / IGNORE_FILE
    if not os.path.lexists(ignore):
        return IgnoreRules()
    try:
        raw = read_bounded(ignore, MAX_IGNORE_BYTES)
    except UnreadableData as err:
        return IgnoreRules(unread=str(err))
    lines = raw.decode("utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, 1):
        if len(line.strip()) > MAX_IGNORE_PATTERN and not line.startswith("#"):
            return IgnoreRules(unread=f"line {number} is longer than {MAX_IGNORE_PATTERN} characters, which no pattern needs")
    return IgnoreRules(spec=pathspec.GitIgnoreSpec.from_lines(line.strip() for line in lines))


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


class Project:
    """A project's root (storage/paths.py's `project_of`: the checkout, or the highest folder with settings), its
    settings and its ignore rules; `project_for` gives the one object per root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._rules: dict[Path, tuple[tuple[int, int, int] | None, IgnoreRules]] = {}
        self._settings: dict[Path, tuple[tuple[int, int, int] | None, FolderSettings]] = {}

    @property
    def settings(self) -> FolderSettings:
        """The root's `.contractstudio.yaml` (each folder's own: `settings_of`)."""
        return self.settings_of(self.root)

    def settings_of(self, folder: Path) -> FolderSettings:
        """The settings of the `.contractstudio.yaml` nearest above a folder, read again only when that file changed:
        what a face hands the analysis (`Context.settings`) and what ownership asks."""
        found = nearest_settings_file(folder)
        if found is None:
            return FolderSettings()
        stamp = _stamp(found)
        known = self._settings.get(found)
        if known is None or known[0] != stamp:
            known = self._settings[found] = (stamp, folder_settings(found.parent))
        return known[1]

    def rules(self, folder: Path) -> IgnoreRules:
        """A folder's ignore rules, read again only when its ignore file changed."""
        stamp = _stamp(folder / IGNORE_FILE)
        known = self._rules.get(folder)
        if known is None or known[0] != stamp:
            known = self._rules[folder] = (stamp, read_ignore_file(folder))
        return known[1]

    def _folders(self, real: Path) -> list[Path]:
        """The folders from the root down to `real`'s own (only `real`'s own when it is outside the root)."""
        parent = real.parent
        if not parent.is_relative_to(self.root):
            return [parent]
        return [self.root, *(self.root / Path(*parent.relative_to(self.root).parts[:i + 1])
                             for i in range(len(parent.relative_to(self.root).parts)))]

    def ignored(self, path: Path, *, folder: bool = False, named: Path | None = None) -> bool:
        """Whether the ignore files skip this path (a folder with `folder`): the deepest file with a matching rule decides.

        `named`: a folder the user named that holds the path (its real path): a rule that skips it, or a folder above
        it, does not apply (a folder named explicitly is walked, as a file named is analyzed); the others do."""
        path = Path(path)
        return self.skipper(path.parent, named=named)(path.name, folder)

    def skipper(self, folder: Path, *, named: Path | None = None) -> Callable[[str, bool], bool]:
        """`ignored` for the entries of one folder, by name (and whether a folder), its ignore files looked up once
        (a folder walk asks it for each entry: 0.3 ms a file otherwise)."""
        real = Path(os.path.realpath(folder))  # a link is matched by its own name, as git does: only its folder is resolved
        specs: list[tuple[pathspec.GitIgnoreSpec, str, list[str] | None]] = []
        for place in self._folders(real / IGNORE_FILE):
            spec = self.rules(place).spec
            if spec is not None:
                prefix = "" if real == place else real.relative_to(place).as_posix() + "/"
                specs.append((spec, prefix, None if named is None else _folders_up_to(named, place)))

        def skipped(name: str, is_folder: bool = False) -> bool:
            decided = False
            for spec, prefix, exempt in specs:
                rel = prefix + name + ("/" if is_folder else "")
                include = spec.check_file(rel).include if exempt is None else _deciding(spec, rel, exempt)
                if include is not None:
                    decided = include
            return decided

        return skipped

    def unread(self, folder: Path) -> list[tuple[Path, str]]:
        """The ignore files that apply to a folder's files but could not be read: (file, why), root first."""
        real = Path(os.path.realpath(folder))
        return [(place / IGNORE_FILE, why) for place in self._folders(real / IGNORE_FILE)
                if (why := self.rules(place).unread) is not None]


def _folders_up_to(named: Path, place: Path) -> list[str]:
    """The named folder and the folders above it, below an ignore file's folder, as that file's patterns see them."""
    if not named.is_relative_to(place) or named == place:
        return []
    parts = named.relative_to(place).parts
    return ["/".join(parts[:i + 1]) + "/" for i in range(len(parts))]


def _deciding(spec: pathspec.GitIgnoreSpec, rel: str, exempt: list[str]) -> bool | None:
    """The last of the spec's patterns that matches `rel`, leaving out those that match a folder in `exempt`."""
    decided = None
    for pattern in spec.patterns:
        if pattern.include is None or any(pattern.match_file(folder) for folder in exempt):
            continue
        if pattern.match_file(rel):
            decided = pattern.include
    return decided


@lru_cache(maxsize=4096)
def _root_of(folder: Path) -> Path:
    return project_of(folder / IGNORE_FILE)


_PROJECTS: dict[Path, Project] = {}


def project_for(path: str | Path) -> Project:
    """The project of a file or folder: one object per root, found once per folder."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    root = _root_of(Path(os.path.abspath(folder)))
    found = _PROJECTS.get(root)
    if found is None:
        found = _PROJECTS[root] = Project(root)
    return found
