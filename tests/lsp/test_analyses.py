"""The server's per-document analyses: an analysis of a text that changed meanwhile is never published."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from contractstudio.lsp.analyses import Analyses, Entry

ROOT = Path(__file__).resolve().parents[2]
OLD = "kind: tools\nname: old\ntools: []\n"
NEW = "kind: tools\nname: new\ntools: []\n"


class SlowOldText:
    """Analyses whose analysis of OLD is still running (in the worker) until `release` is set; what is published."""

    def __init__(self) -> None:
        self.published: list[tuple[int, str]] = []
        self.started, self.release = threading.Event(), threading.Event()
        self.analyses = Analyses(lambda e: self.published.append((e.analyzed_version, e.report.text if e.report else "")),
                                 debounce_s=0.0)
        real = self.analyses.analyze

        def slow_for_the_old_text(path: str, text: str):
            if text == OLD:
                self.started.set()
                self.release.wait(10)  # the old text's analysis is still running when the new text arrives
            return real(path, text)

        self.analyses.analyze = slow_for_the_old_text  # type: ignore[method-assign]


async def everything_done(analyses: Analyses) -> None:
    """Wait until nothing is left that could publish: every analysis task has ended and the worker has run all it
    was given (one thread: what is submitted after runs after), so whatever was published is all there will be."""
    loop = asyncio.get_running_loop()
    while True:
        tasks = [e.pending for e in analyses.entries.values() if e.pending is not None and not e.pending.done()]
        await asyncio.gather(*tasks, return_exceptions=True)
        await loop.run_in_executor(analyses.pool, lambda: None)
        if all(e.pending is None or e.pending.done() for e in analyses.entries.values()):
            return


@pytest.mark.asyncio
async def test_a_result_for_an_older_text_is_dropped_and_the_newest_is_published() -> None:
    slow = SlowOldText()
    analyses, published, started, release = slow.analyses, slow.published, slow.started, slow.release
    entry: Entry = analyses.open("file:///t.tools.yaml", "/tmp/t.tools.yaml", 1, OLD)
    first = entry.pending
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
    analyses.change("file:///t.tools.yaml", 2, NEW)  # cancels the waiting task; the worker keeps computing v1
    second = entry.pending
    release.set()
    assert second is not None
    await asyncio.wait_for(second, 30)  # version 2's analysis, after version 1's in the one worker
    await everything_done(analyses)
    assert first is not None and first.cancelled()
    assert published == [(2, NEW)]  # version 1's result was computed but never published
    assert entry.report is not None and entry.report.text == NEW and entry.analyzed_version == 2
    analyses.shutdown()


@pytest.mark.asyncio
async def test_an_analysis_a_request_waited_for_is_not_published_when_the_text_changed_meanwhile() -> None:
    slow = SlowOldText()
    analyses, published, started, release = slow.analyses, slow.published, slow.started, slow.release
    analyses.open("file:///t.tools.yaml", "/tmp/t.tools.yaml", 1, OLD)
    request = asyncio.ensure_future(analyses.current("file:///t.tools.yaml"))  # hover: waits for the analysis of v1
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
    analyses.change("file:///t.tools.yaml", 2, NEW)
    release.set()
    answered = await asyncio.wait_for(request, 30)
    await everything_done(analyses)
    assert answered is not None and answered[1].text == OLD  # the request got what it waited for
    assert published == [(2, NEW)]  # but only the newest text's findings reached the editor
    analyses.shutdown()


@pytest.mark.asyncio
async def test_findings_are_published_before_the_symbols_and_no_name_is_collected_on_the_event_loop(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Issue 35.1: the symbols of a 5 MB document take a second to collect (the first time, or after an edit analyzed
    # whole); hover, definition and rename run on the event loop, so they wait for the worker to collect them.
    from contractstudio.editing import hover, symbols

    collect = symbols.occurrences
    running, release, on_the_loop = threading.Event(), threading.Event(), []
    loop_thread = threading.current_thread()

    def slow(loaded):
        if "editing.occurrences" not in loaded.memo:
            if threading.current_thread() is loop_thread:
                on_the_loop.append(loaded.kind)
            else:
                running.set()
                release.wait(10)
        return collect(loaded)

    monkeypatch.setattr(symbols, "occurrences", slow)
    text = (ROOT / "samples" / "rag_router.pipeline.yaml").read_text()
    path = tmp_path / "rag_router.pipeline.yaml"
    path.write_text(text)
    published: list[int] = []
    analyses = Analyses(lambda e: published.append(e.analyzed_version), debounce_s=0.0)
    uri = path.as_uri()
    analyses.open(uri, str(path), 1, text)
    assert await asyncio.get_running_loop().run_in_executor(None, running.wait, 10)
    assert published == [1]  # the findings are out while the symbols are collected
    request = asyncio.ensure_future(analyses.current(uri, names=True))  # hover: waits for the symbols
    await asyncio.sleep(0.05)
    assert not request.done()
    release.set()
    got = await asyncio.wait_for(request, 30)
    assert got is not None
    entry, report = got
    assert entry.named is report
    row = next(i for i, ln in enumerate(text.split("\n")) if ln.strip().startswith("next: "))
    column = len(text.split("\n")[row])
    assert hover(report, row + 1, column) is not None
    edited = text.replace("\n", "\n# a comment\n", 1)
    analyses.change(uri, 2, edited)
    got = await asyncio.wait_for(analyses.current(uri, names=True), 30)
    assert got is not None and got[1].text == edited and got[0].named is got[1]
    assert hover(got[1], row + 2, column) is not None
    await everything_done(analyses)
    assert on_the_loop == []  # every collection was in the worker
    analyses.shutdown()
