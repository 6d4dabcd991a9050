"""One live document: the text an editor face is showing, its versions, and the analyses that may be stale.

The studio's edit screen and the language server both keep one of these per open file and drive it with their own
scheduler (a Textual worker, an asyncio task): every edit makes a new version; an analysis is of the version it was
started for and is kept only if no newer version arrived meanwhile (`accept`). Completion reads the facts of the
newest analysis in which each `---` document parsed (typing breaks the parse, not the facts); an action that needs
positions to match (a quick fix, rename, definition) waits for the current text's analysis (`wait`, `wake`).

The editing help's symbols (editing/symbols.py: every name and each place naming it, for hover, rename, definition
and references) cost a pass over the whole document the first time (a second for a 5 MB one-document file); after
an analysis per entry only the edited entry's are collected again (editing/symbol_index.py). Both faces collect
them after an analysis's findings are shown, in a worker (`collect_symbols`, then `symbols_done`); an action that
names things waits for them (`wait(..., symbols=True)`), so none is computed on the face's thread.

Pure: no thread, timer or event loop here, so staleness is tested once, here, without a face.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the analyzer loads with the first analysis (in a face's worker), never at start-up
    from contractstudio.analysis.check import Context, FileReport
    from contractstudio.analysis.incremental import Analyzer

DEBOUNCE_S = 0.15  # long enough to skip analysis between keystrokes, short enough to feel live


# An edit's analysis collects the symbols of the documents it analyzed again, when they are this few (a paste
# across many documents leaves them to the first hover).
_SYMBOLS_AHEAD = 3
LONG_SYMBOLS_TEXT = 1_000_000  # characters: a whole collection of the symbols of a text this long takes a while


class LiveDocument:
    """A text being edited: versions, the newest analysis of the current version, facts per `---` document, waiters."""

    def __init__(self, path: str = "", text: str = "", version: int = 0) -> None:
        self.path = path
        self.text = text  # the newest text a face told of (the studio reads its editor's text only when it analyzes)
        self.version = version
        self.report: FileReport | None = None  # the analysis of `analyzed_version`
        self.analyzed_version = -1
        # per `---` document: the newest analysis in which it had a model (completion's facts while the text does not parse)
        self.facts: dict[int, FileReport] = {}
        self._waiting: Callable[[FileReport], None] | None = None
        self._waiting_symbols = False  # the waiting action names things: it waits for the symbols too
        self.symbols: FileReport | None = None  # the newest analysis whose symbols are all collected
        self._analyzer: Analyzer | None = None
        self._analyzer_made = threading.Lock()

    def load(self, text: str, path: str | None = None) -> int:
        """A text from disk (another file, a reload): no analysis, fact or waiter of the previous text counts."""
        if path is not None and path != self.path:
            self.close()  # an analysis of the previous file still running is for nobody: it stops
            self.path, self._analyzer = path, None  # one analyzer per file
        self.text = text
        self.version += 1  # never reused: a late analysis of the previous file is stale too
        self.report, self.analyzed_version, self.facts, self._waiting, self.symbols = None, -1, {}, None, None
        return self.version

    def edit(self, text: str | None = None, version: int | None = None) -> int:
        """An edit: a new version (the client's number when it sends one); the previous versions' analyses are stale."""
        self.version = self.version + 1 if version is None else version
        if text is not None:
            self.text = text
        return self.version

    def accept(self, version: int, report: FileReport) -> bool:
        """Keep the analysis of `version` when it is still the current version; a stale one is dropped (False)."""
        if version != self.version:
            return False
        self.report, self.analyzed_version = report, version
        from bisect import bisect_right

        from contractstudio.editing.cursor import document_starts

        # worked out in `analyze`, and looked up once: a text equal to an earlier one (x, then Backspace) is
        # compared whole with it on each lookup
        starts = document_starts(report.text)
        for loaded in report.documents:
            if loaded.model is not None:
                self.facts[bisect_right(starts, loaded.doc.line - 1)] = report
        return True

    @property
    def current(self) -> FileReport | None:
        """The analysis of the current text, or None while it is still to come."""
        return self.report if self.report is not None and self.analyzed_version == self.version else None

    def facts_at(self, text: str | Sequence[str], row: int) -> FileReport | None:
        """Completion's facts for the `---` document holding 0-based `row` of `text` or its lines (else the newest analysis)."""
        from contractstudio.editing.cursor import document_index

        lines = text.split("\n") if isinstance(text, str) else text
        return self.facts.get(document_index(lines, row, self.report)) or self.report

    @property
    def named(self) -> FileReport | None:
        """The analysis of the current text once its symbols are collected too, else None."""
        report = self.current
        return report if report is not None and self.symbols is report else None

    def wait(self, then: Callable[[FileReport], None], symbols: bool = False) -> bool:
        """Run `then` with the current text's analysis (and its symbols, `symbols`): now (True) or at `wake` (False).

        One action waits at a time: the newest request wins (the author pressed another key meanwhile).
        """
        report = self.named if symbols else self.current
        if report is not None:
            then(report)
            return True
        self._waiting, self._waiting_symbols = then, symbols
        return False

    def wake(self) -> None:
        """After an accepted analysis or its symbols (`symbols_done`): run the action that waited for it."""
        report, waiting = (self.named if self._waiting_symbols else self.current), self._waiting
        if report is not None and waiting is not None:
            self._waiting = None
            waiting(report)

    def symbols_are_long(self, report: FileReport) -> bool:
        """Whether collecting `report`'s symbols is a pass over a big document (1-2 s of the interpreter in 5 MB) that no
        action waits for: a face starts it only once the keys have been quiet a while, as the next key would stop it
        anyway (while keys came, each attempt took 100-230 ms of the worker beside them, bench_typing --trace)."""
        from contractstudio.editing.symbol_index import collects_whole

        if self._waiting is not None and self._waiting_symbols:
            return False  # a rename or a definition waits for them
        return len(report.text) >= LONG_SYMBOLS_TEXT and any(collects_whole(d) for d in report.documents)

    @staticmethod
    def collect_symbols(report: FileReport) -> None:
        """Collect the symbols of every document of `report` (in a worker: a pass over each document not yet done)."""
        from contractstudio.editing.symbols import occurrences

        for loaded in report.documents:
            occurrences(loaded)

    def symbols_done(self, report: FileReport) -> bool:
        """`collect_symbols(report)` finished: kept (True) when it is still the current text's analysis."""
        if report is not self.current:
            return False
        self.symbols = report
        return True

    def close(self) -> None:
        """The face is done with this file: an analysis running now stops at its next `---` document."""
        with self._analyzer_made:
            if self._analyzer is not None:
                self._analyzer.close()

    def analyzer(self) -> Analyzer:
        """This file's Analyzer (made on first use, in a worker): each analysis reuses what an edit cannot have changed."""
        with self._analyzer_made:
            if self._analyzer is None:
                from contractstudio.analysis.incremental import Analyzer

                self._analyzer = Analyzer()
            return self._analyzer

    def analyze(self, text: str, context: Context | None, name: str | None = None, symbols: bool = True) -> FileReport:
        """The analysis of one version's text (call it in a worker, then `accept` it with that version).

        `symbols`: also collect those of the document(s) an edit analyzed again, when they are few (the language
        server's hover then finds them); the studio collects them after showing the findings (`collect_symbols`).
        """
        from contractstudio.editing.cursor import document_starts
        from contractstudio.editing.text import rows
        from contractstudio.reading.source import text_lines

        kept = {id(d) for d in self.report.documents} if self.report is not None else set()
        report = self.analyzer().check(text, name or self.path or "<text>", context)
        # Here, not on the face's thread when it accepts the analysis or hovers in it: each is a pass over the text.
        document_starts(report.text)
        rows(report.text)
        text_lines(report.text)  # YAML's lines, for a position's text (hover)
        again = [d for d in report.documents if id(d) not in kept]
        if symbols and kept and len(again) <= _SYMBOLS_AHEAD:  # the document(s) an edit analyzed again: the cursor is in one
            from contractstudio.editing.symbols import occurrences

            for loaded in again:
                occurrences(loaded)
        return report
