"""Hostile files in the studio: a slow regex never freezes the screen, deep nesting never reaches the highlighter (issue 10, 1 and 7)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from contractstudio.expressions import patterns

from .conftest import settle

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


def codes(app) -> list[str]:  # noqa: ANN001
    return [d.code for d in app.screen.findings.diagnostics]


async def test_keys_are_handled_while_a_pathological_regex_is_analyzed(make_app, workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("contractstudio.analysis.loaded.REGEX_BUDGET_S", 10.0)  # a long analysis, to type during it
    matching = threading.Event()
    real_run = patterns.RegexBudget._run

    def run(self: patterns.RegexBudget, match, text: str) -> bool:  # noqa: ANN001
        matching.set()
        try:
            return real_run(self, match, text)
        finally:
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
        await pilot.press("backspace")
        await settle(pilot)
        assert codes(app) == ["YML006"]
        assert "tool_pattern '(a|aa)+' was not checked" in app.screen.findings.diagnostics[0].message
