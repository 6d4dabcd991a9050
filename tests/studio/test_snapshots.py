"""Snapshot tests (SVG) of each mode at 80x24 and 120x40, one class per feature, built from the app factory.

Update with `pytest tests/studio --snapshot-update` and look at the SVGs in __snapshots__/ before committing.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest

from contractstudio.runtime.call_state import CallOptions

from .conftest import settle as settle_analysis

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
WIDE = [*SIZES, pytest.param((200, 60), id="200x60")]  # the debugger's timeline takes the width it needs (issue 19.8)


async def settle(pilot) -> None:
    """The analysis settled, and the workspace's marks drawn: the studio counts the workspace's files 0.5 s after it
    starts (app.py), and a settle that ended sooner drew the file list without its marks (seen in a CI run)."""
    await settle_analysis(pilot)
    app = pilot.app
    for _ in range(500):  # at most ~10 s; the open file's own count comes from its analysis, not from that count
        if any(app.buffer is None or path != app.buffer.path for path in app.counts):
            break
        await pilot.pause(0.02)
    await settle_analysis(pilot)


@pytest.fixture
def steady_calls() -> Callable[[], CallOptions]:
    """The debugger's calls on a clock that ticks 1 ms per reading, with seeded jitter: timings are the same on every run."""
    ticks = itertools.count()
    return lambda: CallOptions(wait=False, clock=lambda: next(ticks) / 1000, rng=random.Random(7))


class TestEditMode:
    @pytest.mark.parametrize("size", SIZES)
    def test_clean_contract(self, snap_compare, make_app, size) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)

        assert snap_compare(make_app("multidoc_qa.contract.yaml"), terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_pipeline_with_a_finding(self, snap_compare, make_app, size) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press("f8")  # cursor on the finding
            await settle(pilot)

        assert snap_compare(make_app("maybe_unset.pipeline.yaml"), terminal_size=size, run_before=run_before)

    def test_unsaved_changes_dialog(self, snap_compare, make_app) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press(*"# draft")
            await settle(pilot)
            await pilot.press("ctrl+q")
            await pilot.pause()

        assert snap_compare(make_app("multidoc_qa.contract.yaml"), terminal_size=(80, 24), run_before=run_before)

    def test_help(self, snap_compare, make_app) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press("f1")
            await pilot.pause()

        assert snap_compare(make_app("multidoc_qa.contract.yaml"), terminal_size=(80, 24), run_before=run_before)


class TestGraphMode:
    @pytest.mark.parametrize("size", SIZES)
    def test_simulated_path(self, snap_compare, make_app, size) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press("f3")
            await pilot.pause()
            await pilot.press("slash", *"[BM25:] reset password", "enter")
            await pilot.pause()

        assert snap_compare(make_app("rag_router.pipeline.yaml"), terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_pip201_path(self, snap_compare, make_app, size) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press("f3")
            await pilot.pause()
            panel = pilot.app.screen.query_one("#graph-findings")
            panel.focus()
            panel.highlighted = 0
            await pilot.pause()

        assert snap_compare(make_app("maybe_unset.pipeline.yaml"), terminal_size=size, run_before=run_before)


class TestDebugMode:
    @pytest.mark.parametrize("size", WIDE)
    def test_remedy_request(self, snap_compare, make_app, steady_calls, size) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            await pilot.press("f4")
            await settle(pilot)  # the workspace's contracts are analyzed in a worker
            screen = pilot.app.screen
            screen.query_one("#timeline").focus()
            for _ in range(2):
                await pilot.press("c")
                await pilot.app.workers.wait_for_complete()
                await pilot.pause()
            remedy = next(i for i, e in enumerate(screen.events) if e.type == "llm_request" and e["purpose"] == "remedy_post")
            screen.query_one("#timeline").highlighted = remedy
            await pilot.pause()

        assert snap_compare(make_app("multidoc_qa.contract.yaml", call_options=steady_calls), terminal_size=size,
                            run_before=run_before)


class TestEditingHelp:
    """The completion popup and the quick-fix list (contractstudio.editing in the studio)."""

    def test_completion_popup(self, snap_compare, make_app) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            editor = pilot.app.screen.editor
            row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: dispatch")
            editor.move_cursor((row, len(editor.document[row])))
            await pilot.press("enter", "e")  # a new key of the step: `end` is offered
            await pilot.pause()

        assert snap_compare(make_app("rag_router.pipeline.yaml"), terminal_size=(80, 24), run_before=run_before)

    def test_quick_fix_list(self, snap_compare, make_app) -> None:
        async def run_before(pilot) -> None:
            await settle(pilot)
            editor = pilot.app.screen.editor
            editor.text = editor.text.replace("next: dispatch", "next: dispach")
            await settle(pilot)
            await pilot.press("f8", "f9")
            await pilot.pause()

        assert snap_compare(make_app("rag_router.pipeline.yaml"), terminal_size=(80, 24), run_before=run_before)
