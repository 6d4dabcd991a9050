"""Types written in a document (SCH103 when one does not parse, REF201 for a name that is not a type).

Contracts declare types under `types:`; agents and tools documents have only
the built-in ones. Each kind lists its type strings (`doc.type_strings`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from contractstudio.analysis.loaded import Loaded, TypeString
from contractstudio.analysis.positions import value_span
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.documents.type_syntax import refs
from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean, make

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}

BUILT_IN = "use str, int, float, bool, any, list[T], dict[str, T], T | None or Literal[...]"
KINDS = ("contract", "agent", "tools")


@rule("SCH103", kinds=KINDS)
def type_does_not_parse(doc: Loaded) -> Iterator[Diagnostic]:
    """A type string that does not parse, pointed at the character where parsing stopped."""
    for ts in doc.type_strings:
        if ts.error is not None:
            at = ts.error.offset
            yield make("SCH103", f"{ts.label}: {ts.error.message}", doc.file, value_span(doc, ts.path, at, at + 1),
                       subject=doc.subject(ts.path))


@rule("REF201", "undeclared-type", "error", kinds=KINDS)
def undeclared_type(doc: Loaded) -> Iterator[Diagnostic]:
    """A type name that is not declared (in input, output, intermediate or a field type)."""
    for ts in doc.type_strings:
        if ts.parsed is None:
            continue
        if ts.builtin_only:  # no declared types here: any name is one too many
            for name in dict.fromkeys(refs(ts.parsed)):
                yield doc.diag("REF201", f"{ts.label}: '{name}' is not a type {ts.builtin_only}", ts.path, hint=BUILT_IN)
        else:
            yield from _undeclared(doc, ts)


def _undeclared(doc: Loaded, ts: TypeString) -> Iterator[Diagnostic]:
    """Each name of a type string that the document's `types:` does not declare, pointed at inside the string."""
    types = doc.types
    assert ts.parsed is not None
    for name in dict.fromkeys(refs(ts.parsed)):
        if types.declared(name):
            continue
        m = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", ts.text)
        start = m.start() if m else 0
        span = value_span(doc, ts.path, start, start + len(name)) if m else doc.span(ts.path)
        declared = types.names()
        hint = did_you_mean(name, declared) or ("declare it under `types:`" if not declared else f"declared types: {', '.join(declared)}")
        yield make("REF201", f"{ts.ref_label} '{name}' is not declared", doc.file, span, hint=hint, subject=doc.subject(ts.path),
                   payload=Payload(name=name))
