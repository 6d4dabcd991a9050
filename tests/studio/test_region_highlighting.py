"""The editor highlights a big YAML text by parsing the rows around the view (issue 35.1), and what it shows is what
Textual's whole-text highlighting shows for those rows.

Textual's TextArea parsed the whole text with tree-sitter when a file was opened (twice: its language watcher set
the text again) and after every key: 1.3 s a key in a 5 MB one-document contract, where tree-sitter-yaml's
incremental parse reuses little. No timing here (bench/bench_typing.py measures the keys): these hold what is parsed
and what is drawn.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.document._document import Document
from textual.widgets import TextArea
from textual.widgets.text_area import SyntaxAwareDocument

from contractstudio.studio.widgets.editor import ContractEditor, _outer_first
from contractstudio.studio.widgets.editor_highlight import enclosing_rows

from .conftest import settle
from .test_drawn_rows import Host


def _shapes(n: int) -> str:
    """A piece of YAML with what a row's highlighting depends on above it: a block scalar with deeper lines, a
    multi-line flow collection and quoted scalar, comments, anchors, aliases, tags, an indentless sequence."""
    return (f"  - name: ex-{n}  # an example\n"
            "    input:\n"
            f"      query: &q{n} \"Why are\n"
            "        vector databases useful?\"\n"
            "      documents:\n"
            "        - {id: B2, content: 'Vector databases\n"
            "            store embeddings.'}\n"
            "        - [one, two,\n"
            "           three]\n"
            "    prompt: |\n"
            "      Answer from the text.\n"
            "        - not: a list, still the block scalar\n"
            "      # not a comment either\n"
            f"    again: *q{n}\n"
            "    kind: !!str 12\n"
            "    steps:\n"
            "    - id: a\n"
            "      score: 0.5\n"
            "    - id: b\n"
            "      enabled: true\n")


def one_document(items: int = 300) -> str:
    """One YAML document of `items` entries of one list (about 20 lines each), a second document after it."""
    return ("kind: contract\nname: big\nexamples:\n" + "".join(_shapes(n) for n in range(items))
            + "scenarios: []\n---\nkind: contract\nname: after\n")


def whole_text_highlights(text: str) -> dict[int, list[tuple[int, int | None, str]]]:
    """Textual's own highlighting of the whole text (each row's spans in the editor's drawing order)."""
    reference = TextArea(text, language="yaml")
    return {row: sorted(spans, key=_outer_first) for row, spans in reference._highlights.items() if spans}


def valid(text: str) -> bool:
    try:
        for _ in yaml.compose_all(text, Loader=yaml.CSafeLoader):
            pass
    except yaml.YAMLError:
        return False
    return True


def shown_rows(editor: ContractEditor) -> range:
    top = int(editor.scroll_offset.y)
    return range(top, min(top + editor.size.height, editor.document.line_count))


def assert_shown_as_whole_text(editor: ContractEditor) -> None:
    whole = whole_text_highlights(editor.text)
    for row in shown_rows(editor):
        assert editor.highlights.get(row, []) == whole.get(row, []), (row, editor.document[row])


def parsed_texts(monkeypatch) -> list[int]:
    """The line count of every text tree-sitter parses: a tree-sitter document made, or edited (parsed again)."""
    sizes: list[int] = []
    init, replace = SyntaxAwareDocument.__init__, SyntaxAwareDocument.replace_range

    def made(self, text, language):
        init(self, text, language)
        sizes.append(self.line_count)

    def edited(self, start, end, text):
        result = replace(self, start, end, text)
        sizes.append(self.line_count)
        return result

    monkeypatch.setattr(SyntaxAwareDocument, "__init__", made)
    monkeypatch.setattr(SyntaxAwareDocument, "replace_range", edited)
    return sizes


async def test_a_key_in_a_big_one_document_file_parses_the_rows_around_the_view_not_the_whole_text(monkeypatch) -> None:
    text = one_document()
    async with Host(text).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        assert editor.document.line_count > 6000
        editor.scroll_to(y=3000, animate=False, immediate=True)
        await pilot.pause()
        parsed = parsed_texts(monkeypatch)
        editor.replace("x", (3010, 13), (3010, 13))
        await pilot.pause()
        # TextArea parsed its whole text again (tree-sitter-yaml reuses little of a long list's old tree)
        assert parsed and max(parsed) < 1000
        assert_shown_as_whole_text(editor)


async def test_a_big_file_is_opened_with_one_document_and_no_parse_of_its_whole_text(monkeypatch) -> None:
    # TextArea built a document of the text, then a tree-sitter document, then another when its language was set.
    made: list[int] = []
    init = Document.__init__

    def counted(self, text: str) -> None:
        if text:
            made.append(len(text))
        init(self, text)

    monkeypatch.setattr(Document, "__init__", counted)
    text = one_document()
    parsed = parsed_texts(monkeypatch)
    async with Host(text).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        await pilot.pause()
        assert made.count(len(text)) == 1
        assert parsed and max(parsed) < 1000
        assert_shown_as_whole_text(editor)


@pytest.mark.parametrize("top", [0, 117, 131, 2005, 2011, 5990])
async def test_the_rows_shown_after_scrolls_and_edits_are_highlighted_as_the_whole_text_highlights_them(top: int) -> None:
    # Scrolled so that the view starts at each kind of row: an item, inside a block scalar, inside a multi-line
    # flow collection and quoted scalar, an indentless sequence, the end of the list and the next document.
    async with Host(one_document()).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        for y in range(top, top + 60, 7):
            editor.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert_shown_as_whole_text(editor)
        row = int(editor.scroll_offset.y) + 3
        edits = [((row, 0), (row, 0), '"'),  # a quote: the rows after it change
                 ((row, 0), (row, 1), ""),
                 ((row, 0), (row, 0), "]"),  # a stray bracket
                 ((row, 0), (row, 1), ""),
                 ((row, 0), (row, 0), "# a\n#  b\n"),  # rows added: every row below moves
                 ((row, 0), (row + 2, 0), ""),  # and removed
                 ((0, 0), (0, 0), "# a comment above everything\n")]  # an edit above the view: what holds it moved
        compared = 0
        for start, end, new in edits:
            editor.replace(new, start, end)
            await pilot.pause()
            if valid(editor.text):  # an error's recovery is not local: TextArea's can span the whole text
                assert_shown_as_whole_text(editor)
                compared += 1
        assert compared >= 4


def test_the_entries_that_hold_a_row_are_found_by_indentation() -> None:
    lines = ["kind: x", "steps:", "- id: a", "  prompt: |", "    text", "      deeper", "  # a comment", "",
             "- id: b", "  x: [1,", "     2]"]
    assert enclosing_rows(lines, 5) == [4, 3, 2, 1]  # the block scalar's first line, its key, the item, `steps:`
    assert enclosing_rows(lines, 8) == [1]  # a sibling item: only the key over the indentless sequence
    assert enclosing_rows(lines, 10) == [9, 8, 1]
    assert enclosing_rows(lines, 7) == [5, 4, 3, 2, 1]  # a blank row: held by whatever is above it
    assert enclosing_rows(lines, 1) == []
    for row in range(len(lines)):  # from what was found for a row above: the same (a view scrolled down)
        for known in range(row):
            assert enclosing_rows(lines, row, (known, enclosing_rows(lines, known))) == enclosing_rows(lines, row)


async def test_typing_and_undo_in_a_big_one_document_file_show_the_text_and_its_highlighting(make_app,
                                                                                           workspace: Path) -> None:
    path = workspace / "big.contract.yaml"
    path.write_text(one_document(120))
    app = make_app(path.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        row = 3  # the first example's name
        editor.move_cursor((row, len("  - name: ex-0")))
        await pilot.press(*"xy", "space", "quotation_mark")
        assert editor.document[row] == '  - name: ex-0xy "  # an example'
        assert_shown_as_whole_text(editor)
        editor.move_cursor((2000, 0))  # far down: the view follows the cursor
        await pilot.press("number_sign", "z")
        await pilot.pause()
        assert 2000 in shown_rows(editor) and editor.document[2000].startswith("#z")
        assert_shown_as_whole_text(editor)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not editor.document[2000].startswith("#")
        assert_shown_as_whole_text(editor)


async def test_a_big_file_nested_too_deep_where_it_is_shown_is_shown_plain_there_and_never_parsed() -> None:
    # tree-sitter's YAML scanner crashes the process at about 255 levels: the region is checked before it is parsed.
    deep = "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300))
    text = one_document(40) + deep
    async with Host(text).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        assert editor.is_large and editor.highlighting and editor.highlights.get(3)  # the top is highlighted
        editor.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert not editor.highlighting and not any(editor.highlights.get(row) for row in shown_rows(editor))
        editor.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert editor.highlighting and editor.highlights.get(3)
