"""Our values (findings, editing items; 1-based character positions) <-> LSP types (0-based, client units)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from contractstudio.findings.diagnostics import Span
from contractstudio.reports.diagnostics import redacted

if TYPE_CHECKING:  # the editing layer is imported after `initialize` is answered (start-up time)
    from contractstudio.editing.items import CodeAction, CompletionItem, FoldingRange, Hover, Symbol, TextEdit
    from contractstudio.findings.diagnostics import Diagnostic

_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "info": lsp.DiagnosticSeverity.Information}
_ITEM_KIND = {
    "key": lsp.CompletionItemKind.Property, "value": lsp.CompletionItemKind.Value, "step": lsp.CompletionItemKind.Reference,
    "type": lsp.CompletionItemKind.Class, "tool": lsp.CompletionItemKind.Function, "policy": lsp.CompletionItemKind.Reference,
    "task": lsp.CompletionItemKind.Reference, "router": lsp.CompletionItemKind.Reference, "action": lsp.CompletionItemKind.Function,
    "field": lsp.CompletionItemKind.Field, "function": lsp.CompletionItemKind.Function, "method": lsp.CompletionItemKind.Method,
    "name": lsp.CompletionItemKind.Variable, "keyword": lsp.CompletionItemKind.Keyword,
}
_SYMBOL_KIND = {
    "document": lsp.SymbolKind.File, "type": lsp.SymbolKind.Class, "field": lsp.SymbolKind.Field, "step": lsp.SymbolKind.Function,
    "router": lsp.SymbolKind.Interface, "action": lsp.SymbolKind.Method, "tool": lsp.SymbolKind.Function,
    "policy": lsp.SymbolKind.Constant, "task": lsp.SymbolKind.Event, "param": lsp.SymbolKind.Variable,
    "condition": lsp.SymbolKind.Boolean, "key": lsp.SymbolKind.Property,
}
# docs/rules.md of a source checkout, which an editor opens at the rule's heading. An installed package has no
# docs on disk and the project publishes them nowhere yet: there a finding carries no link (its hint and code say
# what it is) rather than an address that does not resolve.
_DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
RULE_DOCS: str | None = _DOCS.as_uri() if _DOCS.is_file() else None


def rule_link(code: str) -> lsp.CodeDescription | None:
    """The documentation of a rule code, where there is some to open."""
    return lsp.CodeDescription(f"{RULE_DOCS}#{code.lower()}") if RULE_DOCS else None


class Positions:
    """Converts between our 1-based character positions and the client's units for one document's text."""

    def __init__(self, doc: TextDocument, text: str | None = None) -> None:
        self.codec = doc.position_codec
        self.lines: Sequence[str] = (text.splitlines(True) if text is not None else doc.lines) or [""]

    def to_ours(self, position: lsp.Position) -> tuple[int, int]:
        """(line, column), 1-based, columns in characters."""
        p = self.codec.position_from_client_units(self.lines, lsp.Position(position.line, position.character))
        return p.line + 1, p.character + 1

    def range(self, span: Span) -> lsp.Range:
        """An LSP range of one of our spans."""
        start = ServerTextPosition(max(0, span.line - 1), max(0, span.column - 1))
        end = ServerTextPosition(max(0, span.end_line - 1), max(0, span.end_column - 1))
        return self.codec.range_to_client_units(self.lines, ServerTextRange(start, end))

    def span(self, r: lsp.Range) -> Span:
        """One of our spans from an LSP range."""
        a, b = self.to_ours(r.start), self.to_ours(r.end)
        return Span(a[0], a[1], b[0], b[1])


def diagnostic(d: Diagnostic, pos: Positions, uri: str, path: str) -> lsp.Diagnostic:
    """A finding as an LSP diagnostic: code, severity, range, related places and a link to the rule's docs."""
    [d] = redacted([d])  # the one redaction of findings, as in check's formats: a message may quote a key
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri if r.file == path else Path(r.file).resolve().as_uri(),
                                                             pos.range(Span(r.line, r.column, r.line, r.column + 1))), r.message)
               for r in d.related]
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return lsp.Diagnostic(pos.range(Span(d.line, d.column, d.end_line, d.end_column)), message, _SEVERITY[d.severity], d.code,
                          rule_link(d.code), "contractstudio", related_information=related or None,
                          data={"code": d.code, "message": d.message,
                                **({"payload": d.payload.to_data()} if d.payload else {})})


def completion(item: CompletionItem, pos: Positions, at: tuple[int, int]) -> lsp.CompletionItem:
    """A completion item whose text edit replaces the word at the cursor (or the item's own span)."""
    span = item.replace or Span(at[0], at[1], at[0], at[1])
    doc = lsp.MarkupContent(lsp.MarkupKind.Markdown, item.documentation) if item.documentation else None
    return lsp.CompletionItem(item.label, kind=_ITEM_KIND.get(item.kind, lsp.CompletionItemKind.Text), detail=item.detail or None,
                              documentation=doc, sort_text=item.sort_text or None, filter_text=item.label,
                              text_edit=lsp.TextEdit(pos.range(span), item.text))


def hover(h: Hover, pos: Positions) -> lsp.Hover:
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, h.markdown), pos.range(h.span))


def edits(items: Sequence[TextEdit], pos: Positions) -> list[lsp.TextEdit]:
    return [lsp.TextEdit(pos.range(e.span), e.new_text) for e in items]


def code_action(a: CodeAction, pos: Positions, uri: str, path: str) -> lsp.CodeAction:
    diags = [diagnostic(a.diagnostic, pos, uri, path)] if a.diagnostic is not None else None
    return lsp.CodeAction(a.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=diags, is_preferred=a.preferred or None,
                          edit=lsp.WorkspaceEdit(changes={uri: edits(a.edits, pos)}))


def symbol(s: Symbol, pos: Positions) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(s.name, _SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Property), pos.range(s.span), pos.range(s.selection),
                              detail=s.detail or None, children=[symbol(c, pos) for c in s.children] or None)


def folding(r: FoldingRange) -> lsp.FoldingRange:
    kind = lsp.FoldingRangeKind.Comment if r.kind == "comment" else lsp.FoldingRangeKind.Region
    return lsp.FoldingRange(r.start_line - 1, r.end_line - 1, kind=kind)
