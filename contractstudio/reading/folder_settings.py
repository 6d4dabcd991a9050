"""The folder's settings: the `.contractstudio.yaml` nearest above a file (its dialect, LocalAI-RAG's pipelines root).

Read within bounds by reading/data_files.py; an unreadable or malformed one is ignored (docs/dialects.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contractstudio.reading import dialect_registry as registry
from contractstudio.reading.data_files import UnreadableData, read_data_file

SETTINGS_FILE = ".contractstudio.yaml"
MAX_SETTINGS_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class FolderSettings:
    """The `.contractstudio.yaml` nearest above a file (see docs/dialects.md)."""

    path: Path | None = None
    dialect: str | None = None  # how every YAML file below it is read
    pipelines_root: Path | None = None  # LocalAI-RAG: where `extends: <name>` is looked up last


def nearest_settings_file(folder: Path) -> Path | None:
    """The `.contractstudio.yaml` in `folder` or nearest above it, if any."""
    try:
        here = folder.resolve()
    except OSError:
        return None
    for place in (here, *here.parents):
        candidate = place / SETTINGS_FILE
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            return candidate  # there, but not to be looked at: read as unreadable below
    return None


def folder_settings(folder: Path) -> FolderSettings:
    """The settings of the nearest `.contractstudio.yaml` in `folder` or above it; an unreadable one is ignored.

    Read by the faces through their project (reading/project.py's `settings_of`, cached), never by the analysis: it
    gets them in its context (analysis/loaded.py's `Context.settings`)."""
    candidate = nearest_settings_file(folder)
    if candidate is None:
        return FolderSettings()
    try:
        data = read_data_file(candidate, MAX_SETTINGS_BYTES).data  # bounded: never a parser that recurses (issue 18)
    except (OSError, UnreadableData):
        return FolderSettings(candidate)
    if not isinstance(data, dict):
        return FolderSettings(candidate)
    dialect = data.get("dialect") if data.get("dialect") in registry.names() else None
    root = data.get("pipelines_root")
    return FolderSettings(candidate, dialect, (candidate.parent / root).resolve() if isinstance(root, str) else None)
