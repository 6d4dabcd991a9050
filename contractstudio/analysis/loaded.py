"""One analyzed document, as every rule and every face sees it.

`Loaded` holds a document's text, nodes and validated model, and builds
diagnostics at model objects or document paths. Each kind has a subclass
(`LoadedContract`, `LoadedPipeline`, ...) whose per-document facts, such as the
step graph, the state flow or the type system, are cached properties: computed
on first use, once per analysis, and shared by every rule that asks and by
whoever reads the analysis result afterwards (the CLI, the studio, editing help).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.documents.models import Model
from contractstudio.documents.patterns import RegexBudget
from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.source import Node, SourceDocument, key_at, nearest

KNOWN_KINDS = ("contract", "agent", "pipeline", "tools")
REGEX_BUDGET_S = 1.0  # seconds of regex work (tool and type patterns) in the analysis of one file, all documents together


def file_regex_budget() -> RegexBudget:
    """A new budget for the regexes of one file's analysis (shared by its documents)."""
    return RegexBudget(REGEX_BUDGET_S)


@dataclass(slots=True)
class Context:
    """What the analysis may know about its surroundings."""

    trusted: bool = False  # python: hooks are imported only in a trusted workspace
    root: Path | None = None  # where hook modules are looked up (the file's folder by default)
    dialect: str | None = None  # read every document as this format (--dialect); None: by setting and shape


@dataclass
class Loaded:
    """One validated document: its model (None when its shape is too broken), its nodes and the analysis context.

    Not slotted: the subclasses of each kind keep their cached facts in the instance dict.
    """

    file: str
    text: str
    doc: SourceDocument
    model: Model | None
    ctx: Context = field(default_factory=Context)
    # Facts other layers compute once per analysis and keep with the document (analysis/facts.py).
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    regex: RegexBudget = field(default_factory=file_regex_budget, repr=False, compare=False)  # one per file (analysis/check.py)

    @property
    def kind(self) -> str | None:
        """The document's `kind:` as written (None when it has none)."""
        return self.doc.kind

    @property
    def dialect(self) -> str:
        """The format the document was read as."""
        return self.doc.dialect

    @property
    def unsupported(self) -> dict[str, str]:
        """What the document's format cannot express, and why (a rule then says "not checkable")."""
        return self.doc.unsupported

    def node(self, path: Iterable[Any], *, key: bool = False) -> Node | None:
        """The node at a document path (its key node with `key`), or the nearest existing one."""
        path = tuple(path)
        if key:
            return key_at(self.doc.root, path) or nearest(self.doc.root, path)
        return nearest(self.doc.root, path)

    def span(self, where: Model | Iterable[Any], *sub: Any, key: bool = False) -> Span:
        """The span of a model object (by its source path) or of a path, plus sub-keys."""
        base = where.src if isinstance(where, Model) else tuple(where)
        node = self.node(tuple(base) + sub, key=key)
        return node.span if node is not None else Span(self.doc.line, 1, self.doc.line, 2)

    def diag(self, code: str, message: str, where: Model | Iterable[Any], *sub: Any, key: bool = False, **kw: Any) -> Diagnostic:
        """A diagnostic of `code` at a model object or path."""
        return make(code, message, self.file, self.span(where, *sub, key=key), **kw)
