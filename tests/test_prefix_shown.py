"""Issue 37.2: the author sees, per clause, what a streaming reply does with it ("stops the reply early" or "checked
after the reply"), next to the structured-output enforcement (hover, `check -v`); CON133 refuses a `monotone: true`
the analyzer cannot show."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main
from contractstudio.editing import hover

MONOTONE = FIXTURES / "err" / "CON" / "con133_not_monotone.yaml"
CONTRACT = """kind: contract
name: label
description: A label with a reason.
types:
  Verdict:
    description: The verdict.
    fields:
      label: {type: "Literal['positive', 'negative']", description: The label.}
      reason: {type: str, max_length: 20, description: Why.}
      code: {type: str, pattern: "(?i)^ab$", default: "ab", description: A code.}
input: str
output: Verdict
prompt: Label it.
post:
  - id: short
    assert: len(output.reason) <= 10
    monotone: true
  - assert: output.label != 'negative' or len(output.reason) > 0
"""


def _write(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "label.contract.yaml"
    path.write_text(CONTRACT + extra)
    return path


def test_hover_on_a_field_says_which_clauses_stop_a_streamed_reply_early(tmp_path: Path) -> None:
    path = _write(tmp_path)
    report = check_file(path, Context())
    label = hover(report, 8, 8)
    assert label is not None and "**streamed reply**\n\n- stops the reply early: the Literal values" in label.markdown
    code = hover(report, 10, 8)
    assert code is not None and "- checked after the reply: pattern '(?i)^ab$'" in code.markdown
    output = hover(report, 12, 10)  # `output: Verdict`
    assert output is not None
    assert "- stops the reply early: JSON syntax, post[0] 'short'" in output.markdown
    assert "- checked after the reply: post[1]" in output.markdown


def test_check_verbose_lists_what_a_decoder_leaves_to_the_streamed_reply(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "llm:\n  model: openai/gpt-4o-mini\n")
    main(["check", "-v", str(path)])
    out = capsys.readouterr().out
    assert "json_schema strict; " in out  # the structured-output line, as before
    # the decoder enforces the Literal and the JSON syntax: a streamed reply is watched for what it leaves
    assert "contract 'label': streamed, stops the reply early: output.reason: max_length 20; post[0] 'short'\n" in out
    assert "contract 'label': streamed, checked after the reply: output.code: pattern '(?i)^ab$'; post[1]\n" in out
    main(["check", "-v", str(_write(tmp_path))])
    out = capsys.readouterr().out
    assert "streamed, stops the reply early: the reply: JSON syntax; output.label: the Literal values;" in out


def test_a_condition_marked_monotone_that_is_not_gets_con133(tmp_path: Path) -> None:
    found = [(d.code, d.line) for d in check_file(MONOTONE, Context()).diagnostics]
    assert found == [("CON133", 26)]
    path = _write(tmp_path, "pre:\n  - assert: len(input) > 0\n    monotone: true\n")
    codes = [(d.code, d.message.split(":")[0]) for d in check_file(path, Context()).diagnostics if d.code == "CON133"]
    assert codes == [("CON133", "`monotone")]
