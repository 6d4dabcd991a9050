"""Point 2 of issue 22: the author sees, per output clause, who enforces it for the contract's model (CON131 and
CON132 findings, hover on a field, `check --verbose`, `schema --model --contract`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main
from contractstudio.editing import hover

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
    assert "- enforced by the decoder: type string, required" in shown.markdown
    assert "- checked after the reply: min_length 2 (OpenAI strict mode does not support string length bounds" in shown.markdown
    score = hover(report, 16, 8)
    assert score is not None and "enforced by the decoder: type number, le 1.0, ge 0.0, required" in score.markdown


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
    assert any(line.split() == ["Answer.score", "type", "number,", "required", "le", "1.0,", "ge", "0.0", "-"] for line in out)
    assert "schema sent:" in out and '    "score": {' in out
    assert main(["schema", "--model", "gpt-4o-mini"]) == 2


SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "review_extraction.contract.yaml"


@pytest.mark.parametrize("model", [None, "anthropic/claude-haiku-4-5"])  # None: the openai/gpt-4o-mini it names
def test_the_sample_shows_all_three_kinds_of_clause(model: str | None) -> None:
    report = check_file(SAMPLE, Context(model=model))
    (finding,) = report.diagnostics
    assert finding.code == "CON132" and finding.line == 32 and "falls back to json_object" in finding.message
    aspects, rating, output = hover(report, 32, 8), hover(report, 29, 8), hover(report, 34, 10)
    assert aspects is not None and "- not representable: dict[str, ...]" in aspects.markdown
    assert rating is not None and "- checked after the reply: type integer, le 5, ge 1, required" in rating.markdown
    assert output is not None and "- enforced by the decoder: type object" in output.markdown
    assert f"as a schema to {model or 'openai/gpt-4o-mini'}:" in finding.message


def test_the_sample_without_its_dict_field_has_the_decoder_enforce_its_fields() -> None:
    text = SAMPLE.read_text(encoding="utf-8").replace(
        "      aspects: {type: \"dict[str, Literal['good', 'bad']]\", default: {}, description: A verdict per aspect the "
        "review mentions.}\n", "")
    from contractstudio.analysis.check import check_text

    openai = [d.message for d in check_text(text, "r.contract.yaml", Context()).diagnostics if d.code.startswith("CON13")]
    assert openai == ["field 'Extraction.summary' with openai/gpt-4o-mini: max_length 280, min_length 20 are checked after "
                      "the reply (OpenAI strict mode does not support string length bounds (minLength / maxLength)); "
                      "type string, required are enforced by the decoder"]
    anthropic = check_text(text, "r.contract.yaml", Context(model="claude-haiku-4-5")).diagnostics
    assert [d.message.split(":")[0] for d in anthropic if d.code.startswith("CON13")] == ["field 'Extraction.rating' with claude-haiku-4-5",
                                                             "field 'Extraction.summary' with claude-haiku-4-5"]


def test_the_format_doc_states_the_provider_facts_the_code_uses() -> None:
    from contractstudio.documents.provider_profiles import facts_table

    doc = (Path(__file__).resolve().parent.parent / "docs" / "format.md").read_text(encoding="utf-8")
    assert facts_table() in doc, "docs/format.md, 'Structured outputs': paste provider_profiles.facts_table()"


def test_an_optional_field_is_shown_optional_not_required(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The sample's `aspects` has `default: {}`, yet hover and `schema --model` listed 'required' among its clauses
    (checked after the reply under OpenAI's fallback, enforced by the decoder under Anthropic)."""
    for model in (None, "anthropic/claude-haiku-4-5"):
        shown = hover(check_file(SAMPLE, Context(model=model)), 32, 8)
        assert shown is not None and "- checked after the reply: type object, the Literal values, optional" in shown.markdown
    text = SAMPLE.read_text(encoding="utf-8").replace("dict[str, Literal['good', 'bad']]\", default: {}",
                                                      "list[str]\", default: []")
    listed = tmp_path / "listed_aspects.contract.yaml"
    listed.write_text(text, encoding="utf-8")
    assert main(["schema", "--model", "anthropic/claude-haiku-4-5", "--contract", str(listed)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Extraction.aspects"))
    assert row.split() == ["Extraction.aspects", "type", "array,", "optional", "-", "-"]


def test_a_key_given_as_the_model_is_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """A key pasted into --model was printed whole by `schema --model` and `check -v --model` (escaped, not redacted)."""
    key = "sk-proj-" + "Q7" * 20
    assert main(["schema", "--model", key, "--contract", str(SAMPLE)]) == 0
    assert main(["check", "-v", "--model", key, str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "structured output with *** (none): off" in out and "contract 'review_extraction': structured output with ***" in out
    assert "Q7Q7" not in out and "sk-proj" not in out


@pytest.mark.parametrize(("model", "api_base"), [
    ("openai/test-model", None),  # litellm has no data on it: JSON mode at most, no schema
    ("hosted_vllm/qwen2.5", "http://127.0.0.1:8000/v1"),  # litellm's vLLM route, a local model's own name: no schema
    ("ollama_chat/llama3", None),
])
def test_no_clause_is_said_to_be_left_to_a_check_after_the_reply_when_no_schema_would_be_sent(
        tmp_path: Path, model: str, api_base: str | None) -> None:
    # A false finding, seen on the project's own test contracts: every field got a CON131 claiming the others
    # were enforced by a decoder, for a model the runtime sends no schema to under `auto`.
    text = AFTER.read_text().replace("model: openai/gpt-4o-mini", f"model: {model}"
                                     + (f"\n  api_base: {api_base}" if api_base else ""))
    assert f"model: {model}" in text
    path = tmp_path / "m.contract.yaml"
    path.write_text(text)
    assert [d.code for d in check_file(path, Context()).diagnostics if d.code in ("CON131", "CON132")] == []
    report = check_file(path, Context())
    shown = hover(report, 14, 8)
    assert shown is not None and "checked after the reply" in shown.markdown and "enforced by the decoder" not in shown.markdown


def test_an_openai_compatible_servers_model_is_analyzed_as_its_decoder_enforces_it_under_auto(tmp_path: Path) -> None:
    # The runtime sends the schema to `openai/<name>` at a server's api_base under auto (issue 33): the analyzer says
    # the same, one decision (provider_profiles.openai_compatible_server) for both.
    text = AFTER.read_text().replace("model: openai/gpt-4o-mini", "model: openai/qwen2.5\n  api_base: http://127.0.0.1:8000/v1")
    path = tmp_path / "m.contract.yaml"
    path.write_text(text)
    report = check_file(path, Context())
    shown = hover(report, 14, 8)
    assert shown is not None and "enforced by the decoder" in shown.markdown


def test_a_written_response_format_is_shown_as_sent_not_as_a_schema_the_runtime_never_sends(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The runtime sends the author's `llm.response_format` as written and compiles no schema (issue 36, point 1): the
    # analyzer asks the same choose_mode, so `check -v`, hover and CON131 say no decoder enforces the type.
    path = tmp_path / "own.contract.yaml"
    path.write_text(AFTER.read_text().replace("model: openai/gpt-4o-mini",
                                              "model: openai/gpt-4o-mini\n  response_format: {type: json_object}"))
    assert [d.code for d in check_file(path, Context()).diagnostics] == []
    assert main(["check", "-v", str(path)]) == 0
    out = capsys.readouterr().out
    assert "json_schema" not in out and "enforced by the decoder" in out
    assert "structured output with openai/gpt-4o-mini (openai): off (llm.response_format is sent as written); " \
           "0 enforced by the decoder, 12 checked after the reply, 0 not representable" in out
    shown = hover(check_file(path, Context()), 14, 8)
    assert shown is not None and "checked after the reply" in shown.markdown and "json_schema" not in shown.markdown
