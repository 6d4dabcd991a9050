"""An analysis stopped anywhere (studio/stoppable.py: the studio stops a stale one when a key comes) keeps what it
finished, and the next analysis of the file finds exactly what a fresh one does (issue 35.1)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractstudio.analysis import check
from contractstudio.analysis.check import check_text
from contractstudio.analysis.incremental import Analyzer
from contractstudio.studio.stoppable import Stoppable
from tests.test_incremental import EDITS, edited, many_documents


def stopped_at(monkeypatch: pytest.MonkeyPatch, analyzer: Analyzer, text: str, path: str, calls: int) -> Any:
    """Analyze `text` in a thread, stopped (as the studio stops it) as the `calls`-th document's analysis starts."""
    stoppable = Stoppable()
    seen = [0]
    original = check.analyze_document

    def stopping(*args: Any) -> Any:
        seen[0] += 1
        if seen[0] == calls:
            stopper = threading.Thread(target=stoppable.stop)  # another thread: what the studio's screen does
            stopper.start()
            stopper.join()
        return original(*args)

    monkeypatch.setattr(check, "analyze_document", stopping)
    got: list[Any] = []
    worker = threading.Thread(target=lambda: got.append(stoppable.run(lambda: analyzer.check(text, path))))
    worker.start()
    worker.join(120)
    monkeypatch.setattr(check, "analyze_document", original)
    assert got and not worker.is_alive()
    return got[0], stoppable.stops


def test_a_stopped_analysis_keeps_the_documents_it_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    text = many_documents(12)
    analyzer = Analyzer()
    report, stops = stopped_at(monkeypatch, analyzer, text, "many.yaml", 8)
    assert report is None and stops == 1
    analyzed: list[int] = []
    original = check.run_rules

    def counting(item: Any) -> Any:
        analyzed.append(item.doc.line)
        return original(item)

    monkeypatch.setattr(check, "run_rules", counting)
    again = analyzer.check(text, "many.yaml")
    assert 4 <= len(analyzed) <= 5  # the documents from the one it was stopped in (or the one after): not all 12
    assert again.diagnostics == check_text(text, "many.yaml").diagnostics


def test_a_stopped_analysis_of_one_document_keeps_its_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.analysis.incremental as incremental

    text = many_documents(1)
    analyzer = Analyzer()
    report, stops = stopped_at(monkeypatch, analyzer, text, "one.yaml", 1)
    assert report is None and stops == 1
    whole: list[str] = []
    read_any = incremental.read_any
    monkeypatch.setattr(incremental, "read_any", lambda t, p: whole.append(p) or read_any(t, p))
    at = text.index("\n", text.index("name:"))
    edit = text[:at] + "x" + text[at:]
    assert analyzer.check(edit, "one.yaml").diagnostics == check_text(edit, "one.yaml").diagnostics
    assert whole == []  # the edited entry was read again, not the whole text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                HealthCheck.function_scoped_fixture])
@given(edits=EDITS, copies=st.integers(1, 4), stop=st.lists(st.integers(0, 4), min_size=8, max_size=8))
def test_analyses_stopped_anywhere_then_finished_find_what_a_fresh_analysis_finds(
        monkeypatch: pytest.MonkeyPatch, edits: list[Any], copies: int, stop: list[int]) -> None:
    text = many_documents(copies)
    analyzer = Analyzer()
    for n, edit in enumerate([None, *edits]):
        if edit is not None:
            text = edited(text, edit)
        if stop[n % len(stop)]:  # this version's analysis is stopped at some document (if it gets that far)
            stopped_at(monkeypatch, analyzer, text, "many.yaml", stop[n % len(stop)])
        report, fresh = analyzer.check(text, "many.yaml"), check_text(text, "many.yaml")
        assert report.diagnostics == fresh.diagnostics
        assert [(d.doc.line, d.kind, d.text) for d in report.documents] == [(d.doc.line, d.kind, d.text) for d in fresh.documents]
