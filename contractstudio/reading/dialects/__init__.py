"""Dialects: files of other tools' formats read into the native document shapes (LocalAI-RAG, AgentAnvil).

A dialect is a reader, not a second analyzer: each document of another format is
replaced by its native reading (`kind: pipeline` with `catalog: localai-rag`,
`kind: agent`) built from the user's own nodes, so every rule runs unchanged and
every position is in the user's file. Which dialect a document is read as comes
from, in order: `--dialect` (the `dialect` argument), the `dialect:` of the
nearest `.contractstudio.yaml` above the file, the document's shape. A document
with `kind:` is native unless `--dialect` says otherwise.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from contractstudio.findings.diagnostics import Diagnostic, Related, Span, declare, make
from contractstudio.reading.builder import Builder
from contractstudio.reading.data_files import UnreadableData, read_data_file
from contractstudio.reading.dialects import agentanvil, localai_rag
from contractstudio.reading.kinds import DIALECTS, NATIVE
from contractstudio.reading.nodes import SourceDocument, SourceFile
from contractstudio.storage.paths import base_problem, project_of

SETTINGS_FILE = ".contractstudio.yaml"
MAX_BASE_BYTES = 8 * 1024 * 1024  # a base file larger than this is refused (a finding), not read
MAX_SETTINGS_BYTES = 64 * 1024
HINT = ("add 'kind: contract' (or agent, pipeline, tools); other formats are read too: LocalAI-RAG pipelines "
        "(a top-level YAMLpipeline:) and AgentAnvil contracts (name with policies, tasks or constraints); "
        "--dialect contractstudio|localai-rag|agentanvil forces one")

declare("REF203", "bad-extends", "error", "An `extends:` base that cannot be found or read, or a chain of bases that loops.")

_LOCALAI = re.compile(r"^(?:YAMLpipeline[ \t]*:"
                      r"|(?:YAMLpipelines|pipelines)[ \t]*:[ \t]*(?:\[|(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*[ \t]*- ))", re.M)
# A LocalAI-RAG test manifest: a `YAMLpipelines:` list whose rows name files (pipeline_file, scenario_file) and
# hold no pipeline (no steps, settings or extends key anywhere): their scenario runner's input, not a pipeline.
_MANIFEST_ROW = re.compile(r"^[ \t]+(?:- )?(?:pipeline_file|scenario_file)[ \t]*:", re.M)
_PIPELINE_KEY = re.compile(r"^[ \t]*(?:- )?(?:steps|settings|extends)[ \t]*:", re.M)
_NAME = re.compile(r"^name[ \t]*:", re.M)
_ANVIL = re.compile(r"^(?:(?:policies|tasks)[ \t]*:[ \t]*(?:\[|(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*[ \t]*- )"
                    r"|constraints[ \t]*:[ \t]*(?:\{|(?:#.*)?\n[ \t]+(?:max_|allowed_tools|forbidden_patterns)))", re.M)


def sniff_kind(text: str) -> str | None:
    """The native kind a text of another format reads as, without parsing it (file discovery, the studio's list)."""
    if _LOCALAI.search(text):
        return "pipeline"
    if _NAME.search(text) and _ANVIL.search(text):
        return "agent"
    return None


def other_format(text: str) -> str | None:
    """What a text of a dialect's outer shape really is when it is not ours (the reason a file is skipped), else None."""
    if _LOCALAI.search(text) and _MANIFEST_ROW.search(text) and not _PIPELINE_KEY.search(text):
        return "a LocalAI-RAG scenario manifest (its rows name pipeline_file/scenario_file; no row has steps or settings)"
    return None


def detect(doc: SourceDocument) -> str:
    """The dialect a document's shape says it is in (native when it has `kind:` or matches nothing)."""
    if localai_rag.is_localai(doc.root):
        return localai_rag.NAME
    if agentanvil.is_agentanvil(doc.root):
        return agentanvil.NAME
    return NATIVE


@dataclass(frozen=True, slots=True)
class FolderSettings:
    """The `.contractstudio.yaml` nearest above a file (see docs/dialects.md)."""

    path: Path | None = None
    dialect: str | None = None  # how every YAML file below it is read
    pipelines_root: Path | None = None  # LocalAI-RAG: where `extends: <name>` is looked up last


def folder_settings(folder: Path) -> FolderSettings:
    """The settings of the nearest `.contractstudio.yaml` in `folder` or above it; an unreadable one is ignored."""
    try:
        here = folder.resolve()
    except OSError:
        return FolderSettings()
    for place in (here, *here.parents):
        candidate = place / SETTINGS_FILE
        try:
            if not candidate.is_file():
                continue
            data = read_data_file(candidate, MAX_SETTINGS_BYTES).data  # bounded: never a parser that recurses (issue 18)
        except (OSError, UnreadableData):
            return FolderSettings(candidate)
        if not isinstance(data, dict):
            return FolderSettings(candidate)
        dialect = data.get("dialect") if data.get("dialect") in DIALECTS else None
        root = data.get("pipelines_root")
        return FolderSettings(candidate, dialect, (place / root).resolve() if isinstance(root, str) else None)
    return FolderSettings()


def _pipelines_root(location: Path, settings: FolderSettings) -> Path:
    if settings.pipelines_root is not None:
        return settings.pipelines_root
    folder = location.parent.resolve()
    return next((p for p in (folder, *folder.parents) if p.name == "pipelines"), folder)


def read_dialects(source: SourceFile, *, dialect: str | None = None, location: Path | None = None) -> SourceFile:
    """The file with every document of another format replaced by its native reading (in place; returned)."""
    if dialect == NATIVE or (dialect is None and all(d.kind is not None for d in source.documents)):
        return source
    location = location if location is not None else Path(source.path)
    settings = folder_settings(location.parent) if dialect is None else FolderSettings()
    forced = dialect or settings.dialect
    docs: list[SourceDocument] = []
    found: list[Diagnostic] = []
    resolver: localai_rag.Resolver | None = None
    for doc in source.documents:
        if doc.kind is not None and dialect is None:
            docs.append(doc)
            continue
        name = forced or detect(doc)
        if name == localai_rag.NAME:
            if not localai_rag.is_localai(doc.root):
                found.append(_not_shaped(source.path, doc, name))
                continue
            if resolver is None:
                resolver = localai_rag.Resolver(source.path, _real(location), _pipelines_root(location, settings),
                                                _Bases(source, location).load)
            docs.extend(resolver.read(doc))
        elif name == agentanvil.NAME:
            reader = agentanvil.AgentAnvilReader(source.path)
            docs.extend(reader.read(doc))
            found.extend(reader.diagnostics)
        else:
            docs.append(doc)
    if resolver is not None:
        found.extend(resolver.diagnostics)
    source.documents = docs
    source.diagnostics.extend(found)
    return source


def _real(location: Path) -> Path:
    try:
        return location.resolve()
    except OSError:
        return location


def _not_shaped(path: str, doc: SourceDocument, name: str) -> Diagnostic:
    span = doc.root.span if doc.root is not None else Span(doc.line, 1, doc.line, 2)
    return make("YML003", f"read as {name}, but the document has no YAMLpipeline:, YAMLpipelines: or pipelines: list",
                path, span, hint=HINT)


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


__all__ = ["DIALECTS", "HINT", "NATIVE", "SETTINGS_FILE", "FolderSettings", "detect", "folder_settings",
           "other_format", "read_dialects", "sniff_kind"]
