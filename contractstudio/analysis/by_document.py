"""A file of many `---` documents analyzed again after an edit: only the documents whose text changed.

Rules look at one document at a time (a `Loaded`), never at another document of the file, so a document whose
text is unchanged, at the same line and with the same index in the file, reads and analyzes as it did before.
`DocumentsKept` cuts the text before every `---` line (`document_chunks`: what `read_source` does to recover
from a syntax error), keeps each chunk's documents, loaded objects and findings, and reads and analyzes only the
chunks it has not seen. Typing in one document of a 5 MB file (655 documents) then analyzes one document, not
655 (issue 19.6); an edit that adds or removes lines analyzes the chunks after it again (their lines moved).

It returns what `check_text` returns (tests/test_incremental.py edits many-document files at random and
compares), and steps aside (None: analyze the whole text) where it cannot be sure: one document, a Python file
or a file a dialect reads whole, a directive (`%YAML` applies across the cut), NUL bytes, a BOM, a document with
no `kind:` (dialects read those, maybe with base files), a `--dialect`, and any analysis in which a budget ran
out (YML006, or the file's expression budget spent: then the order documents are analyzed in matters).

Each chunk analyzed is kept as soon as it is (an analysis stopped midway, as the studio stops a stale one, keeps
the documents it finished); the chunks of the last complete analysis replace them all.

The file's regex budget is time, not work, and is renewed per analysis: a kept document spends none of it again.
A hook module changed on disk is seen by the documents analyzed again; reopening the file analyzes them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contractstudio.analysis import check
from contractstudio.analysis.loaded import Context, ExpressionChecks, Loaded, file_regex_budget
from contractstudio.documents.patterns import RegexBudget, shared_budget
from contractstudio.expressions.sandbox import ExpressionBudget, shared_expression_budget
from contractstudio.reading.builder import Builder
from contractstudio.reading.dialect_registry import for_file
from contractstudio.reading.kinds import NATIVE
from contractstudio.reading.source import SourceDocument, SourceFile, document_chunks

if TYPE_CHECKING:
    from contractstudio.findings.diagnostics import Diagnostic

class AnalysisStopped(Exception):
    """An analysis given up between two documents: nobody waits for it any more (the file or the studio closed)."""


@dataclass(slots=True)
class Chunk:
    """What one chunk of the text (a `---` line up to the next) read and analyzed as."""

    documents: list[SourceDocument]
    reading: list[Diagnostic]  # the reader's findings in the chunk
    loaded: list[Loaded]
    found: list[Diagnostic]  # its documents' shape and rule findings, in order
    spent: int  # the expression budget its rules used


class DocumentsKept:
    """One file's chunks as last analyzed, keyed by (text, first line, index of its first document)."""

    def __init__(self) -> None:
        self._key: tuple[str, Context] | None = None
        self._chunks: dict[tuple[str, int, int], Chunk] = {}

    def forget(self) -> None:
        self._key, self._chunks = None, {}

    def check(self, text: str, path: str, ctx: Context | None, expressions: ExpressionChecks | None,
              stopped: Callable[[], bool] = lambda: False) -> check.FileReport | None:
        """The analysis of `text`, analyzing only chunks not seen in the last one; None where the whole text must be.

        `stopped` is asked before each chunk: once it says so, AnalysisStopped is raised (the file was closed).
        """
        ctx = ctx or Context()
        chunks = document_chunks(text) if _applies(text, path, ctx) else []
        if len(chunks) < 2:
            self.forget()
            return None
        if self._key != (path, ctx):
            self._chunks = {}  # first: an analysis stopped between the two never pairs old chunks with the new key
            self._key = (path, ctx)
        source = SourceFile(path=path, text=text)
        regex, spend = file_regex_budget(), ExpressionBudget(what="this file's analysis")
        seen: dict[tuple[str, int, int], Chunk] = {}
        with shared_budget(regex), shared_expression_budget(spend):
            for line, piece in chunks:
                if stopped():
                    raise AnalysisStopped(path)
                key = (piece, line, len(source.documents))
                chunk = self._chunks.get(key)
                if chunk is None:
                    chunk = _analyze_chunk(source, piece, line, ctx, regex, expressions, spend)
                    if not (spend.spent or spend.reported) and _complete([chunk]):
                        self._chunks[key] = chunk  # kept at once: an analysis stopped after it still has it
                else:
                    spend.used += chunk.spent
                    for item in chunk.loaded:  # its lines are this text's lines: positions map the same
                        item.text, item.source, item.regex = text, source, regex
                seen[key] = chunk
                source.documents.extend(chunk.documents)
                source.diagnostics.extend(chunk.reading)
        parts = list(seen.values())  # in the text's order: no two chunks start on the same line
        if spend.spent or spend.reported or not _complete(parts):
            self.forget()  # order mattered, or a dialect may read the file: the whole text is analyzed
            return None
        self._chunks = seen
        found = [*source.diagnostics, *(d for chunk in parts for d in chunk.found)]
        loaded = [item for chunk in parts for item in chunk.loaded]
        return check.FileReport(path, text, source, loaded, check.file_findings(found, source))


def _applies(text: str, path: str, ctx: Context) -> bool:
    """Whether the text is a YAML file whose chunks read and analyze on their own as in the whole text."""
    return (ctx.dialect in (None, NATIVE) and not check.is_python(path) and for_file(path) is None
            and not text.startswith(("\ufeff", "%")) and "\x00" not in text and "\n%" not in text)  # no directive


def _complete(parts: list[Chunk]) -> bool:
    """Every document has its kind (none for a dialect to read) and no budget ran out (no YML006)."""
    return (all(doc.kind is not None for chunk in parts for doc in chunk.documents)
            and not any(d.code == "YML006" for chunk in parts for d in (*chunk.reading, *chunk.found)))


def _analyze_chunk(source: SourceFile, piece: str, line: int, ctx: Context, regex: RegexBudget,
                   expressions: ExpressionChecks | None, spend: ExpressionBudget) -> Chunk:
    """Read one chunk at its line and analyze its documents (under the file's budgets, which the caller holds)."""
    reading: list[Diagnostic] = []
    documents = Builder(source.path, reading, line).build(piece, len(source.documents))
    before = spend.used
    loaded: list[Loaded] = []
    found: list[Diagnostic] = []
    for doc in documents:
        item, findings = check.analyze_document(source, doc, ctx, regex, expressions)
        loaded.append(item)
        found.extend(findings)
    return Chunk(documents, reading, loaded, found, spend.used - before)
