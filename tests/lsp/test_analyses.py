"""The server's per-document analyses: an analysis of a text that changed meanwhile is never published."""

from __future__ import annotations

import asyncio
import threading

import pytest

from contractstudio.lsp.analyses import Analyses, Entry

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
