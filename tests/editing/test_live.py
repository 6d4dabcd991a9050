"""The live document both editor faces drive: an analysis of an older version is never kept, facts outlive a broken
parse per `---` document, an action waits for the current text's analysis (issue 19.7)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.analysis.check import FileReport
from contractstudio.editing.live import LiveDocument

OLD = "kind: tools\nname: old\ntools: []\n"
NEW = "kind: tools\nname: new\ntools: []\n"
TWO = "kind: tools\nname: a\ntools: []\n---\nkind: tools\nname: b\ntools: []\n"
SECOND_BROKEN = "kind: tools\nname: a\ntools: []\n---\nkind: tools\nname: [\n"


def analyzed(doc: LiveDocument, text: str) -> FileReport:
    return doc.analyze(text, None, "t.tools.yaml")


def test_an_analysis_of_an_older_version_is_dropped_and_the_current_ones_kept() -> None:
    doc = LiveDocument("t.tools.yaml", OLD)
    first = doc.edit(OLD)
    old_report = analyzed(doc, OLD)  # started for version 1 ...
    second = doc.edit(NEW)  # ... the author typed meanwhile
    assert not doc.accept(first, old_report)
    assert doc.report is None and doc.current is None  # nothing of the old text is shown
    assert doc.accept(second, analyzed(doc, NEW))
    assert doc.current is not None and doc.current.text == NEW and doc.analyzed_version == second


def test_a_late_analysis_of_the_previous_file_is_stale_after_loading_another() -> None:
    doc = LiveDocument()
    version = doc.load(OLD, "old.tools.yaml")
    report = analyzed(doc, OLD)
    doc.load(NEW, "new.tools.yaml")
    assert not doc.accept(version, report)
    assert doc.current is None and doc.facts == {}


def test_the_version_a_client_sends_is_the_version() -> None:
    doc = LiveDocument("t.tools.yaml", OLD, version=1)
    assert doc.edit(NEW, 7) == 7 and doc.text == NEW
    assert not doc.accept(1, analyzed(doc, OLD))
    assert doc.accept(7, analyzed(doc, NEW))


def test_completion_facts_outlive_a_broken_parse_per_document() -> None:
    doc = LiveDocument("t.tools.yaml")
    assert doc.accept(doc.edit(TWO), analyzed(doc, TWO))
    assert doc.accept(doc.edit(SECOND_BROKEN), analyzed(doc, SECOND_BROKEN))
    assert doc.facts_at(SECOND_BROKEN, 0) is not None and doc.facts_at(SECOND_BROKEN, 0).text == SECOND_BROKEN
    second = doc.facts_at(SECOND_BROKEN, 5)  # the second document does not parse now: the facts of when it did
    assert second is not None and second.text == TWO


def test_an_action_waits_for_the_current_texts_analysis_and_the_newest_request_wins() -> None:
    doc = LiveDocument("t.tools.yaml")
    ran: list[tuple[str, str]] = []
    old = doc.edit(OLD)
    old_report = analyzed(doc, OLD)
    new = doc.edit(NEW)
    assert not doc.wait(lambda r: ran.append(("first", r.text)))
    assert not doc.wait(lambda r: ran.append(("quick fix", r.text)))  # pressed again: the newest request wins
    doc.accept(old, old_report)
    doc.wake()
    assert ran == []  # the stale analysis answers nothing
    doc.accept(new, analyzed(doc, NEW))
    doc.wake()
    doc.wake()
    assert ran == [("quick fix", NEW)]  # once, with the analysis of the text as it is now
    assert doc.wait(lambda r: ran.append(("at once", r.text)))
    assert ran[-1] == ("at once", NEW)


def test_loading_another_text_forgets_the_waiting_action() -> None:
    doc = LiveDocument("a.tools.yaml")
    ran: list[str] = []
    doc.edit(OLD)
    doc.wait(lambda r: ran.append(r.text))
    version = doc.load(NEW, "b.tools.yaml")
    doc.accept(version, analyzed(doc, NEW))
    doc.wake()
    assert ran == []  # a quick fix asked of the previous file is never applied to this one


def test_one_analyzer_per_file() -> None:
    doc = LiveDocument("a.tools.yaml")
    first = doc.analyzer()
    doc.load(OLD)  # a reload of the same file keeps what the analyzer learnt
    assert doc.analyzer() is first
    doc.load(OLD, "b.tools.yaml")
    assert doc.analyzer() is not first


def forty_tool_documents() -> tuple[LiveDocument, int, FileReport, str]:
    """A live document of 40 `---` documents, edited once and analyzed (not yet accepted): (doc, version, report, text)."""
    text = "---\n".join(f"kind: tools\nname: t{n}\ntools: []\n" for n in range(40))
    doc = LiveDocument("t.tools.yaml")
    version = doc.edit(text)
    return doc, version, analyzed(doc, text), text


def test_accepting_an_analysis_of_many_documents_scans_no_line_on_the_face_s_thread(monkeypatch) -> None:
    # The studio accepts on its screen's thread: a 5 MB file of 655 documents took 22 s there, scanning the text
    # once per document. What each document's index is, is worked out with the analysis (in its worker).
    from contractstudio.editing import cursor

    doc, version, report, text = forty_tool_documents()
    scanned: list[str] = []
    monkeypatch.setattr(cursor, "_blank", lambda line: scanned.append(line) or not line.strip())
    assert doc.accept(version, report)
    assert scanned == []
    assert [doc.facts_at(text, 4 * n) is report for n in (0, 20, 39)] == [True, True, True]
    assert sorted(doc.facts) == list(range(40))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- # c", "--- x", "---x", "----", " ---", "---\r", "", " ", "\t", "# c", "  # c",
                                 "a: 1", "\x0c", "\x85", "#", "- b"]), max_size=14))
def test_the_document_starts_of_a_text_are_those_a_walk_over_its_lines_gives(lines: list[str]) -> None:
    from contractstudio.editing import cursor

    text = "\n".join(lines)
    rows = text.split("\n")
    assert [cursor.report_document_index(FileReport("t", text, None), r) for r in range(len(rows))] == \
        [cursor.document_index(rows, r) for r in range(len(rows))]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- # c", "---x", "", " ", "# c", "a: 1", "- b"]), min_size=1, max_size=14),
       st.lists(st.sampled_from(["---", "", "# c", "a: 2"]), max_size=4), st.floats(0, 1))
def test_a_line_s_document_counted_from_an_earlier_analysis_is_the_one_a_walk_gives(before: list[str], typed: list[str],
                                                                                      where: float) -> None:
    # Completion asks per key which `---` document the cursor is in; the lines above it are counted from the last
    # analysis where they are unchanged, and walked where they are not.
    from contractstudio.editing import cursor

    at = int(where * len(before))
    lines = before[:at] + typed + before[at:]
    known = FileReport("t", "\n".join(before), None)
    assert [cursor.document_index(lines, r, known) for r in range(len(lines))] == \
        [cursor.document_index(lines, r) for r in range(len(lines))]


def test_completion_in_a_big_file_counts_the_documents_above_from_the_last_analysis(monkeypatch) -> None:
    from contractstudio.editing import complete, cursor

    text = "---\n".join(f"kind: tools\nname: t{n}\ntools:\n  - name: x{n}\n    description: d\n" for n in range(300))
    doc = LiveDocument("t.tools.yaml")
    assert doc.accept(doc.edit(text), analyzed(doc, text))
    lines = text.split("\n")
    row = len(lines) - 4
    lines[row] = "  - name: x299y"  # typed since the analysis, in the last document
    walked: list[str] = []
    blank = cursor._blank
    monkeypatch.setattr(cursor, "_blank", lambda line: walked.append(line) or blank(line))
    facts = doc.facts_at(lines, row)
    complete(facts, row + 1, 16, lines)
    assert facts is doc.report and len(walked) < 50  # not the 1,500 lines above the cursor's document, twice


def test_a_hover_after_an_analysis_cuts_no_line_of_the_text_on_the_face_s_thread() -> None:
    # positions in the text (a quoted name's span) cut it into lines once per text: 16 ms for 5 MB, which the
    # studio's first hover after each analysis paid on its screen's thread (bench/bench_typing.py --profile)
    from pathlib import Path

    from contractstudio.editing.hovering import hover
    from contractstudio.reading.source import text_lines

    sample = (Path(__file__).resolve().parents[2] / "samples" / "multidoc_qa.contract.yaml").read_text()
    text = "---\n".join(sample.replace("name: multidoc_qa\n", f"name: qa_{n}\n") for n in range(3))
    doc = LiveDocument("many.contract.yaml")
    version = doc.edit(text)
    report = analyzed(doc, text)
    assert doc.accept(version, report)
    cut = text_lines.cache_info().misses
    row = next(n for n, line in enumerate(text.split("\n"), 1) if "coverage_score" in line and '"' in line)
    for column in range(1, 40, 3):
        hover(report, row, column)
    assert text_lines.cache_info().misses == cut


def test_accepting_an_analysis_looks_up_its_document_starts_once(monkeypatch) -> None:
    # looked up once per document: when the text equals an earlier one (x, then Backspace), each lookup compared
    # the whole text with the earlier one's; 655 documents of a 5 MB file made that 100-150 ms on the screen's thread
    from contractstudio.editing import cursor

    doc, version, report, _text = forty_tool_documents()
    looked: list[str] = []
    real = cursor.document_starts
    monkeypatch.setattr(cursor, "document_starts", lambda t: looked.append(t) or real(t))
    assert doc.accept(version, report)
    assert len(looked) <= 1
    assert sorted(doc.facts) == list(range(40))


def test_the_symbols_of_a_document_an_edit_analyzed_again_are_collected_with_its_analysis() -> None:
    # the studio hovers at the cursor after each analysis: collecting the edited document's symbols there was
    # 17-26 ms of its screen's thread per analysis on the 5 MB file
    from pathlib import Path

    sample = (Path(__file__).resolve().parents[2] / "samples" / "multidoc_qa.contract.yaml").read_text()
    text = "---\n".join(sample.replace("name: multidoc_qa\n", f"name: qa_{n}\n") for n in range(4))
    doc = LiveDocument("many.contract.yaml")
    assert doc.accept(doc.edit(text), doc.analyze(text, None, "many.contract.yaml"))
    edited = text.replace("name: qa_2\n", "name: qa_2x\n")
    report = doc.analyze(edited, None, "many.contract.yaml")
    def named(d) -> str:
        return getattr(d.model, "name", "")

    again = [d for d in report.documents if named(d) == "qa_2x"]
    assert again and "editing.occurrences" in again[0].memo
    assert not any("editing.occurrences" in d.memo for d in report.documents if named(d) != "qa_2x")  # kept, not hovered


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "\u2028", "x y", "\x85", "\n\n", "\x0c"]), max_size=25),
       st.sampled_from([1, 2, 3, 7, 1 << 18]))
def test_a_text_s_rows_and_lines_are_split_and_splitlines_whatever_the_piece_split_at_a_time(parts: list[str], piece: int) -> None:
    # A long text is split a piece at a time (a key never waits for one 5 MB split), and a text whose only breaks
    # are "\n" takes its lines from its rows: both must cut exactly where split("\n") and splitlines() do.
    from contractstudio.reading import source

    text, whole = "".join(parts), source._PIECE
    source.text_rows.cache_clear()
    source.text_lines.cache_clear()
    source._PIECE = piece
    try:
        assert source.text_rows(text) == tuple(text.split("\n"))
        assert source.text_lines(text) == tuple(text.splitlines())
    finally:
        source._PIECE = whole
        source.text_rows.cache_clear()
        source.text_lines.cache_clear()


def test_rename_and_references_after_edits_name_the_places_a_fresh_analysis_names() -> None:
    # The studio analyzes without the symbols and collects them after the findings are shown (issue 35, point 1):
    # an action that names things waits for them, and finds what an analysis of the text from scratch finds.
    import sys
    from pathlib import Path

    from contractstudio.analysis.check import check_text
    from contractstudio.editing import definition, references
    from contractstudio.editing.symbols import occurrences

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_pipeline import generate

    name = "chain.pipeline.yaml"
    text = generate(120)
    doc = LiveDocument(name)
    edits = [("  - id: b5_search\n", "  - id: b5_search\n    description: one more line\n"),  # lines below move
             ("    next: b3_dispatch\n", "    next: b3_dispatc\n"),  # a reference to nothing
             ("  - id: b7_answer\n", "  - id: b7_answerx\n"),  # a definition renamed by hand
             ("    next: b3_dispatc\n", "    next: b7_answerx\n")]  # a reference to it
    for old, new in [("", ""), *edits]:
        text = text.replace(old, new, 1) if old else text
        version = doc.edit(text)
        report = doc.analyze(text, None, name, symbols=False)
        assert doc.accept(version, report)
        assert not any("editing.occurrences" in d.memo for d in report.documents)  # not with the analysis
        found: list = []
        fresh = check_text(text, name)
        row = next(i for i, ln in enumerate(text.split("\n")) if ln.startswith("    next: b"))
        column = len(text.split("\n")[row])

        def look(r: FileReport, row: int = row, column: int = column, found: list = found) -> None:
            found.append((references(r, row + 1, column), definition(r, row + 1, column)))

        assert not doc.wait(look, symbols=True)  # analyzed, but its symbols are still to come
        doc.collect_symbols(report)
        assert doc.symbols_done(report)
        doc.wake()
        assert found == [(references(fresh, row + 1, column), definition(fresh, row + 1, column))]
        assert found[0][0]
        assert [occurrences(d) for d in report.documents] == [occurrences(d) for d in fresh.documents]
    assert doc.analyzer().entries.again == len(edits)  # each edit's analysis was of its entry (analysis/by_entry.py)


def test_the_rows_of_a_text_no_longer_kept_are_let_go_a_piece_at_a_time(monkeypatch) -> None:
    # Issue 35.1: each edit's analysis splits its text into rows, kept for the last two texts; the oldest rows were
    # then freed at once when a third came (200,000 strings of a 5 MB file: 10-15 ms with the interpreter held, and
    # a key typed meanwhile waited; bench/bench_analysis_holds.py). They go a piece at a time instead.
    from contractstudio import collector
    from contractstudio.reading import source

    let_go: list[int] = []
    real = collector.let_go
    monkeypatch.setattr(collector, "let_go", lambda items: (let_go.append(len(items)), real(items)))
    source.text_rows.cache_clear()
    source.text_lines.cache_clear()
    texts = [f"a: {n}\n" * 1000 for n in range(6)]
    for text in texts:
        assert source.text_lines(text) == tuple(text.splitlines())
    assert 1001 in let_go  # the rows of the texts no longer kept (1,000 lines and the empty row after the last)
    assert source.text_rows(texts[-1]) == tuple(texts[-1].split("\n"))  # the newest kept


def test_let_go_frees_every_item_before_it_returns() -> None:
    # That it frees them a piece at a time (the interpreter free for another thread between pieces) is what
    # bench/bench_analysis_holds.py measures; here, that nothing given to it outlives it.
    from contractstudio import collector

    freed: list[int] = []

    class Item:
        def __init__(self, n: int) -> None:
            self.n = n

        def __del__(self) -> None:
            freed.append(self.n)

    collector.let_go(tuple(Item(n) for n in range(20_000)))  # its only reference, as a cache's evicted entry
    assert sorted(freed) == list(range(20_000))
