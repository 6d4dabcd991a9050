"""Building the native reading of a dialect document out of the nodes of the user's own file.

Every node of the result is either a node of the user's file (so its span is the
user's text) or a new node placed at the span of the node it stands for (a
flattened route's key sits on the route's key). Positions therefore stay in the
user's file without the rules knowing a dialect exists. Files read along (bases)
sit past the file's last line; `relocate` moves their positions back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from contractstudio.findings.diagnostics import Diagnostic, Related, Span
from contractstudio.reading.nodes import Included, MapNode, Node, ScalarNode, SeqNode, SourceFile, new_scalar

_STR = "tag:yaml.org,2002:str"


def scalar(value: Any, at: Node, text: str | None = None) -> ScalarNode:
    """A new scalar placed where `at` is (`text`: what the user wrote there, when the value is a translation of it)."""
    return new_scalar(at.line, at.column, at.end_line, at.end_column, _STR, value, "", str(value) if text is None else text)


def mapping(pairs: Iterable[tuple[Node, Node]], at: Node) -> MapNode:
    """A new mapping with the span of `at`."""
    node = MapNode()
    node.line, node.column, node.end_line, node.end_column, node.tag = at.line, at.column, at.end_line, at.end_column, at.tag
    node.pairs = list(pairs)
    return node


def sequence(items: Iterable[Node], at: Node) -> SeqNode:
    """A new sequence with the span of `at`."""
    node = SeqNode()
    node.line, node.column, node.end_line, node.end_column, node.tag = at.line, at.column, at.end_line, at.end_column, at.tag
    node.items = list(items)
    return node


def entry(key: str, value: Node, at: Node | None = None) -> tuple[Node, Node]:
    """A (key, value) pair whose key is a new scalar at `at` (default: the value's place)."""
    return scalar(key, at if at is not None else value), value


def data_of(node: Node | None) -> Any:
    """The plain data of a node tree (what the native validator reads)."""
    kind = type(node)
    if kind is ScalarNode:
        return node[5]  # type: ignore[index]  # ScalarNode.value, without the property call (the hot path)
    if kind is MapNode:
        return {k[5]: data_of(v) for k, v in node.pairs if type(k) is ScalarNode}  # type: ignore[union-attr]
    if kind is SeqNode:
        return [data_of(i) for i in node.items]  # type: ignore[union-attr]
    return None


def text_of(node: Node | None) -> str | None:
    """A scalar's value when it is a string, else None."""
    return node.value if isinstance(node, ScalarNode) and isinstance(node.value, str) else None


# ----------------------------------------------------------------- positions of included files


def _home(source: SourceFile, line: int) -> Included | None:
    if not source.includes:  # asked per place a rename edits: no pass over a 5 MB text for each of 32,000 names
        return None
    if line <= source.text.count("\n") + 1:
        return None
    return next((inc for inc in source.includes if inc.holds(line)), None)


def locate(source: SourceFile, span: Span) -> tuple[str, Span]:
    """The file and span a position of the analyzed text stands for (a base's own lines for an inherited part)."""
    inc = _home(source, span.line)
    if inc is None:
        return source.path, span
    shift = inc.first_line - 1
    return inc.path, Span(span.line - shift, span.column, max(span.end_line - shift, 1), span.end_column)


def relocate(diagnostics: Iterable[Diagnostic], source: SourceFile) -> list[Diagnostic]:
    """Positions past the file's own lines moved back into the included file they belong to."""
    if not source.includes:
        return list(diagnostics)
    out = []
    for d in diagnostics:
        related = tuple(_related(r, source) for r in d.related)
        inc = _home(source, d.line) if d.file == source.path else None
        if inc is not None:
            shift = inc.first_line - 1
            d = replace(d, file=inc.path, line=d.line - shift, end_line=max(d.end_line - shift, 1), related=related + inc.via)
        elif related != d.related:
            d = replace(d, related=related)
        out.append(d)
    return out


def _related(r: Related, source: SourceFile) -> Related:
    inc = _home(source, r.line) if r.file == source.path else None
    return r if inc is None else replace(r, file=inc.path, line=r.line - inc.first_line + 1)


def texts(source: SourceFile) -> dict[str, str]:
    """The text of the file and of every file it included, by path (for suppressions and source lines)."""
    out = {inc.path: inc.text for inc in source.includes}
    out[source.path] = source.text
    return out


def placed(value: Any, line: int) -> Node:
    """Plain data as a node tree whose every node sits at the start of `line` (settings given in code, not a file)."""
    if isinstance(value, dict):
        at = new_scalar(line, 1, line, 1, _STR, None, "", "")
        return mapping(((scalar(k, at), placed(v, line)) for k, v in value.items()), at)
    if isinstance(value, (list, tuple)):
        return sequence((placed(v, line) for v in value), new_scalar(line, 1, line, 1, _STR, None, "", ""))
    return new_scalar(line, 1, line, 1, _STR, value, "", repr(value))
