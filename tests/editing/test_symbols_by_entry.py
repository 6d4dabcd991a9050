"""After an analysis per entry, the editing help's symbols are the last ones with the edited entries collected again
(editing/symbol_index.py, issue 35.1), and name exactly what a fresh collection names.

The generated pipeline and contract of tests/test_by_entry.py are edited at random, edit after edit, through one
`LiveDocument` (one Analyzer); after some edits the symbols are collected, after others not (the studio's worker
was stopped by the next key), so an index is carried over several analyses. Each time they are collected, every
occurrence, what each name's references and definition are, and what is under each occurrence's position must be
what a fresh analysis of the text gives.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_by_entry import EDITS, contract, edited, pipeline

from contractstudio.analysis.check import FileReport, check_text
from contractstudio.editing import definition, references
from contractstudio.editing import symbols as symbols_module
from contractstudio.editing.live import LiveDocument
from contractstudio.editing.symbol_index import carried
from contractstudio.editing.symbols import occurrence_at, occurrences, same_thing


def entries_collected(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The indexes of the list's entries whose symbols are collected from now on, in order."""
    collected: list[int] = []
    real = dict(symbols_module._ENTRIES)

    def counting(key: str) -> Any:
        def make_collector(c: Any) -> Any:
            entry = real[key](c)
            return None if entry is None else (lambda i, node: collected.append(i) or entry(i, node))
        return make_collector

    monkeypatch.setattr(symbols_module, "_ENTRIES", {key: counting(key) for key in real})
    return collected


def names(report: FileReport) -> Any:
    """Every occurrence; each thing's occurrences, definitions first; what is under each occurrence's first and
    last column; definition and references from each step or field reference."""
    (loaded,) = report.documents
    every = list(occurrences(loaded))
    firsts = {o.identity: o for o in every}
    things = {ident: same_thing(loaded, o) for ident, o in firsts.items()}
    under = [(occurrence_at(loaded, o.span.line, o.span.column), occurrence_at(loaded, o.span.line, o.span.end_column))
             for o in every]
    looked = [(definition(report, o.span.line, o.span.column), references(report, o.span.line, o.span.end_column))
              for o in every[::60]]
    return every, things, under, looked


def edit_and_compare(text: str, edits: list[Any], collect: list[bool], path: str) -> int:
    """Analyze the text and each edit of it as the studio does; after the edits `collect` says, collect the symbols
    and compare them with a fresh analysis's. How many collections were carried from an earlier one."""
    doc, derived = LiveDocument(path), 0
    for n, edit in enumerate([None, *edits]):
        if edit is not None:
            assert len(edit) != 2 or edit[0] in text
            text = text.replace(*edit, 1) if len(edit) == 2 else edited(text, edit)
        version = doc.edit(text)
        report = doc.analyze(text, None, path, symbols=False)
        assert doc.accept(version, report)
        if n and not collect[(n - 1) % len(collect)]:
            continue  # a key stopped the collection: the next analysis's symbols come from an older index
        if len(report.documents) == 1:
            loaded = report.documents[0]
            key = "steps" if loaded.kind == "pipeline" else "examples"
            seq = getattr(loaded.doc.root, "get", lambda _: None)(key)
            derived += carried(loaded.memo, key, len(getattr(seq, "items", []))) is not None
        doc.collect_symbols(report)
        assert doc.symbols_done(report)
        fresh = check_text(text, path)
        if len(report.documents) == 1 and len(fresh.documents) == 1:
            assert names(report) == names(fresh), edit
        else:
            assert [list(occurrences(d)) for d in report.documents] == [list(occurrences(d)) for d in fresh.documents]
    return derived


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS, collect=st.lists(st.booleans(), min_size=1, max_size=4))
def test_random_edits_of_a_long_pipeline_name_what_a_fresh_collection_names(edits: list[Any], collect: list[bool]) -> None:
    edit_and_compare(pipeline(), edits, collect, "p.pipeline.yaml")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS, collect=st.lists(st.booleans(), min_size=1, max_size=4))
def test_random_edits_of_a_contract_with_many_examples_name_what_a_fresh_collection_names(edits: list[Any], collect: list[bool]) -> None:
    edit_and_compare(contract(), edits, collect, "c.contract.yaml")


PIPELINE_EDITS = [("  - id: b9_answer\n", "  - id: b9_answerx\n"),  # a step renamed by hand
                  ("    next: b9_answer\n", "    next: b9_answerx\n"),  # a reference to it
                  ("    on_other: b12_answer\n", "    on_other: b9_answerx\n"),  # one more, in a later step
                  ("    description: routes the query\n    prompt: answer_v1\n    next: b15_route\n",
                   "    description: routes the query\n      and more\n    prompt: answer_v1\n    next: b15_route\n"),  # lines move
                  ("    prompt: router_v1\n    next: b18_dispatch\n", "    prompt: router_v2\n    next: b18_dispatch\n")]  # not a router
CONTRACT_EDITS = [("  - name: ex-7\n    input:\n      query: Why?\n", "  - name: ex-7\n    input:\n      queryx: Why?\n"),
                  ("  - name: ex-9\n    input:\n      query: Why?\n", "  - name: ex-9\n    input:\n      query: Why?\n      seed: 1\n"),
                  ("      queryx: Why?\n", "      query: Why?\n")]


@pytest.mark.parametrize(("make", "edits", "path"), [(pipeline, PIPELINE_EDITS, "p.pipeline.yaml"),
                                                      (contract, CONTRACT_EDITS, "c.contract.yaml")])
def test_edits_of_names_in_one_entry_collect_that_entry_only_and_rename_what_a_fresh_collection_renames(
        make: Any, edits: list[Any], path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step id renamed by hand and a target pointed at it, a key of an example's input changed: each edit's symbols
    are the last ones with the edited entry collected again (one entry, not all), and name what a fresh one names."""
    collected = entries_collected(monkeypatch)
    text = make()
    entries = len(check_text(text, path).documents[0].doc.root.get("steps" if "pipeline" in path else "examples").items)
    assert edit_and_compare(text, edits, [True], path) == len(edits)  # each carried from the last
    # the first collection and each fresh one collect every entry; each edit's, one entry
    assert len(collected) == 2 * entries + len(edits) * (1 + entries)


def test_symbols_after_many_analyses_in_a_row_without_them_collect_only_the_entries_edited(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each key's analysis per entry ends before the next key (10-20 ms in the 5 MB contract), and the next key stops
    # the symbols' collection that follows it: 40 keys in one example are 40 analyses without symbols. Past 16 of
    # them the chain of edits was cut and the whole document collected again (180-230 ms of the studio's worker
    # while keys came; bench_typing --trace).
    collected = entries_collected(monkeypatch)
    path, text = "c.contract.yaml", contract()
    doc = LiveDocument(path)
    report = doc.analyze(text, None, path, symbols=False)
    assert doc.accept(doc.edit(text), report)
    doc.collect_symbols(report)
    at = text.index("name: ex-3") + len("name: ex-3")
    for n in range(40):  # typed into example 3's name; nothing collects the symbols meanwhile
        text = text[:at] + "abcdefgh"[n % 8] + text[at:]
        version = doc.edit(text)
        report = doc.analyze(text, None, path, symbols=False)
        assert doc.accept(version, report)
    collected.clear()
    doc.collect_symbols(report)
    assert collected == [3]
    assert names(report) == names(check_text(text, path))
