"""Background work finishes when it finishes: a workspace count or a folder scan may land before the edit screen's
widgets are composed, or after quitting removed them. Such a result is kept or dropped, never a crash (issue 35.12:
`NoMatches: No nodes match 'FileList' on EditScreen` from `refresh_files`, seen under load)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.studio.app import StudioApp, WorkspaceCounted
from contractstudio.studio.config import load_config
from contractstudio.studio.widgets.files import FileList

from .conftest import settle


def labels(app: StudioApp) -> list[str]:
    files = app.edit_screen.query_one(FileList)
    return [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


async def test_a_count_that_lands_before_the_file_list_is_composed_is_shown_once_it_is(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    router = workspace / "rag_router.pipeline.yaml"
    monkeypatch.setattr(StudioApp, "count_workspace", lambda self: None)  # only the early count below, no real one
    seen: list[bool] = []
    mounted = StudioApp.on_mount

    def on_mount(self: StudioApp) -> None:
        mounted(self)  # switch_mode("edit") starts the edit screen: its widgets are composed after this
        seen.append(self.edit_screen.query_one_optional(FileList) is None)
        self._counted(WorkspaceCounted({router: (2, 0)}))  # the count's message, handled at this very moment

    monkeypatch.setattr(StudioApp, "on_mount", on_mount)
    app = StudioApp([workspace / "multidoc_qa.contract.yaml", workspace], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.is_running and seen == [True]  # the race was held open: no file list yet when the count was handled
        assert "● rag_router" in labels(app)  # and the list drew the count once it was there


async def test_a_count_or_a_scan_that_lands_after_the_file_list_is_gone_is_dropped(make_app, workspace: Path) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.edit_screen
        await screen.query_one(FileList).remove()  # quitting removes a screen's widgets while messages still come
        (workspace / "late.tools.yaml").write_text("kind: tools\nname: late\ntools: []\n", encoding="utf-8")
        app.post_message(WorkspaceCounted({workspace / "rag_router.pipeline.yaml": (1, 0)}))
        app.rescan_workspace()  # finds late.tools.yaml: the list would show it, and the files are counted again
        await settle(pilot)
        assert app.is_running
        assert app.counts[workspace / "rag_router.pipeline.yaml"] == (0, 0)  # the rescan's own count came after
