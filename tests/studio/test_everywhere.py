"""What holds in every mode: themes, keymap, help, command palette, import hygiene, start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from textual.command import CommandPalette

from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config
from contractstudio.studio.screens.dialogs import HelpScreen
from contractstudio.studio.themes import bundled_themes_folder, load_themes

from .conftest import settle

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_themes_include_a_dark_and_a_light_one() -> None:
    themes, problems = load_themes([bundled_themes_folder()])
    assert problems == []
    assert {t.dark for t in themes} == {True, False}


async def test_a_broken_theme_file_is_a_notification_not_a_crash(make_app) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "contractstudio" / "themes"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text("name: bad\nprimary: not-a-colour\n")
    (folder / "worse.yaml").write_text("name: [unclosed\n")
    (folder / "mine.yaml").write_text("name: mine\nprimary: '#ff8800'\ndark: true\n")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("bad.yaml" in m and "not-a-colour" in m for m in messages)
        assert any("worse.yaml:2:" in m and "not valid YAML" in m for m in messages)
        assert "mine" in app.available_themes  # a user theme from the config folder
        assert app.theme == "contractstudio-dark"


async def test_the_config_picks_a_theme_and_remaps_keys(make_app, workspace: Path) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "contractstudio" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("theme: contractstudio-light\nkeymap:\n  edit.save: f11\n  app.mode_graph: f7\n")  # F9, F12, Ctrl+N: editing help
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "contractstudio-light"
        await pilot.press(*"# remapped")
        await pilot.press("f11")
        await pilot.pause()
        assert (workspace / "multidoc_qa.contract.yaml").read_text().startswith("# remapped")
        await pilot.press("f7")
        await pilot.pause()
        assert app.current_mode == "graph"


async def test_every_binding_has_an_id() -> None:
    from contractstudio.studio.screens.debug import DebugScreen
    from contractstudio.studio.screens.edit import EditScreen
    from contractstudio.studio.screens.graph import GraphScreen

    for owner in (StudioApp, EditScreen, GraphScreen, DebugScreen):
        for binding in owner.BINDINGS:
            assert binding.id, f"{owner.__name__}: {binding.key} has no id"


async def test_help_lists_the_keys_with_their_binding_ids(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = app.screen.rows
        ids = {row[3] for row in rows}
        assert {"app.quit", "edit.save", "app.mode_graph", "edit.next_finding"} <= ids
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_the_command_palette_offers_and_runs_studio_actions(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"graph mode")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert app.current_mode == "graph"


async def test_the_workspace_defaults_to_the_bundled_samples_when_the_folder_has_no_contracts(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = StudioApp([], config=load_config())
    assert any("samples" in str(root) for root in app.workspace.roots)


def test_analysis_and_runtime_import_no_textual() -> None:
    code = (
        "import sys\n"
        "import contractstudio.analysis.check, contractstudio.analysis.step_graph, contractstudio.export\n"
        "import contractstudio.runtime.api, contractstudio.runtime.engine, contractstudio.runtime.pipeline_runner\n"
        "from contractstudio.analysis.check import check_text\n"
        "check_text(open(sys.argv[1]).read(), sys.argv[1])\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
        "assert 'litellm' not in sys.modules, 'litellm imported'\n"
        "print('clean')\n"
    )
    sample = ROOT / "tests" / "studio" / "workspace" / "multidoc_qa.contract.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "clean", out.stderr


def test_the_check_command_does_not_import_the_studio() -> None:
    code = (
        "import sys\n"
        "from contractstudio.cli import main\n"
        "main(['check', sys.argv[1]])\n"
        "assert 'textual' not in sys.modules and 'contractstudio.studio' not in sys.modules\n"
        "print('clean')\n"
    )
    sample = ROOT / "tests" / "studio" / "workspace" / "multidoc_qa.contract.yaml"
    out = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().endswith("clean"), out.stderr


async def test_ctrl_t_switches_between_the_dark_and_light_themes(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "contractstudio-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "contractstudio-light"
        await pilot.press("ctrl+t")
        assert app.theme == "contractstudio-dark"


def test_the_studio_command_refuses_a_missing_path(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "contractstudio", str(tmp_path / "nope.yaml")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "no such file or folder" in out.stderr and "Traceback" not in out.stderr


async def test_the_command_palette_opens_a_workspace_file_by_name(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"billing_supp")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "edit" and app.buffer is not None
        assert app.buffer.path.name == "billing_support.agent.yaml"
        assert "name: billing_support" in app.screen.editor.text
