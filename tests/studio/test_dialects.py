"""The studio on files of other formats: LocalAI-RAG pipelines (with a base) and AgentAnvil contracts."""

from __future__ import annotations

import shutil
from pathlib import Path

from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config
from contractstudio.studio.widgets.findings import FindingsPanel
from contractstudio.studio.widgets.stepgraph import StepGraphView

from .conftest import settle
from .test_graph import graph_text

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _app(tmp_path: Path, *names: str) -> tuple[StudioApp, Path]:
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLES / "localai_rag", ws / "localai_rag")
    shutil.copytree(SAMPLES / "agentanvil", ws / "agentanvil")
    return StudioApp([ws / n for n in names] + [ws], config=load_config()), ws


async def test_file_list_shows_pipelines_and_contracts_of_other_formats(tmp_path: Path) -> None:
    app, _ws = _app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        kinds = {f.path.name: f.kind for f in app.workspace.files}
        assert kinds == {"repo_qa.yaml": "pipeline", "repo_qa_base.yaml": "pipeline", "refund_desk.yaml": "agent"}


async def test_a_localai_pipeline_graphs_with_its_branch_labels_and_saves_in_its_own_format(tmp_path: Path) -> None:
    app, ws = _app(tmp_path, "localai_rag/pipelines/repo_qa.yaml")
    target = ws / "localai_rag" / "pipelines" / "repo_qa.yaml"
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.query_one(FindingsPanel).diagnostics == []
        await pilot.press("f3")
        await pilot.pause()
        text = graph_text(app.screen.query_one(StepGraphView))
        for label in ("[HYBRID:]", "[SEMANTIC:]", "search_more", "answer", "ok", "over", "allow", "deny", "repeat"):
            assert label in text
        await pilot.press("f2")
        await settle(pilot)
        app.screen.editor.move_cursor((0, 0))
        await pilot.press(*"# reviewed", "enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
    saved = target.read_text()
    assert saved.startswith("# reviewed\n# A LocalAI-RAG pipeline")
    assert "YAMLpipeline:" in saved and "kind:" not in saved


async def test_an_inherited_finding_is_shown_in_the_base_file(tmp_path: Path) -> None:
    app, ws = _app(tmp_path, "localai_rag/pipelines/repo_qa.yaml")
    base = ws / "localai_rag" / "pipelines" / "base" / "repo_qa_base.yaml"
    base.write_text(base.read_text().replace("next: keep_answer}", "next: keep_answr}", 1))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        found = app.screen.query_one(FindingsPanel).diagnostics
        assert [(Path(d.file).name, d.code) for d in found] == [("repo_qa_base.yaml", "PIP102")]
        assert [Path(r.file).name for r in found[0].related] == ["repo_qa.yaml"]


async def test_jumping_to_an_inherited_step_opens_the_base_file(tmp_path: Path) -> None:
    app, _ws = _app(tmp_path, "localai_rag/pipelines/repo_qa.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        view.highlighted = view._ids.index("finalize")
        await pilot.press("j")
        await settle(pilot)
        assert app.buffer.path.name == "repo_qa_base.yaml"
        row = app.screen.editor.cursor_location[0]
        assert "id: finalize" in app.screen.editor.text.splitlines()[row]
