"""Hostile files and inputs that used to hang, exhaust memory or crash: each bound, as a user meets it (issue 10, 1-6).

docs/security.md ("Limits") lists every bound with the test here that holds it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from contractstudio.analysis.check import check_text
from contractstudio.cli import main

SLOW_NAME = "a" * 40 + "!"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def agent_with_forbid_pattern(pattern: str) -> str:
    return textwrap.dedent(f"""\
        kind: agent
        name: slow
        tools:
          - name: "{SLOW_NAME}"
        policies:
          - id: must
            require: {{tool: "{SLOW_NAME}"}}
          - id: never
            forbid: {{tool_pattern: "{pattern}"}}
        """)


# ----------------------------------------------------------------- 1. regular expressions from files


def test_the_reported_tool_pattern_no_longer_hangs_the_analyzer() -> None:
    # `(a+)+` against 'aaa...!' ran for minutes under `re`; it does not match, so no finding.
    codes = [d.code for d in check_text(agent_with_forbid_pattern("(a+)+"), "a.agent.yaml").diagnostics]
    assert codes == []


def test_a_tool_pattern_that_backtracks_exponentially_is_stopped_and_reported() -> None:
    [d] = check_text(agent_with_forbid_pattern("(a|aa)+"), "a.agent.yaml").diagnostics
    assert (d.code, d.line, d.column) == ("YML006", 9, 28)
    assert "policy 'never': tool_pattern '(a|aa)+' was not checked: regular expressions took more than 1 s" in d.message


def test_a_tool_pattern_that_cannot_compile_in_time_is_refused() -> None:
    [d] = check_text(agent_with_forbid_pattern("(?:x{65535}){65535}"), "a.agent.yaml").diagnostics
    assert d.code == "SCH103"
    assert "counted repeats expand to more than 10,000 items" in d.message


# ----------------------------------------------------------------- 3. one regex budget per evaluation


def contract(post: str) -> str:
    return textwrap.dedent(f"""\
        kind: contract
        name: c
        prompt: Say ok.
        types:
          In: {{description: In, fields: {{text: {{type: str, description: T}}}}}}
          Out: {{description: Out, fields: {{ok: {{type: bool, description: B}}}}}}
        input: In
        output: Out
        on_failure: raise
        post:
          - assert: "{post}"
            message: no digits
        scenarios:
          - name: s
            input: {{text: hi}}
            responses: ['{{"ok": true}}']
            expect: {{successful: true}}
        """)


def test_the_regex_budget_bounds_all_searches_of_one_evaluation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Each search takes a fraction of a second; 60 of them took 18 s when the limit was per search.
    path = tmp_path / "c.contract.yaml"
    path.write_text(contract("all(not matches('a'*2400 + c, '[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[0-9]') for c in 'x'*60)"))
    assert [d.code for d in check_text(path.read_text(), str(path)).diagnostics] == []
    code, out, _ = run(capsys, "test", str(path))
    assert code == 1
    assert "regular expressions took more than 1 s in this evaluation" in out
