"""The file list's marks: a red dot only for a document with errors, never for a dataset, results or a trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from contractstudio.studio.widgets.files import FileList

from .conftest import settle

ROOT = Path(__file__).resolve().parents[2]


async def test_datasets_and_results_carry_no_error_mark(make_app, workspace: Path) -> None:
    shutil.copy(ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl", workspace / "qa.rows.jsonl")
    (workspace / "broken.contract.yaml").write_text("kind: contract\nname: b\ninput: Missing\n")
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(40):  # the workspace is counted in a background worker
            await app.workers.wait_for_complete()
            if workspace / "broken.contract.yaml" in app.counts:
                break
            await pilot.pause(0.1)
        files = app.edit_screen.query_one(FileList)
        labels = {str(files.get_option_at_index(i).prompt) for i in range(files.option_count)}
        assert "● broken" in labels  # a document with errors is marked
        assert "  qa.rows" in labels, "|".join(sorted(labels))  # a dataset is not a YAML document: no mark
    assert json.loads((workspace / "qa.rows.jsonl").read_text().splitlines()[0])  # untouched


async def test_a_dataset_opened_in_the_editor_is_not_analyzed_as_yaml(make_app, workspace: Path) -> None:
    shutil.copy(ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl", workspace / "qa.rows.jsonl")
    app = make_app("qa.rows.jsonl")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.edit_screen.analysis is not None and app.edit_screen.analysis.diagnostics == []
        status = str(app.edit_screen.query_one("#status").render())
        assert "dataset (JSON Lines)" in status and "0 errors" in status
        assert app.counts.get(workspace / "qa.rows.jsonl", (0, 0)) == (0, 0)


async def test_the_workspace_count_leaves_the_open_file_to_its_live_analysis(make_app, workspace: Path, monkeypatch) -> None:
    # The open file's marks come from its live analysis: counting it again from disk in the background analyzed a
    # 5 MB file whole (seconds of the interpreter) while its author typed, and its result was thrown away.
    from contractstudio.analysis import check

    (workspace / "broken.contract.yaml").write_text("kind: contract\nname: b\ninput: Missing\n")
    counted: list[str] = []
    real = check.check_file
    monkeypatch.setattr(check, "check_file", lambda path, *a, **k: counted.append(Path(path).name) or real(path, *a, **k))
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(40):
            await app.workers.wait_for_complete()
            if workspace / "broken.contract.yaml" in app.counts:
                break
            await pilot.pause(0.1)
        assert "broken.contract.yaml" in counted and "multidoc_qa.contract.yaml" not in counted
