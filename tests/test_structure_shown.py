"""Point 2 of issue 22: the author sees, per output clause, who enforces it for the contract's model (CON131 and
CON132 findings, hover on a field, `check --verbose`, `schema --model --contract`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main
from contractstudio.editing.hover import hover

AFTER = FIXTURES / "err" / "CON" / "con131_after_reply.yaml"
RECURSIVE = FIXTURES / "err" / "CON" / "con132_not_representable.yaml"


def _codes(path: Path, model: str | None = None) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in check_file(path, Context(model=model)).diagnostics]


def test_check_model_classifies_for_the_model_given_instead_of_the_one_the_contract_names() -> None:
    assert _codes(RECURSIVE) == [("CON132", 14)]  # anthropic: a recursive type falls back
    assert _codes(RECURSIVE, "openai/gpt-4o-mini") == []  # OpenAI strict keeps the recursion
    assert ("CON131", 16) in _codes(RECURSIVE.with_name("con131_after_reply.yaml"), "anthropic/claude-sonnet-4-5")


def test_hover_on_a_field_says_who_enforces_each_of_its_clauses() -> None:
    report = check_file(AFTER, Context())
    shown = hover(report, 14, 8)
    assert shown is not None
    assert "**structured output** with `openai/gpt-4o-mini` (json_schema strict)" in shown.markdown
    assert "- enforced by the decoder: type, required" in shown.markdown
    assert "- checked after the reply: min_length 2 (OpenAI strict mode does not support string length bounds" in shown.markdown
    score = hover(report, 16, 8)
    assert score is not None and "enforced by the decoder: type, le 1.0, ge 0.0, required" in score.markdown


def test_check_verbose_prints_a_line_per_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-v", str(AFTER), str(RECURSIVE)]) == 0
    out = capsys.readouterr().out
    assert "contract 'c131': structured output with openai/gpt-4o-mini (openai): json_schema strict; 10 enforced by the " \
           "decoder, 2 checked after the reply, 0 not representable" in out
    assert "contract 'c132': structured output with anthropic/claude-sonnet-4-5 (anthropic): json_object; " in out
    assert "(falls back: the type 'Heading' contains itself" in out


def test_schema_model_prints_a_column_per_enforcement_and_the_schema_sent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--model", "anthropic/claude-sonnet-4-5", "--contract", str(AFTER)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split() == ["field", "enforced", "by", "the", "decoder", "checked", "after", "the", "reply", "not",
                              "representable"]
    assert any(line.split() == ["Answer.score", "type,", "required", "le", "1.0,", "ge", "0.0", "-"] for line in out)
    assert "schema sent:" in out and '    "score": {' in out
    assert main(["schema", "--model", "gpt-4o-mini"]) == 2
