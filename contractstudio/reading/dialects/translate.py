"""Every document of another tool's format in a file replaced by its native reading, built from the user's own nodes.

Which dialect a document is read as comes from, in order: `--dialect` (the `dialect` argument), the `dialect:` of
the nearest `.contractstudio.yaml` above the file (reading/folder_settings.py: read by the face, handed over), the
document's shape. A document with `kind:` is native unless `--dialect` says otherwise. `extends:` bases are read here,
each once, within the project.
"""

from __future__ import annotations

import os
from pathlib import Path

from contractstudio.findings.diagnostics import Diagnostic, Related
from contractstudio.reading.builder import Builder
from contractstudio.reading.dialect_registry import DocumentReader, YamlFile, detect, named
from contractstudio.reading.dialects import localai_rag
from contractstudio.reading.folder_settings import FolderSettings
from contractstudio.reading.kinds import NATIVE
from contractstudio.reading.nodes import SourceDocument, SourceFile
from contractstudio.storage.paths import base_problem, project_of

MAX_BASE_BYTES = 8 * 1024 * 1024  # a base file larger than this is refused (a finding), not read


def read_dialects(source: SourceFile, *, dialect: str | None = None, location: Path | None = None,
                  settings: FolderSettings | None = None) -> SourceFile:
    """The file with every document of another format replaced by its native reading (in place; returned).

    `settings`: the file's folder settings, as the face read them (never read here: the analysis reads no setting)."""
    if dialect == NATIVE or (dialect is None and all(d.kind is not None for d in source.documents)):
        return source
    location = location if location is not None else Path(source.path)
    settings = (settings or FolderSettings()) if dialect is None else FolderSettings()
    forced = dialect or settings.dialect  # NATIVE in the folder's settings: every document is read as it is
    docs: list[SourceDocument] = []
    readers: dict[str, DocumentReader] = {}
    file: YamlFile | None = None
    for doc in source.documents:
        if doc.kind is not None and dialect is None:
            docs.append(doc)
            continue
        chosen = named(forced) if forced else detect(doc.root)
        if chosen is None:
            docs.append(doc)
            continue
        if chosen.name not in readers:
            file = file or YamlFile(source, location, settings.pipelines_root, _Bases(source, location).load)
            readers[chosen.name] = chosen.reader(file)
        docs.extend(readers[chosen.name].read(doc))
    source.documents = docs
    for reader in readers.values():
        source.diagnostics.extend(reader.diagnostics)
    return source


def _real(location: Path) -> Path:
    try:
        return location.resolve()
    except OSError:
        return location


class _Bases:
    """Reads base files for one file's `extends:` chains, each once, placed after the lines already taken."""

    def __init__(self, source: SourceFile, location: Path) -> None:
        self.source = source
        self.location = location
        self.main = _real(location)
        self.workspace = (project_of(location),)  # the only place bases are read from (storage/paths.py)
        self.next_line = source.text.count("\n") + 2
        self.cache: dict[Path, tuple[list[SourceDocument], str | None]] = {}

    def load(self, path: Path, via: tuple[Related, ...]) -> tuple[list[SourceDocument], str | None]:
        if path == self.main:
            return self.source.documents, None
        if path not in self.cache:
            self.cache[path] = self._read(path, via)
        return self.cache[path]

    def _read(self, path: Path, via: tuple[Related, ...]) -> tuple[list[SourceDocument], str | None]:
        refused = base_problem(path, self.workspace)  # before any open: /proc/self/environ must never be read
        if refused is not None:
            return [], refused
        try:
            if path.stat().st_size > MAX_BASE_BYTES:
                return [], f"it is larger than {MAX_BASE_BYTES // (1024 * 1024)} MiB"
            text = path.read_bytes().decode("utf-8-sig")
        except OSError as err:
            return [], err.strerror or str(err)
        except UnicodeDecodeError:
            return [], "it is not UTF-8 text"
        first = self.next_line
        self.next_line += text.count("\n") + 1
        diagnostics: list[Diagnostic] = []
        docs = Builder(self.source.path, diagnostics, first - 1).build(text, 0)
        self.source.includes.append(localai_rag.included(self._display(path), text, first, via))
        self.source.diagnostics.extend(diagnostics)
        return docs, None

    def _display(self, path: Path) -> str:
        """The base's path as the user would write it next to the file's own path."""
        if self.source.path.startswith("<"):
            return str(path)
        try:
            rel = os.path.relpath(path, self.main.parent)
        except ValueError:  # another drive (Windows)
            return str(path)
        return os.path.normpath(os.path.join(os.path.dirname(self.source.path), rel))
