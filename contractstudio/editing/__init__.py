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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contractstudio.editing.completion import complete
    from contractstudio.editing.fixes import code_actions
    from contractstudio.editing.hovering import hover
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

# Where each name lives: a name is imported on first use, so that importing a light part of this package
# (items, templates) does not import the analyzer behind completion and hover (the studio's first screen).
_HOMES = {
    "CodeAction": "items", "CompletionItem": "items", "FoldingRange": "items", "Hover": "items", "Location": "items",
    "Rename": "items", "Symbol": "items", "TextEdit": "items", "apply_edits": "text", "code_actions": "fixes",
    "complete": "completion", "definition": "navigation", "document_symbols": "outline", "folding_ranges": "outline",
    "hover": "hovering", "prepare_rename": "navigation", "references": "navigation", "rename": "navigation",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'contractstudio.editing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"contractstudio.editing.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CodeAction", "CompletionItem", "FoldingRange", "Hover", "Location", "Rename", "Symbol", "TextEdit", "apply_edits",
    "code_actions", "complete", "definition", "document_symbols", "folding_ranges", "hover", "prepare_rename", "references",
    "rename",
]
