"""`json_reply: strict` (seed 004's "every turn MUST return valid JSON"): a reply that is not one JSON document,
prose around the JSON or a fence, is refused and remedied with the reason; the default reads them leniently
(issue 34.14)."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
PROSE = f"Here is my answer: {GOOD} Hope that helps!"
FENCED = f"```json\n{GOOD}\n```"
NO_WAIT = CallOptions(wait=False)


def contract(tmp_path: Path, strict: bool) -> cs.Contract:  # type: ignore[name-defined]
    text = QA.read_text()
    if strict:
        text += "\njson_reply: strict\n"
    path = tmp_path / "qa.contract.yaml"
    path.write_text(text)
    return cs.load(path)


@pytest.mark.parametrize("reply", [PROSE, FENCED], ids=["prose", "fence"])
def test_the_default_reads_the_json_out_of_prose_and_fences(tmp_path: Path, reply: str) -> None:
    result = contract(tmp_path, strict=False).call(INPUT, [reply], options=NO_WAIT)
    assert result.successful and result.llm_calls == 1


@pytest.mark.parametrize(("reply", "why"), [(PROSE, "text before or after the JSON"), (FENCED, "a ``` fence")],
                         ids=["prose", "fence"])
def test_strict_refuses_anything_but_a_json_document_and_remedies_with_the_reason(tmp_path: Path, reply: str,
                                                                                  why: str) -> None:
    result = contract(tmp_path, strict=True).call(INPUT, [reply, GOOD], options=NO_WAIT)
    assert result.successful and result.llm_calls == 2 and result.attempts == 1
    assert any(why in e and "json_reply: strict" in e for e in result.errors), result.errors
    remedy = result.trace.of_type("llm_request")[1]["messages"][-1]["content"]
    assert why in remedy  # the model is told why its reply was refused


def test_strict_takes_a_bare_document_with_blank_lines_around_it(tmp_path: Path) -> None:
    result = contract(tmp_path, strict=True).call(INPUT, [f"\n  {GOOD}\n"], options=NO_WAIT)
    assert result.successful and result.llm_calls == 1
