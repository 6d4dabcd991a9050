"""One file's analyses as it is edited: each one reuses what the edit cannot have changed.

The studio's edit screen and the language server analyze the whole text on every keystroke. An
`Analyzer` (one per open file) keeps, between calls,

- the last reading of the text, so that the next one reads only the entry the edit is in
  (reading/reread.py; the whole text when that is not certain),
- the last analysis of a one-document file, pass by pass, so that an edit inside one step of a
  pipeline or one example of a contract validates that entry alone and runs again only the rules
  that read what changed, and those per entry for that entry (analysis/by_entry.py), and
- the expression checker's results, keyed by what a check depends on and nothing else: whether
  the site is a message template, its source text, the names in scope with their types, and the
  fields of every declared type reachable from those (so typing in a description, or in a type
  no expression reaches, checks nothing again).

Every call returns what `check_text` returns for the same text (tests/test_incremental.py edits
samples and fixtures at random and compares). The caches are bounded: the expression results
by `max_expressions` entries (least recently used first out), the reading by one text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contractstudio.analysis.by_document import AnalysisStopped, DocumentsKept
from contractstudio.analysis.by_entry import EntriesKept
from contractstudio.analysis.check import Context, FileReport, is_python, read_any, read_file_source
from contractstudio.collector import paused_gc
from contractstudio.reading.reread import reread
from contractstudio.reading.source import SourceFile

if TYPE_CHECKING:
    from contractstudio.analysis.loaded import ExpressionSite, Scope
    from contractstudio.documents.type_syntax import TypeExpr
    from contractstudio.documents.types import TypeSystem
    from contractstudio.expressions import ExprIssue

MAX_EXPRESSIONS = 4096


class ExpressionCache:
    """Expression check results kept between analyses, keyed by (template, source, what the site's names can reach)."""

    def __init__(self, max_entries: int = MAX_EXPRESSIONS) -> None:
        self.max_entries = max_entries
        self._results: OrderedDict[tuple[Any, ...], tuple[TypeExpr | None, tuple[ExprIssue, ...]]] = OrderedDict()
        # Per scope object of the analysis running now: the text of what it sees (scopes are shared by many sites).
        self._views: dict[int, tuple[Scope, TypeSystem, str]] = {}
        self._texts: dict[str, str] = {}  # one string object per distinct view: keys then compare by identity

    def start(self) -> None:
        """A new analysis: scope objects of the last one are gone."""
        self._views.clear()
        if len(self._texts) > 4 * self.max_entries:
            self._texts.clear()

    def check(self, site: ExpressionSite) -> tuple[TypeExpr | None, list[ExprIssue]]:
        """What the expression checker says of a site (its type and issues), checked only when nothing like it was."""
        key = (site.template, site.src, self._view(site.scope, site.types))
        hit = self._results.get(key)
        if hit is not None:
            self._results.move_to_end(key)
            return hit[0], list(hit[1])
        from contractstudio.expressions import check, check_template

        if site.template:
            result: TypeExpr | None = None
            issues = check_template(site.src, site.scope, site.types)
        else:
            result, issues = check(site.src, site.scope, site.types)
        self._results[key] = (result, tuple(issues))
        while len(self._results) > self.max_entries:
            self._results.popitem(last=False)
        return result, list(issues)

    def _view(self, scope: Scope, types: TypeSystem) -> str:
        memo = self._views.get(id(scope))
        if memo is not None and memo[0] is scope and memo[1] is types:
            return memo[2]
        text = repr(tuple(scope.items())) + "\n" + repr(sorted(_reachable(scope, types).items()))
        text = self._texts.setdefault(text, text)
        self._views[id(scope)] = (scope, types, text)
        return text

    def __len__(self) -> int:
        return len(self._results)


def _reachable(scope: Scope, types: TypeSystem) -> dict[str, dict[str, TypeExpr] | None]:
    """Each declared-type name the scope's types reach (through fields, transitively): its fields' types, None if undeclared.

    That is all the expression checker reads of the type system: `declared`, `field_type`, `field_types`.
    """
    from contractstudio.documents.type_syntax import refs

    seen: dict[str, dict[str, TypeExpr] | None] = {}
    todo = [name for t in scope.values() for name in refs(t)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        fields = seen[name] = types.field_types(name)
        if fields:
            todo.extend(n for t in fields.values() for n in refs(t))
    return seen


class Analyzer:
    """Analyses of one file as it is edited; `check` returns exactly what `check_text` would, reusing the last ones' work."""

    def __init__(self, max_expressions: int = MAX_EXPRESSIONS) -> None:
        self.expressions = ExpressionCache(max_expressions)
        self.documents = DocumentsKept()  # a file of many `---` documents: each one's analysis (analysis/by_document.py)
        self.entries = EntriesKept()  # a file of one document: each pass's findings, per entry (analysis/by_entry.py)
        self._last: SourceFile | None = None  # the last text's reading, before dialect readers replaced any document
        # The last analysis that finished, with what it was asked: the same text asked again gets it back. The studio
        # stops an analysis a key made stale, so `x` then Backspace asks for the last text analyzed, which no edit
        # reads from: it was analyzed whole (2-3 s in a 5 MB file).
        self._done: tuple[str, str, Context | None, Path | None, FileReport] | None = None
        self._lock = threading.Lock()  # a stale worker may still be running when the next edit's starts
        self._closed = threading.Event()  # set from another thread: a running analysis stops at its next document

    def check(self, text: str, path: str = "<text>", ctx: Context | None = None, location: Path | None = None) -> FileReport:
        """Analyze a new version of the file's text (the same arguments as `check_text`)."""
        with self._lock, paused_gc():
            self.expressions.start()
            if self._closed.is_set():
                raise AnalysisStopped(path)
            done = self._done
            if done is not None and done[1:4] == (path, ctx, location) and done[0] == text:
                return done[4]
            report = self._check(text, path, ctx, location)
            self._done = (text, path, ctx, location, report)
            return report

    def _check(self, text: str, path: str, ctx: Context | None, location: Path | None) -> FileReport:
        """One analysis of a text not asked for just before (`check`, under its lock)."""
        # The reading of the last text analyzed per entry, when the analyses of the texts since were stopped (a key
        # stops the running analysis): the edits since are then one edit of it, and its analysis is kept.
        last = self.entries.reading() or self._last
        reading = reread(last, text) if last is not None and last.path == path and not is_python(path) else None
        if reading is not None:
            # One document read from the last one's reading: no `---` chunks to keep, and no search of the
            # whole text for them (16 ms a key in 5 MB, before the 19 ms the rest of such an edit costs).
            self.documents.forget()
        else:
            kept = self.documents.check(text, path, ctx, self.expressions, self._closed.is_set) if location is None else None
            if kept is not None:
                self._last = None
                return kept
            reading = read_any(text, path)
        edited = (last.text, reading.edited) if last is not None and reading.edited is not None else None
        self._last = SourceFile(reading.path, reading.text, list(reading.documents), list(reading.diagnostics),
                                line_starts=reading.line_starts)
        source = read_file_source(reading, path, ctx, location)
        return self.entries.analyze(source, ctx, self.expressions, edited, self._last)

    def close(self) -> None:
        """Nobody will ask for this file's analyses again: one running now stops at its next `---` document (raising
        AnalysisStopped) instead of holding up the studio's exit for seconds on a big file."""
        self._closed.set()

    def forget(self) -> None:
        """Drop what was kept (the file was closed, or replaced by another)."""
        with self._lock:
            self._last = self._done = None
            self.documents.forget()
            self.entries.forget()
            self.expressions = ExpressionCache(self.expressions.max_entries)
