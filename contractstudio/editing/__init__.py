"""Editing intelligence: pure functions of (analysis result, position) -> items or edits.

    complete(report, line, column, text)      -> [CompletionItem]
    hover(report, line, column)               -> Hover | None
    definition / references(report, line, column) -> [Location]
    rename(report, line, column, new_name)    -> Rename (edits, or why it is refused)
    code_actions(report, diagnostics, span)   -> [CodeAction] (quick fixes as minimal text edits)
    document_symbols(report) / folding_ranges(report)

Positions are 1-based lines and 1-based character columns, as in `findings.Span`.
The studio and the language server (`contractstudio lsp`) both answer from here;
neither imports the other, and nothing here imports Textual or an LSP library.
"""

from contractstudio.editing.completion import complete
from contractstudio.editing.fixes import code_actions
from contractstudio.editing.hover import hover
from contractstudio.editing.items import (
    CodeAction,
    CompletionItem,
    FoldingRange,
    Hover,
    Location,
    Rename,
    Symbol,
    TextEdit,
)
from contractstudio.editing.navigation import definition, prepare_rename, references, rename
from contractstudio.editing.outline import document_symbols, folding_ranges
from contractstudio.editing.text import apply_edits

__all__ = [
    "CodeAction", "CompletionItem", "FoldingRange", "Hover", "Location", "Rename", "Symbol", "TextEdit", "apply_edits",
    "code_actions", "complete", "definition", "document_symbols", "folding_ranges", "hover", "prepare_rename", "references",
    "rename",
]
