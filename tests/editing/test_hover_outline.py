"""Hover (position -> markdown) and the outline / folding of a file."""

from __future__ import annotations

from contractstudio.analysis.check import check_text
from contractstudio.editing import document_symbols, folding_ranges, hover

from .conftest import position
from .test_completion import CONTRACT, PIPELINE


def test_hover_on_a_field_in_an_expression_shows_its_type_and_description() -> None:
    h = hover(check_text(CONTRACT), *position(CONTRACT, "output.evidence) > 0", 9))
    assert h is not None
    assert h.markdown == "**Answer.evidence**: `list[Snippet]` (required)\n\nCited passages."
    assert (h.span.column, h.span.end_column - h.span.column) == (position(CONTRACT, "evidence) > 0")[1], len("evidence"))


def test_hover_on_a_type_name_shows_its_schema() -> None:
    h = hover(check_text(CONTRACT), *position(CONTRACT, "input: Question", 9))
    assert h is not None and h.markdown.startswith("```text\nQuestion: a JSON object.\nFields:\n- text (str, required): The question.")


def test_hover_on_a_step_shows_its_action_contract_and_the_state_known_there() -> None:
    h = hover(check_text(PIPELINE), *position(PIPELINE, "next: dispatch", 7))
    assert h is not None
    assert "**step dispatch**: action `prefix_router`" in h.markdown
    assert "requires state: last_model_response" in h.markdown
    assert "state set on every path here: last_model_response" in h.markdown


def test_hover_on_a_key_shows_its_doc_and_on_a_finding_its_rule() -> None:
    h = hover(check_text(CONTRACT), *position(CONTRACT, "output: Answer", 2))
    assert h is not None and h.markdown == "**output**: `str`\n\nThe output type."
    text = CONTRACT.replace("output.evidence) > 0", "output.evidense) > 0")
    h = hover(check_text(text), *position(text, "evidense", 2))
    assert h is not None and "**EXP201** `unknown-field` (error)" in h.markdown and "did you mean 'evidence'?" in h.markdown


def test_outline_of_a_pipeline_lists_routers_and_steps_with_their_actions() -> None:
    [doc] = document_symbols(check_text(PIPELINE))
    assert doc.name == "pipeline rag"
    steps = next(s for s in doc.children if s.name == "steps")
    assert [(s.name, s.kind, s.detail) for s in steps.children] == [
        ("route", "step", "call_model"), ("dispatch", "step", "prefix_router"), ("answer", "step", "call_model")]
    assert (steps.children[1].span.line, steps.children[1].span.end_line) == (12, 16)


def test_outline_of_a_contract_lists_types_with_their_fields_and_two_documents_give_two_roots() -> None:
    [doc] = document_symbols(check_text(CONTRACT))
    types = next(s for s in doc.children if s.name == "types")
    assert [t.name for t in types.children] == ["Question", "Doc", "Answer", "Snippet"]
    assert [(f.name, f.detail) for f in types.children[0].children] == [("text", "str"), ("documents", "list[Doc]")]
    both = document_symbols(check_text(CONTRACT + "---\n" + PIPELINE))
    assert [d.name for d in both] == ["contract qa", "pipeline rag"]


def test_folding_ranges_follow_blocks() -> None:
    ranges = [(r.start_line, r.end_line) for r in folding_ranges(check_text(PIPELINE))]
    assert (4, 6) in ranges  # routers:
    assert (7, 20) in ranges  # steps:
    assert (8, 11) in ranges  # the first step


def test_hover_on_a_condition_s_remedy_key_says_it_ends_the_call() -> None:
    text = CONTRACT + "    remedy: false\n"
    h = hover(check_text(text), *position(text, "remedy: false", 2))
    assert h is not None and h.markdown.startswith("**remedy**: `bool`") and "ends at once" in h.markdown


class _CountedSplits(str):
    """A text that counts how often it is split into lines."""

    splits = 0

    def split(self, *args, **kwargs):  # type: ignore[override]
        type(self).splits += 1
        return super().split(*args, **kwargs)

    def splitlines(self, *args, **kwargs):  # type: ignore[override]
        type(self).splits += 1
        return super().splitlines(*args, **kwargs)


def test_hover_in_a_file_of_many_documents_splits_its_text_into_lines_at_most_once() -> None:
    # The studio hovers at the cursor after each move: splitting a 5 MB text per quoted name or key was seconds.
    from pathlib import Path

    sample = (Path(__file__).resolve().parents[2] / "samples" / "multidoc_qa.contract.yaml").read_text()
    text = _CountedSplits("---\n".join(sample.replace("name: multidoc_qa\n", f"name: qa_{n}\n") for n in range(6)))
    report = check_text(str(text), "many.contract.yaml")
    report.text = text  # the same text, counting (the YAML reader takes a plain str only)
    for loaded in report.documents:
        loaded.text = text
    rows = [n for n, line in enumerate(text.splitlines(), 1) if '"' in line or "answer" in line]
    _CountedSplits.splits = 0
    for row in rows:
        line = text.splitlines()[row - 1]
        for column in range(1, len(line) + 1, 3):
            hover(report, row, column)
    assert _CountedSplits.splits <= len(rows) + 2  # the test's own, and once for all hovers in each way of cutting lines
