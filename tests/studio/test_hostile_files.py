"""Files in a workspace that are out to crash the studio (issue 18 point 13): a JSON Lines file nested 30,000 deep,
typed input nested 1,000 deep. The studio opens and says what it found; nothing reaches Python's recursion limit."""

from __future__ import annotations

import json
from pathlib import Path

from contractstudio.studio.app import StudioApp
from contractstudio.studio.calls import yaml_problem
from contractstudio.studio.config import load_config
from contractstudio.studio.workspace import Workspace

from .conftest import settle


def test_a_jsonl_nested_30000_deep_is_listed_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "deep.jsonl").write_text("[" * 30_000 + "]" * 30_000 + "\n")
    (tmp_path / "rows.jsonl").write_text(json.dumps({"query": "q"}) + "\n")
    kinds = {f.path.name: f.kind for f in Workspace.open([tmp_path]).files}
    assert kinds["deep.jsonl"] == "trace" and kinds["rows.jsonl"] == "dataset"  # unreadable: offered as a trace, whose reader says why


async def test_the_studio_opens_a_folder_holding_a_deeply_nested_jsonl(tmp_path: Path) -> None:
    (tmp_path / "deep.jsonl").write_text('{"key": ' + "[" * 30_000 + "]" * 30_000 + ', "outcome": "x"}\n')
    app = StudioApp([tmp_path], config=load_config())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.is_running and app.return_code is None
        assert [f.path.name for f in app.workspace.files] == ["deep.jsonl"]


def test_typed_input_nested_1000_deep_is_refused_with_the_readers_message() -> None:
    assert yaml_problem("[" * 1000) == ("Not valid input: input:1:201: the input is refused: the document nests deeper "
                                        "than 200 levels. Fix it, or Escape to cancel.")


def test_typed_input_is_checked_by_the_reader_that_reads_it() -> None:
    # the dialog used to accept what yaml.safe_load took, then read_value refused it: now one reader decides
    assert yaml_problem("a: 1\na: 2\n") == ("Not valid input: input:2:1: the input is refused: duplicate key 'a' "
                                            "(first defined at line 1). Fix it, or Escape to cancel.")
    assert yaml_problem("query: Why?\n") is None


HOSTILE_NAME = "q\x1b]0;pwned\x07\x1b[2J[bold]sk-proj-abcdefghijklmnop0123456789.contract.yaml"


async def test_a_notification_escapes_and_redacts_a_hostile_file_name(tmp_path: Path) -> None:
    contract = Path(__file__).parent / "workspace" / "multidoc_qa.contract.yaml"
    hostile = tmp_path / HOSTILE_NAME
    hostile.write_text(contract.read_text(encoding="utf-8"), encoding="utf-8")
    app = StudioApp([hostile], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")  # "Saved NAME": the name comes from the file system
        await pilot.pause()
        app.notify("the server said: key=sk-ant-abcdefghijklmnopqrstuvwx0123 \x1b[31m", title="\x1b]0;t\x07")
        await pilot.pause()
        toasts = [(str(n.title), str(n.message), n.markup) for n in app._notifications]
    saved = next(message for _, message, _ in toasts if message.startswith("Saved "))
    assert saved == "Saved q\\x1b]0;pwned\\x07\\x1b[2J[bold]***.contract.yaml"  # escaped, redacted, not markup
    said = next(toast for toast in toasts if toast[1].startswith("the server said"))
    assert "\x1b" not in said[0] + said[1] and "sk-ant-" not in said[1] and said[1].endswith("\\x1b[31m")
    assert not any(markup for _, _, markup in toasts)  # a name's [bold] is shown as typed, never read as markup
