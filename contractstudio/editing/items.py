"""What the editing layer answers with: small plain values, no editor's or protocol's types.

Positions are those of `findings.Span`: 1-based lines, 1-based columns counted in
characters, ends exclusive. A face (the studio, the language server) converts
them to its own units.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from contractstudio.findings.diagnostics import Diagnostic, Span


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the characters of `span` with `new_text` (an empty span inserts)."""

    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a file."""

    file: str
    span: Span


@dataclass(frozen=True, slots=True)
class CompletionItem:
    """One completion: `insert_text` replaces the characters of `replace` (the word typed so far)."""

    label: str
    kind: str  # key | value | step | type | tool | policy | task | router | action | field | function | method | name | keyword
    detail: str = ""  # one line: a type, an action, a signature
    documentation: str = ""  # markdown
    insert_text: str = ""
    replace: Span | None = None
    sort_text: str = ""

    @property
    def text(self) -> str:
        """What accepting the item writes."""
        return self.insert_text or self.label


@dataclass(frozen=True, slots=True)
class Hover:
    """Markdown about the thing under the cursor, and the span it describes."""

    markdown: str
    span: Span


@dataclass(frozen=True, slots=True)
class CodeAction:
    """A quick fix: edits of one file that resolve (or silence) a finding."""

    title: str
    edits: tuple[TextEdit, ...]
    diagnostic: Diagnostic | None = None
    preferred: bool = False  # the obvious fix (a did-you-mean), applied by "fix all" in editors
    kind: str = "quickfix"


@dataclass(frozen=True, slots=True)
class Rename:
    """The edits of a rename, or why it is refused (`refused` set, no edits)."""

    edits: tuple[TextEdit, ...] = ()
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class Symbol:
    """An outline entry: a document, a type, a field, a step, a tool ..."""

    name: str
    kind: str  # document | type | field | step | router | action | tool | policy | task | param | condition | key
    span: Span  # the whole entry
    selection: Span  # its name
    detail: str = ""
    children: tuple[Symbol, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class FoldingRange:
    """Lines that fold together (1-based, inclusive)."""

    start_line: int
    end_line: int
    kind: str = "region"  # region | comment
