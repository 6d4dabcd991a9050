"""Hostile files in the studio: a slow regex never freezes the screen, deep nesting never reaches the highlighter (issue 10, 1 and 7)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from contractstudio.documents import patterns

from .conftest import settle, tree_labels

SLOW_AGENT = """\
kind: agent
name: slow
tools:
  - name: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"
policies:
  - id: must
    require: {tool: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}
  - id: never
    forbid: {tool_pattern: "(a|aa)+"}
"""


def codes(app) -> list[str]:
    """The findings' codes in code order (the panel shows errors first, then by line)."""
    return sorted(d.code for d in app.screen.findings.diagnostics)


async def test_keys_are_handled_while_a_pathological_regex_is_analyzed(make_app, workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("contractstudio.analysis.loaded.REGEX_BUDGET_S", 4.0)  # a long analysis, to type during it
    matching = threading.Event()
    real_run = patterns.RegexBudget._run

    def run(self: patterns.RegexBudget, match, text: str) -> bool:
        slow = text.endswith("a!")  # the pathological match alone (it takes the file's whole budget), no other regex
        if slow:
            matching.set()
        try:
            return real_run(self, match, text)
        finally:
            if slow:
                matching.clear()

    monkeypatch.setattr(patterns.RegexBudget, "_run", run)
    (workspace / "slow.agent.yaml").write_text(SLOW_AGENT)
    app = make_app("slow.agent.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):
            if matching.is_set():
                break
            await pilot.pause(0.05)
        assert matching.is_set(), "the analysis never reached the tool pattern"
        editor = app.screen.editor
        editor.move_cursor((1, 0))
        await pilot.press("x")
        # The key was handled while the worker was still inside the regex: the matcher let go of the GIL.
        assert matching.is_set()
        assert editor.text.splitlines()[1] == "xname: slow"
        # the later analyses need not be long: each spends a short budget on the same pattern
        monkeypatch.setattr("contractstudio.analysis.loaded.REGEX_BUDGET_S", 0.5)
        await pilot.press("backspace")
        await settle(pilot)
        assert codes(app) == ["YML006"]
        assert "tool_pattern '(a|aa)+' was not checked" in app.screen.findings.diagnostics[0].message


def deep(levels: int) -> str:
    """A tools file whose block mappings nest `levels` deep under `x`, one space per level (YAML allows it)."""
    return "kind: tools\nname: deep\ntools: []\nx:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(levels))


async def test_a_file_nested_past_the_limit_is_shown_without_highlighting_and_with_its_finding(make_app, workspace: Path) -> None:
    # tree-sitter's YAML scanner crashed the whole process (SIGSEGV) at about 260 levels.
    (workspace / "deep.tools.yaml").write_text(deep(300))
    app = make_app("deep.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert codes(app) == ["SCH102", "YML006"]  # `x` is not a key of tools; under it, too deep
        [too_deep] = [d for d in app.screen.findings.diagnostics if d.code == "YML006"]
        assert "nests deeper than 200 levels" in too_deep.message
        editor = app.screen.editor
        assert not editor.highlighting
        assert "highlighting off" in str(app.screen.query_one("#status").render())
        editor.move_cursor((5, 0))
        await pilot.press("x", "backspace")  # edits go on, tree-sitter never sees the text
        await settle(pilot)
        assert codes(app) == ["SCH102", "YML006"]


async def test_an_edit_that_nests_past_the_limit_turns_highlighting_off_before_the_highlighter_sees_it(
        make_app, workspace: Path) -> None:
    (workspace / "deep.tools.yaml").write_text(deep(150))
    app = make_app("deep.tools.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        assert editor.highlighting and codes(app) == ["SCH102"]
        lines = editor.text.splitlines()
        editor.move_cursor((len(lines), 0))
        editor.insert("".join(" " * (i + 151) + f"j{i}:\n" for i in range(150)))  # a paste, past 255 levels
        await settle(pilot)
        assert not editor.highlighting
        assert codes(app) == ["SCH102", "YML006"]


async def test_a_typed_input_nested_past_the_limit_is_refused_and_never_highlighted(make_app) -> None:
    from textual.widgets import Select

    from contractstudio.studio.screens.dialogs import TextPrompt

    from .test_debug import open_debugger

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        app.screen.query_one("#input-select", Select).value = "typed"
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        area = app.screen.query_one("#prompt-text")
        area.text = "query:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300))  # tree-sitter crashed here
        assert not area.highlighting
        await pilot.press("ctrl+s")
        await pilot.pause()
        # the dialog's check is the reader that reads the input: it stays open and says why
        assert isinstance(app.screen, TextPrompt)
        assert "the input is refused: the document nests deeper than 200 levels" in str(
            app.screen.query_one("#dialog-body").render())


def _nestings(levels: int) -> dict[str, str]:
    """Every way of nesting blocks that crashed tree-sitter at about 260 levels (issue 10.7), `levels` deep."""
    return {
        "mapping": "".join(" " * i + f"k{i}:\n" for i in range(levels)),
        "sequence": "".join(" " * i + "-\n" for i in range(levels)),
        "compact": "- " * levels + "x\n",
        "question": "? " * levels + "x\n",
        "colon": ": " * levels + "x\n",
        "mixed": "- ? " * (levels // 2) + "x\n",
        "explicit": "".join(" " * i + "? k\n" + " " * i + ":\n" for i in range(levels)),
        "tabs": "".join("\t" * (i // 8) + " " * (i % 8) + f"k{i}:\n" for i in range(levels)),
    }


PARSE_ALL = """
import json, sys
from textual._tree_sitter import get_language
from textual.document._syntax_aware_document import SyntaxAwareDocument
for text in json.load(sys.stdin):
    SyntaxAwareDocument(text, get_language("yaml"))
print("parsed")
"""


def test_text_the_guard_lets_through_never_crashes_tree_sitter() -> None:
    import json
    import subprocess
    import sys

    from contractstudio.studio.widgets.editor import MAX_HIGHLIGHT_INDENT, block_indent

    allowed, refused = [], []
    for levels in range(MAX_HIGHLIGHT_INDENT - 10, 301, 10):
        for text in _nestings(levels).values():
            (allowed if block_indent(text) <= MAX_HIGHLIGHT_INDENT else refused).append(text)
    assert allowed and all(block_indent(t) > MAX_HIGHLIGHT_INDENT for t in refused)
    assert all(block_indent(t) > MAX_HIGHLIGHT_INDENT for t in _nestings(255).values())  # where the crash starts
    done = subprocess.run([sys.executable, "-c", PARSE_ALL], input=json.dumps(allowed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "parsed", done.stderr[-500:]


async def test_the_agent_tree_draws_the_analyzers_pattern_matches_and_runs_no_regex_itself(
        make_app, workspace: Path, regex_on_ui_thread: list[str]) -> None:
    """The tree shows which tools a tool_pattern matches as the analysis found them, in its worker; the screen's
    thread never runs a regex from the file (a pathological one would freeze it for as long as it ran)."""
    (workspace / "slow.agent.yaml").write_text(SLOW_AGENT)
    app = make_app("slow.agent.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        text = tree_labels(app.screen.query_one("#agent-tree"))
        assert "forbid pattern (a|aa)+ (not checked: the file's regex time ran out)" in text  # as its YML006 says
        assert regex_on_ui_thread == []
