"""Analysis per edit reuses what the edit cannot have changed, and finds exactly what a fresh analysis finds.

The studio's edit screen and the language server analyze every new version of a text with an
`Analyzer` (analysis/incremental.py): it reads only the entry an edit is in (reading/reread.py) and
keeps expression checks between analyses. Random edits of every sample and fixture, analyzed one
after another by one Analyzer, must give the diagnostics of `check_text` on the same text, and the
shortcut reading must be the reading `read_source` gives, node for node.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractstudio.analysis.check import check_text
from contractstudio.analysis.incremental import Analyzer
from contractstudio.reading.line_starts import LineStarts
from contractstudio.reading.reread import reread
from contractstudio.reading.source import MapNode, ScalarNode, SeqNode, SourceFile, read_source

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p for p in [*(ROOT / "samples").rglob("*.yaml"), *(ROOT / "tests" / "fixtures").rglob("*.yaml")]
               if not p.name.startswith("."))
sys.path.insert(0, str(ROOT / "bench"))
from bench_lsp import generate_contract  # noqa: E402
from bench_pipeline import generate_dense  # noqa: E402

# What an edit inserts: characters a user types, YAML structure, and things that make the shortcut step aside.
SNIPPETS = ["x", "ab", " ", "\n", "\n  ", "\n    - ", ":", ": ", "- ", "#", " # note", "'", '"', "[", "]", "{", "}", ",",
            "a: b", "\n  extra: 1", "\n- item", "yes", "&a ", "*a", "!custom ", "|", ">-\n  text", "\t", "---\n", "...",
            "{{ input.text }}", "input.text", " and output.score > 0.5", "\n  - id: new\n    assert: output.score > 0",
            "type: int", "ge: 5", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "%YAML 1.1\n---\n", " 012", " 1_000", " 0o17",
            " !!int 5x"]
EDITS = st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["insert", "insert at line end", "delete", "delete line",
                                                               "duplicate line", "indent", "join lines", "retype"]),
                           st.sampled_from(SNIPPETS), st.integers(1, 9)), min_size=1, max_size=8)


def edited(text: str, edit: tuple[float, str, str, int]) -> str:
    """The text after one edit, at a place chosen by a fraction of its length."""
    where, kind, snippet, n = edit
    at = min(int(where * len(text)), len(text))
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    if kind == "insert":
        return text[:at] + snippet + text[at:]
    if kind == "insert at line end":
        return text[:end] + snippet + text[end:]
    if kind == "delete":
        return text[:at] + text[at + n:]
    if kind == "delete line":
        return text[:start] + text[end + 1:]
    if kind == "duplicate line":
        return text[:start] + text[start:end + 1] + text[start:]
    if kind == "indent":
        return text[:start] + "  " + text[start:]
    if kind == "retype":  # the type of a declared field, a role or a parameter changes (what expressions see)
        found = list(re.finditer(r"type: ([\w\[\]\"|' ]+?)(?=[,}\n])|^(?:input|output): (\w+)", text, re.M))
        if found:
            m = found[min(int(where * len(found)), len(found) - 1)]
            group = 1 if m.group(1) is not None else 2
            new = ["str", "int", "float", "bool", "list[str]", "dict[str, int]", "Answer", "Snippet", "Question", "Nope"][n]
            return text[:m.start(group)] + new + text[m.end(group):]
        return text
    return text[:end] + text[end + 1:] if end < len(text) else text  # join lines


def same_reading(got: SourceFile, fresh: SourceFile) -> None:
    """Node for node (positions, tags, values, styles), data, the flat lists, and findings."""
    assert got.text == fresh.text and got.path == fresh.path
    assert [shape(d.root) for d in got.documents] == [shape(d.root) for d in fresh.documents]
    for doc, other in zip(got.documents, fresh.documents, strict=True):
        assert repr(doc.data) == repr(other.data) and (doc.line, doc.index) == (other.line, other.index)
        assert (doc.scalars is None) == (other.scalars is None)
        if doc.scalars is not None and doc.mappings is not None:
            scalars: list[Any] = []
            mappings: list[Any] = []
            flatten(doc.root, scalars, mappings)  # the lists hold the very nodes of the tree, in document order
            assert [id(n) for n in doc.scalars] == [id(n) for n in scalars]
            assert [id(n) for n in doc.mappings] == [id(n) for n in mappings]
    assert got.diagnostics == fresh.diagnostics
    if got.line_starts is not None:  # carried from the reading before (reading/line_starts.py): the text's own
        assert got.line_starts.to_list() == LineStarts.of(got.text.split("\n")).to_list()


def shape(node: Any) -> Any:
    if isinstance(node, ScalarNode):
        return tuple(node)
    if isinstance(node, MapNode):
        return ("map", node.span, node.tag, [(shape(k), shape(v)) for k, v in node.pairs])
    if isinstance(node, SeqNode):
        return ("seq", node.span, node.tag, [shape(n) for n in node.items])
    return node


def flatten(node: Any, scalars: list[Any], mappings: list[Any]) -> None:
    if isinstance(node, ScalarNode):
        scalars.append(node)
    elif isinstance(node, MapNode):
        mappings.append(node)
        for k, v in node.pairs:
            flatten(k, scalars, mappings)
            flatten(v, scalars, mappings)
    elif isinstance(node, SeqNode):
        for n in node.items:
            flatten(n, scalars, mappings)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(path=st.sampled_from(FILES), edits=EDITS)
def test_random_edits_analyzed_incrementally_give_a_fresh_analysis_s_diagnostics(path: Path, edits: list[Any]) -> None:
    text = path.read_text(encoding="utf-8")
    analyzer = Analyzer()
    analyzer.check(text, str(path))
    for edit in edits:
        text = edited(text, edit)
        assert analyzer.check(text, str(path)).diagnostics == check_text(text, str(path)).diagnostics


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(path=st.sampled_from(FILES), edits=EDITS, chained=st.booleans())
def test_reading_only_the_edited_entry_gives_the_whole_reading(path: Path, edits: list[Any], chained: bool) -> None:
    # `chained`: each edit is read from the reading the last one made, as the Analyzer does key after key, so what a
    # reading carries (its line starts, its flat lists in pieces, that its text has no tab or directive) must hold for
    # the next edit too; else from a fresh reading of the text before it.
    last = read_source(path.read_text(encoding="utf-8"), "f.yaml")
    for edit in edits:
        text = edited(last.text, edit)
        fresh = read_source(text, "f.yaml")
        got = reread(last, text)
        if got is not None:
            same_reading(got, fresh)
        last = (got or fresh) if chained else fresh


@pytest.mark.parametrize("text", [generate_contract(400), generate_dense(300)], ids=["contract", "pipeline"])
def test_typing_in_a_big_file_reads_one_entry_and_finds_what_a_fresh_analysis_finds(text: str) -> None:
    # A word typed and erased at the end of a value, then a line opened and closed: the shortcut reads them all.
    rng = random.Random(15)
    lines = text.split("\n")
    valued = [i for i, ln in enumerate(lines) if ": " in ln and not ln.rstrip().endswith((":", "}", '"'))]
    analyzer = Analyzer()
    analyzer.check(text, "big.yaml")
    last = read_source(text, "big.yaml")
    shortcuts = keystrokes = 0
    for _ in range(12):
        row = rng.choice(valued)
        at = sum(len(x) + 1 for x in lines[:row]) + len(lines[row])
        for version in [text[:at] + "abc"[:k] + text[at:] for k in (1, 2, 3, 2, 1, 0)] + [text[:at] + "\n" + text[at:], text]:
            got = reread(last, version)
            fresh = read_source(version, "big.yaml")
            if got is not None:
                shortcuts += 1
                same_reading(got, fresh)
            keystrokes += 1
            last = fresh
            assert analyzer.check(version, "big.yaml").diagnostics == check_text(version, "big.yaml").diagnostics
    assert shortcuts == keystrokes


def test_an_edit_in_a_description_checks_no_expression_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio import expressions

    text = generate_contract(300)
    analyzer = Analyzer()
    first = analyzer.check(text, "c.yaml")
    checked: list[str] = []
    original = expressions.check

    def counting(src: str, *args: Any) -> Any:
        checked.append(src)
        return original(src, *args)

    monkeypatch.setattr(expressions, "check", counting)
    edited_text = text.replace("description: Extra type 3.", "description: Extra type three.", 1)
    assert edited_text != text
    report = analyzer.check(edited_text, "c.yaml")
    assert checked == [] and report.diagnostics == first.diagnostics == check_text(edited_text, "c.yaml").diagnostics
    # a field an expression reads changes type: those expressions are checked again, and find it
    retyped = text.replace("score: {type: float,", "score: {type: str,", 1)
    report = analyzer.check(retyped, "c.yaml")
    assert checked and report.diagnostics == check_text(retyped, "c.yaml").diagnostics != []


def test_the_expression_cache_is_bounded() -> None:
    analyzer = Analyzer(max_expressions=50)
    text = generate_contract(300)
    for k in range(5):
        analyzer.check(text.replace("output.score >= 0.5", f"output.score >= 0.{k}"), "c.yaml")
    assert 0 < len(analyzer.expressions) <= 50


# A file of many `---` documents (the samples of every kind, each named anew): an edit in one of them.
KINDS = [ROOT / "samples" / n for n in ("multidoc_qa.contract.yaml", "rag_router.pipeline.yaml", "billing_support.agent.yaml",
                                         "notes.tools.yaml", "review_extraction.contract.yaml")]


def many_documents(copies: int) -> str:
    parts = [p.read_text(encoding="utf-8").removeprefix("---\n") for p in KINDS]
    return "---\n".join(re.sub(r"^name: (\S+)", rf"name: \g<1>_{n}", parts[n % len(parts)], count=1, flags=re.M)
                        for n in range(copies))


def test_typing_in_one_document_of_many_analyzes_that_document_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis import check

    text = many_documents(30)
    analyzer = Analyzer()
    analyzer.check(text, "many.yaml")
    analyzed: list[int] = []
    original = check.run_rules

    def counting(item: Any) -> Any:
        analyzed.append(item.doc.line)
        return original(item)

    monkeypatch.setattr(check, "run_rules", counting)
    at = text.index("name: multidoc_qa_10") + len("name: multidoc_qa_10")
    for typed in ("x", "xy", "x", ""):  # letters typed and erased at the end of the 11th document's name
        version = text[:at] + typed + text[at:]
        analyzed.clear()
        report = analyzer.check(version, "many.yaml")
        mine = list(analyzed)
        fresh = check_text(version, "many.yaml")
        row = version.count("\n", 0, at) + 1
        assert mine == [max(d.doc.line for d in fresh.documents if d.doc.line <= row)]  # the edited document's
        assert report.diagnostics == fresh.diagnostics
        assert [(d.doc.line, d.doc.index, d.kind) for d in report.documents] == [(d.doc.line, d.doc.index, d.kind) for d in fresh.documents]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edits=EDITS, copies=st.integers(2, 4))
def test_random_edits_of_a_many_document_file_analyzed_per_document_give_a_fresh_analysis(edits: list[Any], copies: int) -> None:
    text = many_documents(copies)
    analyzer = Analyzer()
    analyzer.check(text, "many.yaml")
    for edit in edits:
        text = edited(text, edit)
        report, fresh = analyzer.check(text, "many.yaml"), check_text(text, "many.yaml")
        assert report.diagnostics == fresh.diagnostics
        assert [(d.doc.line, d.doc.index, d.kind, d.text) for d in report.documents] == \
            [(d.doc.line, d.doc.index, d.kind, d.text) for d in fresh.documents]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- # c", "--- x", "---x", "----", " ---", "---\r", "---\t", "", "a: 1", "- b"]), max_size=12))
def test_the_document_markers_found_are_the_multi_line_regex_s(lines: list[str]) -> None:
    from contractstudio.reading.source import _DOC_START, document_markers

    text = "\n".join(lines)
    assert document_markers(text) == [m.start() for m in _DOC_START.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- # c", "---x", " ---", "", "a: 1"]), max_size=12), st.integers(1, 9))
def test_the_document_markers_searched_a_piece_at_a_time_are_the_same(lines: list[str], piece: int) -> None:
    from contractstudio.reading import source

    text, whole = "\n".join(lines), source._PIECE
    source._PIECE = piece  # a marker across two pieces, or at a piece's last character, is found once
    try:
        assert source.document_markers(text) == [m.start() for m in source._DOC_START.finditer(text)]
    finally:
        source._PIECE = whole


def test_closing_the_file_stops_its_running_analysis_at_the_next_document(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis import check
    from contractstudio.analysis.incremental import AnalysisStopped

    analyzer = Analyzer()
    analyzed: list[int] = []
    original = check.analyze_document

    def closing(source: Any, doc: Any, *args: Any) -> Any:
        analyzed.append(doc.line)
        analyzer.close()  # the studio quits while the first document is analyzed
        return original(source, doc, *args)

    monkeypatch.setattr(check, "analyze_document", closing)
    with pytest.raises(AnalysisStopped):
        analyzer.check(many_documents(20), "many.yaml")
    assert len(analyzed) == 1
    with pytest.raises(AnalysisStopped):  # and none starts after
        analyzer.check(many_documents(2), "many.yaml")

