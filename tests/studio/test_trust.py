"""Trust is per folder in the studio, as everywhere (contractstudio.trust): a trusted folder opened
with an untrusted one never lends its trust, and "Trust once" trusts only the folder asked about.
The hook modules write a marker file when imported, so "imported" is a fact on disk, not a guess."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from textual.widgets import Select

from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config
from contractstudio.studio.screens.dialogs import Choice
from contractstudio.trust import Trust, remember_folder

from .conftest import WORKSPACE, settle
from .test_debug import open_debugger, press_and_wait, status


def hooked_folder(root: Path, name: str) -> tuple[Path, Path]:
    """A folder with a contract whose act is a Python hook; (folder, marker written when the hook module is imported)."""
    folder = root / name
    folder.mkdir()
    module = f"hooks_{name}_{uuid.uuid4().hex[:8]}"  # a fresh module name: an earlier test's import is not reused
    text = (WORKSPACE / "multidoc_qa.contract.yaml").read_text().replace("name: multidoc_qa\n", f"name: qa_{name}\n")
    text = re.sub(r"act:.*?\n(post:)", f'act:\n  python: "{module}:retrieve"\n\\1', text, flags=re.S)
    (folder / f"{name}.contract.yaml").write_text(text)
    marker = folder / "IMPORTED"
    (folder / f"{module}.py").write_text(
        "from pathlib import Path\n"
        "Path(__file__).with_name('IMPORTED').write_text('imported')\n"
        "def retrieve(input, **kw):\n"
        "    return {'query': input.query, 'selected_sentences': [d.content for d in input.documents], 'target_snippet_count': 3}\n")
    return folder, marker


async def test_a_trusted_folder_opened_with_an_untrusted_one_does_not_import_its_hooks(tmp_path: Path) -> None:
    trusted, trusted_marker = hooked_folder(tmp_path, "mine")
    foreign, foreign_marker = hooked_folder(tmp_path, "cloned")
    remember_folder(trusted)  # "Always" in an earlier session
    app = StudioApp([trusted, foreign], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.pause(0.8)  # the file list's counts are computed after start-up, in a worker
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert trusted_marker.exists()  # the trusted folder's hooks were imported to check them (TOL102)
        assert not foreign_marker.exists()
        app.open_file(foreign / "cloned.contract.yaml")
        await settle(pilot)
        assert not foreign_marker.exists()
        assert "TOL103" in {d.code for d in app.analysis.diagnostics}  # its hooks wait for trust


async def test_trust_once_in_the_debugger_trusts_only_that_folder(tmp_path: Path) -> None:
    first, first_marker = hooked_folder(tmp_path, "first")
    second, second_marker = hooked_folder(tmp_path, "second")
    app = StudioApp([first / "first.contract.yaml", first, second], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        select = app.screen.query_one("#contract-select", Select)
        names = [doc.name for _, doc in app.screen.contracts]
        select.value = names.index("qa_first")
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert isinstance(app.screen, Choice)
        await pilot.click("#choice-once")
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert "success" in status(app) and first_marker.exists()
        # the other folder was not part of the answer
        select = app.screen.query_one("#contract-select", Select)
        select.value = names.index("qa_second")
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert isinstance(app.screen, Choice) and "second" in str(app.screen.query_one("#dialog-body").render())
        await pilot.click("#choice-cancel")
        await pilot.pause()
        assert not second_marker.exists()
        assert app.trust.allows(first) and not app.trust.allows(second)
        assert not Trust().allows(first)  # "once" is not remembered


async def test_studio_trust_flag_trusts_the_folders_it_was_given_only(tmp_path: Path) -> None:
    given, given_marker = hooked_folder(tmp_path, "given")
    sibling, sibling_marker = hooked_folder(tmp_path, "sibling")
    app = StudioApp([given / "given.contract.yaml"], trusted=True, config=load_config())
    assert app.trust.allows(given) and not app.trust.allows(sibling) and not app.trust.allows(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert given_marker.exists() and not sibling_marker.exists()


async def test_the_debugger_asks_before_a_key_goes_where_only_the_file_says(make_app, workspace: Path, monkeypatch) -> None:
    """A key read from an unusual variable needs the folder trusted: asked before any request; a reply that
    echoes the key is masked in the event view (redacted before anything is shown or cut)."""
    from openai_server import OpenAIServer

    from .test_debug_faults import CONTRACT, GOOD, KEY, open_live, point_at, show

    monkeypatch.setenv("CS_TEST_ROUTE_KEY", KEY)
    echo = '{"answer": "' + "x" * 40 + KEY + '", "evidence": [], "coverage_score": 0.1}'
    with OpenAIServer([echo, GOOD]) as server:
        point_at(workspace, server, extra="  api_key_env: CS_TEST_ROUTE_KEY\n")
        app = make_app(CONTRACT)
        async with app.run_test(size=(120, 40)) as pilot:
            await open_live(app, pilot)
            await press_and_wait(pilot, "g")
            assert isinstance(app.screen, Choice) and "CS_TEST_ROUTE_KEY" in str(app.screen.query_one("#dialog-body").render())
            await pilot.click("#choice-cancel")
            await pilot.pause()
            assert server.requests == []  # nothing was sent while the folder was not trusted
            app.screen.query_one("#timeline").focus()
            await press_and_wait(pilot, "g")
            await pilot.click("#choice-once")
            await pilot.pause()
            app.screen.query_one("#timeline").focus()
            await press_and_wait(pilot, "g")
            assert "success" in status(app) and server.requests[0].headers["authorization"] == f"Bearer {KEY}"
            reply = next(e for e in app.screen.events if e.type == "llm_response")
            shown = await show(app, pilot, reply)
            assert "xxxxxxxxxx***" in shown and KEY not in shown and KEY[:12] not in shown


async def test_a_link_into_a_trusted_folder_lends_no_trust_to_the_links_own_folder(tmp_path: Path) -> None:
    # issue 18 point 2: trust and the import folder are both decided where the file really is (trust.hook_folder)
    trusted, _ = hooked_folder(tmp_path, "trusted")
    contract = trusted / "trusted.contract.yaml"
    module = re.search(r'python: "(\w+):', contract.read_text()).group(1)  # type: ignore[union-attr]
    (trusted / f"{module}.py").rename(tmp_path / "moved.py")  # the trusted folder has no such module
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    (attacker / f"{module}.py").write_text("from pathlib import Path\nPath(__file__).with_name('PWNED').write_text('x')\n")
    (attacker / "link.contract.yaml").symlink_to(Path("..") / "trusted" / contract.name)
    remember_folder(trusted)
    app = StudioApp([attacker / "link.contract.yaml"], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        assert not (attacker / "PWNED").exists()
        assert "TOL102" in {d.code for d in app.analysis.diagnostics}  # trusted where it is, and its module is not there
