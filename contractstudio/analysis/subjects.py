"""What a place in a document is about: the step, type, field, tool, policy, task or scenario a path is inside.

Findings carry it (`Diagnostic.subject`, `Related.subject`), set where they are made from the document path they
point at (`Loaded.diag`, `Loaded.related`, the shape validator, the expression checker's findings). It is read
from the document's plain data, so it is known even when the document's shape did not validate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contractstudio.findings.diagnostics import Subject

# Where each kind lists named things: (kind of document, top-level key) -> (subject kind, the key holding the name).
_LISTS = {
    ("pipeline", "steps"): ("step", "id"),
    ("agent", "tools"): ("tool", "name"),
    ("agent", "policies"): ("policy", "id"),
    ("agent", "tasks"): ("task", "id"),
    ("tools", "tools"): ("tool", "name"),
    ("contract", "scenarios"): ("scenario", "name"),
    ("contract", "examples"): ("example", "name"),
}


def subject_at(kind: str | None, data: Any, path: Iterable[Any]) -> Subject | None:
    """The subject of a document path (None: the document as a whole, or a path outside any named thing)."""
    path = tuple(path)
    if len(path) < 2 or not isinstance(data, dict):
        return None
    head, second = path[0], path[1]
    if head == "types" and kind in ("contract", "agent", "tools") and isinstance(second, str):
        if len(path) > 3 and path[2] == "fields" and isinstance(path[3], str):
            return Subject("field", f"{second}.{path[3]}")
        return Subject("type", second)
    named = _LISTS.get((kind or "", head))
    if named is None or not isinstance(second, int):
        return None
    items = data.get(head)
    if not isinstance(items, list) or not 0 <= second < len(items) or not isinstance(items[second], dict):
        return None
    name = items[second].get(named[1])
    return Subject(named[0], name) if isinstance(name, str) and name else None
