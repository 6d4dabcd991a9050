"""The outline of a file (document symbols) and its folding ranges, from the nodes of the last analysis."""

from __future__ import annotations

from typing import Any

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.editing.items import FoldingRange, Symbol
from contractstudio.editing.yaml_text import is_flow, last_line, walk
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode
from contractstudio.safe_text import shorten

# Top-level keys whose mapping values are named things, and what each entry is.
NAMED_MAPS = {"types": "type", "routers": "router", "actions": "action", "fallback": "key"}
# Top-level keys whose list items are named by a key of the item, and what each item is.
NAMED_LISTS = {"steps": ("step", "id", "action"), "tools": ("tool", "name", "description"), "policies": ("policy", "id", "description"),
               "tasks": ("task", "id", "oracle"), "pre": ("condition", "id", "assert"), "post": ("condition", "id", "assert"),
               "examples": ("key", "name", "description"), "scenarios": ("key", "name", "description")}


def _span(node: Node, lines: list[str], start: Node | None = None) -> Span:
    first = start or node
    end = last_line(node, lines)
    return Span(first.line, first.column, end, len(lines[end - 1]) + 1 if 0 < end <= len(lines) else first.column + 1)


def _text(node: Node | None) -> str:
    return str(node.value) if isinstance(node, ScalarNode) and node.value is not None else ""


def document_symbols(report: FileReport) -> list[Symbol]:
    """One symbol per document (`kind name`), with its types, steps, tools, policies, tasks ... as children."""
    lines = report.text.split("\n")
    return [s for loaded in report.documents if (s := _document(loaded, lines)) is not None]


def _document(loaded: Loaded, lines: list[str]) -> Symbol | None:
    root = loaded.doc.root
    if not isinstance(root, MapNode):
        return None
    name = _text(root.get("name")) or "(unnamed)"
    children = [c for k, v in root.pairs if isinstance(k, ScalarNode) and (c := _top(str(k.value), k, v, lines)) is not None]
    return Symbol(f"{loaded.kind or 'document'} {name}", "document", _span(root, lines), (root.key_node("kind") or root).span,
                  children=tuple(children))


def _top(key: str, k: Node, v: Node, lines: list[str]) -> Symbol | None:
    kids: list[Symbol] = []
    if key in NAMED_MAPS and isinstance(v, MapNode):
        for ek, ev in v.pairs:
            if not isinstance(ek, ScalarNode):
                continue
            fields = ev.get("fields") if isinstance(ev, MapNode) else None
            grand = tuple(Symbol(str(fk.value), "field", _span(fv, lines, fk), fk.span,
                                 _text(fv.get("type")) if isinstance(fv, MapNode) else "")
                          for fk, fv in (fields.pairs if isinstance(fields, MapNode) else []) if isinstance(fk, ScalarNode))
            kids.append(Symbol(str(ek.value), NAMED_MAPS[key], _span(ev, lines, ek), ek.span, children=grand))
    elif key in NAMED_LISTS and isinstance(v, SeqNode):
        what, by, detail = NAMED_LISTS[key]
        for i, item in enumerate(v.items):
            if not isinstance(item, MapNode):
                continue
            label = _text(item.get(by)) or _text(item.get("assert")) or f"#{i + 1}"
            sel = item.get(by) or item
            kids.append(Symbol(label, what, _span(item, lines), sel.span, shorten(_text(item.get(detail)), 60, marker="")))
    elif key == "schema" and isinstance(v, MapNode) and isinstance(fields := v.get("fields"), MapNode):
        kids = [Symbol(str(fk.value), "field", _span(fv, lines, fk), fk.span) for fk, fv in fields.pairs if isinstance(fk, ScalarNode)]
    if key == "kind":
        return None
    return Symbol(key, "key", _span(v, lines, k), k.span, shorten(_text(v), 60, marker=""), tuple(kids))  # redacted, then cut


def folding_ranges(report: FileReport) -> list[FoldingRange]:
    """Every mapping, list or block text that spans several lines, from its key's line to its last line."""
    lines = report.text.split("\n")
    out: list[FoldingRange] = []
    seen: set[int] = set()
    for loaded in report.documents:
        for _, parent in walk(loaded.doc.root):
            pairs: list[tuple[Any, Node]] = list(parent.pairs) if isinstance(parent, MapNode) else \
                [(item, item) for item in parent.items] if isinstance(parent, SeqNode) else []
            for start, value in pairs:
                if isinstance(value, ScalarNode) and value.style not in ("|", ">"):
                    continue
                if not isinstance(value, ScalarNode) and is_flow(value, lines):
                    continue
                first, end = start.line, last_line(value, lines)
                if end > first and first not in seen:
                    seen.add(first)
                    out.append(FoldingRange(first, end))
    out.extend(_comment_blocks(lines))
    return sorted(out, key=lambda r: (r.start_line, -r.end_line))


def _comment_blocks(lines: list[str]) -> list[FoldingRange]:
    out, start = [], None
    for i, line in enumerate(lines + [""], start=1):
        if line.lstrip().startswith("#"):
            start = start or i
            continue
        if start is not None and i - 1 > start:
            out.append(FoldingRange(start, i - 1, "comment"))
        start = None
    return out
