"""Opening a big file (issue 35.1): the first screen waits only for what it draws, not for work that grows with the
file. No timing here (that is bench/bench_typing.py's): these hold the mechanisms."""

from __future__ import annotations

import asyncio
import random
import threading
import tracemalloc
from pathlib import Path

import pytest
from textual.document._document import Document
from textual.document._wrapped_document import WrappedDocument

from contractstudio.editing.live import LiveDocument
from contractstudio.studio.widgets.editor_documents import _PlainDocument, _RowCountCache

from .conftest import settle

CONTRACT = "multidoc_qa.contract.yaml"

LAYOUT = ("_wrap_offsets", "_offset_to_line_info", "_line_index_to_offsets", "_tab_width_cache")


def chain(steps: int) -> str:
    return "steps:\n" + "".join(f"  - id: s{n}\n    next: s{n + 1}\n\n" for n in range(steps))


def test_opening_a_big_unwrapped_text_stores_nothing_per_line() -> None:
    """The layout of a 5 MB file's 200,000 lines was four lists of an entry per line, built on the screen's thread
    before the first screen (0.6-1.2 s of it): a line's row is its index, made when a row is drawn."""
    document = Document(chain(25_000))  # 75,001 lines
    tracemalloc.start()
    try:
        _RowCountCache(document, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * document.line_count  # less than one pointer per line (the lists took about 200 bytes a line)


def layouts_agree(layout: WrappedDocument, text: str) -> None:
    """The editor's layout of `text` answers as Textual's own layout of it does, row by row."""
    plain = WrappedDocument(Document(text), 0, layout._tab_width)
    assert layout.height == plain.height
    for name in LAYOUT:
        assert list(getattr(layout, name)) == getattr(plain, name), name
    rows = plain.height
    for row in {0, 1, rows // 2, rows - 1, rows, rows + 5, -1}:
        assert layout.offset_to_location((3, row)) == plain.offset_to_location((3, row)), row
    for line in range(plain.document.line_count):
        column = len(plain.document[line]) // 2
        assert layout.location_to_offset((line, column)) == plain.location_to_offset((line, column)), line
        assert layout.get_sections(line) == plain.get_sections(line)
        assert layout.get_offsets(line) == plain.get_offsets(line)
    for index in (-1, -rows, 0, rows - 1):
        assert layout._offset_to_line_info[index] == plain._offset_to_line_info[index]
    for outside in (rows, -rows - 1):
        with pytest.raises(IndexError):
            layout._offset_to_line_info[outside]


@pytest.mark.parametrize("seed", range(6))
def test_after_any_edit_the_layout_of_a_row_per_line_is_textual_s_layout_of_the_text(seed: int) -> None:
    """Edits that add and remove lines, type on a line, empty one, and bring a tab (from which on Textual's own
    layout measures the tabs), each as TextArea makes it: the document's edit, then the layout's."""
    rng = random.Random(seed)
    document = _PlainDocument(chain(40))
    layout = _RowCountCache(document, 0)
    assert not isinstance(layout._offset_to_line_info, list)  # laid out one row per line
    layouts_agree(layout, document.text)
    pieces = ["x", "\n", "\n\n  - id: new\n", "", "key: value", "\t", "a\tb\n"]
    for _ in range(25):
        last = document.line_count - 1
        start_row = rng.randint(0, last)
        end_row = min(last, start_row + rng.choice([0, 0, 1, 3]))
        start = (start_row, rng.randint(0, len(document[start_row])))
        end = (end_row, rng.randint(0, len(document[end_row])) if end_row > start_row else max(start[1], len(document[end_row])))
        piece = rng.choice(pieces if rng.random() < 0.15 else pieces[:5])
        result = document.replace_range(start, end, piece)
        layout.wrap_range(start, end, result.end_location)
        layouts_agree(layout, document.text)


@pytest.mark.parametrize("documents", [1, 2])
async def test_keys_typed_into_a_file_s_first_analysis_do_not_stop_it(make_app, workspace: Path, monkeypatch,
                                                                      documents: int) -> None:
    """A file's first analysis, stopped, left nothing to build on: the keys after opening a 5 MB file stopped it again
    and again and the findings came 8-13 s after the last key (issue 35.1), each analysis as long as a first one. It
    runs to its end, and the edits are analyzed after it (test_big_files.py: later analyses are stopped)."""
    text = (workspace / CONTRACT).read_text()
    (workspace / "opened.contract.yaml").write_text("---\n".join([text] * documents))
    started, release = threading.Event(), threading.Event()
    seen: list[str] = []
    real = LiveDocument.analyze

    def first_is_long(self, text, context, name=None, **kwargs):
        if not started.is_set():  # the file's first analysis: seconds of pure Python in a 5 MB file
            started.set()
            try:
                while not release.wait(0.01):
                    pass
                seen.append("finished")
            except BaseException:
                seen.append("stopped")
                raise
        return real(self, text, context, name, **kwargs)

    monkeypatch.setattr(LiveDocument, "analyze", first_is_long)
    app = make_app("opened.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 30)
        screen = app.screen
        screen.editor.move_cursor((1, 0))
        await pilot.press("x", "y")
        await pilot.pause(0.3)
        release.set()
        await settle(pilot)
        assert seen == ["finished"]
        assert screen.live.current is not None and screen.live.current.text.split("\n")[1].startswith("xy")
        assert "checking" not in str(screen.query_one("#status").render())
