"""The studio's files as bytes on disk: nothing it cannot decode is ever overwritten, a BOM and CRLF stay,
new files get the folder's usual permissions, and a change made behind its back is always detected."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from contractstudio.studio.screens.dialogs import Choice
from contractstudio.studio.widgets.files import FileList

from .conftest import settle

TOOLS = "kind: tools\nname: notes\ndescription: Notes, café.\ntools: []\n"


def file_list_labels(app) -> list[str]:
    files = app.edit_screen.query_one(FileList)
    return [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


def messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


@pytest.mark.parametrize("raw", [
    TOOLS.encode("latin-1"),                            # é as one byte: not UTF-8
    TOOLS.encode("utf-16"),                             # with its BOM (FF FE)
    TOOLS.encode("utf-16-le"),                          # no BOM: UTF-8 with NUL bytes
], ids=["latin-1", "utf-16", "utf-16-le"])
async def test_bytes_that_are_not_utf8_are_shown_with_the_cli_finding_and_never_overwritten(make_app, workspace: Path,
                                                                                           raw: bytes) -> None:
    from contractstudio.analysis.check import check_file

    target = workspace / "legacy.tools.yaml"
    target.write_bytes(raw)
    cli = [(d.code, d.message) for d in check_file(target).diagnostics]
    app = make_app("legacy.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = [(d.code, d.message) for d in app.screen.findings.diagnostics]
        assert shown[0][0] == "YML001" and ("not UTF-8" in shown[0][1] or "NUL" in shown[0][1])
        if "NUL" not in shown[0][1]:
            assert shown == cli  # the same finding as `contractstudio check`
        assert "read-only" in str(app.screen.query_one("#status").render())
        app.screen.editor.move_cursor((0, 0))
        await pilot.press(*"# edit ")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert target.read_bytes() == raw
        assert any(m.startswith("Not saved:") and "never writes over bytes it could not read" in m for m in messages(app))


async def test_a_bom_and_crlf_survive_an_edit_and_a_save(make_app, workspace: Path) -> None:
    target = workspace / "bom.tools.yaml"
    target.write_bytes(b"\xef\xbb\xbf" + TOOLS.replace("\n", "\r\n").encode())
    app = make_app("bom.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [d.code for d in app.screen.findings.diagnostics] == []
        app.screen.editor.move_cursor((0, 0))
        await pilot.press(*"# mine")
        await pilot.press("enter")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert target.read_bytes() == b"\xef\xbb\xbf" + ("# mine\n" + TOOLS).replace("\n", "\r\n").encode()


async def test_an_unchanged_save_writes_the_same_bytes(make_app, workspace: Path) -> None:
    target = workspace / "bom.tools.yaml"
    raw = b"\xef\xbb\xbf" + TOOLS.encode()
    target.write_bytes(raw)
    app = make_app("bom.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert target.read_bytes() == raw


async def test_a_same_size_change_with_its_mtime_put_back_is_detected(make_app, workspace: Path) -> None:
    target = workspace / "multidoc_qa.contract.yaml"
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# mine")
        before = target.stat()
        text = target.read_text()
        target.write_text(text.replace("multidoc_qa", "multidoc_QA", 1))  # same size
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        assert "multidoc_QA" in target.read_text()


async def test_new_files_get_the_folders_usual_permissions(make_app, workspace: Path) -> None:
    old = os.umask(0o022)
    try:
        app = make_app("multidoc_qa.contract.yaml")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            app._export_to(str(workspace / "exported.yaml"))
            await pilot.pause()
            target = workspace / "multidoc_qa.contract.yaml"
            target.unlink()  # deleted behind the studio's back: Ctrl+S writes it again
            await pilot.press(*"# again")
            await pilot.press("ctrl+s")
            await pilot.pause()
            if isinstance(app.screen, Choice):  # the file was deleted behind its back: the studio asks first
                await pilot.click("#choice-overwrite")
                await pilot.pause()
    finally:
        os.umask(old)
    assert stat.S_IMODE((workspace / "exported.yaml").stat().st_mode) == 0o644
    assert stat.S_IMODE(target.stat().st_mode) == 0o644 and target.read_text().startswith("# again")


async def test_a_symlinked_file_is_saved_through_its_link(make_app, workspace: Path) -> None:
    real = workspace / "real" / "notes.tools.yaml"
    real.parent.mkdir()
    real.write_text(TOOLS)
    link = workspace / "notes.tools.yaml"
    link.symlink_to(real)
    app = make_app("notes.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.editor.move_cursor((0, 0))
        await pilot.press(*"# via link")
        await pilot.press("enter")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert link.is_symlink() and real.read_text() == "# via link\n" + TOOLS


async def test_a_killed_saves_leftover_is_removed_on_the_next_save(make_app, workspace: Path) -> None:
    leftover = workspace / ".multidoc_qa.contract.yaml.abc_1234.tmp"
    leftover.write_text("half")
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# x")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert not leftover.exists()


async def test_the_crash_file_carries_no_key(make_app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    from contractstudio.runtime.trace import register_secret
    from contractstudio.studio.app import StudioApp
    from contractstudio.studio.screens.dialogs import ErrorDialog

    key = "sk-studio-crash-0123456789abcdef"
    register_secret(key)  # a key in use in this process, as a live model registers it
    crashes = tmp_path / "crashes"
    crashes.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(crashes))
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        with monkeypatch.context() as real_terminal:
            real_terminal.setattr(StudioApp, "is_headless", property(lambda self: False))
            app._handle_exception(RuntimeError(f"the server echoed {key} and Bearer {key[::-1]}"))
        await pilot.pause()
        assert isinstance(app.screen, ErrorDialog)
        shown = str(app.screen.query_one("#dialog-body").render())
        [report] = crashes.glob("contractstudio-studio-crash-*.txt")
        text = report.read_text()
        assert "RuntimeError: the server echoed" in text
        for secret in (key, key[::-1]):
            assert secret not in text and secret not in shown


async def test_export_onto_a_fifo_is_a_clear_error(make_app, workspace: Path) -> None:
    fifo = workspace / "out.yaml"
    os.mkfifo(fifo)
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app._export_to(str(fifo))
        await pilot.pause()
        assert any(m.startswith("Could not write") and "FIFO" in m and "only regular files are written" in m for m in messages(app))
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


async def test_a_binary_file_opens_unmodified_and_quits_without_asking(make_app, workspace: Path) -> None:
    # Random bytes hold characters the editor takes as line breaks (\x1c, \x0c, \x85): shown as new lines,
    # which is no edit of the user's.
    rng = random.Random(2)
    raw = bytes(rng.randrange(256) for _ in range(3000))
    target = workspace / "blob.contract.yaml"
    target.write_bytes(raw)
    app = make_app("blob.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "read-only" in status and "modified" not in status
        assert "*" not in [label for label in file_list_labels(app) if "blob" in label][0]
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running  # no "save your changes?" question
    assert target.read_bytes() == raw


NEW_TOOLS = "kind: tools\nname: fresh\ntools: []\n"


def listed(app) -> str:
    files = app.screen.query_one("#files")
    return "\n".join(str(files.get_option_at_index(i).prompt) for i in range(files.option_count))


async def palette_titles(app, pilot, query: str) -> list[str]:
    """The command palette's hits for a search, in the order a user sees them (their first lines)."""
    from .test_keymap import palette_help

    return [line.splitlines()[0] for line in await palette_help(app, pilot, query)]


async def test_a_file_created_while_the_studio_runs_is_offered_by_ctrl_p_and_then_listed(make_app, workspace: Path) -> None:
    """Issue 19.11: Ctrl+P looks at the workspace again as it opens; the file list shows what it found."""
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "fresh" not in listed(app)
        (workspace / "fresh.tools.yaml").write_text(NEW_TOOLS)  # made by another program meanwhile
        titles = await palette_titles(app, pilot, "fresh")
        assert titles and titles[0] == "Open fresh.tools.yaml"
        await pilot.press("enter")
        await settle(pilot)
        assert app.buffer is not None and app.buffer.path.name == "fresh.tools.yaml"
        assert "fresh" in listed(app)


async def test_a_file_created_while_the_studio_runs_is_listed_when_the_studio_gets_the_focus_back(make_app, workspace: Path) -> None:
    from textual import events

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "fresh" not in listed(app)
        (workspace / "fresh.tools.yaml").write_text(NEW_TOOLS)
        app.post_message(events.AppFocus())  # the terminal reports the window focused again
        await pilot.pause(0.2)
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        assert "fresh" in listed(app)


async def test_a_path_typed_in_the_palette_opens_that_file(make_app, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "other.tools.yaml"
    outside.parent.mkdir()
    outside.write_text(NEW_TOOLS)
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = await palette_titles(app, pilot, str(outside))
        assert titles[0] == f"Open {outside}"
        await pilot.press("enter")
        await settle(pilot)
        assert app.buffer is not None and app.buffer.path == outside
        assert "name: fresh" in app.screen.editor.text


async def test_in_ctrl_p_the_file_of_that_very_name_comes_before_look_alikes_in_broken(make_app, workspace: Path) -> None:
    (workspace / "broken").mkdir()
    text = (workspace / "rag_router.pipeline.yaml").read_text()
    (workspace / "broken" / "rag_router_broken.pipeline.yaml").write_text(text.replace("name: rag_router", "name: rag_router_broken"))
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = await palette_titles(app, pilot, "rag_router")
        files = [t for t in titles if t.startswith("Open ")]
        assert files[:2] == ["Open rag_router.pipeline.yaml", "Open broken/rag_router_broken.pipeline.yaml"]


async def test_the_path_of_a_workspace_file_typed_in_the_palette_is_offered_once(make_app, workspace: Path) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = await palette_titles(app, pilot, str(workspace / "rag_router.pipeline.yaml"))
        assert [t for t in titles if t.startswith("Open ")] == ["Open rag_router.pipeline.yaml"]
