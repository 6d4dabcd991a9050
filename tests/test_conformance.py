"""Seed 000's remedy semantics as ContractStudio runs them, written as scenarios (tests/conformance/*.contract.yaml).

The scenarios are the specification a user reads; this test runs them with `contractstudio test`
and shows that each expectation they use really is checked (a changed expectation fails).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contractstudio.cli import main

CONFORMANCE = Path(__file__).parent / "conformance"
REMEDIES = CONFORMANCE / "symbolicai_remedies.contract.yaml"


def test_the_conformance_scenarios_are_clean_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(REMEDIES), "--fail-level", "info"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    # LocalAI-RAG's pipelines as its own pack has them: P3 expands with no seeds, which LocalAI-RAG's validator calls a
    # lint warning and its runtime skips ("no_seeds"); that warning is the one finding (tests/test_localai_agreement.py)
    assert main(["check", str(CONFORMANCE / "localai_rag"), "--fail-level", "error", "--format", "json"]) == 0
    found = [(Path(d["file"]).name, d["code"], d["severity"]) for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert found == [("pack.yaml", "PIP202", "warning")]


def test_symbolicai_remedy_semantics_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(CONFORMANCE)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("3 passed, 0 failed")
    for name in ("remedy_backoff::fail-fail-pass", "remedy_accumulate::two-failing-replies", "pre_without_remedy::empty-review"):
        assert f"{name} PASSED" in out


def changed(tmp_path: Path, old: str, new: str) -> str:
    text = REMEDIES.read_text()
    assert text.count(old) == 1
    path = tmp_path / "changed.contract.yaml"
    path.write_text(text.replace(old, new))
    return str(path)


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ('- ["Score 0.2 is below 0.5."]', '- ["Score 0.1 is below 0.5.", "Score 0.2 is below 0.5."]',
         "remedy_errors[1]: expected 2, got 1"),
        ('remedy_errors: [["Score 0.1 is below 0.5."]]', 'remedy_errors: [["Score 0.2 is below 0.5."]]',
         "remedy_errors[0][0]: expected a text containing 'Score 0.2 is below 0.5.'"),
        ('errors: ["The review is empty."]', 'errors: ["The review is blank."]',
         "errors[0]: expected a text containing 'The review is blank.'"),
        ("perf: {percent_total: 100}     # every", "perf: {stages: [input, generate, forward, finalize]}     # every",
         "perf.stages: expected ['input', 'generate', 'forward', 'finalize'], got ['input', 'generate', 'post', 'forward', 'finalize']"),
    ],
)
def test_each_expectation_is_checked_when_the_call_runs(old: str, new: str, reported: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", changed(tmp_path, old, new)]) == 1
    assert reported in capsys.readouterr().out


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("remedy_waits: [0.1, 0.15]", "remedy_waits: [0.1, 0.2]",
         "the wait before remedy attempt 2 is 0.15 s: min(0.1 x 2^1, 0.15), not 0.2"),
        ("accumulate_errors: false", "accumulate_errors: true",
         "with accumulate_errors, remedy request 2 carries every error so far, at least 2, not 1"),
        ("remedy_waits: [0.1, 0.15]", "remedy_waits: [0.1, 0.15, 0.15]", "expects 3 remedy waits but at most 2 remedy attempts"),
        ("stages: [input, pre, forward, finalize]", "stages: [input, pre, generate, forward, finalize]",
         "perf.stages names stages this contract cannot run: generate (with llm_calls: 0)"),
        ("perf: {percent_total: 100}     # every", "perf: {percent_total: 99}     # every",
         "percentages always add up to 100, not 99"),
    ],
)
def test_expectations_that_cannot_hold_are_found_before_running(old: str, new: str, reported: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = changed(tmp_path, old, new)
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert "CON108" in out and reported in out
